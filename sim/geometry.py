"""Launch geometry: the grid a launch makes and how many waves it takes to run it."""

from __future__ import annotations

from dataclasses import dataclass

from sim.devices import GpuSpec
from sim.occupancy import Occupancy

MAX_GRID_BLOCKS = 2**31 - 1  # gridDim.x limit on every GPU we model


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True, slots=True)
class LaunchGeometry:
    elements: int
    threads_per_block: int
    blocks: int  # the kernel's grid: ceil(elements / elements per block) unless it says otherwise
    warps_per_block: int
    warps_in_grid: int
    threads_in_grid: int
    idle_threads_last_block: int  # threads (elements, for tiles) past the end of the data
    idle_lanes_per_block: int  # lanes of the last warp of every block that no thread fills
    warp_slots_per_sm: int
    warp_slots_on_gpu: int
    waves_at_best: float  # warps in the grid / warp slots on the GPU
    blocks_per_sm: int | None  # from the occupancy, if given
    blocks_per_wave: int | None
    waves_at_occupancy: float | None  # blocks / (SMs x blocks per SM)
    elements_per_block: int | None = None  # the tile one block covers (None: no fixed tile)

    @property
    def full_waves(self) -> int | None:
        return None if not self.blocks_per_wave else self.blocks // self.blocks_per_wave

    @property
    def blocks_in_last_wave(self) -> int | None:
        if not self.blocks_per_wave:
            return None
        return self.blocks - (ceil_div(self.blocks, self.blocks_per_wave) - 1) * self.blocks_per_wave


def _check(elements: int, threads_per_block: int) -> None:
    for label, value in (("element count", elements), ("threads per block", threads_per_block)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{label} must be a whole number, got {value!r}")
    if elements < 1:
        raise ValueError(f"element count must be at least 1, got {elements:,}")
    if threads_per_block < 1:
        raise ValueError(f"threads per block must be at least 1, got {threads_per_block}")


def launch_geometry(gpu: GpuSpec, elements: int, threads_per_block: int,
                    occ: Occupancy | None = None, *, blocks: int | None = None,
                    elements_per_block: int | None = None) -> LaunchGeometry:
    """The article's table for a launch: grid, warps, idle threads, waves.

    By default one element per thread (the article's kernels). A kernel's own grid rule
    (kernels/spec.py) passes `blocks` and, where a block covers a fixed tile, `elements_per_block`
    (4 x threads for four elements per thread, BLOCK_SIZE for a Triton program)."""
    _check(elements, threads_per_block)
    tile = elements_per_block if blocks is not None else threads_per_block
    if blocks is None:
        blocks = ceil_div(elements, threads_per_block)
    if blocks > MAX_GRID_BLOCKS:
        raise ValueError(f"{blocks:,} blocks is over the grid limit of {MAX_GRID_BLOCKS:,}; "
                         "use bigger blocks or a grid-stride loop")
    warps_per_block = ceil_div(threads_per_block, gpu.warp_size)
    warps_in_grid = blocks * warps_per_block
    warp_slots_on_gpu = gpu.max_warps_per_sm * gpu.sm_count
    blocks_per_sm = blocks_per_wave = waves = None
    if occ is not None:
        blocks_per_sm = occ.blocks_per_sm
        blocks_per_wave = occ.blocks_per_sm * gpu.sm_count
        waves = blocks / blocks_per_wave if blocks_per_wave else float("inf")
    idle = max(0, blocks * tile - elements) if tile else 0
    return LaunchGeometry(
        elements=elements, threads_per_block=threads_per_block, blocks=blocks,
        warps_per_block=warps_per_block, warps_in_grid=warps_in_grid,
        threads_in_grid=blocks * threads_per_block,
        idle_threads_last_block=idle,
        idle_lanes_per_block=warps_per_block * gpu.warp_size - threads_per_block,
        warp_slots_per_sm=gpu.max_warps_per_sm, warp_slots_on_gpu=warp_slots_on_gpu,
        waves_at_best=warps_in_grid / warp_slots_on_gpu,
        blocks_per_sm=blocks_per_sm, blocks_per_wave=blocks_per_wave, waves_at_occupancy=waves,
        elements_per_block=tile,
    )


def warp_lanes(threads_per_block: int, warp_size: int = 32) -> list[int]:
    """Active lanes in each warp of a block: [32, 32, ..., remainder]."""
    _check(1, threads_per_block)
    full, rest = divmod(threads_per_block, warp_size)
    return [warp_size] * full + ([rest] if rest else [])
