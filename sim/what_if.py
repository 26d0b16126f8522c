"""What one launch is predicted to take: the one function the next step and the run diff ask.

A launch here is the handful of numbers a user can move (threads per block, registers, shared
memory, grid, bytes); `predict` gives its occupancy, waves and time. Memory-bound launches go
through the scheduler's bandwidth model (sim.predict). When the one launch model (sim/
launch_model.py) lands, `predict` is the one place to switch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from sim.devices import GpuSpec
from sim.occupancy import Occupancy, occupancy


@dataclass(frozen=True, slots=True)
class WhatIf:
    """One launch, in the numbers the next step moves."""

    threads_per_block: int
    regs_per_thread: int
    smem_per_block: int
    grid_blocks: int
    bytes_moved: float  # DRAM bytes of the whole launch
    loop_trips: int = 1  # DRAM round trips one block makes in a row (grid-stride loops)

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
    def full_waves(self) -> int:
        return math.ceil(self.waves) if self.waves else 0


def predict(gpu: GpuSpec, launch: WhatIf) -> Outcome:
    """Occupancy, waves and predicted whole-launch time (device-event us) of `launch`."""
    from sim.predict import predict_bandwidth

    occ = occupancy(gpu, launch.threads_per_block, launch.regs_per_thread, launch.smem_per_block)
    if not occ.can_launch or launch.grid_blocks < 1:
        return Outcome(launch, occ, 0.0, None)
    per_wave = occ.blocks_per_sm * gpu.sm_count
    p = predict_bandwidth(gpu, launch.grid_blocks, occ.blocks_per_sm, launch.bytes_moved,
                          loop_trips=max(1, launch.loop_trips))
    return Outcome(launch, occ, launch.grid_blocks / per_wave, p.time_us)
