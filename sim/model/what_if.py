"""What one launch is predicted to take: the one function the next step and the run diff ask.

A launch here is the handful of numbers a user can move (threads per block, registers, shared
memory, elements per thread or the grid, the bytes); `predict` gives its occupancy, waves and
time, from the occupancy rules (sim.rules.occupancy), the one waves rule (sim.rules.geometry) and
the one launch model (sim.model.launch_model), the same the Verdicts and `explain` show.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from sim.rules.devices import GpuSpec
from sim.rules.geometry import BYTES_PER_ELEMENT_ADD, launch_geometry, waves_of
from sim.rules.occupancy import Occupancy, occupancy


@dataclass(frozen=True, slots=True)
class WhatIf:
    """One launch, in the numbers the next step moves. With `elements_per_thread` the grid is
    the elements over (threads x elements per thread), each block one round trip (a fixed tile);
    with `grid_blocks` instead the grid is fixed and blocks loop (a grid-stride kernel)."""

    threads_per_block: int
    regs_per_thread: int
    smem_per_block: int
    elements: int
    bytes_per_element: float = BYTES_PER_ELEMENT_ADD
    elements_per_thread: int | None = 1
    grid_blocks: int | None = None

    @property
    def grid(self) -> int:
        if self.grid_blocks is not None:
            return int(self.grid_blocks)
        return -(-self.elements // (self.threads_per_block * (self.elements_per_thread or 1)))

    @property
    def loop_trips(self) -> int:
        if self.grid_blocks is None:
            return 1
        return max(1, math.ceil(self.elements / (self.grid * self.threads_per_block)))

    @property
    def bytes_moved(self) -> float:
        return self.elements * self.bytes_per_element

    def but(self, **changes) -> "WhatIf":
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class Outcome:
    launch: WhatIf
    occupancy: Occupancy
    waves: float  # grid over blocks per wave
    time_us: float | None  # None: the launch cannot run

    @property
    def blocks_per_sm(self) -> int:
        return self.occupancy.blocks_per_sm

    @property
    def wave_count(self) -> int:
        """Waves the scheduler runs, the last one partial: ceil(waves)."""
        return math.ceil(self.waves - 1e-9) if self.waves else 0


def predict_outcome(gpu: GpuSpec, launch: WhatIf, ceiling_gbps: float | None = None) -> Outcome:
    """Occupancy, waves and predicted whole-launch time (us) of `launch`: the launch model's
    (sim.model.launch_model, what the Verdicts' "Whole launch, predicted" and explain's
    findings use) at `ceiling_gbps` (default the GPU's peak). No time where the GPU has no DRAM
    latency on record or the launch cannot run."""
    occ = occupancy(gpu, launch.threads_per_block, launch.regs_per_thread, launch.smem_per_block)
    if not occ.can_launch or launch.grid < 1 or launch.elements < 1:
        return Outcome(launch, occ, 0.0, None)
    waves = waves_of(launch.grid, occ.blocks_per_sm * gpu.sm_count)
    tile = (launch.elements_per_thread * launch.threads_per_block
            if launch.elements_per_thread is not None else None)
    geo = launch_geometry(gpu, launch.elements, launch.threads_per_block, occ,
                          blocks=launch.grid, elements_per_block=tile)
    return Outcome(launch, occ, waves, _whole_launch_us(gpu, occ, geo, launch.bytes_moved,
                                                        ceiling_gbps))


def _whole_launch_us(gpu, occ, geo, bytes_moved: float, ceiling_gbps) -> float:
    """The one launch model's whole-launch time (sim.model.launch_model)."""
    from sim.model.launch_model import predict_geometry

    return predict_geometry(gpu, occ, geo, bytes_moved=bytes_moved, mode="memory",
                            ceiling_gbps=ceiling_gbps).whole_launch_us


def from_geometry(occ: Occupancy, geo, bytes_moved: float | None = None) -> WhatIf:
    """The launch `explain` and the window describe (sim.rules.geometry.LaunchGeometry), as a WhatIf;
    without the kernel's declared bytes, the article's vector add (12 B per element)."""
    per_element = bytes_moved / geo.elements if bytes_moved else BYTES_PER_ELEMENT_ADD
    fixed_tile = bool(geo.elements_per_block)
    return WhatIf(occ.threads_per_block, occ.regs_per_thread, occ.smem_per_block_bytes,
                  geo.elements, per_element,
                  elements_per_thread=geo.elements_per_thread if fixed_tile else None,
                  grid_blocks=None if fixed_tile else geo.blocks)
