"""Layer normalization (forward) in Triton, the way Triton's tutorial 05 ("Layer Norm") writes it.

One program per row. A row is longer than one tile, so the program walks it in BLOCK_SIZE
steps three times: once for the mean, once for the variance, once to normalize, scale by w and
shift by b. The second and third passes find the row in L1/L2, so DRAM sees x once and y once.

BLOCK_SIZE is the knob: a bigger tile means fewer loop trips but more registers per thread (each
thread holds BLOCK_SIZE / (32 x num_warps) partial sums); past some size the compiler runs out of
registers and occupancy drops.
"""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def layer_norm_fwd_kernel(
    X,  # input x: (rows, N), float32
    Y,  # output y: (rows, N), float32
    W,  # weights w: (N,)
    B,  # biases b: (N,)
    stride,  # elements from one row to the next
    N,  # row length
    eps,  # added to the variance, so a constant row does not divide by zero
    BLOCK_SIZE: tl.constexpr,  # elements per step along the row
):
    row = tl.program_id(0)  # one program per row
    X += row * stride
    Y += row * stride
    # mean
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    # variance
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    # normalize, then scale and shift
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        tl.store(Y + cols, x_hat * w + b, mask=mask)


COLS = 4096  # row length N: a problem of n elements is n // COLS rows
EPS = 1e-5


def inputs(n):
    rows = max(1, n // COLS)
    x = np.random.randn(rows, COLS).astype(np.float32)
    w = np.random.rand(COLS).astype(np.float32)
    b = np.random.rand(COLS).astype(np.float32)
    return [x, w, b]


def layer_norm64(x, w, b):
    """The reference, in float64."""
    x = x.astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * w.astype(np.float64) + b.astype(np.float64)


WARPSCOPE = dict(
    kernel=layer_norm_fwd_kernel,
    title="LayerNorm forward, Triton (tutorial 05)",
    group="layernorm",
    inputs=inputs,
    output=lambda x, w, b: np.empty_like(x),
    args=lambda x, w, b, out: (x, out, w, b, x.shape[1], x.shape[1], EPS),
    grid=lambda n: max(1, n // COLS),  # one program per row
    # tutorial 05: BLOCK_SIZE = min(65536 // 4, next_power_of_2(N)),
    # num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
    block=dict(BLOCK_SIZE=1024, num_warps=4),
    sweep="BLOCK_SIZE",
    bytes=lambda n: 4 * (2 * max(1, n // COLS) * COLS + 2 * COLS),  # x and y once, w and b
    # three dependent sweeps over the row (mean, variance, normalise), a block-wide tl.sum after
    # each of the first two: the later sweeps find the row in the cache, but each waits for the last;
    # each sweep walks the row in BLOCK_SIZE steps (4,096 / 1,024 = 4 dependent round trips)
    chain=dict(passes=3, reductions=2, tile="BLOCK_SIZE"),
    reference=layer_norm64,
    rtol=1e-4,
    atol=1e-5,
    peer=lambda torch, x, w, b: torch.nn.functional.layer_norm(x, (x.shape[1],), w, b, EPS),
    check_sizes=[COLS, 3 * COLS],
)
