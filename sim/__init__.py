"""WarpScope's scheduling model: GPU specs, occupancy, launch geometry, block scheduler.

Pure Python + numpy. Nothing here imports Qt, torch, triton or numba.
"""
