"""Float64 references and bytes-moved formulas: what every live kernel must compute and move.

The references take numpy arrays or torch tensors and compute in float64 on the same device, so a
2^28-element check on a GPU needs no trip through host memory. (Only methods both libraries share
are used: operators and ``.astype``/``.double`` through :func:`as_f64`.) No GPU library is
imported here, so the registry, the tests and the GUI can read this module anywhere.

A "trip" is one array-sized pass through global memory (one read of an input or one write of an
output); bytes moved = trips x elements x itemsize, the numerator of every GB/s we report.
"""

from __future__ import annotations

import numpy as np


def as_f64(a):
    """The same values in float64, on the same device (numpy array or torch tensor)."""
    return a.double() if hasattr(a, "double") else np.asarray(a, dtype=np.float64)


def add(x, y):
    return as_f64(x) + as_f64(y)


def add_relu(x, y):
    s = add(x, y)
    return s * (s > 0)  # max(s, 0) in both libraries' vocabulary


def copy(x):
    return as_f64(x)


def square(x):
    x64 = as_f64(x)
    return x64 * x64


def warp_lanes(threads_per_block: int, warp_size: int = 32) -> np.ndarray:
    """Lane id of each warp slot in one block of N threads; -1 = inactive. Shape (warps, 32)."""
    warps = -(-threads_per_block // warp_size)
    slot = np.arange(warps * warp_size)
    return np.where(slot < threads_per_block, slot % warp_size, -1).reshape(warps, warp_size)


def bytes_moved(trips: int, elements: int, itemsize: int = 4) -> int:
    """Bytes through global memory: each trip reads or writes every element once."""
    if elements < 0 or itemsize <= 0 or trips < 0:
        raise ValueError("elements, itemsize and trips must be non-negative (itemsize positive)")
    return int(trips) * int(elements) * int(itemsize)
