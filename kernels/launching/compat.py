"""Compatibility shims, applied before the GPU libraries they fix are imported.

numba-cuda 0.30.4 registers an overload for ``np.row_stack`` when ``numba.cuda`` is imported.
numpy 2.5 removed that name (it had been a plain alias of ``np.vstack`` since numpy 1.x, and
deprecated since 2.0), so on numpy >= 2.5 — the H200 image has 2.5.2, and so will any user who
installs a current numpy — ``from numba import cuda`` dies with
``AttributeError: module 'numpy' has no attribute 'row_stack'`` before any kernel compiles.

Restoring the alias is exact (it *was* ``vstack``) and touches nothing else. We apply it only when
the name is missing, and only through :func:`numba_cuda`, which every Numba path in WarpScope uses
instead of importing ``numba.cuda`` directly. Drop this once numba-cuda guards the overload the way
numba itself already does (``numba/np/arrayobj.py``: "Numpy 2.5 removed np.row_stack").
"""

from __future__ import annotations

import ctypes
import importlib.util
import os

import numpy as np

ROW_STACK_SHIM = ("np.row_stack = np.vstack "
                  "(numpy >= 2.5 removed it; numba-cuda 0.30.4 still names it)")


def apply_numpy_shims() -> list[str]:
    """Put back numpy names numba-cuda still needs. Returns the shims applied (empty if none)."""
    applied = []
    if "row_stack" not in np.__dict__:
        np.row_stack = np.vstack
        applied.append(ROW_STACK_SHIM)
    return applied


def numba_cuda():
    """``numba.cuda``, imported after the numpy shims: use it, not ``from numba import cuda``."""
    apply_numpy_shims()
    from numba import cuda

    return cuda


def pin_nvrtc() -> str | None:
    """Make numba-cuda use the NVRTC pinned beside its NVVM (nvidia-cuda-nvrtc-cu12, CUDA 12.9).

    PyPI's CUDA build of torch brings CUDA 13's NVRTC, which cuda-pathfinder prefers; CUDA 13
    dropped sm_70, so the V100's Numba resources would stop compiling. Loading the pinned one and
    asking cuda-pathfinder at once fixes its answer for the process (it caches it, and returns a
    library already loaded). So this must run before torch or numba asks: the compile child
    (kernels/offline_compile/toolchain.py) calls it first. Returns the NVRTC in use, or None without the wheel."""
    try:
        spec = importlib.util.find_spec("nvidia.cuda_nvrtc")
        from cuda.pathfinder import load_nvidia_dynamic_lib
    except ImportError:
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = os.path.join(folder, "lib", "libnvrtc.so.12")
        if os.path.isfile(path):
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                return load_nvidia_dynamic_lib("nvrtc").abs_path
            except Exception:  # noqa: BLE001 - any loader failure: numba-cuda finds its own
                return None
    return None
