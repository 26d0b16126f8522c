"""A launch's block shape and cluster size from the window's inputs (no Qt)."""

from __future__ import annotations

from gui.models.compiled import block_params
from sim.rules.block_shape import Dims, block_dims, block_of
from sim.rules.clusters import check_cluster
from sim.rules.devices import GpuSpec


def launch_shape(inputs, spec: GpuSpec, kernel=None) -> tuple[Dims, int]:
    """(the block's x, y, z, blocks per cluster): a kernel's declared shape (a Numba
    threads=(32, 8)), else the boxes' (x = threads / (y·z)); ValueError in one line if the
    shape does not divide or the GPU has no clusters."""
    check_cluster(spec, inputs.cluster_size)
    declared = block_params(kernel, inputs).get("threads") if kernel is not None else None
    if isinstance(declared, (tuple, list)):
        return block_dims(tuple(int(v) for v in declared)), inputs.cluster_size
    yz = (1, 1) if kernel is not None else (inputs.block_y, inputs.block_z)
    if yz == (1, 1):  # a 1D block over the limit is the occupancy's to explain, as before
        return Dims(inputs.threads_per_block), inputs.cluster_size
    return block_of(inputs.threads_per_block, *yz), inputs.cluster_size
