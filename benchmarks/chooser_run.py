"""GPU run H (issue 21): matmul_auto against its three variants and cuBLAS, and the next step measured.

1. The sawtooth: M=1024, K=8192, N = 2048..16384 step 256 (57 sizes), bf16. Per size: matmul_auto
   (its choice made by the model, no autotuning), every candidate the choice weighed (three
   variants x three tiles, which include the variants at the default 128x256x64 tile) and
   cuBLAS (torch.matmul), all in this process, triton.testing.do_bench median (L2 flushed
   before each rep). Then 4096^3 and 8192^3 likewise.
2. Each candidate's predicted time beside its measured time, raw and with one throughput scale
   for the run (run_scale: the median over the sizes of cuBLAS in the tile fit's run over here).
3. The next step measured: launches of Triton and Numba kernels before and after one change
   (num_warps, BLOCK_SIZE, threads per block, a register cap, shared memory, grid), with the
   memory-bound model's predicted change (sim.model.what_if, the registers the compiler reported)
   beside the measured one.

Run M (issue 21, the TMA kernels): `--targets-first` measures 4096^3, 8192^3 and run L's seven
cuBLAS dips first, then the rest of the sawtooth while the budget lasts; `--extras` adds, at those
first nine sizes, TMA configurations beyond the candidates (TMA_EXTRAS: loop flags, stages, a
256x128 tile), each with the compiler's registers, shared memory and spills; `--skip-next-step`
leaves part 3 out. Run N (benchmarks/device_run_n_matmul.sh) also measured, with a flag gone
since, the fit's flatten=False candidate with its declared flags: the fit chooses no flags now.
Run O (benchmarks/device_run_o_matmul.sh): `--dips N,N,...` names the target dips (default run
L's), `--extras stream-k` adds TMA_SK_EXTRAS (TMA stream-K configurations beyond the candidates)
at the targets; the candidates hold TMA stream-K at the three tiles at every size. Run R
(benchmarks/device_run_r_matmul.sh): `--extras before-q` adds TMA_R_EXTRAS, the candidates as
declared before run Q's refit (TMA stream-K's old loop flags, TMA tiled at s3), at the targets.

Usage: python3 benchmarks/chooser_run.py --out DIR [--budget-s 300]; --dry-run: tiny sizes on the
CPU (TRITON_INTERPRET=1, NUMBA_ENABLE_CUDASIM=1), to catch argument errors before a device run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# the summary and its helpers: benchmarks/chooser_summary.py (re-exported for callers)
from kernels.fitting.chooser_summary import DIPS, median, print_summary  # noqa: E402
from kernels.fitting.tiles_score import OLD_SK_LOOP  # noqa: E402

# run L's cuBLAS dips (>= 5% below both neighbours' mean): M=1024, K=8192, these N
# TMA launches beyond matmul_auto's candidates (which hold the TMA kernels at the three tiles,
# the persistent one flattened): (variant, (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, warps, stages),
# loop flags). Run M's: warp specialisation was benchmarks/tile_explore.py's (--set tma-ws), so
# that a kernel that hung there could not take this run with it (run Q: it did not hang).
TMA_EXTRAS = (
    ("tma_persistent", (128, 256, 64, 8, 8, 3), dict(flatten=False)),
    ("tma_persistent", (128, 256, 64, 8, 8, 3), dict(flatten=True, epilogue_subtile=True)),
    ("tma_persistent", (128, 256, 64, 8, 8, 4), dict(flatten=True, epilogue_subtile=True)),
    ("tma_persistent", (128, 256, 64, 8, 8, 4), dict(flatten=False, epilogue_subtile=True)),
    ("tma", (128, 256, 64, 8, 8, 4), {}),
    ("tma", (256, 128, 64, 8, 8, 3), {}),
    ("tma_persistent", (256, 128, 64, 8, 8, 3), dict(flatten=True)),
    ("tma_persistent", (128, 128, 64, 8, 8, 5), dict(flatten=True)),
)

# Run O: TMA stream-K beyond its three candidates (the 128x256x64 w8 s3 one with the flags then
# declared, OLD_SK_LOOP): other loop flags, a fourth stage with the half-width C store, and the
# 256x128 tile; spelled out, so that they stay run O's launches whatever is declared now
TMA_SK_EXTRAS = (
    ("tma_stream_k", (128, 256, 64, 8, 8, 3), dict(flatten=False, warp_specialize=False)),
    ("tma_stream_k", (128, 256, 64, 8, 8, 3), dict(OLD_SK_LOOP, epilogue_subtile=True)),
    ("tma_stream_k", (128, 256, 64, 8, 8, 4), dict(OLD_SK_LOOP, epilogue_subtile=True)),
    ("tma_stream_k", (256, 128, 64, 8, 8, 3), OLD_SK_LOOP),
)
# Run R: the candidates as declared before run Q's refit, beside the candidates as run Q declared
# them, in the same rounds: TMA stream-K at its three tiles with OLD_SK_LOOP (at w4 the two
# differ in flatten only: no warp specialisation there), TMA tiled 128x256x64 at s3 (then a
# candidate at s4), and TMA persistent with warp specialisation (run M: 1.110 x without it at
# N=8704, median 1.005 over its 9 sizes). Declared again since run R: all but the last
TMA_R_EXTRAS = (
    ("tma_stream_k", (128, 256, 64, 8, 8, 3), OLD_SK_LOOP),
    ("tma_stream_k", (128, 128, 64, 8, 8, 4), OLD_SK_LOOP),
    ("tma_stream_k", (64, 128, 64, 8, 4, 4), OLD_SK_LOOP),
    ("tma", (128, 256, 64, 8, 8, 3), {}),
    ("tma_persistent", (128, 256, 64, 8, 8, 3), dict(warp_specialize=True)),
)
EXTRA_SETS = {"tma": TMA_EXTRAS, "stream-k": TMA_SK_EXTRAS, "before-q": TMA_R_EXTRAS}


class Clock:
    """do_bench's median on a GPU; one plain call in the dry run (nothing there is a timing)."""

    def __init__(self, dry: bool) -> None:
        self.dry = dry

    def ms(self, fn) -> float:
        if self.dry:
            t = time.perf_counter()
            fn()
            return (time.perf_counter() - t) * 1e3
        import triton.testing

        return float(triton.testing.do_bench(fn, warmup=5, rep=25, return_mode="median"))


def _variant_launch(a, b, c, variant: str, params: dict, programs: int, loop=None):
    from kernels.bodies.matmul import MatmulConfig, bind_matmul, bind_matmul_persistent

    cfg = MatmulConfig(params["BLOCK_M"], params["BLOCK_N"], params["BLOCK_K"], params["GROUP_M"],
                       params["num_warps"], params["num_stages"])
    if variant == "tiled":
        return bind_matmul(a, b, c, cfg)
    if variant in ("persistent", "stream_k"):
        return bind_matmul_persistent(a, b, c, cfg, programs=programs,
                                      stream_k=variant == "stream_k")
    from kernels.bodies.matmul_tma import bind_matmul_tma_variant

    return bind_matmul_tma_variant(a, b, c, variant, cfg, programs, **(loop or {}))


def _declared_loop(cand) -> dict | None:
    """The loop flags a TMA persistent candidate launches with (its declaration's; None for the
    kernels without them), kept with the run: run R's candidates are run Q's new declaration."""
    from kernels.declare.matmul_problem import TMA_LOOP, tma_loop

    return tma_loop(cand.variant, cand.params["num_warps"]) if cand.variant in TMA_LOOP else None


def matmul_point(M, N, K, gpu, dtype, clock, torch, device, check=False, rounds=1,
                 extras=()) -> dict:
    """One size: auto, its candidates, `extras` (TMA_EXTRAS entries) and cuBLAS, each measured
    once per round, the rounds interleaved (auto, the candidates, the extras, cuBLAS; again), so
    a drift of the clocks over the seconds a size takes hits every launch alike; each launch's
    value is its median over the rounds."""
    from kernels.bodies.matmul import bind_matmul_auto
    from kernels.declare.registry import matmul_choice

    choice = matmul_choice(dict(M=M, N=N, K=K), gpu, dtype)
    tdtype = getattr(torch, dtype)
    a = torch.randn(M, K, device=device, dtype=tdtype)
    b = torch.randn(K, N, device=device, dtype=tdtype)
    c = torch.empty(M, N, device=device, dtype=tdtype)
    flops = 2 * M * N * K
    row = {"M": M, "N": N, "K": K, "chosen": choice.chosen.label, "candidates": [],
           "rounds": rounds}
    auto = bind_matmul_auto(a, b, c, gpu, dtype, choice=choice)
    runs = [auto] + [_variant_launch(a, b, c, cand.variant, cand.params, cand.programs, {})
                     for cand in choice.candidates]
    from benchmarks.tile_explore import compiled_info, tma_launches

    # compile, allocate, pick cuBLAS's kernel: outside the timed rounds
    compiled = [compiled_info(run()) for run in runs]
    extra_runs, row["extras"], row["extras_failed"] = tma_launches(a, b, c, gpu.sm_count, extras)
    runs += extra_runs + [lambda: torch.matmul(a, b, out=c)]
    runs[-1]()
    errors = []
    if check:  # every launch of this size against fp32 torch, C poisoned before each
        ref = (a.float() @ b.float())
        for run in runs[:-1]:
            c.fill_(float("nan"))
            run()
            errors.append(float((c.float() - ref).norm() / ref.norm()))
        row["auto_rel_error"] = errors[0]
    reps = [[clock.ms(run) for run in runs] for _ in range(max(1, rounds))]
    med = [median(r[i] for r in reps) for i in range(len(runs))]
    row["auto_ms"], row["auto_rounds_ms"] = med[0], [r[0] for r in reps]
    for i, cand in enumerate(choice.candidates, start=1):
        row["candidates"].append({"label": cand.label, "variant": cand.variant,
                                  "tile": f"{cand.params['BLOCK_M']}x{cand.params['BLOCK_N']}"
                                          f"x{cand.params['BLOCK_K']}",
                                  "measured_ms": med[i], "measured_rounds_ms": [r[i] for r in reps],
                                  "predicted_ms": cand.time_us / 1e3,
                                  "tiles": cand.tiles, "waves": cand.waves,
                                  "efficiency_assumed": cand.assumed,
                                  "declared_loop": _declared_loop(cand), **compiled[i]})
    first = 1 + len(choice.candidates)
    for i, extra in enumerate(row["extras"], start=first):
        extra.update(measured_ms=med[i], measured_rounds_ms=[r[i] for r in reps])
    for launch, err in zip(row["candidates"] + row["extras"], errors[1:]):
        launch["rel_error"] = err
    row["cublas_ms"], row["cublas_rounds_ms"] = med[-1], [r[-1] for r in reps]
    for key in ("auto_ms", "cublas_ms"):
        row[key.replace("_ms", "_tflops")] = flops / row[key] / 1e9
    best = min(row["candidates"], key=lambda r: r["measured_ms"])
    row["best_measured"] = best["label"]
    # the "3 variants": the pointer kernels at the default tile
    default = [r for r in row["candidates"] if r["tile"] == "128x256x64"
               and r["variant"] in ("tiled", "persistent", "stream_k")]
    row["best_variant_default_tile_ms"] = min(r["measured_ms"] for r in default) if default else None
    row["best_candidate_ms"] = best["measured_ms"]
    tma = [r for r in row["candidates"] + row["extras"] if r["variant"].startswith("tma")]
    if tma:
        best_tma = min(tma, key=lambda r: r["measured_ms"])
        row["best_tma"], row["best_tma_ms"] = best_tma["label"], best_tma["measured_ms"]
    return row


# --- the next step, measured ---------------------------------------------------------------
def next_step_pairs(dry: bool, which: str = "run-h") -> list[dict]:
    """(kernel, before, after) launches: each a one-lever change the next step could advise.
    `which`: run H's 13 pairs (runs H, I, L), "held-out-s", 12 others that no fit or model
    change had seen (run S, recorded before the fourth session's model changes), or
    "held-out-t", 12 more (run T, recorded after the fifth session's drain change), or
    "held-out-y", 12 more (run Y, after the eighth session's per-SM DRAM shares)."""
    if which in HELD_OUT:
        return held_out_pairs(dry, which)
    n = 4099 if dry else 2**26
    tri, nb, nb4 = TRI, NB, NB4
    return [
        dict(kernel=tri, n=n, lever="num_warps", before=dict(BLOCK_SIZE=1024, num_warps=4),
             after=dict(BLOCK_SIZE=1024, num_warps=8)),
        dict(kernel=tri, n=n, lever="num_warps", before=dict(BLOCK_SIZE=4096, num_warps=16),
             after=dict(BLOCK_SIZE=4096, num_warps=4)),
        dict(kernel=tri, n=n, lever="BLOCK_SIZE", before=dict(BLOCK_SIZE=1024, num_warps=4),
             after=dict(BLOCK_SIZE=4096, num_warps=4)),
        dict(kernel=tri, n=n, lever="BLOCK_SIZE", before=dict(BLOCK_SIZE=256, num_warps=4),
             after=dict(BLOCK_SIZE=1024, num_warps=4)),
        dict(kernel=tri, n=n, lever="BLOCK_SIZE", before=dict(BLOCK_SIZE=128, num_warps=1),
             after=dict(BLOCK_SIZE=512, num_warps=1)),
        dict(kernel=nb, n=n, lever="threads", before=dict(threads=32), after=dict(threads=128)),
        dict(kernel=nb, n=n, lever="threads", before=dict(threads=64), after=dict(threads=256)),
        dict(kernel=nb, n=n, lever="threads", before=dict(threads=1024), after=dict(threads=256)),
        dict(kernel=nb4, n=n, lever="threads", before=dict(threads=64), after=dict(threads=512)),
        dict(kernel=nb4, n=n, lever="registers", before=dict(threads=1024),
             after=dict(threads=1024, max_registers=32)),
        dict(kernel=nb4, n=n, lever="registers", before=dict(threads=1024, max_registers=64),
             after=dict(threads=1024, max_registers=24)),
        # dynamic shared memory at most 48 KiB: more needs an opt-in Numba does not make
        dict(kernel=nb, n=n, lever="shared memory", before=dict(threads=256, smem=46 * 1024),
             after=dict(threads=256, smem=22 * 1024)),
        dict(kernel=nb, n=n, lever="shared memory", before=dict(threads=128, smem=46 * 1024),
             after=dict(threads=128, smem=16 * 1024)),
    ]


TRI, NB, NB4 = "add_triton", "add_numba_naive", "add_numba"
# (kernel, log2 of the elements, lever, before, after) of the held-out runs' pairs
HELD_OUT = {
    # run S: other sizes, kernels and settings than run H's, one lever each
    "held-out-s": [
        (TRI, 24, "num_warps", dict(BLOCK_SIZE=512, num_warps=2), dict(BLOCK_SIZE=512, num_warps=4)),
        (TRI, 24, "num_warps", dict(BLOCK_SIZE=2048, num_warps=8), dict(BLOCK_SIZE=2048, num_warps=4)),
        (TRI, 24, "BLOCK_SIZE", dict(BLOCK_SIZE=512, num_warps=4), dict(BLOCK_SIZE=2048, num_warps=4)),
        (TRI, 22, "BLOCK_SIZE", dict(BLOCK_SIZE=8192, num_warps=8), dict(BLOCK_SIZE=2048, num_warps=8)),
        ("square_triton", 24, "BLOCK_SIZE", dict(BLOCK_SIZE=256, num_warps=2), dict(BLOCK_SIZE=1024, num_warps=2)),
        ("copy_triton", 22, "num_warps", dict(BLOCK_SIZE=1024, num_warps=1), dict(BLOCK_SIZE=1024, num_warps=4)),
        (NB, 24, "threads", dict(threads=128), dict(threads=1024)),
        (NB, 22, "threads", dict(threads=32), dict(threads=256)),
        (NB4, 24, "threads", dict(threads=128), dict(threads=256)),
        (NB4, 24, "registers", dict(threads=768, max_registers=80), dict(threads=768, max_registers=40)),
        (NB, 24, "shared memory", dict(threads=512, smem=40 * 1024), dict(threads=512, smem=8 * 1024)),
        (NB, 22, "shared memory", dict(threads=64, smem=30 * 1024), dict(threads=64, smem=12 * 1024)),
    ],
    # run T: sizes and settings no earlier run measured, half of them ending at or leaving a
    # three-round tile (sim.model.load_rounds), the drain change's case
    "held-out-t": [
        (TRI, 25, "BLOCK_SIZE", dict(BLOCK_SIZE=1024, num_warps=4), dict(BLOCK_SIZE=2048, num_warps=4)),
        (TRI, 25, "num_warps", dict(BLOCK_SIZE=2048, num_warps=4), dict(BLOCK_SIZE=2048, num_warps=8)),
        (TRI, 27, "BLOCK_SIZE", dict(BLOCK_SIZE=4096, num_warps=4), dict(BLOCK_SIZE=1024, num_warps=4)),
        (TRI, 23, "num_warps", dict(BLOCK_SIZE=2048, num_warps=2), dict(BLOCK_SIZE=2048, num_warps=4)),
        (TRI, 21, "BLOCK_SIZE", dict(BLOCK_SIZE=2048, num_warps=4), dict(BLOCK_SIZE=512, num_warps=4)),
        (TRI, 23, "num_warps", dict(BLOCK_SIZE=1024, num_warps=8), dict(BLOCK_SIZE=1024, num_warps=2)),
        ("square_triton", 25, "BLOCK_SIZE", dict(BLOCK_SIZE=2048, num_warps=4), dict(BLOCK_SIZE=512, num_warps=4)),
        ("copy_triton", 25, "BLOCK_SIZE", dict(BLOCK_SIZE=4096, num_warps=4), dict(BLOCK_SIZE=1024, num_warps=4)),
        ("square_triton", 23, "BLOCK_SIZE", dict(BLOCK_SIZE=256, num_warps=1), dict(BLOCK_SIZE=1024, num_warps=1)),
        (NB, 25, "threads", dict(threads=256), dict(threads=64)),
        (NB4, 25, "registers", dict(threads=1024, max_registers=32), dict(threads=1024)),
        (NB, 23, "shared memory", dict(threads=256, smem=32 * 1024), dict(threads=256, smem=4 * 1024)),
    ],
    # run Y (eighth session): after the faster SMs' DRAM share landed; half of them cross its
    # 64 KiB-in-flight gate, none measured before
    "held-out-y": [
        (TRI, 26, "num_warps", dict(BLOCK_SIZE=512, num_warps=8), dict(BLOCK_SIZE=512, num_warps=2)),
        (TRI, 26, "num_warps", dict(BLOCK_SIZE=256, num_warps=4), dict(BLOCK_SIZE=256, num_warps=1)),
        (TRI, 22, "BLOCK_SIZE", dict(BLOCK_SIZE=4096, num_warps=8), dict(BLOCK_SIZE=1024, num_warps=8)),
        (TRI, 24, "num_warps", dict(BLOCK_SIZE=1024, num_warps=16), dict(BLOCK_SIZE=1024, num_warps=4)),
        ("copy_triton", 26, "BLOCK_SIZE", dict(BLOCK_SIZE=512, num_warps=4), dict(BLOCK_SIZE=2048, num_warps=4)),
        ("square_triton", 26, "num_warps", dict(BLOCK_SIZE=1024, num_warps=8), dict(BLOCK_SIZE=1024, num_warps=2)),
        (TRI, 20, "BLOCK_SIZE", dict(BLOCK_SIZE=1024, num_warps=4), dict(BLOCK_SIZE=256, num_warps=4)),
        ("copy_triton", 24, "BLOCK_SIZE", dict(BLOCK_SIZE=8192, num_warps=8), dict(BLOCK_SIZE=2048, num_warps=8)),
        (NB, 26, "threads", dict(threads=512), dict(threads=128)),
        (NB4, 26, "registers", dict(threads=512, max_registers=64), dict(threads=512, max_registers=32)),
        (NB, 24, "shared memory", dict(threads=128, smem=40 * 1024), dict(threads=128, smem=20 * 1024)),
        ("square_triton", 21, "BLOCK_SIZE", dict(BLOCK_SIZE=512, num_warps=4), dict(BLOCK_SIZE=2048, num_warps=4)),
    ],
}


def held_out_pairs(dry: bool, which: str = "held-out-s") -> list[dict]:
    """One held-out run's pairs (HELD_OUT), each at its size (4,099 elements in a dry run)."""
    return [dict(kernel=kernel, n=4099 if dry else 2**log2, lever=lever, before=before, after=after)
            for kernel, log2, lever, before, after in HELD_OUT[which]]


def _bound(spec, setting: dict, n: int, gpu, on_gpu: bool):
    """(zero-argument launch, threads, grid, registers, shared memory, elements per thread or
    None for a grid of its own) of one setting."""
    from kernels.measure.harness import bind, make_arrays

    setting = dict(setting)
    cap, smem = setting.pop("max_registers", None), setting.pop("smem", 0)
    inputs, out = make_arrays(spec, n, on_gpu)
    launch = bind(spec, inputs, out, n, setting, gpu, dynamic_smem_bytes=smem)
    run = launch.run
    if cap is not None:  # the same kernel re-jitted under a register cap
        from numba import cuda

        from kernels.launching.launcher import resolve
        from kernels.bodies.numba_kernels import device_arrays

        # the simulator's jit takes no max_registers (nor honours one): the dry run drops it
        capped = {} if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" else {"max_registers": int(cap)}
        fn = cuda.jit(**capped)(resolve(spec.kernel).py_func)
        args = device_arrays([*inputs, out])
        configured = fn[launch.grid_blocks, launch.threads_per_block]
        run = lambda: configured(*args)  # noqa: E731
    run()
    regs = 0
    if on_gpu:
        if cap is not None:
            from numba import typeof

            regs = int(fn.overloads[tuple(typeof(a) for a in args)].regs_per_thread)
        else:
            regs = int(launch.resources().regs_per_thread or 0)
    shared = smem
    if on_gpu and spec.backend == "triton":
        shared = int(launch.resources().smem_per_block_bytes or 0)
    ept = launch.block_size // launch.threads_per_block if launch.block_size else None
    return run, launch.threads_per_block, launch.grid_blocks, regs, shared, ept


def copy_ceiling_gbps(clock, on_gpu: bool) -> float | None:
    """The bandwidth ceiling the memory model takes: a device-to-device copy of 1 GiB, measured
    here (None in the dry run: the GPU's peak)."""
    if not on_gpu:
        return None
    import torch

    x = torch.empty(2**28, device="cuda", dtype=torch.float32)
    y = torch.empty_like(x)
    ms = clock.ms(lambda: y.copy_(x))
    COPY["gbps"] = 2 * x.numel() * 4 / ms / 1e6
    return COPY["gbps"]


COPY: dict = {}  # the measured copy ceiling, for the results file


def next_step_rows(gpu, clock, on_gpu: bool, dry: bool, rounds: int = 1,
                   which: str = "run-h") -> list[dict]:
    from kernels.declare.registry import get_kernel
    from sim.model.what_if import WhatIf, predict

    rows = []
    ceiling = copy_ceiling_gbps(clock, on_gpu)
    for pair in next_step_pairs(dry, which):
        spec = get_kernel(pair["kernel"])
        row = {"kernel": spec.name, "n": pair["n"], "lever": pair["lever"],
               "before": pair["before"], "after": pair["after"]}
        try:
            runs = {}
            for side in ("before", "after"):
                run, threads, grid, regs, smem, ept = _bound(spec, pair[side], pair["n"], gpu, on_gpu)
                n = pair["n"]
                what = WhatIf(threads, regs, smem, n, spec.bytes_moved(n) / n,
                              elements_per_thread=ept, grid_blocks=None if ept else grid)
                if what.grid != grid:
                    raise RuntimeError(f"the model's grid {what.grid} is not the launch's {grid}")
                out = predict(gpu, what, ceiling)
                runs[side] = run
                row[side + "_predicted_ms"] = (out.time_us or float("nan")) / 1e3
                row[side + "_launch"] = dict(threads=threads, grid=grid, regs=regs, smem=smem,
                                             blocks_per_sm=out.blocks_per_sm, waves=out.waves)
            # before and after interleaved, once per round: the spread over the rounds is the
            # measurement's own noise, which the direction test's dead band must exceed
            reps = [(clock.ms(runs["before"]), clock.ms(runs["after"])) for _ in range(rounds)]
            for i, side in enumerate(("before", "after")):
                row[side + "_rounds_ms"] = [r[i] for r in reps]
                row[side + "_measured_ms"] = median(row[side + "_rounds_ms"])
            row["measured_change"] = row["after_measured_ms"] / row["before_measured_ms"] - 1
            row["predicted_change"] = row["after_predicted_ms"] / row["before_predicted_ms"] - 1
        except Exception as exc:  # noqa: BLE001 - one launch's failure is a row, not the run's end
            row["error"] = f"{type(exc).__name__}: {exc}"[:300]
        rows.append(row)
        print(f"  advice {spec.name} {pair['lever']}: "
              f"{row.get('predicted_change', float('nan')):+.1%} predicted, "
              f"{row.get('measured_change', float('nan')):+.1%} measured {row.get('error', '')}",
              flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=320.0)
    ap.add_argument("--rounds", type=int, default=3,
                    help="measurements of each launch, interleaved; its value is their median")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--targets-first", action="store_true",
                    help="4096^3, 8192^3 and run L's cuBLAS dips first, then the sawtooth")
    ap.add_argument("--extras", nargs="?", const="tma", choices=sorted(EXTRA_SETS),
                    help="TMA_EXTRAS (tma, the default), TMA_SK_EXTRAS (stream-k) or "
                         "TMA_R_EXTRAS (before-q) at the squares and the dips")
    ap.add_argument("--dips", default=",".join(map(str, DIPS)),
                    help="the target dips' N (M=1024, K=8192), comma-separated; default run L's")
    ap.add_argument("--skip-next-step", action="store_true", help="no next-step pairs (part 3)")
    ap.add_argument("--pairs", default="run-h", choices=("run-h", *HELD_OUT),
                    help="which next-step pairs (next_step_pairs)")
    ap.add_argument("--only-next-step", action="store_true", help="no matmul sizes (parts 1, 2)")
    args = ap.parse_args(argv)
    if args.dry_run:
        os.environ.setdefault("TRITON_INTERPRET", "1")
        os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    import torch

    from sim.rules.devices import preset

    t0 = time.time()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    on_gpu = torch.cuda.is_available() and not args.dry_run
    if not on_gpu and not args.dry_run:
        print("no CUDA device: run on a GPU, or give --dry-run for the tiny CPU check")
        return 2
    device = "cuda" if on_gpu else "cpu"
    gpu = preset("H200")
    clock = Clock(not on_gpu)
    dtype = "float16" if args.dry_run else "bfloat16"  # numpy (the interpreter) has no bf16
    M, K = (64, 128) if args.dry_run else (1024, 8192)
    sizes = [256, 512] if args.dry_run else list(range(2048, 16384 + 1, 256))
    result = {"format": "warpscope-chooser/1", "created": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                      time.gmtime()),
              "command": " ".join(sys.argv), "dry_run": args.dry_run, "dtype": dtype,
              "device": torch.cuda.get_device_name() if on_gpu else "cpu (dry run)",
              "method": "triton.testing.do_bench median (warmup 5 ms, rep 25 ms, L2 flushed per rep)"
                        f"; {args.rounds} interleaved rounds per size, the median of the rounds",
              "versions": {"torch": torch.__version__}}
    try:
        import triton

        result["versions"]["triton"] = triton.__version__
    except ImportError:
        pass

    def save():
        result["wall_s"] = time.time() - t0
        (out_dir / "chooser_h200.json").write_text(json.dumps(result, indent=1))

    squares = [128] if args.dry_run else [4096, 8192]
    dips = [256] if args.dry_run else [int(n) for n in args.dips.split(",")]
    result["dips"] = dips
    if args.targets_first:  # the targets first, then the rest of the sawtooth
        plan = ([(n, n, n) for n in squares] + [(M, n, K) for n in dips]
                + [(M, n, K) for n in sizes if n not in dips])
    else:
        plan = [(M, n, K) for n in sizes] + [(n, n, n) for n in squares]
    targets = {(n, n, n) for n in squares} | {(M, n, K) for n in dips}
    # the sawtooth's share of the budget: what the squares and the next step leave it
    share = 0.95 if args.skip_next_step else 0.6
    sweep = result["sawtooth"] = []
    result["squares"] = []
    for i, (m, n, k) in enumerate(plan):
        square = m == n == k and n in squares
        if args.only_next_step:
            break
        if not square and time.time() - t0 > share * args.budget_s:
            result.setdefault("sawtooth_cut", f"stopped at N={n} by the budget")
            continue
        extras = EXTRA_SETS[args.extras] if args.extras and (m, n, k) in targets else ()
        row = matmul_point(m, n, k, gpu, dtype, clock, torch, device, check=i == 0,
                           rounds=args.rounds, extras=extras)
        (result["squares"] if square else sweep).append(row)
        print(f"  {m}x{n}x{k}: auto {row['auto_tflops']:.0f} TFLOP/s ({row['chosen']}), cuBLAS "
              f"{row['cublas_tflops']:.0f}, best {row['best_measured']}"
              + (f"; best TMA {row['best_tma']} {row['cublas_ms'] / row['best_tma_ms']:.3f}x cuBLAS"
                 if "best_tma" in row else "")
              + (f"; {len(row['extras_failed'])} extras failed" if row["extras_failed"] else ""),
              flush=True)
        save()
    sweep.sort(key=lambda r: r["N"])
    if not args.skip_next_step:
        result["next_step"] = next_step_rows(gpu, clock, on_gpu, args.dry_run, args.rounds,
                                             args.pairs)
        result["copy_ceiling_gbps"] = COPY.get("gbps")
    from kernels.fitting.tiles_fit import this_run_scale

    result["scale"] = this_run_scale(result)
    save()
    print_summary(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
