"""The stamped copy of a user's Numba `@cuda.jit` kernel, and its launch (for `trace --kernel-file`).

numba-cuda exposes neither `%smid` nor `%globaltimer`, so the copy reads them through two
intrinsics that emit the same inline PTX as the Triton stamps (kernels/bodies/trace_kernels.py):
`mov.u64 %globaltimer` and `mov.u32 %smid`, volatile so every read is fresh. Run G (2026-12-01)
linked C functions instead (cuda.declare_device + a .cu compiled by NVRTC): a call per read cost
+6.3% on the stencil at 2^24; inline PTX needs no link step and no NVRTC.
The rewrite is kernels/tracing/instrument.py's (probe "numba"): a first argument, the stamps,
an int64 [blocks, 3] array; the entry timer in every thread; before every return and at the end,
thread (0, 0, 0) of each block stores (sm, start ns, end ns) at its flattened block id.
numba-cuda's simulator runs kernels as Python: it has no PTX, so recording needs a GPU (the
caller checks: kernels.tracing.trace.require_gpu).
"""

from __future__ import annotations

import functools
import inspect
import linecache

from sim.inputs.errors import UserError

from kernels.tracing.instrument import PREFIX, instrumented_source, next_filename

GLOBALTIMER_PTX = "mov.u64 $0, %globaltimer;"
SMID_PTX = "mov.u32 $0, %smid;"
INSTRUMENT = ("kernels/tracing/numba_stamps.py: the @cuda.jit kernel's source recompiled with "
              "%smid/%globaltimer read by inline PTX at entry and before every return "
              "(thread (0, 0, 0) of each block stores the row)")


@functools.cache
def readers() -> dict:
    """The two intrinsics, by the names the stamped source calls them (made once: numba's
    typing registry keeps every intrinsic it is given)."""
    from llvmlite import ir
    from numba import types
    from numba.core.extending import intrinsic

    def register(ptx: str, bits: int, constraint: str, result):
        def codegen(context, builder, signature, args):
            fnty = ir.FunctionType(ir.IntType(bits), [])
            return builder.call(ir.InlineAsm(fnty, ptx, constraint, side_effect=True), [])

        def typer(typingctx):
            return result(), codegen

        typer.__name__ = f"warpscope_{'smid' if bits == 32 else 'globaltimer'}"
        return intrinsic(typer)

    return {PREFIX + "globaltimer": register(GLOBALTIMER_PTX, 64, "=l", types.uint64),
            PREFIX + "smid": register(SMID_PTX, 32, "=r", types.uint32)}


def instrument_numba(dispatcher):
    """The stamped copy of a numba @cuda.jit kernel, a new dispatcher with the kernel's own
    module globals; its first argument is the int64 [blocks, 3] stamps array."""
    from kernels.launching.compat import numba_cuda

    cuda = numba_cuda()
    fn = getattr(dispatcher, "py_func", None)
    if fn is None:
        raise UserError(f"only a @cuda.jit kernel can be traced, got {type(dispatcher).__name__}")
    if fn.__code__.co_freevars:
        raise UserError(f"{fn.__name__} uses variables of an enclosing function "
                        f"({', '.join(fn.__code__.co_freevars)}): define it at the top of its file")
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        raise UserError(f"{fn.__name__}: its source cannot be read, so it cannot be "
                        "recompiled with stamps") from None
    src, name = instrumented_source(source, probe="numba")
    filename = next_filename(fn.__name__)
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    scope = dict(fn.__globals__)
    scope.update({PREFIX + "cuda": cuda, **readers()})
    exec(compile(src, filename, "exec"), scope)  # noqa: S102 - the user's own kernel, re-stated
    options = {k: v for k, v in getattr(dispatcher, "targetoptions", {}).items()
               if k in ("fastmath", "lineinfo", "debug", "opt", "max_registers", "link", "lto")}
    return cuda.jit(**options)(scope[name])


def bind_numba_traced(spec, shape, args, stamps):
    """The stamped copy of a Numba KernelSpec launched like the kernel itself (the launcher's
    grid and threads, the same arguments), writing into `stamps` (a torch int64 tensor)."""
    from kernels.bodies.numba_kernels import device_arrays, kernel_resources
    from kernels.declare.spec import resolve
    from kernels.launching.launch import Launch

    stamped = instrument_numba(resolve(spec.kernel))
    arrays = device_arrays((stamps, *args))
    threads = shape.params["threads"]
    grid = shape.grid if len(shape.grid) > 1 else shape.grid[0]
    configured = stamped[grid, threads]

    def run():
        configured(*arrays)

    return Launch(run, shape.grid_blocks, shape.threads_per_block, shape.elements_per_block,
                  -(-shape.threads_per_block // 32), lambda: kernel_resources(stamped, arrays),
                  grid=shape.grid)
