"""File ▸ Open trace…: a recorded trace compared with its prediction, off the GUI thread.

The comparison is gui.models.trace.compare_job (sim.traces.compare, what `main.py compare` prints) on a
runner of its own, so it never waits behind a simulation and never blocks the window; the
Timeline shows its progress and a Cancel button, and a newer file replaces the one being
compared. A trace bundle opened without a trace named lists its traces to pick one from
(gui.widgets.qt_trace_picker). `gui/main_window.py` makes one and routes File ▸ Open trace… and
the Timeline's button here.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEventLoop

from gui.adapter import TaskOutcome, TaskRunner
from gui.models.trace import BundleContents, TraceModel, compare_job
from gui.widgets.qt_trace_picker import TracePicker


class TraceOpening:
    def __init__(self, window, traces: TraceModel, timeline) -> None:
        self.window, self.traces, self.timeline = window, traces, timeline
        self.runner = TaskRunner("trace", window)
        self.picker: TracePicker | None = None  # the bundle's traces, while one is being picked
        timeline.trace_requested.connect(self.open)
        timeline.trace_cancelled.connect(self.runner.cancel)
        self.runner.progress.connect(traces.progress)
        self.runner.finished.connect(self._on_finished)
        traces.bundle_opened.connect(self._pick)

    def open(self, path: str, wait: bool = False, name: str | None = None) -> bool:
        """Lay a recorded trace (WarpScope's, Triton Proton's timeline, or trace `name` of a
        bundle) beside its prediction in the Timeline panel; a bundle without `name` lists its
        traces to pick from. Returns once the job is submitted (True); with `wait` (scripts,
        tests) the event loop keeps turning until it ends, and the answer is whether the
        comparison is shown."""
        self.runner.cancel()  # a newer file replaces the one being compared
        job = self.runner.submit(partial(compare_job, path, self.window.model.state.spec, name),
                                 "compare")
        self.traces.started(path, job, name)
        if not wait:
            return True
        while self.traces.pending == job:
            QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
        return self.traces.shown_job == job

    def _on_finished(self, outcome: TaskOutcome) -> None:
        w = self.window
        message = self.traces.accept(outcome)
        if message:
            w.show_message(message, error=True)
            return
        if isinstance(outcome.result, BundleContents):
            n = len(outcome.result.traces)
            w.show_message(f"{Path(outcome.result.path).name} is a trace bundle of {n:,} "
                           "traces: pick one to compare.")
            return
        if self.traces.shown_job != outcome.job_id:  # cancelled, or replaced by a newer file
            if outcome.cancelled and self.traces.pending is None:
                w.show_message("Trace comparison cancelled.")
            return
        view = self.traces.comparison
        w.make_room_for_trace()
        w.show_message(f"Trace {view.title}: {view.lines[1]} "
                       f"(compared in {outcome.elapsed_s:.1f} s)")

    def _pick(self, contents: BundleContents) -> None:
        """The bundle's traces in a dialog that leaves the window usable; picking one compares it."""
        if self.picker is not None:
            self.picker.close()
        self.picker = TracePicker(contents, self.window)
        self.picker.picked.connect(lambda path, name: self.open(path, name=name))
        self.picker.finished.connect(self._picker_closed)
        self.picker.show()

    def _picker_closed(self, _result: int) -> None:
        picker, self.picker = self.picker, None
        if picker is not None:
            picker.deleteLater()

    def shutdown(self) -> None:
        if self.picker is not None:
            self.picker.close()
        self.runner.shutdown()
