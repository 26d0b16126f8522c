"""Lay a recorded block trace beside the simulation of the same grid.

A recorded trace (kernels/trace.py: every block's %smid and %globaltimer on a real GPU) says how
the hardware really dispatched the grid. Here the same grid is simulated with the same block
duration, and the two are compared on what the model claims: how many blocks an SM holds at once,
how long the grid takes, and which SM each block went to.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.devices import GpuSpec
from sim.scheduler import Simulation, UniformCost, _breadth_first, _residency_steps, simulate
from sim.trace import Trace


@dataclass(frozen=True, slots=True)
class RecordedPlacement:
    """Place blocks on SMs in the order a real GPU gave its first blocks to them."""
    sm_ids: tuple[int, ...]
    name: str = "recorded order"

    def slot_order(self, gpu: GpuSpec, slots_per_sm: int) -> np.ndarray:
        seen = [s for s in self.sm_ids if s < gpu.sm_count]
        order = seen + [s for s in range(gpu.sm_count) if s not in set(seen)]
        return _breadth_first(order, slots_per_sm, gpu.sm_count)


def placement_from_trace(trace: Trace) -> RecordedPlacement:
    """SMs in the order they received their first block (ties broken by block id)."""
    order = np.lexsort((trace.block, trace.start_us))
    _, first = np.unique(trace.sm[order], return_index=True)
    return RecordedPlacement(tuple(int(s) for s in trace.sm[order][np.sort(first)]))


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
    same_sm_fraction: float  # blocks the simulation put on the same SM as the hardware

    def lines(self) -> list[str]:
        return [
            f"{self.blocks:,} blocks of ~{self.block_duration_us:.1f} us",
            f"blocks per SM: predicted {self.predicted_blocks_per_sm}, recorded peak "
            f"{self.recorded_max_blocks_per_sm} (median SM {self.recorded_median_peak_blocks_per_sm:g})",
            f"makespan: recorded {self.recorded_makespan_us:,.1f} us, simulated {self.simulated_makespan_us:,.1f} us",
            f"mean resident blocks: recorded {self.recorded_mean_resident:,.1f}, "
            f"simulated {self.simulated_mean_resident:,.1f}",
            f"SMs used: {self.recorded_sms_used}; same SM as the hardware: {self.same_sm_fraction:.0%} of blocks",
        ]


def _mean_resident(starts: np.ndarray, ends: np.ndarray) -> float:
    times, counts = _residency_steps(starts, ends)
    span = ends.max() - starts.min()
    widths = np.diff(np.r_[times, ends.max()])
    return float((widths * counts).sum() / span) if span > 0 else float(counts.max())


def compare_trace(trace: Trace, gpu: GpuSpec, blocks_per_sm: int, placement=None) -> tuple[TraceComparison, Simulation]:
    """Simulate the recorded grid (same block count, median duration, given or recorded placement)."""
    start = trace.start_us - trace.start_us.min()
    end = trace.end_us - trace.start_us.min()
    duration = float(np.median(end - start))
    order = np.argsort(trace.block)
    placement = placement or placement_from_trace(trace)
    result = simulate(gpu, len(trace.block), blocks_per_sm, UniformCost(duration), placement)
    peaks = trace.max_resident_per_sm()
    used = peaks[peaks > 0]
    comparison = TraceComparison(
        blocks=len(trace.block), block_duration_us=duration, predicted_blocks_per_sm=blocks_per_sm,
        recorded_max_blocks_per_sm=int(used.max()), recorded_median_peak_blocks_per_sm=float(np.median(used)),
        recorded_makespan_us=float(end.max()), simulated_makespan_us=result.makespan_us,
        recorded_mean_resident=_mean_resident(start, end),
        simulated_mean_resident=_mean_resident(result.block_start_us, result.block_end_us),
        recorded_sms_used=int(used.size),
        same_sm_fraction=float(np.mean(trace.sm[order] == result.block_sm)),
    )
    return comparison, result
