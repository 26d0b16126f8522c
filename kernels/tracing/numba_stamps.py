"""The stamped copy of a user's Numba `@cuda.jit` kernel, and its launch (for `trace --kernel-file`).

numba-cuda exposes neither `%smid` nor `%globaltimer`, so the copy reads them through
intrinsics that emit the same inline PTX as the Triton stamps (kernels/bodies/trace_kernels.py):
`mov.u64 %globaltimer` and `mov.u32 %smid`, volatile so every read is fresh. Run G (2026-12-01)
linked C functions instead (cuda.declare_device + a .cu compiled by NVRTC): a call per read cost
+6.3% on the stencil at 2^24; inline PTX needs no link step and no NVRTC.
The rewrite is kernels/tracing/instrument.py's (probe "numba"): a first argument, the stamps,
an int64 [blocks, 3] C-contiguous array. At entry every thread reads the timer and the SM and
takes its block's row address (`stamp_row`: 0 in every thread but (0, 0, 0)); before every
return and at the end, `store_row` has thread (0, 0, 0) read the timer and store (sm, start ns,
end ns). Why this split: the stencil's blocks live about 2,000 cycles, so what runs after a
block's last store lengthens its life and the launch's time. Finding the row at exit (run J's
copy, probe "numba-row-at-exit": +6.1% at 2^24) put a chain of special-register reads and 64-bit
index math there; at entry the same work is branch-free and overlaps the kernel's own start,
and the exit keeps a timer read and three stores.
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
              "%smid/%globaltimer read by inline PTX at entry and the timer again before every "
              "return (thread (0, 0, 0) of each block stores the row)")


@functools.cache
def readers() -> dict:
    """The intrinsics, by the names the stamped source calls them (made once: numba's typing
    registry keeps every intrinsic it is given)."""
    from llvmlite import ir
    from numba import types
    from numba.core.extending import intrinsic
    from numba.cuda.nvvmutils import call_sreg

    i32, i64 = ir.IntType(32), ir.IntType(64)
    row_type = ir.PointerType(i64, addrspace=1)  # global memory: st.global, not a generic store

    def read(builder, ptx: str, bits: int, constraint: str):
        fnty = ir.FunctionType(ir.IntType(bits), [])
        return builder.call(ir.InlineAsm(fnty, ptx, constraint, side_effect=True), [])

    def reader(ptx: str, bits: int, constraint: str, result, name: str):
        def typer(typingctx):
            return result(), lambda context, builder, sig, args: read(builder, ptx, bits,
                                                                      constraint)

        typer.__name__ = f"warpscope_{name}"
        return intrinsic(typer)

    def stamp_row_codegen(context, builder, sig, args):
        sreg = functools.partial(call_sreg, builder)
        wide = functools.partial(builder.zext, typ=i64)
        block = builder.add(wide(sreg("ctaid.x")), builder.mul(wide(sreg("nctaid.x")), builder.add(
            wide(sreg("ctaid.y")), builder.mul(wide(sreg("nctaid.y")), wide(sreg("ctaid.z"))))))
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        row = builder.ptrtoint(builder.gep(data, [builder.mul(block, ir.Constant(i64, 3))]), i64)
        tid = builder.or_(builder.or_(sreg("tid.x"), sreg("tid.y")), sreg("tid.z"))
        first = builder.icmp_unsigned("==", tid, ir.Constant(i32, 0))
        return builder.select(first, row, ir.Constant(i64, 0))  # a select: no branch at entry

    def stamp_row(typingctx, stamps):
        """The address of this block's row in thread (0, 0, 0), 0 in every other thread."""
        if (getattr(stamps, "dtype", None) != types.int64 or getattr(stamps, "ndim", 0) != 2
                or getattr(stamps, "layout", "") != "C"):
            return None
        return types.uint64(stamps), stamp_row_codegen

    def store_row_codegen(context, builder, sig, args):
        row, sm, start = args
        with builder.if_then(builder.icmp_unsigned("!=", row, ir.Constant(i64, 0)), likely=False):
            end = read(builder, GLOBALTIMER_PTX, 64, "=l")  # first: the stores are not the kernel's
            at = builder.inttoptr(row, row_type)
            for column, value in enumerate((builder.zext(sm, i64), start, end)):
                builder.store(value, builder.gep(at, [ir.Constant(i32, column)]))
        return context.get_dummy_value()

    def store_row(typingctx, row, sm, start):
        """Thread (0, 0, 0) (row not 0): (sm, start, the timer now) into its block's row."""
        return types.void(types.uint64, types.uint32, types.uint64), store_row_codegen

    return {PREFIX + "globaltimer": reader(GLOBALTIMER_PTX, 64, "=l", types.uint64, "globaltimer"),
            PREFIX + "smid": reader(SMID_PTX, 32, "=r", types.uint32, "smid"),
            PREFIX + "stamp_row": intrinsic(stamp_row), PREFIX + "store_row": intrinsic(store_row)}


def instrument_numba(dispatcher, probe: str = "numba"):
    """The stamped copy of a numba @cuda.jit kernel, a new dispatcher with the kernel's own
    module globals; its first argument is the int64 [blocks, 3] stamps array (probe
    "numba-row-at-exit": run J's copy, kept to measure against)."""
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
    src, name = instrumented_source(source, probe=probe)
    filename = next_filename(fn.__name__)
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    scope = dict(fn.__globals__)
    scope.update({PREFIX + "cuda": cuda, **readers()})
    exec(compile(src, filename, "exec"), scope)  # noqa: S102 - the user's own kernel, re-stated
    options = {k: v for k, v in getattr(dispatcher, "targetoptions", {}).items()
               if k in ("fastmath", "lineinfo", "debug", "opt", "max_registers", "link", "lto")}
    return cuda.jit(**options)(scope[name])


def bind_numba_traced(spec, shape, args, stamps, probe: str = "numba"):
    """The stamped copy of a Numba KernelSpec launched like the kernel itself (the launcher's
    grid and threads, the same arguments), writing into `stamps` (a torch int64 tensor)."""
    from kernels.bodies.numba_kernels import device_arrays, kernel_resources
    from kernels.declare.spec import resolve
    from kernels.launching.launch import Launch

    stamped = instrument_numba(resolve(spec.kernel), probe)
    arrays = device_arrays((stamps, *args))
    threads = shape.params["threads"]
    grid = shape.grid if len(shape.grid) > 1 else shape.grid[0]
    configured = stamped[grid, threads]

    def run():
        configured(*arrays)

    return Launch(run, shape.grid_blocks, shape.threads_per_block, shape.elements_per_block,
                  -(-shape.threads_per_block // 32), lambda: kernel_resources(stamped, arrays),
                  grid=shape.grid)
