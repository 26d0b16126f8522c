"""How well the launch model's memory-bound prediction (sim.model.launch_model) agrees with the H200, on the points it was not
fitted to.

The launch overhead was fitted to `add_numba_naive` at 2^26 elements over 32..1024 threads per
block (benchmarks/RESULTS.md), the trip overhead on the 2^24 rows of resources/measured/H200_latency.json;
every other GPU-timed row of tests/data/h200_block_size_sweep.json (block-size sweep) and
tests/data/h200_size_sweep.json (size sweep) that has an occupancy is a check. A grid-stride
kernel's loop trips come from its declaration (kernels/declare/registry.py). Prints the misses (more than
10% off), the share within 10% and the rms error on the fitted rows. No GPU needed:

    python3 -m kernels.fitting.predict_check [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kernels.fitting import DATA, read_json

from kernels.declare.registry import get_kernel  # noqa: E402
from sim.rules.devices import preset  # noqa: E402
from sim.model.latency import DEFAULT_LOADS  # noqa: E402
from sim.model.launch_model import Launch, predict_launch  # noqa: E402

FILES = ("h200_block_size_sweep.json", "h200_size_sweep.json")


def fitted(m) -> bool:
    return m["kernel"] == "add_numba_naive" and m["elements"] == 2**26 \
        and m.get("_file") == FILES[0]


def rows():
    for name in FILES:
        data = read_json(DATA / name)
        for m in data["measurements"]:
            if m.get("blocks_per_sm") and m["is_gpu_timing"]:
                yield {**m, "_file": name, "_ceiling": data["copy_ceiling_gbps"]}


def predicted(gpu, m) -> float:
    spec = get_kernel(m["kernel"])
    trips = spec.loop_trips(m["elements"], m["grid_blocks"], m["threads_per_block"])
    launch = Launch(m["grid_blocks"], m["threads_per_block"], m["blocks_per_sm"],
                    m["bytes_moved"], m["elements"], trips, loads=spec.arity or DEFAULT_LOADS)
    return predict_launch(gpu, launch, "memory", ceiling_gbps=m["_ceiling"]).bandwidth_gbps


def check() -> dict:
    gpu = preset("H200")
    out, fit = [], []
    for m in rows():
        p = predicted(gpu, m)
        if fitted(m):
            fit.append(p / m["bandwidth_gbps"] - 1)
            continue
        out.append({"file": m["_file"], "kernel": m["kernel"], "elements": m["elements"],
                    "block_size": m.get("block_size"), "measured_gbps": m["bandwidth_gbps"],
                    "predicted_gbps": round(p, 1), "ratio": round(p / m["bandwidth_gbps"], 4)})
    within = [r for r in out if abs(r["ratio"] - 1) <= 0.10]
    bench = [r for r in out if r["file"] == FILES[1]]
    return {"points": len(out), "within_10pct": len(within),
            "share_within_10pct": round(len(within) / len(out), 4),
            "size_sweep_points": len(bench),
            "size_sweep_within_10pct": sum(abs(r["ratio"] - 1) <= 0.10 for r in bench),
            "fitted_rows_rms": round((sum(e * e for e in fit) / len(fit)) ** 0.5, 4),
            "misses": [r for r in out if abs(r["ratio"] - 1) > 0.10], "rows": out}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    result = check()
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    for r in result["misses"]:
        print(f"miss  {r['kernel']:<22} n={r['elements']:>11,} block={r['block_size']!s:>6} "
              f"measured {r['measured_gbps']:7.0f} predicted {r['predicted_gbps']:7.0f} GB/s "
              f"(x{r['ratio']:.2f})")
    print(f"{result['within_10pct']} of {result['points']} held-out H200 points within 10% "
          f"({result['share_within_10pct']:.1%}); of them the size sweep "
          f"(tests/data/h200_size_sweep.json) {result['size_sweep_within_10pct']} of "
          f"{result['size_sweep_points']}; fitted rows rms {result['fitted_rows_rms']:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
