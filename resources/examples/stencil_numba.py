"""A 2D five-point stencil in Numba-CUDA: every interior point becomes the mean of its four
neighbours (one Jacobi step of the heat equation); the border is copied unchanged.

The block is two-dimensional: threads=(32, 8) is 32 threads along a row (x, the fastest index,
so one warp reads 32 neighbouring floats: a coalesced 128-byte line) by 8 rows (y). Each input
element is read by up to five threads, but neighbours share cache lines, so DRAM sees u about
once and out once: 2 x 4 bytes per point.
"""

import math

import numpy as np
from numba import cuda

QUARTER = np.float32(0.25)  # a float32 constant: a plain 0.25 would make Numba compute in float64


@cuda.jit
def stencil_kernel(u, out):
    col, row = cuda.grid(2)  # x = column (fastest), y = row
    rows, cols = u.shape
    if row >= rows or col >= cols:  # the last blocks overrun the grid: do nothing there
        return
    if 0 < row < rows - 1 and 0 < col < cols - 1:
        out[row, col] = QUARTER * (u[row - 1, col] + u[row + 1, col]
                                + u[row, col - 1] + u[row, col + 1])
    else:
        out[row, col] = u[row, col]  # the border stays as it was


def stencil64(u):
    """The reference, in float64."""
    u = u.astype(np.float64)
    out = u.copy()
    out[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return out


def stencil_torch(torch, u):
    out = u.clone()
    out[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return out


WARPSCOPE = dict(
    kernel=stencil_kernel,
    title="5-point stencil, Numba, 2D blocks",
    group="stencil",
    dims=lambda n: dict(H=max(1, math.isqrt(n)), W=max(1, math.isqrt(n))),  # a square grid
    inputs=lambda H, W: [np.random.rand(H, W).astype(np.float32)],
    args=lambda u, out: (u, out),
    grid=lambda H, W, threads: (math.ceil(W / threads[0]), math.ceil(H / threads[1])),
    block=dict(threads=(32, 8)),
    bytes=lambda H, W: 2 * 4 * H * W,  # read u once, write out once
    # one sweep, but five global loads in the compiled kernel for one input array (sm_90 SASS:
    # LDG count 5, benchmarks/ at 8be3ded "plain"): each past the first
    # lengthens a block's round trip (sim.model.chain)
    chain=dict(passes=1, loads=5),
    reference=stencil64,
    rtol=1e-6,
    peer=stencil_torch,
    check_sizes=[1, 30 * 30, 100 * 100],
)
