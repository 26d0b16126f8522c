"""Issue 21 on the H200: can any tile configuration beat cuBLAS where matmul_auto's nine cannot?

At 4096^3 and at run I's cuBLAS dips (M=1024, K=8192, N = 3328, 4352, 5376, 6400, 10752, 12800)
no candidate of matmul_auto's nine was measured at or above cuBLAS except N=12800. This measures
the tiled and stream-K kernels (kernels/bodies/matmul.py) at tile configurations outside the nine
(bigger BLOCK_K, more stages, 256x128, GROUP_M) beside cuBLAS, in `--rounds` interleaved rounds
(each launch once per round, do_bench median; the run's value is the median over rounds, and the
spread over rounds says how repeatable a single measurement is). Not a fit: exploration, to say
whether the targets need another candidate.

Usage on a GPU: python3 benchmarks/tile_explore.py --out DIR [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZES = [(4096, 4096, 4096)] + [(1024, n, 8192) for n in (3328, 4352, 5376, 6400, 10752, 12800)]
# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages); the first two are candidates now
CONFIGS = [(128, 256, 64, 8, 8, 3), (128, 128, 64, 8, 8, 4), (128, 256, 64, 8, 8, 4),
           (256, 128, 64, 8, 8, 3), (256, 128, 64, 8, 8, 4), (128, 256, 128, 8, 8, 2),
           (128, 256, 64, 16, 8, 3), (128, 256, 64, 4, 8, 3), (128, 128, 128, 8, 8, 3),
           (128, 256, 64, 8, 4, 3)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    import torch
    import triton.testing

    from kernels.bodies.matmul import MatmulConfig, bind_matmul, bind_matmul_persistent

    def ms(fn):
        return float(triton.testing.do_bench(fn, warmup=5, rep=25, return_mode="median"))

    t0, out = time.time(), {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                            "device": torch.cuda.get_device_name(), "rounds": args.rounds,
                            "method": "triton.testing.do_bench median per round, median of rounds",
                            "points": []}
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for M, N, K in SIZES:
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        runs = {"cuBLAS": lambda: torch.matmul(a, b, out=c)}
        for cfg in CONFIGS:
            mc = MatmulConfig(*cfg)
            runs[f"tiled {mc.label}"] = bind_matmul(a, b, c, mc)
            runs[f"stream-K {mc.label}"] = bind_matmul_persistent(a, b, c, mc, programs=sms,
                                                                   stream_k=True)
        reps: dict = {k: [] for k in runs}
        for k, fn in list(runs.items()):  # compile and warm up once, outside the rounds
            try:
                fn()
            except Exception as exc:  # noqa: BLE001 - a config that does not compile is a row
                reps[k] = f"{type(exc).__name__}: {exc}"[:200]
                del runs[k]
        torch.cuda.synchronize()
        for _ in range(args.rounds):
            for k, fn in runs.items():
                reps[k].append(ms(fn))
        point = {"M": M, "N": N, "K": K, "ms": {}, "failed": {}}
        for k, v in reps.items():
            if isinstance(v, str):
                point["failed"][k] = v
            else:
                point["ms"][k] = {"median": statistics.median(v), "rounds": v}
        cub = point["ms"]["cuBLAS"]["median"]
        best = sorted((v["median"], k) for k, v in point["ms"].items() if k != "cuBLAS")[:4]
        print(f"{M}x{N}x{K}: cuBLAS {cub * 1e3:.0f} us; best " + "; ".join(
            f"{k} {cub / t:.3f}x" for t, k in best), flush=True)
        out["points"].append(point)
        out["wall_s"] = time.time() - t0
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "tile_explore.json").write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
