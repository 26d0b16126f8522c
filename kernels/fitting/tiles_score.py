"""The TMA and stream-K chooser runs (tests/data/h200_matmul_tiles: tma_fit.json to
old_flags_heldout.json) replayed with the stored tile fit (benchmarks/tiles_fit.py --score): per
size, the candidate the model picks now, timed by what the run measured for it, against the
chooser's bars."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from kernels.fitting.chooser_summary import DIPS  # noqa: E402
from kernels.fitting.tiles_fit import base_key, cublas_dips, key, split_tma  # noqa: E402


# TMA stream-K's loop as once declared (flatten, no warp specialisation): older runs' labels
OLD_SK_LOOP = dict(flatten=True, warp_specialize=False)


def tma_label(variant: str, params: dict, loop: dict) -> str:
    """The candidate's label (matmul_choice), with the loop flags that differ from the ones the
    variant declares at these warps (matmul_problem.tma_loop; TMA tiled has none): the declared
    loop reads as the candidate itself."""
    from kernels.declare.matmul_problem import TMA_LOOP, tma_loop
    from sim.model.matmul_choice import VARIANT_TITLES, loop_suffix, tile_label

    declared = tma_loop(variant, params["num_warps"]) if variant in TMA_LOOP else {}
    flags = {k: v for k, v in loop.items() if v != declared.get(k.upper(), False)}
    group = f" g{params['GROUP_M']}" if params["GROUP_M"] != 8 else ""  # the candidates' is 8
    return f"{VARIANT_TITLES[variant]} {tile_label(params)}{group}{loop_suffix(flags)}"


def score_run(run: dict, scale: float, fit_n: set | None = None) -> list[dict]:
    """Per size of a chooser run (sawtooth, then squares): the candidate the model picks now,
    timed by what the run measured for it, beside the best measured candidate and cuBLAS; and
    each candidate's prediction (in the run's units: over `scale`) beside its measurement.
    `fit_n`: the N the TMA fit was made on (default the run's even-indexed sizes, as
    tma_fit.json's; set() for a run wholly held out). A candidate with loop flags the run did not
    measure at a size is timed by the run's launch of the same kernel and tile with the declared
    flags, else by one of the same kernel, tile and warps at other flags or stages
    (old_flags_heldout.json: TMA stream-K with the withdrawn flatten=False + warp_specialize
    declaration, TMA tiled s4; both "stand_in"); one the run did not measure at all (a kernel
    newer than the run) is left out of the size's candidates ("unmeasured") and the pick is the
    fastest predicted of the others. A run whose candidates kept their flags (declared_loop) is read
    against the flags declared now first (as_declared_now)."""
    from kernels.declare.registry import matmul_variants
    from sim.rules.devices import preset
    from sim.model.matmul_choice import choose

    specs, gpu = matmul_variants(), preset("H200")
    fit_n = {p["N"] for p in split_tma(run)[0]} if fit_n is None else fit_n
    out = []
    run = as_declared_now(run)
    for p in sorted(run["sawtooth"], key=lambda p: p["N"]) + run["squares"]:
        measured = {key(c): c["measured_ms"] for c in p["candidates"] + p.get("extras", [])}
        choice = choose(specs, dict(M=p["M"], N=p["N"], K=p["K"]), gpu, "bfloat16")
        cands, unmeasured = [], []
        for c in choice.candidates:
            k = f"{specs[c.variant].name} {c.label.split(' ', 1)[1]}"
            timed = next((x for x in (k, base_key(k), *(m for m in measured
                                                        if _same_tile(m) == _same_tile(k)))
                          if x in measured), None)
            if timed is None:
                unmeasured.append(k)
                continue
            stand_in = timed != k
            cands.append({"key": k, "measured_ms": measured[timed],
                          "predicted_ms": c.time_us / 1e3 / scale, "stand_in": stand_in,
                          "tma": c.variant.startswith("tma"), "assumed": c.assumed})
        pick = cands[0]  # choose sorts fastest first
        best = min(c["measured_ms"] for c in cands)
        old = next(c["measured_ms"] for c in p["candidates"] if c["label"] == p["chosen"])
        square = p["M"] == p["N"] == p["K"]
        out.append({"M": p["M"], "N": p["N"], "K": p["K"], "square": square,
                    "set": "test" if square or p["N"] not in fit_n else "fit",
                    "pick": pick["key"], "pick_stand_in": pick["stand_in"],
                    "pick_vs_best": best / pick["measured_ms"], "run_pick_vs_best": best / old,
                    "pick_vs_cublas": p["cublas_ms"] / pick["measured_ms"],
                    "run_pick_vs_cublas": p["cublas_ms"] / p["auto_ms"],
                    "cublas_ms": p["cublas_ms"], "candidates": cands,
                    "unmeasured": unmeasured, "unmeasured_ahead": choice.chosen.label != next(
                        c.label for c in choice.candidates
                        if f"{specs[c.variant].name} {c.label.split(' ', 1)[1]}" not in unmeasured)})
    return out


def _same_tile(k: str) -> str:
    """A fit key without its loop flags and stages: "matmul_tma 128x256x64 w8"."""
    return base_key(k).rsplit(" ", 1)[0]


def _candidate_params(c: dict) -> dict:
    """A chooser row's candidate as tile_params gives it (GROUP_M 8, as every candidate's)."""
    from sim.model.matmul_choice import tile_params

    warps, stages = (int(x[1:]) for x in c["label"].split(" [")[0].split()[-2:])
    return tile_params((*map(int, c["tile"].split("x")), 8, warps, stages))


def as_declared_now(run: dict) -> dict:
    """`run` with each TMA launch labelled by the flags it ran with against those declared now
    (tma_label): a candidate by its declared_loop (kept from old_flags_heldout.json on: its
    candidates carried the since-withdrawn TMA stream-K declaration, flatten=False +
    warp_specialize), an extra by its own flags over the declaration of its run (its
    candidate twin's declared_loop). A run without declared_loop is returned as it is."""
    def label(variant, params, flags):
        return tma_label(variant, params, {k.lower(): v for k, v in flags.items()})

    out = {**run, "sawtooth": [], "squares": []}
    for part in ("sawtooth", "squares"):
        for p in run[part]:
            p = {**p, "candidates": [dict(c) for c in p["candidates"]],
                 "extras": [dict(e) for e in p.get("extras", [])]}
            declared = {}
            for c in (c for c in p["candidates"] if c.get("declared_loop")):
                params = _candidate_params(c)
                declared[(c["variant"], c["tile"], params["num_warps"])] = c["declared_loop"]
                new = label(c["variant"], params, c["declared_loop"])
                p["chosen"] = new if p["chosen"] == c["label"] else p["chosen"]
                c["label"] = new
            for e in p["extras"]:
                q = e["params"]
                then = declared.get((e["variant"], f"{q['BLOCK_M']}x{q['BLOCK_N']}x{q['BLOCK_K']}",
                                     q["num_warps"]))
                if then is not None:
                    e["label"] = label(e["variant"], q, {**then, **{
                        k.upper(): v for k, v in e["loop"].items()}})
            out[part].append(p)
    return out


def print_score(rows: list[dict], scale: dict, name: str = "tma_fit.json") -> None:
    saw = [r for r in rows if not r["square"]]
    misses = [r for r in saw if r["pick_vs_best"] < 0.97]
    print(f"\nReplay of {name} with the stored fit (the pick timed by {name}'s measurement of it):")
    print(f"  bar 1, pick >= 0.97 x best measured candidate: {len(saw) - len(misses)}/{len(saw)} "
          f"sawtooth sizes (min {min(r['pick_vs_best'] for r in saw):.3f}); misses: "
          + ", ".join(f"N={r['N']} ({r['set']}) {r['pick']} {r['pick_vs_best']:.3f}" for r in misses)
          + f"; the run's own pick (the model then) timed alike: "
          f"{sum(r['run_pick_vs_best'] >= 0.97 for r in saw)}/{len(saw)}")
    for r in rows:
        if r["square"]:
            print(f"  bar 2, {r['M']}^3: pick {r['pick']} {r['pick_vs_cublas']:.3f} x cuBLAS "
                  f"(the run's matmul_auto: {r['run_pick_vs_cublas']:.3f})")
    own = {saw[i]["N"] for i in cublas_dips(saw)}
    for r in (r for r in saw if r["N"] in set(DIPS) | own):
        tag = (f"the sawtooth's known and {name}'s dip" if r["N"] in own and r["N"] in DIPS else
               "the sawtooth's known dip" if r["N"] in DIPS else f"{name}'s dip")
        print(f"  bar 3, {tag} N={r['N']}: pick {r['pick']} {r['pick_vs_cublas']:.3f} x cuBLAS"
              f" (best candidate {r['pick_vs_cublas'] / r['pick_vs_best']:.3f}; the run's "
              f"matmul_auto {r['run_pick_vs_cublas']:.3f})")
    print(f"  stand-ins (the pick not measured at that size, timed by its kernel and tile at other "
          f"flags or stages): "
          f"{sum(r['pick_stand_in'] for r in rows)} picks; candidates the run did not measure "
          f"(left out): {sorted({k for r in rows for k in r['unmeasured']}) or 'none'}, "
          f"predicted fastest at {sum(r['unmeasured_ahead'] for r in rows)} sizes")
    for part, pick in (("fit (even sawtooth)", lambda r: r["set"] == "fit"),
                       ("test (held-out sawtooth + squares)", lambda r: r["set"] == "test")):
        for kind, sel in (("TMA", lambda c: c["tma"]), ("pointer", lambda c: not c["tma"])):
            pts = [c for r in rows if pick(r) for c in r["candidates"]
                   if sel(c) and not c["stand_in"]]
            if not pts:
                continue
            scaled = sum(abs(c["predicted_ms"] / c["measured_ms"] - 1) <= 0.10 for c in pts)
            raw = sum(abs(c["predicted_ms"] * scale["value"] / c["measured_ms"] - 1) <= 0.10
                      for c in pts)
            print(f"  bar 4, {part}, {kind}: within 10% {scaled}/{len(pts)} with the run's "
                  f"scale {scale['value']:.3f}, {raw}/{len(pts)} raw")
