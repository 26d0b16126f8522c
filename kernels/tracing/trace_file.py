"""`trace --kernel-file FILE[:NAME]`: the block-placement trace of a user's Triton or Numba kernel.

The kernel is launched as `bench` launches it (its declaration's inputs, grid, constexprs and
options), once as written, to check its result against the declared reference, and once as
kernels/tracing/instrument.py's stamped copy (a Numba kernel: kernels/tracing/numba_stamps.py's),
whose result is checked too; both are timed (device
events, L2 flushed, median) so the file says what the stamps cost. The recorded launch follows an
L2 flush, like every timed one. The trace is sim/'s "warpscope-trace/1" with the meta that
kernels/tracing/trace.py's recorders write (kernel, grid, warps, registers of the stamped copy, the
plain kernel's beside them, bytes moved), so `compare` and the window read it like any other.
The user's file is opened and run in a kernel host (kernels/host/in_host.py), as `check` and `bench`
run it, never in the command's own process.
"""

from __future__ import annotations

from sim.inputs.errors import UserError
from sim.traces.trace import MAX_TRACE_BLOCKS, Trace

INSTRUMENT = ("kernels/tracing/instrument.py: the kernel's source recompiled with %smid/%globaltimer "
              "stamps at entry and before every return (thread 0 of each program)")
TRACED_BACKENDS = ("triton", "numba")  # what trace --kernel-file (and the window's button) stamps


def record_file_trace(spec, elements: int, block=None, num_warps: int | None = None,
                      command: str = "", *, overhead_reps: int = 20) -> Trace:
    """Trace one launch of a Triton or Numba KernelSpec at `elements`; `block` is a value of its
    sweep parameter (or a dict), `num_warps` overrides a Triton kernel's own."""
    from kernels.tracing.trace import require_gpu, stamp_cost

    if spec.backend not in TRACED_BACKENDS:
        raise UserError(f"{spec.name} is a {spec.backend} kernel: trace --kernel-file stamps "
                        "Triton and Numba kernels")
    if spec.backend == "numba" and num_warps is not None:
        raise UserError(f"--warps: {spec.name} is a Numba kernel, its block is its threads "
                        "(give --block)")
    gpu = require_gpu(spec.backend)
    import torch

    from kernels.measure.harness import (block_setting, compare, first_run, make_arrays,
                                         reference_of, result_of)
    from kernels.launching.launcher import kernel_args
    from kernels.measure.timing import flush_bytes_for

    setting = block_setting(spec, block, num_warps)
    shape = spec.launch_shape(elements, setting, gpu.sm_count)
    if shape.grid_blocks > MAX_TRACE_BLOCKS:
        raise UserError(f"{spec.name} at {elements:,} elements launches {shape.grid_blocks:,} "
                        f"programs, more than a trace file holds ({MAX_TRACE_BLOCKS:,})")
    flush = flush_bytes_for(gpu.l2_bytes)
    inputs, out = make_arrays(spec, elements, on_gpu=True, extra_bytes=flush)
    args = kernel_args(spec, inputs, out, elements)
    stamps = torch.full((shape.grid_blocks, 3), -1, dtype=torch.int64, device="cuda")
    plain, traced = _launches(spec, shape, args, stamps)
    want = reference_of(spec, inputs)
    for launch, what in ((plain, "as written"), (traced, "stamped")):
        out.fill_(float("nan"))
        first_run(spec, launch)
        if want is not None:
            acc = compare(result_of(launch, out), want, rtol=spec.rtol, atol=spec.atol)
            if not acc.ok:
                raise UserError(f"{spec.name} {what} gave wrong results at {elements:,} "
                                f"elements: {acc.detail}")
    timing = stamp_cost(plain.run, traced.run, overhead_reps, flush) if overhead_reps else {}
    stamps.fill_(-1)
    torch.empty(flush, dtype=torch.int8, device="cuda").zero_()
    torch.cuda.synchronize()
    traced.run()
    torch.cuda.synchronize()
    moved = spec.bytes_moved(elements, (*inputs, out))
    return _trace(spec, gpu, shape, traced.resources(), plain.resources(), stamps, elements,
                  moved, command, timing)


def _launches(spec, shape, args, stamps):
    """(the kernel as written, its stamped copy), bound to the same arguments and grid."""
    from kernels.launching.launcher import bind_numba, bind_triton

    if spec.backend == "numba":
        from kernels.tracing.numba_stamps import bind_numba_traced

        return bind_numba(spec, shape, args), bind_numba_traced(spec, shape, args, stamps)
    from kernels.declare.spec import resolve
    from kernels.tracing.instrument import instrument

    stamped = instrument(resolve(spec.kernel))
    return (bind_triton(spec, shape, args),
            bind_triton(spec, shape, (stamps, *args), kernel=stamped))


def _trace(spec, gpu, shape, res, plain_res, stamps, elements, moved, command, timing) -> Trace:
    from kernels.tracing.trace import trace_from_stamps, trace_meta

    warps = -(-shape.threads_per_block // 32)
    params = {k: v for k, v in shape.params.items() if k != "num_warps"}
    if spec.backend == "numba":
        from kernels.tracing.numba_stamps import INSTRUMENT as instrument
        from numba_cuda import __version__ as version

        by = {"launched_by": "numba-cuda", "numba_cuda_version": str(version)}
    else:
        instrument, by = INSTRUMENT, {"launched_by": "triton"}
    meta = trace_meta(gpu, kernel=spec.name, grid=shape.grid_blocks, num_warps=warps, res=res,
                      command=command, wait=None, spin_us=None, elements=elements,
                      block_params=params, grid_shape=list(shape.grid),
                      bytes_moved=moved,
                      kernel_file=spec.origin, instrument=instrument,
                      # the declared chain (tile and loads too), so compare needs no file to run
                      chain=spec.chain,
                      untraced_regs_per_thread=plain_res.regs_per_thread,
                      untraced_smem_per_block_bytes=plain_res.smem_per_block_bytes,
                      l2_flushed=True, **by, **timing)
    return trace_from_stamps(stamps.cpu().numpy(), gpu.name, meta)


def pick_kernel(specs, file: str, name: str | None):
    """The one launchable kernel of a file's specs that `name` names, or the only one."""
    specs = [s for s in specs if s.launchable]
    if name:
        match = [s for s in specs if s.name == name]
        if not match:
            raise UserError(f"{file} has no kernel named {name!r} (it has "
                            f"{', '.join(s.name for s in specs) or 'none to launch'})")
        return match[0]
    if len(specs) != 1:
        raise UserError(f"{file} declares {len(specs)} kernels to launch "
                        f"({', '.join(s.name for s in specs)}): pick one with {file}:NAME")
    return specs[0]


def trace_job(file: str, name: str | None, elements: int, block, num_warps: int | None,
              command: str, limits, ctx) -> Trace:
    """In a kernel host (kernels/host/in_host.py): open the file, pick its kernel, trace it."""
    from kernels.host.in_host import OPENED, open_files

    # only the named declaration: another in the file may not be one to trace
    spec = pick_kernel(open_files([f"{file}:{name}" if name else file], limits, ctx), file, name)
    ctx.progress(0, 0, OPENED)
    return record_file_trace(spec, elements, block, num_warps, command)


def trace_kernel_file(path: str, elements: int, block=None, num_warps: int | None = None,
                      command: str = "") -> Trace:
    """The trace of FILE[:NAME]'s kernel, recorded in a fresh kernel host: the user's file runs
    there, never in this process, under kernels.declare.declarations.Limits."""
    import functools
    import os

    from kernels.declare.declarations import Limits
    from kernels.host.in_host import run_in_host
    from kernels.declare.kernel_file import file_digest, split_path

    file, name = split_path(path)
    file = os.path.abspath(file)
    file_digest(file)  # missing, not a regular file, too big: one line before any process
    limits = Limits.from_env()
    return run_in_host(functools.partial(trace_job, file, name, elements, block, num_warps,
                                         command, limits), limits=limits, files=[file])


def cmd_trace_file(args, spin_only) -> int:
    """`trace --kernel-file`: every value checked, then the GPU looked for, then the file run
    (no GPU: NeedsGpu, exit 2, before the file runs)."""
    import sys

    from sim.inputs.files import check_writable
    from sim.inputs.units import parse_count

    from kernels.tracing.trace import require_gpu, save, say_trace

    stray = ["--" + a.replace("_", "-") for a in spin_only if getattr(args, a) is not None]
    if args.kernel is not None:
        stray.insert(0, "--kernel")
    if stray:
        raise UserError(f"{', '.join(stray)}: not with --kernel-file (it traces the file's kernel)")
    if args.elements is None:
        raise UserError("--kernel-file needs --elements N (e.g. 2^24)")
    elements = parse_count(args.elements, "--elements")
    if not str(args.out).lower().endswith(".json"):
        raise UserError(f"trace file must end in .json, got {args.out!r}")
    check_writable(args.out)
    require_gpu(None)  # before the user's file runs: without a GPU there is nothing to record
    trace = trace_kernel_file(args.kernel_file, elements, args.block, args.warps,
                              "warpscope " + " ".join(sys.argv[1:]))
    save(trace, args.out)
    say_trace(trace, args.out)
    m = trace.meta
    if m.get("overhead_percent") is not None:
        print(f"the stamps cost {m['overhead_percent']:+.1f}% ({m['untraced_median_us']:.1f} us "
              f"untraced, {m['traced_median_us']:.1f} us traced)")
    return 0
