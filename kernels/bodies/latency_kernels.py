"""Two calibration kernels for sim/model/latency.py, each measuring one figure apart from any bandwidth
it will be compared with:

- the DRAM round trip: one thread chases pointers through cache lines it has never read (the L2
  flushed before each run, each line visited once, in random order, so neither cache nor
  prefetcher helps): time / hops;
- a block's turnover: blocks that do nothing (no loads, no stores) at a forced number per SM:
  how long a block slot is busy per block when no memory is involved.

Numba, imported lazily like kernels/bodies/numba_kernels.py (numba.cuda through kernels.launching.compat).
"""

from __future__ import annotations

import warnings

import numpy as np

from kernels.launching.compat import numba_cuda

cuda = numba_cuda()
# The chase is one thread on purpose: Numba's under-utilization warning would only be noise.
warnings.filterwarnings("ignore", message=".*will likely result in GPU under-utilization")
LINE_BYTES = 128  # one L2 line: each hop lands on a new one


@cuda.jit
def chase_kernel(nxt, hops, out):
    # uint64 indices: no negative-index wraparound code between dependent loads
    j = nxt[0]
    for _ in range(hops - 1):
        j = nxt[j]
    out[0] = j


@cuda.jit
def idle_block_kernel(out, flag):
    # flag is 0 at every launch: the store never happens, but the compiler cannot know that
    i = cuda.grid(1)
    if flag != 0 and i < out.size:
        out[i] = 1.0


def chase_order(region_bytes: int, hops: int, seed: int = 0) -> np.ndarray:
    """Element indices (8-byte elements) of a random cycle through `hops` distinct cache lines of
    a region, starting at element 0: ``nxt[order[i]] = order[i + 1]``, the last back to 0."""
    lines = region_bytes // LINE_BYTES
    if not 2 <= hops <= lines:
        raise ValueError(f"hops must be 2..{lines} for a {region_bytes:,} B region, got {hops}")
    rng = np.random.default_rng(seed)
    others = rng.choice(lines - 1, size=hops - 1, replace=False) + 1  # never line 0
    return np.concatenate(([0], others)) * (LINE_BYTES // 8)


def chase_array(region_bytes: int, hops: int, seed: int = 0, *, on_gpu: bool = True):
    """The pointer array for :func:`chase_kernel` (uint64, region_bytes long), built on the device
    with torch (no multi-GiB host copy), and the output array."""
    import torch

    order = torch.from_numpy(chase_order(region_bytes, hops, seed))
    device = "cuda" if on_gpu else "cpu"
    nxt = torch.zeros(region_bytes // 8, dtype=torch.int64, device=device)
    order = order.to(device)
    nxt[order] = torch.roll(order, -1)
    out = torch.zeros(1, dtype=torch.int64, device=device)
    if not on_gpu:
        return nxt.numpy().view(np.uint64), out.numpy().view(np.uint64)
    return cuda.as_cuda_array(nxt).view(np.uint64), cuda.as_cuda_array(out).view(np.uint64)
