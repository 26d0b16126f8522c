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
