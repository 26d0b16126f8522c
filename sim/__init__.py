"""WarpScope's scheduling model: GPU specs, occupancy, launch geometry, block scheduler.

Pure Python + numpy. Nothing here imports Qt, torch, triton or numba.
"""

__version__ = "0.1.0"  # the one place: pyproject.toml reads it, `--version` prints it
