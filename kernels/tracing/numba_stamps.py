"""The stamped copy of a user's Numba `@cuda.jit` kernel, and its launch (for `trace --kernel-file`).

numba-cuda exposes neither `%smid` nor `%globaltimer`, so the copy reads them through
intrinsics that emit the same inline PTX as the Triton stamps (kernels/bodies/trace_kernels.py):
`mov.u64 %globaltimer` and `mov.u32 %smid`, volatile so every read is fresh. Linked C functions
(cuda.declare_device + a .cu compiled by NVRTC) cost +6.3% on the stencil at 2^24, a call per
read; inline PTX needs no link step and no NVRTC.
The rewrite is kernels/tracing/instrument.py's (probe "numba", i.e. "numba-exit-split"): a
first argument, the stamps, an int64 [blocks, 3] C-contiguous array. At entry every thread reads
the timer (one CS2R); before every return and at the end, `stamp_exit` has thread (0, 0, 0) read
the timer and the SM, find its row and store (sm, start ns, end ns). Why: the stencil's blocks
live about 2,000 cycles and the launch is bound by block starts and block life, so every
instruction a warp adds costs. On sm_90 (the stencil at 2^24) finding the row in Numba code
("numba-row-at-exit": 64-bit signed index math with negative-index wrap, 36 instructions after
the last store) cost +6.0%, and finding it at entry in every thread +11.2%. `stamp_exit` does the index in 32-bit unsigned math in LLVM IR (13 instructions
after the last store, 2 slow: S2UR SMID, the stamps pointer's LDC); the launch's grid and block
dims are baked in ("numba-exit" keeps all three axes), so no CTAID.Z or TID.Z read; and the
end stamp goes into both branches of a trailing `if`, so each path keeps its own EXIT as the
kernel had (one exit after the merge added BSSY/BSYNC and moves to every warp: 79 instructions
on the stencil's interior path vs 67 plain; split: 69).
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
              "%globaltimer read by inline PTX at entry, and the timer again and %smid before every "
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

    def stamp_exit_codegen(context, builder, sig, args):
        grid_dims, block_dims = (t.literal_value for t in sig.args[2:])
        sreg = functools.partial(call_sreg, builder)
        unused = ir.Constant(i32, 0)
        tid = [sreg(f"tid.{a}") if d < block_dims else unused for d, a in enumerate("xyz")]
        first = builder.icmp_unsigned("==", builder.or_(builder.or_(tid[0], tid[1]), tid[2]),
                                      unused)
        with builder.if_then(first, likely=False):
            end = read(builder, GLOBALTIMER_PTX, 64, "=l")  # first: the stores are not the kernel's
            sm = read(builder, SMID_PTX, 32, "=r")
            # the block's flat index, 32-bit unsigned (a grid of < 2^32 blocks: the host checks)
            axes = "xyz"[:grid_dims]
            block = sreg(f"ctaid.{axes[-1]}")
            for a in reversed(axes[:-1]):
                block = builder.add(sreg(f"ctaid.{a}"), builder.mul(
                    sreg(f"nctaid.{a}"), block, flags=["nuw"]), flags=["nuw"])
            data = context.make_array(sig.args[0])(context, builder, args[0]).data
            at = builder.gep(builder.addrspacecast(data, row_type),
                             [builder.mul(builder.zext(block, i64), ir.Constant(i64, 3),
                                          flags=["nuw"])], inbounds=True)
            for column, value in enumerate((builder.zext(sm, i64), args[1], end)):
                builder.store(value, builder.gep(at, [ir.Constant(i32, column)], inbounds=True))
        return context.get_dummy_value()

    def stamp_exit(typingctx, stamps, start, grid_dims, block_dims):
        """Thread (0, 0, 0): the timer, the SM, its block's row, then (sm, start, end) stored;
        grid_dims and block_dims (literal 1-3) leave out the axes the launch does not use."""
        dims = [getattr(t, "literal_value", None) for t in (grid_dims, block_dims)]  # globals
        if (getattr(stamps, "dtype", None) != types.int64 or getattr(stamps, "ndim", 0) != 2
                or getattr(stamps, "layout", "") != "C" or not all(d in (1, 2, 3) for d in dims)):
            return None
        return types.void(stamps, types.uint64, grid_dims, block_dims), stamp_exit_codegen

    return {PREFIX + "globaltimer": reader(GLOBALTIMER_PTX, 64, "=l", types.uint64, "globaltimer"),
            PREFIX + "smid": reader(SMID_PTX, 32, "=r", types.uint32, "smid"),
            PREFIX + "stamp_exit": intrinsic(prefer_literal=True)(stamp_exit)}


def instrument_numba(dispatcher, probe: str = "numba", dims: tuple[int, int] = (3, 3)):
    """The stamped copy of a numba @cuda.jit kernel, a new dispatcher with the kernel's own
    module globals; its first argument is the int64 [blocks, 3] stamps array. `dims`: how many
    axes the launch's grid and block have, baked into the copy ("numba-exit" takes all three;
    "numba-row-at-exit", the row found in Numba code, is kept to measure against)."""
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
    grid_dims, block_dims = (3, 3) if probe == "numba-exit" else dims
    scope.update({PREFIX + "cuda": cuda, PREFIX + "grid_dims": grid_dims,
                  PREFIX + "block_dims": block_dims, **readers()})
    exec(compile(src, filename, "exec"), scope)  # noqa: S102 - the user's own kernel, re-stated
    options = {k: v for k, v in getattr(dispatcher, "targetoptions", {}).items()
               if k in ("fastmath", "lineinfo", "debug", "opt", "max_registers", "link", "lto")}
    return cuda.jit(**options)(scope[name])


def launch_dims(shape) -> tuple[int, int]:
    """(axes of the grid, axes of the block) of a Numba LaunchShape."""
    threads = shape.params["threads"]
    return len(shape.grid), len(threads) if isinstance(threads, (tuple, list)) else 1


def bind_numba_traced(spec, shape, args, stamps, probe: str = "numba"):
    """The stamped copy of a Numba KernelSpec launched like the kernel itself (the launcher's
    grid and threads, the same arguments), writing into `stamps` (a torch int64 tensor)."""
    from kernels.bodies.numba_kernels import device_arrays, kernel_resources
    from kernels.declare.spec import resolve
    from kernels.launching.launch import LiveLaunch

    threads = shape.params["threads"]
    grid = shape.grid if len(shape.grid) > 1 else shape.grid[0]
    if shape.grid_blocks >= 1 << 32:  # the stamps' row index is 32-bit
        raise UserError(f"{spec.name}: {shape.grid_blocks:,} blocks, more than the stamps index")
    stamped = instrument_numba(resolve(spec.kernel), probe, launch_dims(shape))
    arrays = device_arrays((stamps, *args))
    configured = stamped[grid, threads]

    def run():
        configured(*arrays)

    return LiveLaunch(run, shape.grid_blocks, shape.threads_per_block, shape.elements_per_block,
                  -(-shape.threads_per_block // 32), lambda: kernel_resources(stamped, arrays),
                  grid=shape.grid)
