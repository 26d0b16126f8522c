"""How the launch model does on other people's measurements: benchmarks/published/ (gpu-benches'
occupancy and size sweeps) and the seed article's L40S naive-add table. No GPU needed:

    python3 benchmarks/published_check.py [--model scheduler|loaded] [--constants old|physics] [--json]

--model: `scheduler` is sim.predict.predict_bandwidth (the block scheduler with the loaded trip
cost); `loaded` is sim.latency.predict_loaded, the core of predict_launch (one launch, no
scheduler). --constants: `old` runs the model as the app does today (rated peak as the ceiling,
resources/gpus.json's latency, the H200's launch and trip overheads); `physics` passes each GPU's
resources/physics/<KEY>.json constants in (copy_fraction x peak as the ceiling, dram_latency_ns,
launch_overhead_us, trip_overhead_ns) without changing sim/.

Nothing here is fitted: the check data and the article's table are only compared with, never
used to choose a constant (benchmarks/published/README.md).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.devices import GpuSpec, preset  # noqa: E402
from sim.latency import H200_TRIP, BlockTrip, predict_loaded  # noqa: E402
from sim.predict import memory_model_for, predict_bandwidth  # noqa: E402

PUBLISHED = ROOT / "benchmarks" / "published"
PHYSICS = ROOT / "resources" / "physics"
WITHIN = 0.15
# The seed article's L40S table (naive add, fp32, 256 threads, L2 flushed, CUDA events, median of
# 50): elements -> median ms. A check only; shared/reference/gpu-programming-with-triton-part1.txt.
ARTICLE_L40S_MS = {1000: 0.0041, 65536: 0.0061, 1048576: 0.0205, 16777216: 0.3123}
# Loads among the bytes each kernel moves (stores are posted; the loaded model needs the split).
NEEDED = ("copy_fraction", "dram_latency_ns", "launch_overhead_us", "trip_overhead_ns")
READ_FRACTION = {"gpu-stream read": 1.0, "gpu-stream scale": 0.5, "gpu-stream triad": 2 / 3,
                 "gpu-small-kernels scale": 0.5, "article add": 2 / 3}


def physics(gpu_name: str) -> dict | None:
    """The GPU's physics constants as {name: value}, or None without a file."""
    path = PHYSICS / f"{gpu_name.replace(' ', '_')}.json"
    if not path.is_file():
        return None
    consts = {k: c["value"] for k, c in json.loads(path.read_text())["constants"].items()}
    missing = [k for k in NEEDED if k not in consts]
    if missing:
        raise SystemExit(f"{path.name} lacks {', '.join(missing)}: the check passes them to the model")
    return consts


def predict_us(gpu: GpuSpec, kernel: str, elements: int, threads: int, blocks_per_sm: int,
               bytes_moved: float, model: str, consts: dict | None) -> float:
    """Predicted time of one launch in microseconds."""
    grid = math.ceil(elements / threads)
    ceiling = consts["copy_fraction"] * gpu.peak_dram_gbps if consts else None
    if consts:
        gpu = replace(gpu, dram_latency_ns=consts["dram_latency_ns"])
    trip_costs = H200_TRIP if not consts else replace(
        H200_TRIP, overhead_ns=consts["trip_overhead_ns"], launch_us=consts["launch_overhead_us"])
    if model == "scheduler":
        mm = memory_model_for(gpu)
        if consts:
            mm = replace(mm, launch_overhead_us=consts["launch_overhead_us"], trip=trip_costs)
        return predict_bandwidth(gpu, grid, blocks_per_sm, bytes_moved, ceiling, model=mm).time_us
    trip = BlockTrip(threads, 1.0, bytes_moved / elements, READ_FRACTION[kernel])
    p = predict_loaded(gpu, blocks_per_sm, trip, ceiling_gbps=ceiling, costs=trip_costs,
                       elements=elements, grid_blocks=grid)
    return bytes_moved / p.bandwidth_gbps / 1e3


def published_rows():
    for path in sorted(PUBLISHED.glob("*.csv")):
        with path.open(newline="") as f:
            for r in csv.DictReader(f):
                yield {**r, "_file": path.name}


def check(model: str, constants: str) -> dict:
    groups: dict[str, list[float]] = {}
    for r in published_rows():
        gpu = preset(r["preset"])
        consts = physics(gpu.name) if constants == "physics" else None
        elements, nbytes = int(r["elements"]), float(r["bytes_moved"])
        t = predict_us(gpu, r["kernel"], elements, int(r["threads_per_block"]),
                       int(r["blocks_per_sm"]), nbytes, model, consts)
        err = (nbytes / t / 1e3) / float(r["measured_gbps"]) - 1  # GB/s, predicted vs measured
        where = "size" if r["_file"].startswith("gpu_small") else "occupancy"
        if where == "size" and nbytes <= gpu.l2_bytes:
            where = "size, inside L2"  # the model streams from DRAM: out of its scope, shown apart
        groups.setdefault(f"{r['gpu']} ({r['preset']}) {where}", []).append(err)
    article = {}
    gpu = preset("L40S")
    consts = physics(gpu.name) if constants == "physics" else None
    for n, ms in ARTICLE_L40S_MS.items():
        t = predict_us(gpu, "article add", n, 256, 6, 12 * n, model, consts)  # 6 = 1536 / 256
        article[n] = {"measured_us": ms * 1e3, "predicted_us": round(t, 2), "error": t / (ms * 1e3) - 1}
    return {"model": model, "constants": constants, "groups": groups, "article": article}


def summary(result: dict) -> list[str]:
    out = [f"model {result['model']}, constants {result['constants']}: share of points within "
           f"{WITHIN:.0%} (median error of predicted GB/s)"]
    tot = [0, 0]
    for name, errs in result["groups"].items():
        ok = sum(abs(e) <= WITHIN for e in errs)
        med = sorted(errs)[len(errs) // 2]
        out.append(f"  {name:44s} {ok:4d} of {len(errs):4d} ({ok / len(errs):4.0%}), median {med:+.0%}")
        if "H200" not in name and "inside L2" not in name:
            tot[0] += ok
            tot[1] += len(errs)
    out.append(f"  {'all but the H200 and L2-resident sizes':44s} {tot[0]:4d} of {tot[1]:4d} "
               f"({tot[0] / max(tot[1], 1):4.0%})")
    out.append("  the article's L40S naive add (time error, predicted vs measured):")
    for n, a in result["article"].items():
        out.append(f"    {n:>10,d} elements: {a['predicted_us']:8.2f} us vs {a['measured_us']:7.1f} us "
                   f"({a['error']:+.0%})")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=("scheduler", "loaded"), default="scheduler")
    ap.add_argument("--constants", choices=("old", "physics"), default="physics")
    ap.add_argument("--json", action="store_true", help="print the errors as JSON")
    args = ap.parse_args(argv)
    result = check(args.model, args.constants)
    print(json.dumps(result, indent=1) if args.json else "\n".join(summary(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
