"""Experimental variants for benchmarks/gpu_bench.py: what each change to the vector add is worth.

Not in the registry: these exist to split a difference into its causes on the GPU (one call).
Import after kernels.available() (it may switch Triton to its interpreter and Numba to its
simulator on a machine without a GPU).
"""

from __future__ import annotations

import triton
import triton.language as tl

from kernels.launching.compat import numba_cuda

cuda = numba_cuda()


@triton.jit
def add_variant_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr,
                       INT64: tl.constexpr, EVICT_FIRST: tl.constexpr, STREAM_STORE: tl.constexpr):
    """The vector add with each of the fast kernel's candidate changes behind a switch."""
    pid = tl.program_id(axis=0)
    if INT64:
        start = pid.to(tl.int64) * BLOCK_SIZE
    else:
        start = pid * BLOCK_SIZE
    offsets = start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    if EVICT_FIRST:
        x = tl.load(x_ptr + offsets, mask=mask, eviction_policy="evict_first")
        y = tl.load(y_ptr + offsets, mask=mask, eviction_policy="evict_first")
    else:
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
    if STREAM_STORE:
        tl.store(out_ptr + offsets, x + y, mask=mask, cache_modifier=".cs")
    else:
        tl.store(out_ptr + offsets, x + y, mask=mask)


def triton_variant(x, y, out, block: int, warps: int, int64: bool, evict_first: bool,
                   stream_store: bool):
    n = out.numel()
    grid = (triton.cdiv(n, block),)
    return lambda: add_variant_kernel[grid](x, y, out, n, BLOCK_SIZE=block, INT64=int64,
                                            EVICT_FIRST=evict_first, STREAM_STORE=stream_store,
                                            num_warps=warps)


@cuda.jit
def add_loop4_kernel(x, y, out):
    """Four elements per thread as a plain loop: load, load, store, four times. Numba cannot
    prove out does not alias x or y, so each iteration's loads wait for the previous store:
    the fewer blocks of the fast kernel without its loads in flight."""
    step = cuda.blockDim.x
    base = cuda.blockIdx.x * step * 4 + cuda.threadIdx.x
    for k in range(4):
        i = base + k * step
        if i < out.size:
            out[i] = x[i] + y[i]


def numba_loop4(x, y, out, threads: int = 256):
    from kernels.bodies.numba_kernels import device_arrays

    arrays = device_arrays((x, y, out))
    blocks = triton.cdiv(out.numel(), 4 * threads)
    configured = add_loop4_kernel[blocks, threads]
    return lambda: configured(*arrays)
