"""The launch model against the H200's occupancy sweep (`bench --occupancy-sweep`, issue 20 item 4).
No GPU needed:

    python3 benchmarks/occupancy_check.py [FILE.json ...] [--json]

Default files: benchmarks/run_f/occupancy_fp64.json and occupancy_fp32.json (add, copy, scale; one
element per thread; block sizes 32..1024; unpadded, and 1 or 2 blocks per SM forced by unused
dynamic shared memory). For every point: `predict_launch` on the sweep's GPU with the point's grid,
block size, blocks per SM (forced or not) and bytes; the share within 10% per kernel and per forced
count. Nothing is fitted to these data: the constants are resources/physics/<GPU>.json's as they
stand.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.rules.devices import preset  # noqa: E402
from sim.model.occupancy_bandwidth import predict_point, sweep_points  # noqa: E402
from sim.rules.physics import physics_for  # noqa: E402

WITHIN = 0.10
DEFAULT_FILES = [ROOT / "benchmarks" / "run_f" / f"occupancy_{d}.json" for d in ("fp64", "fp32")]


def check(paths) -> dict:
    """Every point of every file (sim.model.occupancy_bandwidth reads them) against its prediction."""
    rows = []
    for path in paths:
        data = json.loads(Path(path).read_text())
        gpu = preset(physics_for(data["device"]["name"]).gpu)
        for p in sweep_points(data["measurements"]):
            pred = predict_point(gpu, p)
            rows.append({"kernel": p.kernel, "dtype": p.dtype, "threads": p.threads,
                         "blocks_per_sm": p.blocks_per_sm, "forced": p.forced_text,
                         "elements": p.elements, "measured_gbps": round(p.measured_gbps, 1),
                         "gpu": gpu.name, "predicted_gbps": round(pred.bandwidth_gbps, 1),
                         "ceiling_gbps": round(pred.ceiling_gbps, 1), "bound": pred.bound,
                         "error": pred.bandwidth_gbps / p.measured_gbps - 1})
    return {"files": [str(Path(p).resolve().relative_to(ROOT)) if Path(p).resolve().is_relative_to(ROOT)
                      else str(p) for p in paths], "within": WITHIN, "rows": rows}


def _share(rows) -> str:
    ok = sum(abs(r["error"]) <= WITHIN for r in rows)
    return f"{ok:3d} of {len(rows):3d} ({ok / max(len(rows), 1):4.0%})"


def summary(result: dict) -> list[str]:
    rows = result["rows"]
    out = [f"launch model vs {', '.join(result['files'])}: share within {WITHIN:.0%} "
           f"(predicted GB/s vs measured)", f"  all points            {_share(rows)}"]
    for key in ("kernel", "dtype", "forced"):
        for value in dict.fromkeys(r[key] for r in rows):
            group = [r for r in rows if r[key] == value]
            med = sorted(r["error"] for r in group)[len(group) // 2]
            out.append(f"  {key} {value:15s} {_share(group)}, median {med:+.1%}")
    for kernel in dict.fromkeys(r["kernel"] for r in rows):
        cells = [f"{forced} {_share([r for r in rows if r['kernel'] == kernel and r['forced'] == forced])}"
                 for forced in dict.fromkeys(r["forced"] for r in rows)]
        out.append(f"  {kernel:5s} by forcing: " + "; ".join(cells))
    out.append("  misses (beyond 10%):")
    for r in rows:
        if abs(r["error"]) > WITHIN:
            out.append(f"    {r['kernel']:5s} {r['dtype']} {r['threads']:5d} thr {r['forced']:9s} "
                       f"measured {r['measured_gbps']:7.0f} predicted {r['predicted_gbps']:7.0f} "
                       f"({r['error']:+.1%}, {r['bound']}, ceiling {r['ceiling_gbps']:.0f})")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    ap.add_argument("--json", action="store_true", help="print every point as JSON")
    args = ap.parse_args(argv)
    result = check(args.files)
    print(json.dumps(result, indent=1) if args.json else "\n".join(summary(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
