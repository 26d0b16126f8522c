"""Float64 references and bytes-moved formulas: what every live kernel must compute and move.

Pure numpy so the registry, the tests and the GUI can read them without a GPU library.
A "trip" is one array-sized pass through global memory (one read of an input or one write of an
output); bytes moved = trips x elements x itemsize, the numerator of every GB/s we report.
"""

from __future__ import annotations

import numpy as np


def add(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return x.astype(np.float64) + y.astype(np.float64)


def add_relu(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.maximum(add(x, y), 0.0)


def copy(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64)


def square(x: np.ndarray) -> np.ndarray:
    x64 = x.astype(np.float64)
    return x64 * x64


def warp_lanes(threads_per_block: int, warp_size: int = 32) -> np.ndarray:
    """Lane id each warp slot gets in one block of N threads; -1 = inactive lane. Shape (warps, 32)."""
    warps = -(-threads_per_block // warp_size)
    slot = np.arange(warps * warp_size)
    return np.where(slot < threads_per_block, slot % warp_size, -1).reshape(warps, warp_size)


def bytes_moved(trips: int, elements: int, itemsize: int = 4) -> int:
    """Bytes through global memory: each trip reads or writes every element once."""
    if elements < 0 or itemsize <= 0 or trips < 0:
        raise ValueError("elements, itemsize and trips must be non-negative (itemsize positive)")
    return int(trips) * int(elements) * int(itemsize)
