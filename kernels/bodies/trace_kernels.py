"""The Triton kernels behind block-placement traces (kernels/tracing/trace.py launches them).

Every program reads its SM (``%smid``) and the global nanosecond timer (``%globaltimer``) through
inline PTX and stores (sm, start ns, end ns); Triton stores a scalar from thread 0, so those are
thread 0's readings. Between start and end a program either stays resident for a set time, in one
of three ways, or does one tile of a real kernel (add, copy, square, one row of a softmax; each
but the add has a STAMP switch, so the same kernel runs unstamped to time what stamping costs).
The waits differ in how hard the resident
warps press on their SM's issue slots:

- ``spin``: every thread re-reads the timer in a tight loop (six SASS instructions a turn);
- ``sleep``: every thread sleeps ~200 ns (``nanosleep.u32``) between timer reads;
- ``memory``: every thread follows a chain of dependent loads through a buffer four times the
  size of L2, so each warp waits on DRAM (~1 us) between timer reads.

PTX that uses no operand is a trap: ptxas then drops whatever computed the operand (a load, say)
as dead, so each helper below says what orders it. The interpreter cannot run inline PTX.
"""

from __future__ import annotations

import triton
import triton.language as tl

# What the warps do while resident: the names (CLI, trace meta) in the order of their WAIT codes.
WAITS = ("spin", "sleep", "memory")
SPIN: tl.constexpr = tl.constexpr(0)
SLEEP: tl.constexpr = tl.constexpr(1)
SLEEP_NS = 200  # the nanosleep of the sleep loop, as written in its PTX below
CHASE_ENTRIES = 1 << 26  # int32 next-pointers: 256 MiB, four times an H200's 60 MiB L2
HOLD_REGS = (0, 1, 2, 4, 8, 16, 32, 64, 128)  # extra registers a thread can hold (powers of two)


@triton.jit
def _smid(dummy):
    # The SM this program runs on. A dummy operand (the program id) gives the asm a shape.
    return tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [dummy],
                                     dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _globaltimer(dummy):
    # The GPU's global timer in ns; is_pure=False so every read is a fresh read.
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [dummy],
                                     dtype=tl.int64, is_pure=False, pack=1)


@triton.jit
def _sleep_then_globaltimer(dummy):
    # Sleep ~200 ns (SLEEP_NS; the hardware may wake the warp anywhere in 0..2x that), then read
    # the timer: one asm, so the read stays after the sleep.
    return tl.inline_asm_elementwise("nanosleep.u32 200;\n\tmov.u64 $0, %globaltimer;", "=l,r",
                                     [dummy], dtype=tl.int64, is_pure=False, pack=1)


@triton.jit
def _globaltimer_after(value):
    # The timer, read once `value` (an int32 that is never -1) has arrived: the asm tests `value`
    # first, and a warp issues in order, so the read waits for the load that produced it.
    return tl.inline_asm_elementwise(
        "{ .reg .pred never; setp.eq.s32 never, $1, -1;\n\t"
        "mov.u64 $0, %globaltimer;\n\t@never mov.u64 $0, 0; }",
        "=l,r", [value], dtype=tl.int64, is_pure=False, pack=1)


@triton.jit
def _globaltimer_lo_xor(x):
    # The timer's low 32 bits xor x: one register per value (a 64-bit read takes a pair), a value
    # no compiler can recompute later, and a thread-dependent x keeps it out of the 63 warp-uniform
    # registers, which would not count against occupancy.
    return tl.inline_asm_elementwise("mov.u32 $0, %globaltimer_lo;\n\txor.b32 $0, $0, $1;",
                                     "=r,r", [x], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _store_stamp(out_ptr, pid, start, end):
    # One row of the trace: (sm, start ns, end ns).
    sm = _smid(pid)
    tl.store(out_ptr + pid * 3 + 0, sm.to(tl.int64))
    tl.store(out_ptr + pid * 3 + 1, start)
    tl.store(out_ptr + pid * 3 + 2, end)


@triton.jit(do_not_specialize=["spin_ns"])  # one compile for every duration (same SASS)
def placement_kernel(
    out_ptr,  # int64 [grid, 3]: sm, start ns, end ns per program
    spin_ns,  # how long each program stays resident
    chase_ptr,  # int32 next-pointers (memory wait); any int32 pointer otherwise, never read
    chase_len,  # entries in chase_ptr
    WAIT: tl.constexpr,  # index of the wait in WAITS: spin, sleep or memory
    HELD: tl.constexpr,  # values held live across the wait by the whole program (0: none);
    #                      HELD / (32 * num_warps) extra registers per thread
):
    pid = tl.program_id(axis=0)
    if HELD > 0:
        held = _globaltimer_lo_xor(tl.arange(0, HELD))
    start = _globaltimer(pid)
    now = start
    if WAIT == SPIN:  # the busy loop that every trace used before the waits existed
        while now - start < spin_ns:
            now = _globaltimer(pid)
    elif WAIT == SLEEP:
        while now - start < spin_ns:
            now = _sleep_then_globaltimer(pid)
    else:  # memory: a dependent pointer chase
        cur = pid % chase_len
        while now - start < spin_ns:
            cur = tl.load(chase_ptr + cur, cache_modifier=".cg")
            now = _globaltimer_after(cur)
    if HELD > 0:
        # Never stored (the timer is never negative), but the compiler cannot know: it must keep
        # every held value in a register until here, so registers can limit occupancy.
        tl.store(chase_ptr + tl.zeros([HELD], dtype=tl.int32), held, mask=now < 0)
    _store_stamp(out_ptr, pid, start, now)


@triton.jit
def add_trace_kernel(
    x_ptr,  # first input
    y_ptr,  # second input
    out_ptr,  # output, same length
    stamps_ptr,  # int64 [grid, 3]: sm, start ns, end ns per program
    n_elements,  # length of the vectors
    BLOCK_SIZE: tl.constexpr,  # elements one program handles (a power of two)
    STAMP: tl.constexpr = True,  # False: the same add unstamped, to time what the stamps cost
):
    """The tutorial's vector add, one tile per program, stamped at entry and after its store."""
    pid = tl.program_id(axis=0)
    if STAMP:
        start = _globaltimer(pid)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
    # A store issues once both loads have landed, and a warp may exit before its stores complete:
    # the timer read after the store (it stays there in the SASS) is when the block is done.
    if STAMP:
        _store_stamp(stamps_ptr, pid, start, _globaltimer(pid))


@triton.jit
def unary_trace_kernel(
    x_ptr,  # input
    out_ptr,  # output, same length
    stamps_ptr,  # int64 [grid, 3]: sm, start ns, end ns per program (never written unless STAMP)
    n_elements,  # length of the vectors
    BLOCK_SIZE: tl.constexpr,  # elements one program handles (a power of two)
    SQUARE: tl.constexpr,  # out = x * x (square) or out = x (copy)
    STAMP: tl.constexpr,  # False: the same kernel unstamped
):
    """The copy and square kernels of kernels/bodies/triton_kernels.py's tile, stamped as the add is."""
    pid = tl.program_id(axis=0)
    if STAMP:
        start = _globaltimer(pid)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    if SQUARE:
        x = x * x
    tl.store(out_ptr + offsets, x, mask=mask)
    if STAMP:
        _store_stamp(stamps_ptr, pid, start, _globaltimer(pid))


@triton.jit
def softmax_trace_kernel(
    out_ptr,  # (rows, n_cols) float32
    x_ptr,  # (rows, n_cols) float32, contiguous rows
    n_cols,  # row length (<= BLOCK_SIZE)
    stamps_ptr,  # int64 [rows, 3]
    BLOCK_SIZE: tl.constexpr,  # n_cols rounded up to a power of two: one row per program
    STAMP: tl.constexpr,
):
    """Tutorial 02's row softmax (resources/examples/softmax_triton.py), one row per program."""
    row = tl.program_id(axis=0)
    if STAMP:
        start = _globaltimer(row)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    base = row.to(tl.int64) * n_cols
    x = tl.load(x_ptr + base + cols, mask=mask, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + base + cols, num / tl.sum(num, axis=0), mask=mask)
    if STAMP:
        _store_stamp(stamps_ptr, row, start, _globaltimer(row))


def held_values(hold_regs: int, num_warps: int) -> int:
    """placement_kernel's HELD for `hold_regs` extra registers per thread."""
    return hold_regs * 32 * num_warps


def compile_for(kernel: str, *, num_warps: int = 4, wait: str = "spin", hold_regs: int = 0,
                block_size: int = 1024, cc: int = 90):
    """triton.compile one trace kernel for an NVIDIA target, no GPU needed: catches inline-PTX and
    typing errors before the GPU run. kernel "spin" is placement_kernel, "add" add_trace_kernel,
    "copy"/"square" unary_trace_kernel, "softmax" softmax_trace_kernel (one row of block_size);
    the signature is what a launch specializes (a 32-bit spin_ns, as for any spin up to 2 s).
    Returns triton's CompiledKernel (asm["ptx"], asm["cubin"])."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    if kernel == "spin":
        src = ASTSource(fn=placement_kernel,
                        signature={"out_ptr": "*i64", "spin_ns": "i32", "chase_ptr": "*i32",
                                   "chase_len": "i32", "WAIT": "constexpr", "HELD": "constexpr"},
                        constexprs={"WAIT": WAITS.index(wait),
                                    "HELD": held_values(hold_regs, num_warps)})
    elif kernel == "add":
        src = ASTSource(fn=add_trace_kernel,
                        signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32",
                                   "stamps_ptr": "*i64", "n_elements": "i32",
                                   "BLOCK_SIZE": "constexpr", "STAMP": "constexpr"},
                        constexprs={"BLOCK_SIZE": block_size, "STAMP": True})
    elif kernel in ("copy", "square"):
        src = ASTSource(fn=unary_trace_kernel,
                        signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "stamps_ptr": "*i64",
                                   "n_elements": "i32", "BLOCK_SIZE": "constexpr",
                                   "SQUARE": "constexpr", "STAMP": "constexpr"},
                        constexprs={"BLOCK_SIZE": block_size, "SQUARE": kernel == "square",
                                    "STAMP": True})
    elif kernel == "softmax":
        src = ASTSource(fn=softmax_trace_kernel,
                        signature={"out_ptr": "*fp32", "x_ptr": "*fp32", "n_cols": "i32",
                                   "stamps_ptr": "*i64", "BLOCK_SIZE": "constexpr",
                                   "STAMP": "constexpr"},
                        constexprs={"BLOCK_SIZE": block_size, "STAMP": True})
    else:
        raise ValueError(f"kernel must be spin, add, copy, square or softmax, got {kernel!r}")
    return triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": num_warps})
