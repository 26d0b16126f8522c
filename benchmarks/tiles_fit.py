"""Fit matmul_auto's per-candidate efficiency (resources/fits/H200_matmul_tiles.json) on run H.

The compute-bound model's tensor efficiency was fitted on the 128x256x64 w8 tile only. A smaller
tile does fewer FLOPs per byte it stages through shared memory (64x128: 43 FLOP/B against 85 for
128x256), and a w4 tile has half the warps to cover the wgmma and load latencies, so it sustains a
smaller share of the tensor rate; the variant's loop (persistent's per-program tile walk,
stream-K's K-split units) changes what the pipeline overlaps. On the H200 sawtooth
(benchmarks/run_h/chooser_h200.json) measured / predicted is nearly flat in N per candidate
(1.04 for tiled 128x256, 1.6 for persistent 64x128), so the missing piece is one sustained
efficiency per (variant, tile): the candidate's time is the model's time over it.

* fitted on every other sawtooth size: M=1024, K=8192, N = 2048, 2560, ..., 16384 (29 sizes);
* tested on the others, N = 2304, 2816, ..., 16128 (28 sizes), plus 4096^3 and 8192^3.

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
COMMAND = "python3 benchmarks/tiles_fit.py --write"


def split(run: dict) -> tuple[list, list]:
    """(fitted on, tested on): every other sawtooth size; the rest and the squares."""
    saw = run["sawtooth"]
    return saw[0::2], saw[1::2] + run["squares"]


def key(candidate: dict) -> str:
    """The fit's key: the kernel's name and the tile (sim.model.matmul_choice.candidate_key)."""
    return f"matmul_{candidate['variant']} {candidate['label'].split(' ', 1)[1]}"


def model_rows(points: list, recorded: bool = False) -> list[list[tuple[str, float, float]]]:
    """Per size: (key, measured us, the model's us without the efficiency) per candidate.
    `recorded`: the predictions stored in the run (no simulation), else the model's now."""
    if recorded:
        return [[(key(c), c["measured_ms"] * 1e3, c["predicted_ms"] * 1e3)
                 for c in p["candidates"]] for p in points]
    from kernels.declare.registry import matmul_variants
    from sim.rules.devices import preset
    from sim.model.matmul_choice import choose

    specs, gpu = matmul_variants(), preset("H200")
    out = []
    for p in points:
        raw = {f"{specs[c.variant].name} {c.label.split(' ', 1)[1]}": c.time_us / c.efficiency
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
    from sim.model.matmul_choice import TILE_FIT_PATH

    run = json.loads(RUN.read_text())
    train_pts, test_pts = split(run)
    train, test = model_rows(train_pts), model_rows(test_pts)
    eff = fit(train)
    print("efficiency (model time / measured), fitted on every other N:")
    for k, v in eff.items():
        print(f"  {k:<40} {v:.4f}")
    for name, rows, pts in (("fitted on", train, train_pts), ("tested on", test, test_pts)):
        before, after = replay(rows, {}), replay(rows, eff)
        print(f"{name} ({len(pts)} sizes): within 10% {before['within_10pct']}/{before['predictions']}"
              f" -> {after['within_10pct']}/{after['predictions']}; auto >= 0.97 x best "
              f"{before['auto_ge_097']}/{before['sizes']} (min {before['auto_min']:.3f}) -> "
              f"{after['auto_ge_097']}/{after['sizes']} (min {after['auto_min']:.3f})")
        if name == "tested on":
            for p, (b, a) in zip(pts, zip(before["picks"], after["picks"])):
                print(f"  {p['M']}x{p['N']}x{p['K']}: before {b[0]} {b[1]:.3f}; after {a[0]} {a[1]:.3f}")
    if args.write:
        TILE_FIT_PATH.write_text(json.dumps({
            "format": "warpscope-tile-fit/1", "gpu": "H200", "date": "2026-12-01",
            "command": COMMAND, "source": str(RUN.relative_to(ROOT)),
            "fitted_on": "M=1024, K=8192, N=2048..16384 step 512 (every other size of run H's "
                         "sawtooth, 29 sizes x 9 candidates)",
            "tested_on": "N=2304..16128 step 512 (28 sizes) and 4096^3, 8192^3",
            "meaning": "per candidate (kernel, tile): the compute model's time over the measured "
                       "one; the candidate's predicted time is the model's over this",
            "efficiency": eff}, indent=1) + "\n")
        print(f"wrote {TILE_FIT_PATH.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
