"""Numba-CUDA kernels: the article's one-thread-per-element add (the teaching version), a fast
add with four coalesced elements per thread, a grid-stride add, fused add+ReLU, the article's
square, and "hello, warp lanes".

Read it like Triton's tutorials. Each kernel's grid rule, reference and bytes-moved formula are in
its declaration in ``kernels/declare/registry.py``; ``kernels/launching/launcher.py`` launches any declared kernel. Imported lazily: ``NUMBA_ENABLE_CUDASIM=1`` before
``import numba`` runs these in numba-cuda's simulator on the CPU (``kernels.available()`` sets
it when there is no GPU). numba.cuda is imported through ``kernels.launching.compat`` for numpy >= 2.5.
"""

from __future__ import annotations

import warnings

import numba
import numpy as np

from sim.inputs.errors import UserError

from kernels.launching.compat import numba_cuda
from kernels.launching.launch import NO_RESOURCES, Resources

cuda = numba_cuda()
SIMULATED = bool(numba.config.ENABLE_CUDASIM)
# The article's sizes launch grids of 1 block on purpose; Numba's "under-utilization" warning
# for them would only clutter `check`. numba-cuda has its own copy of the warning class.
warnings.filterwarnings("ignore", message=".*will likely result in GPU under-utilization")
ELEMENTS_PER_THREAD = 4  # the fast kernels' tile per thread


# --------------------------------------------------------------------------------------------
# The article's kernel, one thread per element (kept as the teaching version).
# --------------------------------------------------------------------------------------------
@cuda.jit
def add_naive_kernel(x, y, out):
    i = cuda.grid(1)  # blockIdx.x * blockDim.x + threadIdx.x
    if i < out.size:  # the last block overruns the array: never touch memory past its end
        out[i] = x[i] + y[i]


# --------------------------------------------------------------------------------------------
# Fast: four elements per thread, strided by blockDim so each step is still coalesced, and all
# eight loads issued before the first store. Numba cannot prove x, y and out don't alias, so a
# plain loop would wait for each store before the next load; writing the loads first keeps 8
# independent loads in flight per thread instead of 2 — the bytes in flight that HBM needs.
# One operation per fused kernel, passed in as a device function (no copy of the tile logic).
# --------------------------------------------------------------------------------------------
@cuda.jit(device=True)
def _add(a, b):
    return a + b


@cuda.jit(device=True)
def _add_relu(a, b):
    s = a + b
    return s if s > 0 else s * 0  # s * 0 keeps the dtype (a literal 0.0 would be float64)


def _four_per_thread(op):
    @cuda.jit
    def kernel(x, y, out):
        step = cuda.blockDim.x
        i0 = cuda.blockIdx.x * step * 4 + cuda.threadIdx.x
        i1 = i0 + step
        i2 = i1 + step
        i3 = i2 + step
        if i3 < out.size:  # a full tile: every block but the last
            a0, a1, a2, a3 = x[i0], x[i1], x[i2], x[i3]
            b0, b1, b2, b3 = y[i0], y[i1], y[i2], y[i3]
            out[i0] = op(a0, b0)
            out[i1] = op(a1, b1)
            out[i2] = op(a2, b2)
            out[i3] = op(a3, b3)
        else:  # the partial tile at the end, element by element
            for k in range(4):
                i = i0 + k * step
                if i < out.size:
                    out[i] = op(x[i], y[i])

    return kernel


add_kernel = _four_per_thread(_add)
add_relu_kernel = _four_per_thread(_add_relu)


# --------------------------------------------------------------------------------------------
# Grid-stride: a fixed grid (a few blocks per SM) loops over the array. For the notes on why the
# naive kernel is slow: fewer blocks to schedule, but still one load pair in flight per thread.
# --------------------------------------------------------------------------------------------
@cuda.jit
def add_gridstride_kernel(x, y, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = x[i] + y[i]


# --------------------------------------------------------------------------------------------
# The article's second example: square, one thread per element.
# --------------------------------------------------------------------------------------------
@cuda.jit
def square_kernel(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * x[i]


# --------------------------------------------------------------------------------------------
# Copy and scale, one thread per element like the naive add: with it, the three streams of
# published occupancy sweeps (kernels/measure/occupancy_sweep.py: bench --occupancy-sweep).
# --------------------------------------------------------------------------------------------
@cuda.jit
def copy_naive_kernel(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i]


@cuda.jit
def scale_kernel(x, out, a):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i]


# --------------------------------------------------------------------------------------------
# Hello, warp lanes: every thread of one block writes the hardware lane it runs in. Slots of
# the last warp with no thread keep the -1 they were given: those lanes idle.
# --------------------------------------------------------------------------------------------
@cuda.jit
def lanes_kernel(lane_of_slot):
    lane_of_slot[cuda.threadIdx.x] = cuda.laneid


# --------------------------------------------------------------------------------------------
# Helpers for kernels/launching/launcher.py
# --------------------------------------------------------------------------------------------
def device_arrays(args) -> list:
    """Arrays Numba can launch on, made once. On a GPU, wrapping a torch tensor on every launch
    would also synchronize its stream every launch (CUDA_ARRAY_INTERFACE_SYNC), so the timed
    launch would wait for the L2 flush queued ahead of it. In the simulator: zero-copy numpy.
    Scalars (a declaration's sizes, strides) pass through unchanged."""
    if SIMULATED:
        return [a.numpy() if hasattr(a, "numpy") else a for a in args]
    return [cuda.as_cuda_array(a) if hasattr(a, "__cuda_array_interface__") else a for a in args]


def kernel_resources(kernel, arrays) -> Resources:
    """Registers per thread and static shared memory of the overload these arrays compiled."""
    if SIMULATED:
        return NO_RESOURCES
    overload = kernel.overloads.get(tuple(numba.typeof(a) for a in arrays))
    if overload is None:
        return NO_RESOURCES
    return Resources(int(overload.regs_per_thread), int(overload.shared_mem_per_block), None)


def warp_lanes(threads_per_block: int) -> tuple[np.ndarray, Resources]:
    """Run one block of N threads; return the lane id of each warp slot (-1 = idle), (warps, 32)."""
    if not 1 <= threads_per_block <= 1024:
        raise UserError(f"threads per block must be 1..1024, got {threads_per_block}")
    warps = -(-threads_per_block // 32)
    host = np.full(warps * 32, -1, dtype=np.int32)
    arr = host if SIMULATED else cuda.to_device(host)
    lanes_kernel[1, threads_per_block](arr)
    out = host if SIMULATED else arr.copy_to_host()
    return out.reshape(warps, 32), kernel_resources(lanes_kernel, (arr,))
