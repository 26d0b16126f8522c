"""Lay a recorded block trace beside the simulation of the same grid.

A recorded trace (kernels/trace.py: every block's %smid and %globaltimer on a real GPU) says how
the hardware really dispatched the grid. Here the same grid is simulated with the same block
duration, and the two are compared on what the model claims: how many blocks an SM holds at once,
how long the grid takes, and which SM each block went to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from sim.devices import GpuSpec
from sim.scheduler import Simulation, UniformCost, _breadth_first, simulate
from sim.timeline import timeline_of_trace
from sim.trace import Trace


@dataclass(frozen=True, slots=True)
class RecordedPlacement:
    """Replay the SMs a real GPU gave its first blocks to, in block order.

    `sm_sequence[i]` is the SM that ran block i; the k-th time an SM appears it gets its slot k.
    Slots the recording never filled come last, breadth-first."""
    id: ClassVar[str] = "recorded"
    sm_sequence: tuple[int, ...]

    def slot_order(self, gpu: GpuSpec, slots_per_sm: int) -> np.ndarray:
        used = np.zeros(gpu.sm_count, dtype=int)
        order = []
        for sm in self.sm_sequence:
            if 0 <= sm < gpu.sm_count and used[sm] < slots_per_sm:
                order.append(sm * slots_per_sm + used[sm])
                used[sm] += 1
        taken = set(order)
        rest = [s for s in _breadth_first(list(range(gpu.sm_count)), slots_per_sm)
                if s not in taken]
        return np.asarray(order + rest, dtype=np.int64)


def placement_from_trace(trace: Trace) -> RecordedPlacement:
    """The SM of every block in block order: blocks are dispatched in grid order."""
    return RecordedPlacement(tuple(int(s) for s in trace.sm[np.argsort(trace.block)]))


def dispatch_interval_from_trace(trace: Trace, slots: int) -> float:
    """Time between block dispatches while the GPU first fills: the first `slots` blocks' start
    spread over their count. The hardware does not place a whole wave at one instant."""
    first = np.sort(trace.start_us)[:max(min(slots, len(trace.start_us)), 1)]
    return float((first[-1] - first[0]) / max(len(first) - 1, 1))


@dataclass(frozen=True, slots=True)
class TraceComparison:
    blocks: int
    block_duration_us: float  # median recorded duration, used for every simulated block
    predicted_blocks_per_sm: int
    recorded_max_blocks_per_sm: int  # most blocks any SM held at once
    recorded_median_peak_blocks_per_sm: float  # typical SM's peak
    recorded_makespan_us: float
    simulated_makespan_us: float
    recorded_mean_resident: float  # blocks resident on the GPU, time-averaged
    simulated_mean_resident: float
    recorded_sms_used: int
    dispatch_interval_us: float  # measured fill rate of the first wave, used by the simulation
    same_sm_first_wave: float  # first-wave blocks the simulation put on the hardware's SM
    same_sm_fraction: float  # all blocks likewise

    def lines(self) -> list[str]:
        return [
            f"{self.blocks:,} blocks of ~{self.block_duration_us:.1f} us",
            f"blocks per SM: predicted {self.predicted_blocks_per_sm}, recorded peak "
            f"{self.recorded_max_blocks_per_sm} (median SM {self.recorded_median_peak_blocks_per_sm:g})",
            f"makespan: recorded {self.recorded_makespan_us:,.1f} us, simulated {self.simulated_makespan_us:,.1f} us",
            f"mean resident blocks: recorded {self.recorded_mean_resident:,.1f}, "
            f"simulated {self.simulated_mean_resident:,.1f}",
            f"first wave filled at one block per {self.dispatch_interval_us * 1e3:.0f} ns "
            f"({self.dispatch_interval_us * self.predicted_blocks_per_sm * self.recorded_sms_used:.1f} us to fill the GPU)",
            f"SMs used: {self.recorded_sms_used}; same SM as the hardware: {self.same_sm_first_wave:.0%} of the "
            f"first wave, {self.same_sm_fraction:.0%} of all blocks",
        ]


def compare_trace(trace: Trace, gpu: GpuSpec, blocks_per_sm: int, placement=None,
                  model_dispatch: bool = True) -> tuple[TraceComparison, Simulation]:
    """Simulate the recorded grid: same block count, median duration, the given placement (default:
    the recorded one) and, unless `model_dispatch` is off, the recorded dispatch rate."""
    start = trace.start_us - trace.start_us.min()
    end = trace.end_us - trace.start_us.min()
    duration = float(np.median(end - start))
    order = np.argsort(trace.block)
    placement = placement or placement_from_trace(trace)
    slots = gpu.sm_count * blocks_per_sm
    interval = dispatch_interval_from_trace(trace, slots) if model_dispatch else 0.0
    result = simulate(gpu, len(trace.block), blocks_per_sm, UniformCost(duration), placement,
                      dispatch_interval_us=interval)
    same = trace.sm[order] == result.block_sm
    peaks = trace.max_resident_per_sm()
    used = peaks[peaks > 0]
    comparison = TraceComparison(
        blocks=len(trace.block), block_duration_us=duration, predicted_blocks_per_sm=blocks_per_sm,
        recorded_max_blocks_per_sm=int(used.max()), recorded_median_peak_blocks_per_sm=float(np.median(used)),
        recorded_makespan_us=float(end.max()), simulated_makespan_us=result.makespan_us,
        recorded_mean_resident=timeline_of_trace(trace, blocks_per_sm).mean_resident(),
        simulated_mean_resident=result.timeline.mean_resident(),
        recorded_sms_used=int(used.size), dispatch_interval_us=interval,
        same_sm_first_wave=float(np.mean(same[:slots])), same_sm_fraction=float(np.mean(same)),
    )
    return comparison, result
