"""CUDA C twins of the Triton trace kernel, launched through cupy: why does Triton fill slower?

The kernels are in dispatch_probe.cu (all threads spin / thread 0 spins while the others wait at
__syncthreads() / all threads sleep between timer reads). A fourth variant launches the Triton
spin kernel's own cubin through cupy: if it fills like the CUDA C kernels, the difference is
Triton's launch path; if it fills like Triton, it is in the binary. Every trace comes back as a
sim.traces.trace.Trace with the same meta as kernels/tracing/trace.py's (kernel "cuda-probe", or "spin-trace"
with launched_by "cupy RawModule" for the Triton binary).

Needs a GPU with cupy (the H200 image has cupy-cuda13x); imported by dispatch_run.py, or run alone:
    python3 benchmarks/dispatch_probe_cuda.py --wait spin-one --warps 4 --spin-us 20 --grid 4225 \
        --out probe.json
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kernels.launching.launch import Resources  # noqa: E402
from kernels.tracing.trace import (check_grid, check_spin_args, compile_spin, grid_for_waves,  # noqa: E402
                           require_gpu, trace_from_stamps, trace_meta)
from sim.inputs.errors import UserError  # noqa: E402

SOURCE = Path(__file__).with_name("dispatch_probe.cu")
PROBES = {"spin-all": "probe_spin_all", "spin-one": "probe_spin_one", "sleep": "probe_sleep"}
TRITON_BINARY = "triton-binary"  # the Triton spin kernel's cubin, launched by cupy
WAITS = (*PROBES, TRITON_BINARY)


@functools.lru_cache(maxsize=1)
def _module():
    import cupy as cp

    return cp.RawModule(code=SOURCE.read_text(encoding="utf-8"), options=("-std=c++17",))


def _resources(fn) -> Resources:
    return Resources(int(fn.num_regs), int(fn.shared_size_bytes), int(fn.local_size_bytes) // 4)


def _triton_binary(num_warps: int, spin_us: float):
    """(cupy function, its arguments after `out`, resources): the cubin Triton launches for the
    spin wait, its parameters read from its PTX so that none is passed in the wrong slot."""
    import cupy as cp

    compiled, (spin_ns, chase, chase_len), _ = compile_spin("spin", num_warps, spin_us)
    ptx = compiled.asm["ptx"]
    entry = ptx[ptx.index(".entry"):]
    kinds = re.findall(r"\.param\s+\.(u64|u32)", entry[:entry.index(")")])
    if kinds != ["u64", "u32", "u64", "u32", "u64", "u64"]:
        raise RuntimeError(f"unexpected parameters in Triton's PTX: {kinds}")
    fd, path = tempfile.mkstemp(suffix=".cubin")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(compiled.asm["cubin"])
        fn = cp.RawModule(path=path).get_function(compiled.metadata.name)
    finally:
        os.unlink(path)
    chase_cp = cp.asarray(chase)  # shares torch's memory
    null = np.uint64(0)  # global and profile scratch: this kernel uses neither
    args = (np.int32(spin_ns), chase_cp, np.int32(chase_len), null, null)
    res = Resources(int(compiled.n_regs), int(compiled.metadata.shared), int(compiled.n_spills))
    return fn, args, res


def record_probe(wait: str, num_warps: int = 4, spin_us: float = 20.0, grid: int | None = None,
                 waves: float | None = None, command: str = "", smem_blocks_per_sm: int | None = None):
    """Launch one probe variant (see WAITS) and return its sim.traces.trace.Trace. smem_blocks_per_sm:
    pad every block with unused dynamic shared memory so that only that many fit on an SM
    (kernels/measure/occupancy_probe.py sizes it; the trace's smem_per_block_bytes includes it)."""
    if wait not in WAITS:
        raise UserError(f"--wait must be one of {', '.join(WAITS)}, got {wait!r}")
    check_spin_args("spin", num_warps, spin_us)
    check_grid(grid, waves)
    gpu = require_gpu()
    import cupy as cp

    if wait == TRITON_BINARY:
        fn, args, res = _triton_binary(num_warps, spin_us)
    else:
        fn = _module().get_function(PROBES[wait])
        args, res = (np.int64(int(spin_us * 1000)),), _resources(fn)
    threads = 32 * num_warps
    pad = 0
    if smem_blocks_per_sm:
        from kernels.measure.occupancy_probe import dynamic_smem_for

        pad = dynamic_smem_for(gpu, threads, smem_blocks_per_sm, res.regs_per_thread,
                               res.smem_per_block_bytes)
        if pad > fn.max_dynamic_shared_size_bytes:  # above 48 KiB a kernel must opt in
            fn.max_dynamic_shared_size_bytes = pad
        res = Resources(res.regs_per_thread, res.smem_per_block_bytes + pad, res.spills)
    if grid is None:
        grid = grid_for_waves(gpu, 3.0 if waves is None else waves, threads, res)
    out = cp.full((grid, 3), -1, dtype=cp.int64)
    fn((1,), (threads,), (out, *args), shared_mem=pad)  # the first launch loads the module
    cp.cuda.runtime.deviceSynchronize()
    out.fill(-1)
    fn((grid,), (threads,), (out, *args), shared_mem=pad)
    cp.cuda.runtime.deviceSynchronize()
    kind, trace_wait = ("spin-trace", "spin") if wait == TRITON_BINARY else ("cuda-probe", wait)
    meta = trace_meta(gpu, kernel=kind, grid=grid, num_warps=num_warps, res=res, command=command,
                      wait=trace_wait, spin_us=spin_us, hold_regs=0,
                      launched_by="cupy RawModule", cupy_version=cp.__version__,
                      dynamic_smem_bytes=pad, smem_blocks_per_sm=smem_blocks_per_sm,
                      source=("Triton's cubin of kernels/bodies/trace_kernels.py:placement_kernel"
                              if wait == TRITON_BINARY
                              else f"benchmarks/{SOURCE.name}:{PROBES[wait]}"))
    return trace_from_stamps(out.get(), gpu.name, meta)


def probe_command(wait: str, num_warps: int, spin_us: float, grid: int) -> str:
    """The command line that records the same probe alone."""
    return (f"python3 benchmarks/dispatch_probe_cuda.py --wait {wait} --warps {num_warps} "
            f"--spin-us {spin_us:g} --grid {grid} --out TRACE.json")


def main(argv=None) -> int:
    from kernels.tracing.trace import save, summarize_trace

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--wait", default="spin-all", help=f"one of {', '.join(WAITS)}")
    p.add_argument("--warps", type=int, default=4)
    p.add_argument("--spin-us", type=float, default=20.0)
    p.add_argument("--grid", type=int, default=None, help="blocks (default: three waves)")
    p.add_argument("--out", required=True, metavar="FILE.json")
    args = p.parse_args(argv)
    try:
        trace = record_probe(args.wait, args.warps, args.spin_us, args.grid,
                             command="python3 benchmarks/dispatch_probe_cuda.py "
                                     + " ".join(sys.argv[1:] if argv is None else argv))
        save(trace, args.out)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(summarize_trace(trace))
    return 0


if __name__ == "__main__":
    sys.exit(main())
