"""Issue 21 on the H200: can any tile configuration beat cuBLAS where matmul_auto's candidates cannot?

At 4096^3 and at run I's cuBLAS dips (M=1024, K=8192, N = 3328, 4352, 5376, 6400, 10752, 12800)
no candidate of matmul_auto's nine was measured at or above cuBLAS except N=12800. `--set pointer`
(run I) measures the tiled and stream-K kernels (kernels/bodies/matmul.py) at tile configurations
outside the nine (bigger BLOCK_K, more stages, 256x128, GROUP_M) beside cuBLAS. `--set tma-ws`
(run M) and `--set tma-sk` (run Q, TMA stream-K's loop flags and tiles) measure the persistent TMA kernel (kernels/bodies/matmul_tma.py) with Triton's warp
specialisation on its tile loop, at 4096^3, 8192^3 and run L's dips, beside the same kernel
without it and cuBLAS: kept apart from benchmarks/chooser_run.py, so that a configuration that
fails or hangs on the GPU takes only this run with it. Each launch is measured once per round in
`--rounds` interleaved rounds (do_bench median; the run's value is the median over rounds, and
the spread over rounds says how repeatable a single measurement is), with what the compiler gave
it (registers, spills, shared memory, whether its TTGIR holds warp-specialised partitions). Not
a fit: exploration, to say whether the targets need another candidate.

The TMA launch helpers here (`tma_launches`) are benchmarks/chooser_run.py's too (its --extras).

Usage on a GPU: python3 benchmarks/tile_explore.py --out DIR [--set pointer|tma-ws|tma-sk] [--rounds 3]
[--budget-s S]; --dry-run: tiny sizes under TRITON_INTERPRET=1 on the CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZES = [(4096, 4096, 4096)] + [(1024, n, 8192) for n in (3328, 4352, 5376, 6400, 10752, 12800)]
# run M: the squares, then run L's cuBLAS dips
TMA_SIZES = [(4096, 4096, 4096), (8192, 8192, 8192)] + [
    (1024, n, 8192) for n in (3328, 4352, 5376, 6400, 8704, 10752, 12800)]
# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages); the first two are candidates now
CONFIGS = [(128, 256, 64, 8, 8, 3), (128, 128, 64, 8, 8, 4), (128, 256, 64, 8, 8, 4),
           (256, 128, 64, 8, 8, 3), (256, 128, 64, 8, 8, 4), (128, 256, 128, 8, 8, 2),
           (128, 256, 64, 16, 8, 3), (128, 256, 64, 4, 8, 3), (128, 128, 128, 8, 8, 3),
           (128, 256, 64, 8, 4, 3)]
# (variant, tile as above, loop flags): warp specialisation with and without the flattened loop,
# and the same tile without it; Triton 3.7.1 refuses w4 128x128 for sm_90, 3.6 may differ
TMA_WS = (
    ("tma_persistent", (128, 256, 64, 8, 8, 3), {}),
    ("tma_persistent", (128, 256, 64, 8, 8, 3), dict(flatten=False, warp_specialize=True)),
    ("tma_persistent", (128, 256, 64, 8, 8, 3), dict(flatten=True, warp_specialize=True)),
    ("tma_persistent", (128, 256, 64, 8, 8, 3), dict(flatten=False, warp_specialize=True,
                                                     epilogue_subtile=True)),
    ("tma_persistent", (128, 128, 64, 8, 8, 4), dict(flatten=False, warp_specialize=True)),
    ("tma_persistent", (128, 128, 64, 8, 4, 4), dict(flatten=False, warp_specialize=True)),
)
# run Q: TMA stream-K and its neighbours at run P's nine cuBLAS dips and the squares. Run P's
# extras had TMA stream-K with flatten=False above the then declared (flattened) loop at every
# dip; this asks which tile, stages, GROUP_M and C store go with it, and whether warp
# specialisation compiles and helps there. Its flags are spelled out (run Q's declared stream-K
# loop, flatten=True without warp specialisation, is OLD_SK_LOOP): the labels read against the
# flags declared now (run Q's and run R's data carry the labels of their day)
# TMA stream-K's declared loop up to run Q and again after run R (matmul_problem.TMA_LOOP)
from kernels.fitting.tiles_score import OLD_SK_LOOP, tma_label  # noqa: E402
_NO_WS = dict(flatten=False, warp_specialize=False)
TMA_SK_SIZES = [(4096, 4096, 4096), (8192, 8192, 8192)] + [
    (1024, n, 8192) for n in (3328, 4352, 5376, 6400, 8704, 9472, 10240, 10752, 12800)]
TMA_SK = (
    ("tma_stream_k", (128, 256, 64, 8, 8, 3), OLD_SK_LOOP),
    ("tma_stream_k", (128, 256, 64, 8, 8, 3), _NO_WS),
    ("tma_stream_k", (128, 256, 64, 8, 8, 4), _NO_WS),
    ("tma_stream_k", (128, 256, 64, 16, 8, 3), _NO_WS),
    ("tma_stream_k", (128, 256, 64, 4, 8, 3), _NO_WS),
    ("tma_stream_k", (128, 256, 64, 8, 8, 4), dict(_NO_WS, epilogue_subtile=True)),
    ("tma_stream_k", (256, 128, 64, 8, 8, 3), _NO_WS),
    ("tma_stream_k", (128, 128, 64, 8, 8, 4), _NO_WS),
    ("tma_stream_k", (128, 256, 128, 8, 8, 2), _NO_WS),
    ("tma_persistent", (128, 256, 64, 8, 8, 3), {}),
    ("tma", (128, 256, 64, 8, 8, 3), {}),
    ("tma", (128, 256, 64, 8, 8, 4), {}),
    ("tma_stream_k", (128, 256, 64, 8, 8, 3), dict(flatten=False, warp_specialize=True)),
)
TMA_SETS = {"tma-ws": (TMA_SIZES, TMA_WS), "tma-sk": (TMA_SK_SIZES, TMA_SK)}


# --- TMA launches with what the compiler gave them (shared with chooser_run.py --extras) ------
def compiled_info(handle) -> dict:
    """What the compiler gave a launch (the CompiledKernel a Triton launch returns): registers,
    spills, shared memory, and whether its TTGIR was split into warp-specialised partitions."""
    out = {}
    for key, get in (("regs", lambda k: k.n_regs), ("spills", lambda k: k.n_spills),
                     ("smem", lambda k: k.metadata.shared),
                     ("warp_specialized", lambda k: "ttg.warp_specialize" in k.asm["ttgir"])):
        try:
            out[key] = get(handle)
        except Exception:  # noqa: BLE001 - the interpreter returns no CompiledKernel
            pass
    return out


def tma_launches(a, b, c, programs: int, entries) -> tuple[list, list, list]:
    """(launches, their rows, failed rows) of (variant, tile, loop flags) entries, each bound,
    compiled and run once (outside any timing); a failure is a row with its error."""
    from kernels.bodies.matmul import MatmulConfig
    from kernels.bodies.matmul_tma import bind_matmul_tma_variant
    from sim.model.matmul_choice import tile_params

    runs, rows, failed = [], [], []
    for variant, tile, loop in entries:
        params = tile_params(tile)
        row = {"label": tma_label(variant, params, loop), "variant": variant, "params": params,
               "loop": dict(loop)}
        try:
            run = bind_matmul_tma_variant(a, b, c, variant, MatmulConfig(*tile), programs, **loop)
            row.update(compiled_info(run()))
        except Exception as exc:  # noqa: BLE001 - a configuration that does not compile is a row
            row["error"] = f"{type(exc).__name__}: {exc}"[:300]
            failed.append(row)
            continue
        runs.append(run)
        rows.append(row)
    return runs, rows, failed


def _pointer_runs(a, b, c, sms: int) -> dict:
    from kernels.bodies.matmul import MatmulConfig, bind_matmul, bind_matmul_persistent

    runs = {}
    for cfg in CONFIGS:
        mc = MatmulConfig(*cfg)
        runs[f"tiled {mc.label}"] = bind_matmul(a, b, c, mc)
        runs[f"stream-K {mc.label}"] = bind_matmul_persistent(a, b, c, mc, programs=sms,
                                                               stream_k=True)
    return runs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--set", choices=("pointer", "tma-ws", "tma-sk"), default="pointer")
    ap.add_argument("--budget-s", type=float, default=1e9, help="no new size after this")
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args(argv)
    if args.dry_run:
        os.environ.setdefault("TRITON_INTERPRET", "1")
    import torch

    on_gpu = torch.cuda.is_available() and not args.dry_run
    device = "cuda" if on_gpu else "cpu"
    dtype = torch.bfloat16 if on_gpu else torch.float16  # the interpreter has no good bf16

    def ms(fn):
        if not on_gpu:
            t = time.perf_counter()
            fn()
            return (time.perf_counter() - t) * 1e3
        import triton.testing

        return float(triton.testing.do_bench(fn, warmup=5, rep=25, return_mode="median"))

    t0, out = time.time(), {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                            "device": torch.cuda.get_device_name() if on_gpu else "cpu (dry run)",
                            "set": args.set, "rounds": args.rounds, "dry_run": args.dry_run,
                            "method": "triton.testing.do_bench median per round, median of rounds",
                            "points": []}
    try:
        import triton

        out["versions"] = {"torch": torch.__version__, "triton": triton.__version__}
    except ImportError:
        pass
    sms = torch.cuda.get_device_properties(0).multi_processor_count if on_gpu else 4
    sizes, entries = (SIZES, ()) if args.set == "pointer" else TMA_SETS[args.set]
    if args.dry_run:
        sizes = [(64, 128, 96)]
    for M, N, K in sizes:
        if time.time() - t0 > args.budget_s:
            out["cut"] = f"stopped before {M}x{N}x{K} by the budget"
            break
        a = torch.randn(M, K, device=device, dtype=dtype)
        b = torch.randn(K, N, device=device, dtype=dtype)
        c = torch.empty(M, N, device=device, dtype=dtype)
        point = {"M": M, "N": N, "K": K, "ms": {}, "failed": {}, "compiled": {}}
        runs = {"cuBLAS": lambda: torch.matmul(a, b, out=c)}
        if args.set == "pointer":
            runs.update(_pointer_runs(a, b, c, sms))
        else:
            tma_runs, rows, failed = tma_launches(a, b, c, sms, entries)
            runs.update((r["label"], run) for r, run in zip(rows, tma_runs))
            point["compiled"] = {r["label"]: {k: r[k] for k in ("regs", "spills", "smem",
                                                                 "warp_specialized") if k in r}
                                 for r in rows}
            point["failed"] = {r["label"]: r["error"] for r in failed}
        reps: dict = {k: [] for k in runs}
        for k, fn in list(runs.items()):  # compile and warm up once, outside the rounds
            try:
                fn()
            except Exception as exc:  # noqa: BLE001 - a config that does not compile is a row
                point["failed"][k] = f"{type(exc).__name__}: {exc}"[:200]
                del runs[k], reps[k]
        if on_gpu:
            torch.cuda.synchronize()
        for _ in range(args.rounds):
            for k, fn in runs.items():
                reps[k].append(ms(fn))
        point["ms"] = {k: {"median": statistics.median(v), "rounds": v} for k, v in reps.items()}
        cub = point["ms"]["cuBLAS"]["median"]
        best = sorted((v["median"], k) for k, v in point["ms"].items() if k != "cuBLAS")[:4]
        print(f"{M}x{N}x{K}: cuBLAS {cub * 1e3:.0f} us; best " + "; ".join(
            f"{k} {cub / t:.3f}x" for t, k in best)
            + (f"; failed: {', '.join(point['failed'])}" if point["failed"] else ""), flush=True)
        out["points"].append(point)
        out["wall_s"] = time.time() - t0
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "tile_explore.json").write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
