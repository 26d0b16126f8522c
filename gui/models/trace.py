"""A recorded block trace laid beside its predictions (the Timeline panel).

A matmul's tile trace goes beside the compute-bound model's prediction (sim.matmul_trace). Any
other trace's launch is predicted twice — with the GPU's calibrated dispatch model and with the
ideal textbook schedule (sim.compare.compare_trace: from the launch alone, never from the recorded
schedule) — and keeps the three schedules as `sim.timeline.Timeline`s, so each is drawn, coloured
and measured exactly like a simulated launch, with the scores that say how close each prediction is.
"""

from __future__ import annotations

from dataclasses import dataclass

from psygnal import Signal

from sim.devices import GpuSpec, preset_for_device_name
from sim.errors import UserError
from sim.matmul_trace import KERNELS, compare_matmul_trace, is_matmul_trace
from sim.timeline import Timeline, timeline_of_trace

MODES = ("calibrated", "ideal")


@dataclass(frozen=True)
class Prediction:
    mode: str  # "calibrated", "ideal", or "compute" (a matmul's tiles, sim.matmul_trace)
    comparison: object  # sim.compare.TraceComparison (sim.matmul_trace's for "compute")
    timeline: Timeline

    @property
    def title(self) -> str:
        c = self.comparison
        if self.mode == "compute":
            return "simulated tile by tile: the compute-bound model"
        if self.mode == "ideal":
            what = "ideal (textbook)"
        else:  # "calibrated on NVIDIA H200, ..." or "assumed from ...": say it is the model's
            what = c.profile if c.profile.startswith("calibrated") else f"calibrated schedule, {c.profile}"
        return (f"{what} · makespan {c.makespan_error:+.0%} · median peak "
                f"{c.simulated_median_peak_blocks_per_sm:g} (recorded "
                f"{c.recorded_median_peak_blocks_per_sm:g}) · residency error {c.residency_error:.2f}")


@dataclass(frozen=True)
class TraceComparison:
    path: str
    gpu_name: str  # as the trace names it
    spec: GpuSpec  # the preset it was simulated on
    blocks_per_sm: int
    recorded: Timeline
    predictions: tuple[Prediction, ...]  # calibrated, then ideal (a matmul: the compute model)
    notes: tuple[str, ...] = ()

    @property
    def comparison(self):
        """The calibrated prediction's comparison (what the caption reports)."""
        return self.predictions[0].comparison

    @property
    def simulated(self) -> Timeline:
        return self.predictions[0].timeline

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(self.comparison.lines())

    @property
    def makespan_us(self) -> float:
        return max(self.recorded.makespan_us, *(p.timeline.makespan_us for p in self.predictions))


def compare_trace_file(path: str, fallback: GpuSpec, blocks_per_sm: int | None = None) -> TraceComparison:
    """Load a trace file (sim.trace format) and predict its launch both ways; UserError if the
    file cannot be read or does not describe a launch."""
    from sim.compare import compare_trace, launch_of_trace
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
                               recorded, (Prediction("compute", comparison, simulated),))
    per_sm = blocks_per_sm
    try:
        launch = launch_of_trace(trace, spec, per_sm)
    except UserError:  # no occupancy in the file: the most blocks any SM held
        per_sm = max(1, min(int(trace.max_resident_per_sm().max()), spec.max_blocks_per_sm))
        launch = launch_of_trace(trace, spec, per_sm)
    predictions = []
    for mode in MODES:
        comparison, sim = compare_trace(trace, spec, per_sm, mode=mode)
        predictions.append(Prediction(mode, comparison, sim.timeline.prepare()))
    recorded = timeline_of_trace(trace, launch.blocks_per_sm, spec.sm_count).prepare()
    return TraceComparison(str(path), trace.gpu, spec, launch.blocks_per_sm, recorded,
                           tuple(predictions), launch.notes)


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
