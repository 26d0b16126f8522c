"""Fit stream-K's leftover-wave slowdown (sim.model.matmul_choice.STREAM_K_SLOWDOWN) on the H200 sawtooth.

The compute-bound model times stream-K's leftover units by their FLOPs, bytes and atomics, and
is 30-55% fast where the leftover tiles fill 70-97% of a wave (resources/measured/H200_matmul_sawtooth.json,
M=1024, K=8192: N=3328..3840, 7680, 12032). What it misses was not found (it is not the atomics'
volume, which is the same at every fill; and a model of re-reads of operand slices that
programs at different K offsets share did not reproduce it). The measured excess over the model,
in units of one tile's tensor time, depends on the fill and repeats wave after wave, so it is
fitted as a piecewise-linear function of the fill:

* fitted on the first wave: N = 256..4096 (8..128 tiles, no full wave before the leftover);
* tested on the rest: N = 4352..14080 (the second and third waves' leftovers), 39 sizes.

Usage: python3 benchmarks/stream_k_fit.py [--write]  (prints the knots and the check; --write
prints the constant to paste into sim/model/matmul_choice.py)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUN = ROOT / "resources" / "measured" / "H200_matmul_sawtooth.json"
KNOTS = (0.0, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.97, 1.0)


def rows():
    """(N, fill, excess in tile times, measured us, model us) per stream-K sawtooth point."""
    from kernels.declare.registry import get_kernel
    from sim.rules.devices import preset
    from sim.model.matmul_choice import leftover_fill, tile_time_us
    from sim.model.throughput import predict_matmul

    saw = json.loads(RUN.read_text())["steps"]["sawtooth"]
    spec, gpu = get_kernel("matmul_stream_k"), preset("H200")
    out = []
    for p in saw["points"]:
        dims = dict(M=p["M"], N=p["N"], K=p["K"])
        pr = predict_matmul(spec, dims, gpu, dtype=saw["dtype"], fitted=False)
        measured = p["stream_k"]["median_ms"] * 1e3
        fill = leftover_fill(pr.tiles, pr.concurrent_tiles)
        tile = tile_time_us(gpu, pr.params, dims["K"], saw["dtype"])
        out.append((p["N"], fill, (measured - pr.time_us) / tile, measured, pr.time_us, tile))
    return out


def fit(points) -> tuple[float, ...]:
    """Least-squares values at KNOTS of a piecewise-linear g(fill), g >= 0."""
    fills = np.array([r[1] for r in points])
    y = np.array([r[2] for r in points])
    basis = np.stack([np.interp(fills, KNOTS, np.eye(len(KNOTS))[i]) for i in range(len(KNOTS))], 1)
    used = basis.sum(0) > 0
    coef = np.zeros(len(KNOTS))
    coef[used] = np.linalg.lstsq(basis[:, used], y, rcond=None)[0]
    return tuple(round(float(max(c, 0.0)), 3) for c in coef)


def main() -> int:
    from sim.model.matmul_choice import stream_k_slowdown

    all_rows = rows()
    train = [r for r in all_rows if r[0] <= 4096]
    test = [r for r in all_rows if r[0] > 4096]
    knots = fit(train)
    print("knots (fill -> excess in tile times):", dict(zip(KNOTS, knots)))
    for name, part in (("fitted on (N<=4096)", train), ("tested on (N>4096)", test)):
        raw = sum(abs(r[4] / r[3] - 1) <= 0.10 for r in part)
        fixed = sum(abs((r[4] + stream_k_slowdown(r[1], knots) * r[5]) / r[3] - 1) <= 0.10
                    for r in part)
        print(f"{name}: within 10% without the term {raw}/{len(part)}, with it {fixed}/{len(part)}")
        for r in part:
            corrected = r[4] + stream_k_slowdown(r[1], knots) * r[5]
            print(f"  N={r[0]:>5} fill {r[1]:.2f}: measured {r[3]:6.1f} us, model {r[4]:6.1f} "
                  f"({r[4] / r[3] - 1:+.0%}), with the term {corrected:6.1f} ({corrected / r[3] - 1:+.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
