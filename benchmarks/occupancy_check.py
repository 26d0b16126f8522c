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

from sim.devices import preset  # noqa: E402
from sim.launch_model import Launch, predict_launch  # noqa: E402
from sim.physics import physics_for  # noqa: E402

WITHIN = 0.10
DEFAULT_FILES = [ROOT / "benchmarks" / "run_f" / f"occupancy_{d}.json" for d in ("fp64", "fp32")]


def sweep_points(path: Path):
    """(GPU preset name, points) of one `bench --occupancy-sweep` file: a point is a dict with
    kernel, dtype, threads, blocks_per_sm, forced ("unpadded", "1/SM", ...), grid, elements,
    bytes, measured_gbps. A forced point is one launched with padding (dynamic_smem_bytes set)."""
    data = json.loads(Path(path).read_text())
    name = data["device"]["name"]
    out = []
    for m in data["measurements"]:
        kernel, dtype = m["kernel"].removeprefix("occupancy_").rsplit("_", 1)
        forced = m.get("dynamic_smem_bytes") is not None
        out.append({"kernel": kernel, "dtype": dtype, "threads": int(m["threads_per_block"]),
                    "blocks_per_sm": int(m["blocks_per_sm"]),
                    "forced": f"{m['blocks_per_sm']}/SM" if forced else "unpadded",
                    "grid": int(m["grid_blocks"]), "elements": int(m["elements"]),
                    "bytes": float(m["bytes_moved"]), "measured_gbps": float(m["bandwidth_gbps"])})
    return name, out


def predict_point(gpu, p: dict):
    return predict_launch(gpu, Launch(p["grid"], p["threads"], p["blocks_per_sm"], p["bytes"],
                                      p["elements"]), "memory")


def check(paths) -> dict:
    rows = []
    for path in paths:
        device, points = sweep_points(path)
        gpu = preset(physics_for(device).gpu)
        for p in points:
            pred = predict_point(gpu, p)
            rows.append({**p, "gpu": gpu.name, "predicted_gbps": round(pred.bandwidth_gbps, 1),
                         "ceiling_gbps": round(pred.ceiling_gbps, 1), "bound": pred.bound,
                         "error": pred.bandwidth_gbps / p["measured_gbps"] - 1})
    return {"files": [str(Path(p).relative_to(ROOT)) if Path(p).is_relative_to(ROOT) else str(p)
                      for p in paths], "within": WITHIN, "rows": rows}


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
