"""How the launch model does on other people's measurements: benchmarks/published/ (gpu-benches'
occupancy and size sweeps) and the seed article's L40S naive-add table. No GPU needed:

    python3 benchmarks/published_check.py [--json]

Every point is `sim.model.launch_model.predict_launch(gpu, Launch(...), "memory")` on the row's preset:
its grid (one element per thread), block size, blocks per SM (forced or not) and bytes, with the
constants of resources/physics/<KEY>.json as the app reads them (sim/rules/physics.py).

Nothing here is fitted: the check data and the article's table are only compared with, never
used to choose a constant (benchmarks/published/README.md).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.rules.devices import GpuSpec, preset  # noqa: E402
from sim.model.launch_model import Launch, predict_launch  # noqa: E402

PUBLISHED = ROOT / "tests" / "data" / "published"
WITHIN = 0.15
ARTICLE_WITHIN = 0.10
# The seed article's L40S table (naive add, fp32, 256 threads, L2 flushed, CUDA events, median of
# 50): elements -> median ms. A check only; shared/reference/gpu-programming-with-triton-part1.txt.
ARTICLE_L40S_MS = {1000: 0.0041, 65536: 0.0061, 1048576: 0.0205, 16777216: 0.3123}


# Input arrays each kernel loads (gpu-benches@1c36d50 gpu-stream/gpu-stream.cu and
# gpu-small-kernels: read sums A, scale is B = s*A, triad A = B + s*C); the article's is the add (x, y)
LOADS = {"gpu-stream read": 1, "gpu-stream scale": 1, "gpu-stream triad": 2,
         "gpu-small-kernels scale": 1}
ARTICLE_LOADS = 2


def loads_of(row: dict) -> int:
    """The input arrays of a published row's kernel (a new kernel must be added to LOADS)."""
    try:
        return LOADS[row["kernel"]]
    except KeyError:
        raise SystemExit(f"published_check: say how many arrays {row['kernel']!r} loads (LOADS)") from None


def predict_us(gpu: GpuSpec, elements: int, threads: int, blocks_per_sm: int,
               bytes_moved: float, loads: int) -> float:
    """The launch model's whole-launch time of one launch, in microseconds."""
    launch = Launch(math.ceil(elements / threads), threads, blocks_per_sm, bytes_moved, elements,
                    loads=loads)
    return predict_launch(gpu, launch, "memory").whole_launch_us


def published_rows():
    for path in sorted(PUBLISHED.glob("*.csv")):
        with path.open(newline="") as f:
            for r in csv.DictReader(f):
                yield {**r, "_file": path.name}


def check() -> dict:
    groups: dict[str, list[float]] = {}
    for r in published_rows():
        gpu = preset(r["preset"])
        elements, nbytes = int(r["elements"]), float(r["bytes_moved"])
        t = predict_us(gpu, elements, int(r["threads_per_block"]), int(r["blocks_per_sm"]), nbytes,
                       loads_of(r))
        err = (nbytes / t / 1e3) / float(r["measured_gbps"]) - 1  # GB/s, predicted vs measured
        where = "size" if r["_file"].startswith("gpu_small") else "occupancy"
        if where == "size" and nbytes <= gpu.l2_bytes:
            where = "size, inside L2"  # the model streams from DRAM: out of its scope, shown apart
        groups.setdefault(f"{r['gpu']} ({r['preset']}) {where}", []).append(err)
    article = {}
    gpu = preset("L40S")
    for n, ms in ARTICLE_L40S_MS.items():
        t = predict_us(gpu, n, 256, 6, 12 * n, ARTICLE_LOADS)  # 6 = 1536 threads per SM / 256
        article[n] = {"measured_us": ms * 1e3, "predicted_us": round(t, 2), "error": t / (ms * 1e3) - 1}
    return {"model": "sim.model.launch_model.predict_launch (memory)", "groups": groups,
            "article": article}


def per_gpu(result: dict) -> dict[str, tuple[int, int]]:
    """GPU -> (points within 15%, points), size and occupancy together, L2-resident sizes out."""
    out: dict[str, list[int]] = {}
    for name, errs in result["groups"].items():
        if "inside L2" in name:
            continue
        gpu = name.rsplit(")", 1)[0] + ")"
        tally = out.setdefault(gpu, [0, 0])
        tally[0] += sum(abs(e) <= WITHIN for e in errs)
        tally[1] += len(errs)
    return {k: (v[0], v[1]) for k, v in out.items()}


def summary(result: dict) -> list[str]:
    out = [f"{result['model']}, resources/physics constants: share of points within "
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
               f"({tot[0] / max(tot[1], 1):4.0%}); target 80%")
    for gpu, (ok, n) in per_gpu(result).items():
        out.append(f"    per GPU: {gpu:35s} {ok:4d} of {n:4d} ({ok / n:4.0%}); none below 60%")
    hits = sum(abs(a["error"]) <= ARTICLE_WITHIN for a in result["article"].values())
    out.append(f"  the article's L40S naive add (time error, predicted vs measured): {hits} of "
               f"{len(result['article'])} within {ARTICLE_WITHIN:.0%}")
    for n, a in result["article"].items():
        out.append(f"    {n:>10,d} elements: {a['predicted_us']:8.2f} us vs {a['measured_us']:7.1f} us "
                   f"({a['error']:+.0%})")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the errors as JSON")
    args = ap.parse_args(argv)
    result = check()
    print(json.dumps(result, indent=1) if args.json else "\n".join(summary(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
