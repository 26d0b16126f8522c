"""`bench --occupancy-sweep`: bandwidth against occupancy, the blocks per SM forced down by a
shared-memory "spoiler" (dynamic shared memory no thread touches, sized by
kernels/measure/occupancy_probe.py so that exactly N blocks fit), as published occupancy benchmarks
measure it: one element per thread, block sizes 32..1024, 1 or 2 blocks per SM, add, copy and a
scale (out = a * x), and each block size unpadded beside them.

At low occupancy a streaming kernel is latency-bound and slow (32 threads, one block per SM: tens
of GB/s), so each point's size is chosen from a short probe: the requested elements, or fewer,
so that one launch takes about `max_ms`, never fewer than MIN_WAVES full waves. The bandwidth of
that many waves is the steady state the published tables report; the elements used are in each
measurement. Without a GPU, `--cpu` runs the same launches in numba-cuda's simulator at a small
size: the results are checked, and the times say only how slow the simulator is.
"""

from __future__ import annotations

import sys

import numpy as np

from sim.inputs.errors import RunFailure, UserError

KERNELS = ("add", "copy", "scale")
ARRAYS = {"add": 3, "copy": 2, "scale": 2}  # arrays each element reads or writes
NUMBA_NAMES = {"add": "add_naive_kernel", "copy": "copy_naive_kernel", "scale": "scale_kernel"}
DTYPES = {"fp64": np.float64, "fp32": np.float32}
DEFAULT_BLOCKS = (32, 64, 128, 256, 512, 1024)
DEFAULT_PER_SM = (1, 2)
DEFAULT_ELEMENTS = {"fp64": 1 << 28, "fp32": 1 << 28}  # the published tables' 256M elements
CPU_ELEMENTS = 4096  # the simulator runs ~7,000 threads a second
MIN_WAVES = 32
SCALE = 3.0


def add_options(parser) -> None:
    """The sweep's own options on `bench` (its --kernel, --block, --sizes, --reps also apply)."""
    parser.add_argument("--occupancy-sweep", action="store_true",
                        help="bandwidth against occupancy: add, copy and scale (out = a*x; or "
                             "--kernel add,copy,scale), one element per thread, at each --block "
                             "(default 32..1024) unpadded and with --blocks-per-sm forced by "
                             "unused dynamic shared memory; --sizes gives one element count "
                             "(default 2^28); --cpu: the simulator, correctness only")
    parser.add_argument("--blocks-per-sm", default=None, metavar="N[,N]",
                        help="with --occupancy-sweep: blocks per SM to force (default: 1,2)")
    parser.add_argument("--dtype", default=None, metavar="fp64|fp32",
                        help="with --occupancy-sweep: element type (default: fp64, as published)")


def _reject_stray(args) -> None:
    if not args.occupancy_sweep:
        for flag, value in (("--blocks-per-sm", args.blocks_per_sm), ("--dtype", args.dtype)):
            if value is not None:
                raise UserError(f"{flag} is for --occupancy-sweep")


def cmd_occupancy_sweep(args) -> int:
    from sim.inputs.units import parse_count_list

    from kernels.cli import ProgressBar
    from kernels.measure.results import _kind, save_results
    from sim.inputs.files import check_writable

    kernels = tuple(k.strip() for k in (args.kernel or ",".join(KERNELS)).split(",") if k.strip())
    dtype = args.dtype or "fp64"
    sizes = parse_count_list(args.sizes, "sizes") if args.sizes else None
    if sizes is not None and len(sizes) != 1:
        raise UserError("--occupancy-sweep takes one size (--sizes N)")
    blocks = (parse_count_list(args.block, "block sizes", upper=None) if args.block
              else DEFAULT_BLOCKS)
    per_sm = (parse_count_list(args.blocks_per_sm, "--blocks-per-sm", upper=None)
              if args.blocks_per_sm else DEFAULT_PER_SM)
    check_sweep_args(kernels, blocks, per_sm, dtype)
    for flag, value in (("--kernel-file", args.kernel_file), ("--warps", args.warps),
                        ("--no-flush", args.no_flush), ("--gpu", args.gpu)):
        if value:
            raise UserError(f"{flag} does not apply to --occupancy-sweep")
    if not args.out:
        raise UserError("give --out FILE.json or FILE.csv for the results")
    _kind(args.out)
    check_writable(args.out)
    result = occupancy_sweep(kernels, blocks, per_sm, dtype=dtype,
                             elements=sizes[0] if sizes else None, reps=args.reps,
                             allow_cpu=args.cpu, on_progress=ProgressBar(),
                             command="warpscope " + " ".join(sys.argv[1:]))
    save_results(result, args.out)
    print(format_sweep(result))
    if not any(m.is_gpu_timing for m in result.measurements):
        print("run in numba-cuda's simulator (--cpu): results checked, NOT GPU timings")
    print(f"wrote {len(result.measurements)} measurements to {args.out}")
    return 0


def check_sweep_args(kernels, blocks, per_sm, dtype: str) -> None:
    bad = [k for k in kernels if k not in KERNELS]
    if bad or not kernels:
        raise UserError(f"--occupancy-sweep kernels are {', '.join(KERNELS)}, got "
                        f"{', '.join(bad) or 'none'}")
    if dtype not in DTYPES:
        raise UserError(f"--dtype must be fp64 or fp32, got {dtype!r}")
    for b in blocks:
        if not 1 <= b <= 1024:
            raise UserError(f"block sizes must be 1..1024 threads, got {b}")
    for n in per_sm:
        if not 1 <= n <= 64:
            raise UserError(f"--blocks-per-sm must be 1..64, got {n}")


def _arrays(kernel: str, n: int, dtype, on_gpu: bool):
    """(inputs, out) of n elements: torch on the GPU (wrapped for Numba), numpy in the simulator."""
    count = ARRAYS[kernel] - 1
    if on_gpu:
        import torch

        tdt = torch.float64 if dtype is np.float64 else torch.float32
        inputs = [torch.randn(n, device="cuda", dtype=tdt) for _ in range(count)]
        return inputs, torch.full((n,), float("nan"), device="cuda", dtype=tdt)
    rng = np.random.default_rng(0)
    return [rng.standard_normal(n).astype(dtype) for _ in range(count)], np.full(n, np.nan, dtype)


def _expected(kernel: str, inputs):
    if kernel == "add":
        return inputs[0] + inputs[1]
    return inputs[0] * SCALE if kernel == "scale" else inputs[0]


def _equal(a, b) -> bool:
    if hasattr(a, "cpu"):
        import torch

        return bool(torch.equal(a, b))
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


def occupancy_sweep(kernels=KERNELS, blocks=DEFAULT_BLOCKS, per_sm=DEFAULT_PER_SM, *,
                    dtype: str = "fp64", elements: int | None = None, reps: int = 20,
                    max_ms: float = 4.0, allow_cpu: bool = False, on_progress=None,
                    command: str = ""):
    """Every kernel x block size x (unpadded, each forced blocks per SM) -> BenchResult."""
    from kernels.launching.backends import available, gpu_status
    from kernels.measure.bench import now_iso
    from kernels.launching.device import detect_device, device_summary
    from kernels.measure.timing import BenchResult

    check_sweep_args(kernels, blocks, per_sm, dtype)
    has_gpu, why = gpu_status()
    if not has_gpu and not allow_cpu:
        raise RunFailure(f"the occupancy sweep needs a GPU to time on: {why}; --cpu runs it in "
                        "numba-cuda's simulator (results checked, not GPU timings)")
    status = available()["numba"]
    if not status.ok:
        raise RunFailure(f"the occupancy sweep needs numba-cuda: {status.reason}")
    if has_gpu and not status.is_gpu:
        raise RunFailure(f"numba-cuda would not run on the GPU here: {status.reason}")
    gpu, _ = detect_device()
    on_gpu = gpu is not None
    if gpu is None:
        from sim.rules.devices import preset

        gpu = preset("H200")  # the padding the simulator launches is the H200's
    n_max = (elements or DEFAULT_ELEMENTS[dtype]) if on_gpu else min(elements or CPU_ELEMENTS,
                                                                     CPU_ELEMENTS)
    points = [(k, b, t) for k in kernels for b in blocks for t in (None, *per_sm)]
    results, notes = [], [f"{dtype}, one element per thread, up to {n_max:,} elements; each "
                          f"point sized for ~{max_ms:g} ms a launch, at least {MIN_WAVES} waves"]
    for kernel in kernels:
        inputs, out = _arrays(kernel, n_max, DTYPES[dtype], on_gpu)
        for k, b, target in points:
            if k != kernel:
                continue
            label = f"{kernel} {dtype} block={b} " + (f"{target}/SM" if target else "unpadded")
            if on_progress:
                on_progress(len(results), len(points), label)
            try:
                m, note = _measure_point(kernel, b, target, inputs, out, gpu, on_gpu, dtype,
                                         n_max, reps, max_ms)
            except UserError as exc:  # a target this block size cannot take: named, not fatal
                notes.append(f"skipped {label}: {exc}")
                continue
            results.append(m)
            if note:
                notes.append(f"{label}: {note}")
        del inputs, out
    if on_progress:
        on_progress(len(points), len(points), "done")
    return BenchResult(device=device_summary(gpu if on_gpu else None), created=now_iso(),
                       command=command, measurements=tuple(results),
                       peak_dram_gbps=gpu.peak_dram_gbps if on_gpu else None,
                       notes=tuple(notes))


def _measure_point(kernel, threads, target, inputs, out, gpu, on_gpu, dtype, n_max, reps,
                   max_ms):
    """One launch shape, sized, checked and timed; (Measurement, a note or "")."""
    from kernels.bodies import numba_kernels as nk
    from kernels.measure.occupancy_probe import padded_launch
    from kernels.measure.timing import (Measurement, bandwidth_gbps, flush_bytes_for, gpu_method, host_method,
                         summarize, time_gpu, time_host)

    fn = getattr(nk, NUMBA_NAMES[kernel])
    extra = (DTYPES[dtype](SCALE),) if kernel == "scale" else ()

    def bound(n):
        views = [a[:n] for a in (*inputs, out)]
        launch = padded_launch(fn, (*nk.device_arrays(views), *extra), -(-n // threads),
                               threads, gpu, target)
        return launch, views

    probe = padded_launch(fn, (*nk.device_arrays([a[:threads] for a in (*inputs, out)]),
                               *extra), 1, threads, gpu, target)
    per_sm = probe.predicted.blocks_per_sm or 1
    wave = gpu.sm_count * per_sm * threads
    n = min(n_max, MIN_WAVES * wave) if on_gpu else n_max
    if on_gpu:  # grow from MIN_WAVES waves to ~max_ms a launch
        launch, _ = bound(n)
        t = summarize(time_gpu(launch.run, reps=3, flush_bytes=flush_bytes_for(gpu.l2_bytes),
                               warmup_ms=1, rep_ms=1))[0]
        grow = max(1.0, max_ms / max(t, 1e-3))
        n = int(min(n_max, n * grow)) // threads * threads or threads
    launch, views = bound(n)
    flush = flush_bytes_for(gpu.l2_bytes)
    if on_gpu:
        import torch

        launch.run()
        torch.cuda.synchronize()
    else:  # the simulator: one run, checked below, its host time only says how slow it is
        times = time_host(launch.run, reps=1, warmup=0)
        method = host_method(1, "numba-cuda simulator")
    if not _equal(views[-1], _expected(kernel, views[:-1])):
        raise UserError(f"{kernel} at block {threads} gave wrong results")
    if on_gpu:
        times = time_gpu(launch.run, reps=reps, flush_bytes=flush, warmup_ms=10, rep_ms=50)
        method = gpu_method("flush", len(times), flush)
    median, p20, p80 = summarize(times)
    nbytes = ARRAYS[kernel] * np.dtype(DTYPES[dtype]).itemsize * n
    occ = launch.predicted
    m = Measurement(
        kernel=f"occupancy_{kernel}_{dtype}", backend="numba", elements=n, block_size=threads,
        threads_per_block=threads, num_warps=-(-threads // 32), median_ms=median, p20_ms=p20,
        p80_ms=p80, reps=len(times), flush_l2=on_gpu, bytes_moved=nbytes,
        bandwidth_gbps=bandwidth_gbps(nbytes, median), bandwidth_p20_gbps=bandwidth_gbps(nbytes, p80),
        bandwidth_p80_gbps=bandwidth_gbps(nbytes, p20), regs_per_thread=launch.regs_per_thread,
        smem_per_block_bytes=launch.static_smem_bytes, is_gpu_timing=on_gpu, method=method,
        device=gpu.name if on_gpu else "CPU (numba-cuda simulator)", grid_blocks=launch.grid_blocks,
        blocks_per_sm=occ.blocks_per_sm or None, occupancy=occ.occupancy,
        limited_by=tuple(occ.limited_by), waves=launch.grid_blocks / (gpu.sm_count * per_sm),
        dynamic_smem_bytes=launch.dynamic_smem_bytes or None)
    note = ""
    if launch.driver_blocks_per_sm is not None and launch.driver_blocks_per_sm != occ.blocks_per_sm:
        note = (f"the driver says {launch.driver_blocks_per_sm} blocks per SM, sim.rules.occupancy "
                f"{occ.blocks_per_sm}")
    return m, note


def format_sweep(result) -> str:
    """The sweep as a table: one row per point, the forced blocks per SM beside the bandwidth."""
    rows = [("kernel", "block", "blocks/SM", "padding B", "occupancy", "elements", "median ms",
             "GB/s")]
    for m in result.measurements:
        rows.append((m.kernel, str(m.block_size), str(m.blocks_per_sm or "-"),
                     f"{m.dynamic_smem_bytes or 0:,}",
                     "" if m.occupancy is None else f"{m.occupancy:.1%}", f"{m.elements:,}",
                     f"{m.median_ms:.4f}", f"{m.bandwidth_gbps:,.0f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in rows]
    head = [result.measurements[0].method] if result.measurements else []
    return "\n".join(head + lines + [f"note: {n}" for n in result.notes])
