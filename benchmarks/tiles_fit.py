"""Fit matmul_auto's per-candidate efficiency (resources/fits/H200_matmul_tiles.json): pointer kernels on run H, TMA kernels on run M.

The compute-bound model's tensor efficiency was fitted on the 128x256x64 w8 tile only. A smaller
tile does fewer FLOPs per byte it stages through shared memory (64x128: 43 FLOP/B against 85 for
128x256), and a w4 tile has half the warps to cover the wgmma and load latencies, so it sustains a
smaller share of the tensor rate; the variant's loop (persistent's per-program tile walk,
stream-K's K-split units, TMA boxes instead of pointer loads) changes what the pipeline overlaps.
Measured / predicted is nearly flat in N per candidate, so the missing piece is one sustained
efficiency per (kernel, tile): the candidate's block time (its whole launch less the GPU's launch
overhead) is the model's over it, in the compute-bound cost (sim.model.throughput.ComputeBoundCost),
so every surface shows the time the chooser weighs; the launch overhead is the GPU's, not the tile's.

* pointer kernels (tiled, persistent, stream-K): FIT on run H's whole sawtooth (M=1024, K=8192,
  N = 2048..16384 step 256, 57 sizes); TEST on run H's squares and run I (57 sizes + squares).
* TMA kernels (tiled, persistent; benchmarks/run_m/matmul, 2026-12-02): FIT on run M's
  even-indexed sawtooth sizes (N = 2048, 2560, ..., 16384: 29), TEST on its odd ones (28) and
  its squares, and all of run N (benchmarks/run_n/matmul: 57 sizes + squares, the declared
  flags' launches among its extras). Run M's machine is not run H's: its times are taken in run
  H's units by run M's throughput scale (chooser_run.run_scale: the median over the sizes both
  ran of cuBLAS there over cuBLAS here), so both kernels' efficiencies share one set of units.
  The TMA kernels launch with their declared loop flags (TMA_LOOP): the flags this fit once chose
  on three of run M's sizes (TMA-persistent 128x256x64 flatten=False, +2.2% there) lost to the
  declared ones in run N's own rounds, median 0.950 and min 0.863 over 59 sizes (DECLARED_LOOP).
* TMA stream-K (matmul_tma_stream_k; benchmarks/run_o/matmul, 2026-12-02): FIT on run O's
  even-indexed sawtooth sizes, in run H's units by run O's own scale; TEST on its odd ones and its
  squares. Its leftover-wave term is pointer stream-K's (the same split of the last wave).
* Run Q's refit (benchmarks/run_q/explore_q, `tile_explore.py --set tma-sk`, 2026-12-02): the two
  candidates whose declaration changed after it, TMA stream-K 128x256x64 w8 s3 (now flatten=False,
  warp_specialize=True) and TMA tiled 128x256x64 w8 s4 (was s3). FIT on all 11 of run Q's sizes
  (the squares and nine cuBLAS dips) against the launch each replaces, measured in the same rounds
  (RUN_Q_FIT): its efficiency is the replaced launch's (run O's fit of the old flags, run M's of
  s3) times the geometric mean over the sizes of the replaced block time over the new one (each
  less the launch overhead). TEST: run R (benchmarks/device_run_r_matmul.sh, to come). Not run
  Q's cuBLAS scale (run_scale over its 11 sizes: 0.970): at those sizes, cuBLAS dips, run P's
  cuBLAS ran at 0.953 x run H's against 1.0075 over its 59 sizes, so that scale would lift both
  efficiencies by 3.7% and 1.6% (to 1.040 and 0.986; printed beside, `cublas_scale` in the record).

The stored fit keeps the rows it was fitted on (the model's time without the efficiency, per
size and candidate), so a test can check that the fit is those rows' and that the model still
gives them. `--score` replays runs M to P with the stored fit: per size, the candidate the
model picks now, timed by what the run measured for it, against the issue's bars
(benchmarks/tiles_score.py).

Usage: python3 benchmarks/tiles_fit.py [--write] [--score]  (prints the fit and the held-out
check; --write stores it, with its provenance, in resources/fits/H200_matmul_tiles.json;
--score: runs M's to P's replays against the bars, with the stored fit)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUN = ROOT / "benchmarks" / "run_h" / "chooser_h200.json"
TEST_RUN = ROOT / "benchmarks" / "run_i" / "chooser_h200.json"
TMA_RUN = ROOT / "benchmarks" / "run_m" / "matmul" / "chooser" / "chooser_h200.json"
RUN_N = ROOT / "benchmarks" / "run_n" / "matmul" / "chooser" / "chooser_h200.json"
RUN_O = ROOT / "benchmarks" / "run_o" / "chooser" / "chooser_h200.json"
RUN_P = ROOT / "benchmarks" / "run_p" / "chooser" / "chooser_h200.json"
RUN_Q = ROOT / "benchmarks" / "run_q" / "explore_q" / "tile_explore.json"
# candidate (as declared now) -> (run Q's label of it, the key of the launch it replaces, run Q's
# label of that). Labels of run Q's day: the flags that differed from the stream-K flags then
# declared, flatten=True without warp specialisation
RUN_Q_FIT = {
    "matmul_tma_stream_k 128x256x64 w8 s3": (
        "TMA-stream-K 128x256x64 w8 s3 [flatten=False warp_specialize=True]",
        "matmul_tma_stream_k 128x256x64 w8 s3", "TMA-stream-K 128x256x64 w8 s3"),
    "matmul_tma 128x256x64 w8 s4": (
        "TMA-tiled 128x256x64 w8 s4", "matmul_tma 128x256x64 w8 s3", "TMA-tiled 128x256x64 w8 s3")}
STREAM_K_TMA = "matmul_tma_stream_k"
COMMAND = "python3 benchmarks/tiles_fit.py --write"
TMA_DATE = "2026-12-02"  # run M's
DECLARED_LOOP = ("matmul_auto launches the TMA kernels with their declared loop flags "
                 "(kernels/declare/matmul_problem.py TMA_LOOP): the fitted TMA-persistent "
                 "128x256x64 flatten=False (+2.2% on 3 of run M's sizes) ran at 0.950 x the "
                 "declared flags' speed (median; min 0.863) over run N's 59 sizes, same rounds")
# a kernel not measured yet -> the measured kernel whose efficiency it takes at the same tile
# (none now: run O measured TMA stream-K)
ASSUMED_FROM: dict[str, str] = {}


def split(run: dict, test_run: dict | None = None) -> tuple[list, list]:
    """(fitted on, tested on): run H's sawtooth; run H's squares and all of run I."""
    test = run["squares"] + (test_run["sawtooth"] + test_run["squares"] if test_run else [])
    return run["sawtooth"], test


def split_tma(run: dict) -> tuple[list, list]:
    """(fitted on, tested on) for the TMA kernels: run M's even-indexed sawtooth sizes (N = 2048,
    2560, ...); its odd-indexed ones and its squares."""
    saw = sorted(run["sawtooth"], key=lambda p: p["N"])
    return ([p for p in saw if (p["N"] - 2048) // 256 % 2 == 0],
            [p for p in saw if (p["N"] - 2048) // 256 % 2 == 1] + run["squares"])


def key(candidate: dict) -> str:
    """The fit's key: the kernel's name, the tile and any loop flags in the label (as
    sim.model.matmul_choice.candidate_key)."""
    return f"matmul_{candidate['variant']} {candidate['label'].split(' ', 1)[1]}"


def base_key(k: str) -> str:
    """The key without its loop flags: the model's time is the same for every flag set."""
    return k.split(" [", 1)[0]


def overhead_us() -> float:
    """The H200's launch overhead (resources/physics): the part of a launch no efficiency scales."""
    from sim.rules.devices import preset
    from sim.rules.physics import physics_for

    return physics_for(preset("H200")).value("launch_overhead_us")


def bare_us(candidate) -> float:
    """A chooser candidate's whole-launch time without its efficiency (stream-K's leftover term in)."""
    oh = overhead_us()
    return oh + (candidate.time_us - oh) * candidate.efficiency


def fit_tiles() -> tuple:
    """Every tile some variant weighs (candidate_tiles), for every variant: the model's time of a
    launch a run measured that is no candidate now (run M's TMA tiled s3) is still known."""
    from sim.model.matmul_choice import VARIANTS, candidate_tiles

    return tuple(dict.fromkeys(t for v in VARIANTS for t in candidate_tiles(v)))


def model_rows(points: list, extras: bool = False) -> list[list[tuple[str, float, float]]]:
    """Per size: (key, measured us, the model's us now without the efficiency) per candidate
    (and per TMA extra at a candidate's tile, `extras`)."""
    from kernels.declare.registry import matmul_variants
    from sim.rules.devices import preset
    from sim.model.matmul_choice import choose, tile_label

    specs, gpu, tiles = matmul_variants(), preset("H200"), fit_tiles()
    out = []
    for p in points:
        dims = dict(M=p["M"], N=p["N"], K=p["K"])
        raw = {f"{specs[c.variant].name} {tile_label(c.params)}": bare_us(c)
               for c in choose(specs, dims, gpu, "bfloat16", tiles).candidates}
        launches = p["candidates"] + (p.get("extras", []) if extras else [])
        out.append([(key(c), c["measured_ms"] * 1e3, raw[base_key(key(c))]) for c in launches
                    if base_key(key(c)) in raw])
    return out


def fit(rows, scale: float = 1.0, prefix: str = "") -> dict[str, float]:
    """Per key (those starting with `prefix`): the model's block time over the measured one (each
    less the launch overhead) in the fit run's units (measured x the run's throughput scale),
    geometric mean over the sizes."""
    ratios: dict[str, list] = {}
    oh = overhead_us()
    for size in rows:
        for k, measured, model in size:
            if k.startswith(prefix):
                ratios.setdefault(k, []).append((model - oh) / (measured * scale - oh))
    return {k: round(float(np.exp(np.mean(np.log(v)))), 4) for k, v in sorted(ratios.items())}


def replay(rows, efficiency: dict[str, float], scale: float = 1.0) -> dict:
    """Predictions within 10% and, per size, auto's pick by prediction and its measured time over
    the best measured candidate's."""
    within = total = 0
    picks = []
    oh = overhead_us()
    for size in rows:
        pred = [(k, measured, (oh + (model - oh) / efficiency.get(k, 1.0)) / scale)
                for k, measured, model in size]
        within += sum(abs(p / m - 1) <= 0.10 for _, m, p in pred)
        total += len(pred)
        chosen = min(pred, key=lambda r: r[2])
        picks.append((chosen[0], min(m for _, m, _ in pred) / chosen[1]))
    ratios = np.array([r for _, r in picks])
    return {"within_10pct": within, "predictions": total, "picks": picks,
            "auto_ge_097": int((ratios >= 0.97).sum()), "sizes": len(picks),
            "auto_min": float(ratios.min()), "auto_median": float(np.median(ratios))}


def stored_rows(stored: dict, field: str = "rows") -> list[list[tuple[str, float, float]]]:
    """The rows a stored fit was fitted on, grouped per size as model_rows gives them."""
    sizes: dict = {}
    for M, N, K, k, measured, model in stored[field]:
        sizes.setdefault((M, N, K), []).append((k, measured, model))
    return list(sizes.values())


def _json_rows(points, rows) -> list[str]:
    return [json.dumps([p["M"], p["N"], p["K"], k, round(m, 3), round(t, 3)])
            for p, size in zip(points, rows) for k, m, t in size]


def write_fit(eff: dict, scale: dict, train_pts, train, tma_pts, tma_rows, sk: dict,
              q: dict) -> None:
    """resources/fits/H200_matmul_tiles.json: run H's provenance and rows as before, run M's
    (the TMA kernels') beside them."""
    from sim.model.matmul_choice import TILE_FIT_PATH

    meta = json.dumps({
        "format": "warpscope-tile-fit/3", "gpu": "H200", "date": "2026-12-02",
        "command": COMMAND, "source": str(RUN.relative_to(ROOT)),
        "fitted_on": "run H's sawtooth: M=1024, K=8192, N=2048..16384 step 256 "
                     "(57 sizes x 9 candidates)",
        "tested_on": f"run H's 4096^3 and 8192^3; {TEST_RUN.relative_to(ROOT)} (57 sizes + "
                     "the squares, recorded 2026-12-02)",
        "meaning": "per candidate (kernel, tile, loop flags): the compute model's time over the "
                   "measured one, each less the launch overhead, in run H's units; the candidate's "
                   "block times are the model's over this. rows: [M, N, K, candidate, measured us, the model's us] it was "
                   "fitted on (tma_rows: run M's measured us, times tma.scale in run H's units)",
        "tma": {"kernels": "matmul_tma, matmul_tma_persistent (kernels/bodies/matmul_tma.py)",
                "source": str(TMA_RUN.relative_to(ROOT)), "date": TMA_DATE,
                "fitted_on": "run M's even-indexed sawtooth sizes: N = 2048, 2560, ..., 16384 "
                             "(29 sizes x 6 TMA candidates, declared loop flags)",
                "tested_on": "run M's odd-indexed sawtooth sizes (28) and 4096^3, 8192^3; "
                             f"{RUN_N.relative_to(ROOT)} (57 sizes + the squares)",
                "scale": scale},
        "tma_stream_k": {"kernels": f"{STREAM_K_TMA} (kernels/bodies/matmul_tma.py)",
                         "source": str(RUN_O.relative_to(ROOT)), "date": "2026-12-02",
                         "fitted_on": "run O's even-indexed sawtooth sizes (the flags then "
                                      "declared), the 128x128 and 64x128 tiles (128x256: run_q)",
                         "tested_on": "run O's odd-indexed sawtooth sizes and 4096^3, 8192^3",
                         "scale": sk["scale"]},
        "run_q": {"kernels": "the candidates refitted after run Q: " + ", ".join(RUN_Q_FIT),
                  "source": str(RUN_Q.relative_to(ROOT)), "date": "2026-12-02",
                  "launches": {k: list(v) for k, v in RUN_Q_FIT.items()},
                  "fitted_on": "all 11 of run Q's sizes (4096^3, 8192^3, M=1024 K=8192 N = "
                               + ", ".join(str(n) for n in q["dips"]) + "): each candidate's "
                               "efficiency is the launch it replaces' (its own fit) times the "
                               "geometric mean of that launch's block time over the candidate's, "
                               "same rounds (run_q_pairs: M, N, K, candidate, its us, the "
                               "replaced launch's us)",
                  "tested_on": "run R (benchmarks/device_run_r_matmul.sh; to come)",
                  "replaced": q["replaced"], "speedup": q["speedup"],
                  "cublas_scale": q["cublas_scale"]},
        "declared_loop": DECLARED_LOOP,
        "assumed_from": ASSUMED_FROM,
        "efficiency": eff}, indent=1)
    text = (meta[:-2] + ',\n "rows": [\n  ' + ",\n  ".join(_json_rows(train_pts, train))
            + '\n ],\n "tma_rows": [\n  ' + ",\n  ".join(_json_rows(tma_pts, tma_rows))
            + '\n ],\n "tma_stream_k_rows": [\n  ' + ",\n  ".join(_json_rows(sk["pts"], sk["rows"]))
            + '\n ],\n "run_q_pairs": [\n  ' + ",\n  ".join(json.dumps(r) for r in q["pairs"])
            + "\n ]\n}\n")
    TILE_FIT_PATH.write_text(text)
    print(f"wrote {TILE_FIT_PATH.relative_to(ROOT)}")


def _check_line(name, rows, pts, eff, scale=1.0):
    before, after = replay(rows, {}, scale), replay(rows, eff, scale)
    print(f"{name} ({len(pts)} sizes): within 10% {before['within_10pct']}/{before['predictions']}"
          f" -> {after['within_10pct']}/{after['predictions']}; auto >= 0.97 x best "
          f"{before['auto_ge_097']}/{before['sizes']} (min {before['auto_min']:.3f}) -> "
          f"{after['auto_ge_097']}/{after['sizes']} (min {after['auto_min']:.3f})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="store the fit in resources/fits/")
    ap.add_argument("--score", action="store_true", help="runs M to P replayed against the bars")
    args = ap.parse_args(argv)
    from sim.model.matmul_choice import tile_fit

    run, run_m = json.loads(RUN.read_text()), json.loads(TMA_RUN.read_text())
    train_pts, test_pts = split(run, json.loads(TEST_RUN.read_text()))
    train, test = model_rows(train_pts), model_rows(test_pts)
    eff = fit(train, prefix="matmul_")
    eff = {k: v for k, v in eff.items() if not k.startswith("matmul_tma")}
    scale = run_scale(run_m, run)
    tma_pts, tma_test_pts = split_tma(run_m)
    tma_rows = [[r for r in size if r[0].startswith("matmul_tma")] for size in model_rows(tma_pts)]
    eff_tma = fit(tma_rows, scale["value"], "matmul_tma")
    sk = stream_k_tma_fit(run)
    q = run_q_fit({**eff_tma, **sk["efficiency"]}, run)
    eff_all = dict(sorted({**eff, **eff_tma, **sk["efficiency"], **q["efficiency"]}.items()))
    old = tile_fit().get("efficiency", {})
    print(f"run M's throughput scale: {scale['value']:.4f} ({scale['how']})")
    print("run Q's refit: the replaced launch's efficiency x its block time over the new one's, "
          "same rounds (geometric mean over 11 sizes):")
    for k, v in q["efficiency"].items():
        print(f"  {k}: {q['replaced'][k][1]:.4f} ({q['replaced'][k][0]}) x "
              f"{q['speedup'][k]:.4f} = {v:.4f}; with run Q's cuBLAS scale "
              f"{q['cublas_scale']['value']:.4f} instead: {q['cublas_scale']['efficiency'][k]:.4f}")
    print("efficiency (model time / measured, run H's units); stored one beside:")
    for k, v in eff_all.items():
        print(f"  {k:<52} {v:.4f}  ({old.get(k, float('nan')):.4f})")
    held = len(run["squares"])
    _check_line("pointer kernels, fitted on run H's sawtooth", train, train_pts, eff_all)
    _check_line("tested on: run H's squares", test[:held], test_pts[:held], eff_all)
    _check_line("tested on: run I", test[held:], test_pts[held:], eff_all)
    sk_test = [[r for r in size if r[0].startswith(STREAM_K_TMA)] for size in model_rows(sk["test"])]
    _check_line("TMA stream-K, tested on run O's odd sizes and squares", sk_test, sk["test"], eff_all,
                sk["scale"]["value"])
    if args.write:
        write_fit(eff_all, scale, train_pts, train, tma_pts, tma_rows, sk, q)
        tile_fit.cache_clear()
    if args.score:
        from benchmarks.tiles_score import print_score, score_run

        print_score(score_run(run_m, scale["value"]), scale, "run M")
        run_n = json.loads(RUN_N.read_text())
        scale_n = run_scale(run_n, run)
        print_score(score_run(run_n, scale_n["value"], fit_n=set()), scale_n, "run N")
        run_o = json.loads(RUN_O.read_text())
        fit_o = {p["N"] for p in split_tma(run_o)[0]}
        print_score(score_run(run_o, sk["scale"]["value"], fit_n=fit_o), sk["scale"], "run O")
        run_p = json.loads(RUN_P.read_text())
        scale_p = run_scale(run_p, run)
        print_score(score_run(run_p, scale_p["value"], fit_n=set()), scale_p, "run P")
    return 0


def stream_k_tma_fit(reference: dict) -> dict:
    """TMA stream-K's efficiency per tile, fitted on run O's even sawtooth sizes in the reference
    run's units (run O's own scale; at 128x256x64 that of the flags then declared, which run
    Q's refit starts from: RUN_Q_FIT); its rows, and the sizes it is tested on."""
    run_o = json.loads(RUN_O.read_text())
    scale = run_scale(run_o, reference)
    pts, test = split_tma(run_o)
    rows = [[r for r in size if r[0].startswith(STREAM_K_TMA)] for size in model_rows(pts)]
    return {"efficiency": fit(rows, scale["value"], STREAM_K_TMA), "scale": scale, "pts": pts,
            "rows": rows, "test": test}


def explore_run(explore: dict, launches: dict) -> dict:
    """A tile_explore.py result as a chooser run (sawtooth and squares, as run_scale and
    model_rows read one): per size cuBLAS and, as candidates, the `launches` (key -> the run's
    label) it measured."""
    from sim.model.matmul_choice import VARIANT_TITLES

    out = {"sawtooth": [], "squares": []}
    for p in explore["points"]:
        ms = {k: v["median"] for k, v in p["ms"].items()}
        cands = []
        for k, label in launches.items():
            name, tile = k.split(" ", 1)
            variant = name.removeprefix("matmul_")
            if label in ms:
                cands.append({"variant": variant, "label": f"{VARIANT_TITLES[variant]} {tile}",
                              "measured_ms": ms[label]})
        row = {"M": p["M"], "N": p["N"], "K": p["K"], "cublas_ms": ms["cuBLAS"],
               "candidates": cands}
        out["squares" if p["M"] == p["N"] == p["K"] else "sawtooth"].append(row)
    return out


def run_q_pairs(explore: dict) -> list[list]:
    """[M, N, K, candidate, its us, the replaced launch's us] per run Q size and RUN_Q_FIT entry."""
    out = []
    for p in explore["points"]:
        ms = {k: v["median"] * 1e3 for k, v in p["ms"].items()}
        out += [[p["M"], p["N"], p["K"], k, round(ms[now], 3), round(ms[then], 3)]
                for k, (now, _, then) in RUN_Q_FIT.items()]
    return out


def same_rounds_fit(pairs: list, replaced: dict) -> tuple[dict, dict]:
    """(efficiency, speed-up) per candidate: the replaced launch's efficiency (`replaced`: key
    -> it) times the geometric mean of its block time over the candidate's (less the launch
    overhead; the scale of the machine cancels, both measured in the same rounds)."""
    oh, ratios = overhead_us(), {}
    for *_, k, now, then in pairs:
        ratios.setdefault(k, []).append((then - oh) / (now - oh))
    speedup = {k: float(np.exp(np.mean(np.log(v)))) for k, v in ratios.items()}
    return ({k: round(replaced[k] * v, 4) for k, v in speedup.items()},
            {k: round(v, 4) for k, v in speedup.items()})


def run_q_fit(fitted: dict, reference: dict) -> dict:
    """RUN_Q_FIT's candidates fitted on all of run Q against the launches they replace
    (same_rounds_fit; `fitted`: the efficiencies those launches were fitted with), and, for the
    record, the fit the cuBLAS scale of run Q's 11 sizes would give (run_scale; not used)."""
    explore = json.loads(RUN_Q.read_text())
    pairs = run_q_pairs(explore)
    replaced = {k: fitted[then] for k, (_, then, _) in RUN_Q_FIT.items()}
    eff, speedup = same_rounds_fit(pairs, replaced)
    as_run = explore_run(explore, {k: now for k, (now, _, _) in RUN_Q_FIT.items()})
    scale = run_scale(as_run, reference)
    rows = model_rows(as_run["squares"] + as_run["sawtooth"])
    scale["efficiency"] = fit(rows, scale["value"], "matmul_")
    scale["not_used"] = ("run Q's sizes are cuBLAS dips: there run P's cuBLAS ran at 0.953 x "
                         "run H's, against 1.0075 over its 59 sizes")
    return {"efficiency": eff, "speedup": speedup, "pairs": pairs, "cublas_scale": scale,
            "replaced": {k: [RUN_Q_FIT[k][1], replaced[k]] for k in RUN_Q_FIT},
            "dips": [p["N"] for p in as_run["sawtooth"]]}


# --- one throughput scale per run ----------------------------------------------------------
def run_scale(run: dict, reference: dict) -> dict:
    """This run's throughput over the reference run's (the one the efficiencies are in the units
    of: the tile fit's run H), the one scale allowed per run: the median, over every size both
    measured, of the reference's cuBLAS time over this run's. One size is a fragile reference:
    run M's cuBLAS at 8192^3 ran 14% below run H's while its median over 59 sizes was 0.8% below
    (and its candidates' median 1.4%)."""
    def times(r):
        return {(p["M"], p["N"], p["K"]): p["cublas_ms"] for p in r["sawtooth"] + r["squares"]}

    here, ref = times(run), times(reference)
    ratios = sorted(ref[k] / here[k] for k in here if k in ref)
    if not ratios:
        return {"value": 1.0, "sizes": 0, "how": "no size in common with the reference run: 1"}
    lo, hi = ratios[len(ratios) // 10], ratios[-1 - len(ratios) // 10]
    return {"value": float(np.median(ratios)), "sizes": len(ratios),
            "how": f"median over {len(ratios)} sizes of cuBLAS there over cuBLAS here "
                   f"(10-90%: {lo:.3f}-{hi:.3f})"}


def scale_reference() -> tuple[dict, str]:
    """The run the tile fit's efficiencies are in the units of (its "source"), and its path."""
    from sim.model.matmul_choice import tile_fit

    source = tile_fit().get("source", "benchmarks/run_h/chooser_h200.json")
    return json.loads((ROOT / source).read_text()), source


def this_run_scale(result: dict) -> dict:
    """run_scale against scale_reference(), with the old one-size figure (cuBLAS 8192^3) beside."""
    reference, source = scale_reference()
    scale = run_scale(result, reference)
    scale["how"] += f" in {source}"
    for s in result["squares"]:
        ref = next((r for r in reference["squares"] if r["M"] == s["M"] == 8192), None)
        if ref:
            scale["cublas_8192_only"] = ref["cublas_ms"] / s["cublas_ms"]
    return scale


def cublas_dips(rows: list) -> list[int]:
    """Indices of the sizes where cuBLAS runs at least 5% below the mean of its two neighbours
    (256 apart in N): rows sorted by N."""
    def tflops(r):
        return r.get("cublas_tflops") or 2 * r["M"] * r["N"] * r["K"] / r["cublas_ms"] / 1e9

    return [i for i in range(1, len(rows) - 1)
            if rows[i + 1]["N"] - rows[i - 1]["N"] == 512
            and tflops(rows[i]) <= 0.95 * (tflops(rows[i - 1]) + tflops(rows[i + 1])) / 2]


if __name__ == "__main__":
    sys.exit(main())
