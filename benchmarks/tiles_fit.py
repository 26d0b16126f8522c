"""Fit matmul_auto's per-candidate efficiency (resources/fits/H200_matmul_tiles.json) on run H.

The compute-bound model's tensor efficiency was fitted on the 128x256x64 w8 tile only. A smaller
tile does fewer FLOPs per byte it stages through shared memory (64x128: 43 FLOP/B against 85 for
128x256), and a w4 tile has half the warps to cover the wgmma and load latencies, so it sustains a
smaller share of the tensor rate; the variant's loop (persistent's per-program tile walk,
stream-K's K-split units) changes what the pipeline overlaps. On the H200 sawtooth
(benchmarks/run_h/chooser_h200.json) measured / predicted is nearly flat in N per candidate
(1.04 for tiled 128x256, 1.6 for persistent 64x128), so the missing piece is one sustained
efficiency per (variant, tile): the candidate's time is the model's time over it.

* fitted on run H's whole sawtooth: M=1024, K=8192, N = 2048..16384 step 256 (57 sizes; until
  2026-12-02 every other one, 29 sizes: run I showed the one extra run of data the better use);
* tested on run H's squares (4096^3, 8192^3) and on run I (benchmarks/run_i, the same sweep
  recorded on 2026-12-02 after the fit, 57 sizes + the squares), which no fit has seen.

The stored fit keeps the rows it was fitted on (the model's time without the efficiency, per
size and candidate), so a test can check that the fit is those rows' and that the model still
gives them.

Usage: python3 benchmarks/tiles_fit.py [--write]  (prints the fit and the held-out check;
--write stores it, with its provenance, in resources/fits/H200_matmul_tiles.json)
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
COMMAND = "python3 benchmarks/tiles_fit.py --write"


def split(run: dict, test_run: dict | None = None) -> tuple[list, list]:
    """(fitted on, tested on): run H's sawtooth; run H's squares and all of run I."""
    test = run["squares"] + (test_run["sawtooth"] + test_run["squares"] if test_run else [])
    return run["sawtooth"], test


def key(candidate: dict) -> str:
    """The fit's key: the kernel's name and the tile (sim.model.matmul_choice.candidate_key)."""
    return f"matmul_{candidate['variant']} {candidate['label'].split(' ', 1)[1]}"


def model_rows(points: list) -> list[list[tuple[str, float, float]]]:
    """Per size: (key, measured us, the model's us now without the efficiency) per candidate."""
    from kernels.declare.registry import matmul_variants
    from sim.rules.devices import preset
    from sim.model.matmul_choice import choose

    specs, gpu = matmul_variants(), preset("H200")
    out = []
    for p in points:
        raw = {f"{specs[c.variant].name} {c.label.split(' ', 1)[1]}": c.time_us * c.efficiency
               for c in choose(specs, dict(M=p["M"], N=p["N"], K=p["K"]), gpu, "bfloat16").candidates}
        out.append([(key(c), c["measured_ms"] * 1e3, raw[key(c)]) for c in p["candidates"]])
    return out


def fit(rows) -> dict[str, float]:
    """Per key: the model's time over the measured one, geometric mean over the sizes."""
    ratios: dict[str, list] = {}
    for size in rows:
        for k, measured, model in size:
            ratios.setdefault(k, []).append(model / measured)
    return {k: round(float(np.exp(np.mean(np.log(v)))), 4) for k, v in sorted(ratios.items())}


def replay(rows, efficiency: dict[str, float]) -> dict:
    """Predictions within 10% and, per size, auto's pick by prediction and its measured time over
    the best measured candidate's."""
    within = total = 0
    picks = []
    for size in rows:
        pred = [(k, measured, model / efficiency.get(k, 1.0)) for k, measured, model in size]
        within += sum(abs(p / m - 1) <= 0.10 for _, m, p in pred)
        total += len(pred)
        chosen = min(pred, key=lambda r: r[2])
        picks.append((chosen[0], min(m for _, m, _ in pred) / chosen[1]))
    ratios = np.array([r for _, r in picks])
    return {"within_10pct": within, "predictions": total, "picks": picks,
            "auto_ge_097": int((ratios >= 0.97).sum()), "sizes": len(picks),
            "auto_min": float(ratios.min()), "auto_median": float(np.median(ratios))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="store the fit in resources/fits/")
    args = ap.parse_args(argv)
    from sim.model.matmul_choice import TILE_FIT_PATH, tile_fit

    run = json.loads(RUN.read_text())
    train_pts, test_pts = split(run, json.loads(TEST_RUN.read_text()))
    train, test = model_rows(train_pts), model_rows(test_pts)
    eff = fit(train)
    old = tile_fit().get("efficiency", {})
    print("efficiency (model time / measured), fitted on run H's sawtooth (stored one beside):")
    for k, v in eff.items():
        print(f"  {k:<40} {v:.4f}  ({old.get(k, float('nan')):.4f})")
    held = len(run["squares"])  # the test rows: run H's squares first, then run I
    for name, rows, pts in (("fitted on", train, train_pts),
                            ("tested on: run H's squares", test[:held], test_pts[:held]),
                            ("tested on: run I", test[held:], test_pts[held:])):
        before, after = replay(rows, {}), replay(rows, eff)
        print(f"{name} ({len(pts)} sizes): within 10% {before['within_10pct']}/{before['predictions']}"
              f" -> {after['within_10pct']}/{after['predictions']}; auto >= 0.97 x best "
              f"{before['auto_ge_097']}/{before['sizes']} (min {before['auto_min']:.3f}) -> "
              f"{after['auto_ge_097']}/{after['sizes']} (min {after['auto_min']:.3f})")
        if name.startswith("tested on"):
            for p, (b, a) in zip(pts, zip(before["picks"], after["picks"])):
                if min(b[1], a[1]) < 0.97:
                    print(f"  {p['M']}x{p['N']}x{p['K']}: before {b[0]} {b[1]:.3f}; "
                          f"after {a[0]} {a[1]:.3f}")
    if args.write:
        meta = json.dumps({
            "format": "warpscope-tile-fit/2", "gpu": "H200", "date": "2026-12-02",
            "command": COMMAND, "source": str(RUN.relative_to(ROOT)),
            "fitted_on": "run H's sawtooth: M=1024, K=8192, N=2048..16384 step 256 "
                         "(57 sizes x 9 candidates)",
            "tested_on": f"run H's 4096^3 and 8192^3; {TEST_RUN.relative_to(ROOT)} (57 sizes + "
                         "the squares, recorded 2026-12-02)",
            "meaning": "per candidate (kernel, tile): the compute model's time over the measured "
                       "one; the candidate's predicted time is the model's over this. rows: "
                       "[M, N, K, candidate, measured us, the model's us] it was fitted on",
            "efficiency": eff}, indent=1)
        rows = [json.dumps([p["M"], p["N"], p["K"], k, round(m, 3), round(t, 3)])
                for p, size in zip(train_pts, train) for k, m, t in size]
        TILE_FIT_PATH.write_text(meta[:-2] + ',\n "rows": [\n  ' + ",\n  ".join(rows) + "\n ]\n}\n")
        print(f"wrote {TILE_FIT_PATH.relative_to(ROOT)}")
    return 0


def stored_rows(stored: dict) -> list[list[tuple[str, float, float]]]:
    """The rows a stored fit was fitted on, grouped per size as model_rows gives them."""
    sizes: dict = {}
    for M, N, K, k, measured, model in stored["rows"]:
        sizes.setdefault((M, N, K), []).append((k, measured, model))
    return list(sizes.values())


if __name__ == "__main__":
    sys.exit(main())
