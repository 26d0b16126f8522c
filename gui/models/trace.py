"""A recorded block trace laid beside the simulation of the same grid (the Timeline panel).

Both schedules become `sim.timeline.Timeline`s, so the recorded one is drawn, coloured and
measured exactly like a simulated one.
"""

from __future__ import annotations

from dataclasses import dataclass

from psygnal import Signal

from sim.devices import GpuSpec, preset_for_device_name
from sim.errors import UserError
from sim.matmul_trace import KERNELS, compare_matmul_trace, is_matmul_trace
from sim.timeline import Timeline, timeline_of_trace


@dataclass(frozen=True)
class TraceComparison:
    path: str
    gpu_name: str  # as the trace names it
    spec: GpuSpec  # the preset it was simulated on
    blocks_per_sm: int
    comparison: object  # sim.compare.TraceComparison
    recorded: Timeline
    simulated: Timeline

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(self.comparison.lines())

    @property
    def makespan_us(self) -> float:
        return max(self.recorded.makespan_us, self.simulated.makespan_us)


def compare_trace_file(path: str, fallback: GpuSpec, blocks_per_sm: int | None = None) -> TraceComparison:
    """Load a trace file (sim.trace format) and simulate the same grid; UserError if unreadable."""
    from sim.compare import compare_trace, placement_from_trace
    from sim.trace import load_trace

    trace = load_trace(path)
    if len(trace.block) == 0:
        raise UserError(f"{path} holds no blocks")
    spec = preset_for_device_name(trace.gpu, trace.meta.get("sm_count")) or fallback
    if is_matmul_trace(trace):  # tile by tile, beside the compute-bound model's prediction
        from kernels.registry import get_kernel

        comparison, recorded, simulated = compare_matmul_trace(
            trace, spec, get_kernel(KERNELS[trace.meta["kernel"]]))
        return TraceComparison(str(path), trace.gpu, spec, comparison.prediction.blocks_per_sm,
                               comparison, recorded, simulated)
    predicted = trace.meta.get("predicted")
    per_sm = blocks_per_sm or (predicted.get("blocks_per_sm") if isinstance(predicted, dict) else None)
    try:
        per_sm = int(per_sm or 0)
    except (TypeError, ValueError):
        per_sm = 0
    if not 1 <= per_sm <= spec.max_blocks_per_sm:  # missing or nonsense (100000 wanted 44 GiB)
        per_sm = max(1, min(int(trace.max_resident_per_sm().max()), spec.max_blocks_per_sm))
    comparison, sim = compare_trace(trace, spec, per_sm, placement_from_trace(trace))
    recorded = timeline_of_trace(trace, per_sm, spec.sm_count).prepare()
    simulated = sim.timeline.prepare()
    return TraceComparison(str(path), trace.gpu, spec, per_sm, comparison, recorded, simulated)


class TraceModel:
    """The comparison being shown, if any. Emits `changed(comparison_or_None)`."""

    changed = Signal(object)

    def __init__(self) -> None:
        self.comparison: TraceComparison | None = None

    def open(self, path: str, fallback: GpuSpec) -> TraceComparison:
        """UserError (one line) if the file cannot be compared; the old comparison stays."""
        try:
            comparison = compare_trace_file(path, fallback)
        except (OSError, KeyError, TypeError, ValueError) as exc:  # UserError is a ValueError
            raise UserError(f"Could not open the trace: {str(exc).splitlines()[0]}") from None
        self.comparison = comparison
        self.changed.emit(comparison)
        return comparison

    def close(self) -> None:
        if self.comparison is not None:
            self.comparison = None
            self.changed.emit(None)
