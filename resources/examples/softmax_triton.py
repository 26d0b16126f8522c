"""Row-wise softmax in Triton, the way Triton's tutorial 02 ("Fused Softmax") writes it.

Each program normalizes one row: it reads the row once into registers, subtracts the row's
maximum (so exp never overflows), exponentiates, divides by the sum and writes the row once.
PyTorch's eager softmax reads and writes DRAM several times for the same result; a fused kernel
moves each byte once, so it is memory-bound at 2 x 4 bytes per element.

BLOCK_SIZE is the row length rounded up to a power of two: the whole row lives in registers,
spread over num_warps warps. That is the knob to move here: more warps give each thread fewer
elements to hold (fewer registers per thread) but make each program a bigger block.
"""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(
    output_ptr,  # out: (rows, n_cols), float32
    input_ptr,  # x: (rows, n_cols), float32
    input_row_stride,  # elements from one row of x to the next
    output_row_stride,  # elements from one row of out to the next
    n_cols,  # row length
    BLOCK_SIZE: tl.constexpr,  # n_cols rounded up to a power of two
):
    row_idx = tl.program_id(0)  # one program per row
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols  # the padding past n_cols reads -inf: it adds exp(-inf) = 0
    row = tl.load(row_start_ptr + col_offsets, mask=mask, other=-float("inf"))
    row_minus_max = row - tl.max(row, axis=0)  # for numerical stability
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator
    output_row_start_ptr = output_ptr + row_idx * output_row_stride
    tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)


COLS = 4096  # row length: a problem of n elements is n // COLS rows


def softmax64(x):
    """The reference, in float64."""
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


WARPSCOPE = dict(
    kernel=softmax_kernel,
    title="Row softmax, Triton (tutorial 02)",
    group="softmax",
    inputs=lambda n: [np.random.randn(max(1, n // COLS), COLS).astype(np.float32)],
    args=lambda x, out: (out, x, x.shape[1], out.shape[1], x.shape[1]),
    grid=lambda n: max(1, n // COLS),  # one program per row
    # tutorial 02: BLOCK_SIZE = next_power_of_2(n_cols), 8 warps
    block=dict(BLOCK_SIZE=triton.next_power_of_2(COLS), num_warps=8),
    sweep="num_warps",  # BLOCK_SIZE must cover a row; the warps are free to choose
    bytes=lambda n: 2 * 4 * max(1, n // COLS) * COLS,  # read x once, write out once
    # one sweep (the row stays in registers), two block-wide reductions: tl.max, then tl.sum
    chain=dict(passes=1, reductions=2),
    # torch's kernel (cunn_SoftMaxForwardReg, profiled on the H200 in benchmarks/ at 8be3ded): the row
    # in registers too, a block-wide max and a block-wide sum
    peer_chain=dict(passes=1, reductions=2),
    reference=softmax64,
    rtol=1e-5,
    peer=lambda torch, x: torch.softmax(x, dim=1),
    check_sizes=[COLS, 3 * COLS],
)
