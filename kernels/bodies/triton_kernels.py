"""Triton kernels: vector add (the article's and a fast one), fused add+ReLU, copy and square.

Read it like Triton's tutorials. Each kernel's grid rule, reference and bytes-moved formula are in
its declaration in ``kernels/declare/registry.py``; ``kernels/launching/launcher.py`` launches any declared kernel.

Imported lazily (it imports triton): set ``TRITON_INTERPRET=1`` before the first import to run
these on the CPU (``kernels.available()`` does that when there is no GPU).
"""

from __future__ import annotations

import triton
import triton.language as tl



# --------------------------------------------------------------------------------------------
# The article's vector add (tutorial 01), kept exactly as the teaching version.
# --------------------------------------------------------------------------------------------
@triton.jit
def add_kernel(
    x_ptr,  # first input
    y_ptr,  # second input
    output_ptr,  # output, same length
    n_elements,  # length of the vectors
    BLOCK_SIZE: tl.constexpr,  # elements one program instance handles (a power of two)
):
    pid = tl.program_id(axis=0)  # which program instance am I?
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements  # guard for the final instance
    x = tl.load(x_ptr + offsets, mask=mask)  # global memory to registers
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


# --------------------------------------------------------------------------------------------
# The fast kernels. Measured on the H200 (benchmarks/RESULTS.md), the tutorial's tile
# (1024 elements, 4 warps: two 16-byte loads per input per thread) already runs at torch.add's
# speed, and no larger tile beat it, so the fast kernels keep it and change one thing: 64-bit
# offsets, so more than 2^31 elements index correctly (the tutorial's int32 pid * BLOCK_SIZE
# overflows there); they cost nothing measurable. Streaming cache hints looked right for
# touch-once data but are not free: evict_first loads cost 5-11% there (.cs stores: nothing).
# --------------------------------------------------------------------------------------------
@triton.jit
def _tile(n_elements, BLOCK_SIZE: tl.constexpr):
    """This program's offsets (int64) and the mask that guards the last, partial tile."""
    start = tl.program_id(axis=0).to(tl.int64) * BLOCK_SIZE
    offsets = start + tl.arange(0, BLOCK_SIZE)
    return offsets, offsets < n_elements


@triton.jit
def add_fast_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets, mask = _tile(n_elements, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@triton.jit
def add_relu_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    """(x + y).relu() in one pass: read x, read y, write out — 3 trips instead of eager's 5."""
    offsets, mask = _tile(n_elements, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.maximum(x + y, 0.0), mask=mask)


@triton.jit
def copy_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets, mask = _tile(n_elements, BLOCK_SIZE)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def square_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets, mask = _tile(n_elements, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * x, mask=mask)
