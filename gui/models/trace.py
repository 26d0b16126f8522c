"""A recorded block trace laid beside its predictions (the Timeline panel).

Every comparison is sim.traces.compare.compare_trace's, the function `main.py compare` prints, so the
window and the command line give the same one: the calibrated prediction (the command's default)
first, then, for traces of equal or memory-bound blocks, the ideal textbook schedule beside it.
The work (reading, predicting, scoring, preparing the three Timelines) is `compare_job`, which
the window runs on a worker thread (gui.adapter.TaskRunner) with progress and cancel; this model
only holds what is shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from psygnal import Signal

from sim.traces.compare import Comparison
from sim.rules.devices import GpuSpec, preset_for_device_name
from sim.inputs.errors import UserError

MODES = ("calibrated", "ideal")


@dataclass(frozen=True)
class Prediction:
    mode: str  # "calibrated" or "ideal"
    comparison: Comparison

    @property
    def timeline(self):
        return self.comparison.simulated

    @property
    def title(self) -> str:
        c = self.comparison
        if c.model == "compute":
            what = "compute-bound model, tile by tile"
        elif self.mode == "ideal":
            what = "ideal (textbook)"
        else:  # "calibrated on NVIDIA H200, ..." or "assumed from ...": say it is the model's
            what = c.profile if c.profile.startswith("calibrated") else f"calibrated schedule, {c.profile}"
        if c.model == "memory":
            what += ", memory-bound blocks"
        return (f"{what} · makespan {c.makespan_error:+.0%} · median peak "
                f"{c.simulated_median_peak_blocks_per_sm:g} (recorded "
                f"{c.recorded_median_peak_blocks_per_sm:g}) · residency error {c.residency_error:.2f}")


@dataclass(frozen=True)
class TraceComparison:
    path: str
    gpu_name: str  # as the trace names it
    spec: GpuSpec  # the preset it was predicted on
    predictions: tuple[Prediction, ...]  # calibrated first (what `compare` prints), then ideal
    name: str | None = None  # the bundle's trace compared, when `path` is a bundle

    @property
    def title(self) -> str:
        """What was opened, as the user names it: the file, or the bundle and its trace."""
        from pathlib import Path

        return f"{Path(self.path).name} ▸ {self.name}" if self.name else Path(self.path).name

    @property
    def comparison(self) -> Comparison:
        """The calibrated prediction's comparison: the one `main.py compare` prints."""
        return self.predictions[0].comparison

    @property
    def recorded(self):
        return self.comparison.recorded

    @property
    def simulated(self):
        return self.comparison.simulated

    @property
    def blocks_per_sm(self) -> int:
        return self.comparison.predicted_blocks_per_sm

    @property
    def notes(self) -> tuple[str, ...]:
        return self.comparison.notes

    @property
    def lines(self) -> tuple[str, ...]:
        """`main.py compare`'s lines, in the window's unit spelling (µs, not the terminal's us)."""
        return tuple(re.sub(r"(?<=\d) us\b", " µs", line) for line in self.comparison.lines())

    @property
    def makespan_us(self) -> float:
        return max(self.recorded.makespan_us, *(p.timeline.makespan_us for p in self.predictions))


@dataclass(frozen=True)
class BundleContents:
    """A trace bundle opened without naming a trace: what it holds, for the user to pick one."""
    path: str
    traces: tuple[dict, ...]  # sim.traces.trace_bundle.read_index's checked entries
    failed: tuple[dict, ...]  # recordings that failed: {"name", "family", "error"}


def compare_job(path: str, fallback: GpuSpec, name: str | None = None,
                ctx=None) -> TraceComparison | BundleContents:
    """Read the trace (any format sim.traces.trace reads, or trace `name` of a bundle) and compare
    it as `main.py compare` does; the GPU is the one the trace names, else `fallback` (the
    window's), as `--gpu` would give it. A bundle without `name` gives its BundleContents.
    UserError (one line) for anything that cannot be compared; None once cancelled."""
    from sim.traces.compare import compare_trace
    from sim.traces.trace_bundle import is_bundle, read_index, read_recorded

    step = ctx.progress if ctx is not None else (lambda *a: None)
    stop = ctx.cancelled if ctx is not None else (lambda: False)
    step(0, 4, "reading the trace")
    if name is None and is_bundle(path):
        index = read_index(path)
        return BundleContents(str(path), tuple(index["traces"]), tuple(index["failed"]))
    trace = read_recorded(path, name)
    spec = preset_for_device_name(trace.gpu, trace.meta.get("sm_count")) or fallback
    predictions = []
    for i, mode in enumerate(MODES):
        if stop():
            return None
        step(1 + i, 4, f"predicting: {mode}")
        comparison = compare_trace(trace, spec, mode=mode)
        predictions.append(Prediction(mode, comparison))
        if comparison.model == "compute":  # one schedule: the model's, tile by tile
            break
    if stop():
        return None
    step(3, 4, "laying out the schedules")
    predictions[0].comparison.recorded.prepare()  # what the Timeline draws, worked out here
    for p in predictions:
        p.comparison.simulated.prepare()
    step(4, 4, "done")
    return TraceComparison(str(path), trace.gpu, spec, tuple(predictions), name)


class TraceModel:
    """The comparison being shown, if any, and the job working one out.

    Emits `changed(comparison_or_None)` when what is shown changes, and `busy(label, done,
    total)` while a comparison is worked out (label "" when none is). The window submits
    `compare_job` to a worker, says so with `started`, and hands its outcome to `accept`."""

    changed = Signal(object)
    busy = Signal(str, int, int)
    bundle_opened = Signal(object)  # a BundleContents: its traces, for the user to pick one

    def __init__(self) -> None:
        self.comparison: TraceComparison | None = None
        self.pending: int | None = None  # the job comparing a file now
        self.shown_job: int | None = None  # the job whose comparison is shown

    def started(self, path: str, job: int, name: str | None = None) -> None:
        self.pending = job
        self.busy.emit(f"Comparing {path}{f' ▸ {name}' if name else ''}…", 0, 4)

    def progress(self, job: int, done: int, total: int, label: str) -> None:
        if job == self.pending:
            self.busy.emit(f"Comparing the trace: {label}", done, total)

    def accept(self, outcome) -> str:
        """A finished compare_job (gui.adapter.TaskOutcome): show it, or return the one-line
        message that says why not ("" when shown, cancelled or replaced by a newer job); the
        comparison shown before stays then."""
        if outcome.job_id != self.pending:
            return ""
        self.pending = None
        self.busy.emit("", 0, 0)
        if outcome.cancelled or (outcome.ok and outcome.result is None):
            return ""
        if not outcome.ok:
            first = outcome.error.splitlines()[0] if outcome.error else "it failed"
            return f"Could not open the trace: {first}"
        if isinstance(outcome.result, BundleContents):  # the comparison shown before stays
            self.bundle_opened.emit(outcome.result)
            return ""
        self.comparison, self.shown_job = outcome.result, outcome.job_id
        self.changed.emit(outcome.result)
        return ""

    def open(self, path: str, fallback: GpuSpec) -> TraceComparison:
        """Compare in this thread (scripts, tests of the model); the window runs compare_job
        on its trace runner."""
        try:
            comparison = compare_job(path, fallback)
        except (OSError, KeyError, TypeError, ValueError) as exc:  # UserError is a ValueError
            raise UserError(f"Could not open the trace: {str(exc).splitlines()[0]}") from None
        self.comparison = comparison
        self.changed.emit(comparison)
        return comparison

    def close(self) -> None:
        if self.comparison is not None:
            self.comparison = None
            self.changed.emit(None)
