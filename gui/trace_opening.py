"""File ▸ Open trace…: a recorded trace compared with its prediction, off the GUI thread.

The comparison is gui.models.trace.compare_job (sim.traces.compare, what `main.py compare` prints) on a
runner of its own, so it never waits behind a simulation and never blocks the window; the
Timeline shows its progress and a Cancel button, and a newer file replaces the one being
compared. `gui/main_window.py` makes one and routes File ▸ Open trace… and the Timeline's button
here.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEventLoop

from gui.adapter import TaskOutcome, TaskRunner
from gui.models.trace import TraceModel, compare_job


class TraceOpening:
    def __init__(self, window, traces: TraceModel, timeline) -> None:
        self.window, self.traces, self.timeline = window, traces, timeline
        self.runner = TaskRunner("trace", window)
        timeline.trace_requested.connect(self.open)
        timeline.trace_cancelled.connect(self.runner.cancel)
        self.runner.progress.connect(traces.progress)
        self.runner.finished.connect(self._on_finished)

    def open(self, path: str, wait: bool = False) -> bool:
        """Lay a recorded trace (WarpScope's, or Triton Proton's timeline) beside its prediction
        in the Timeline panel. Returns once the job is submitted (True); with `wait` (scripts,
        tests) the event loop keeps turning until it ends, and the answer is whether the
        comparison is shown."""
        self.runner.cancel()  # a newer file replaces the one being compared
        job = self.runner.submit(partial(compare_job, path, self.window.model.state.spec), "compare")
        self.traces.started(path, job)
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
        if self.traces.shown_job != outcome.job_id:  # cancelled, or replaced by a newer file
            if outcome.cancelled and self.traces.pending is None:
                w.show_message("Trace comparison cancelled.")
            return
        view = self.traces.comparison
        w.make_room_for_trace()
        w.show_message(f"Trace {Path(view.path).name}: {view.lines[1]} "
                       f"(compared in {outcome.elapsed_s:.1f} s)")

    def shutdown(self) -> None:
        self.runner.shutdown()
