"""The Waves tab's wiring: its model, view and worker, and how a point becomes the window's launch.

`WavesPanel(window)` makes the WavesModel, the QtWaves view and the prediction worker; predictions
run in that worker (the newest request wins); *Measure* runs `kernels.measure.bench.waves_sweep` in the
kernel host (the window's live runner); a chosen point sets the launch model (kernel, M, N, K, block, resources) and
the compute-bound cost, so the SM view and the timeline animate that launch.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QObject, QTimer

from gui.adapter import TaskOutcome, TaskRunner
from gui import panels
from gui.models.waves import LaunchRequest, measure_job


class WavesPanel(QObject):
    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.model = window.models.waves  # follows the launch's GPU (gui/panels.py)
        self.view = panels.make("waves", window.models)
        self.runner = TaskRunner("waves", window)
        self._measure_job: int | None = None
        self.model.wanted.connect(self.request)
        self.model.launch_wanted.connect(self.show_launch)
        self.model.message.connect(window.show_message)
        self.runner.finished.connect(self._on_predicted)
        window.live_runner.progress.connect(self._on_live_progress)
        window.live_runner.finished.connect(self._on_live_finished)
        self.view.timeline_requested.connect(lambda: window.docks["timeline"].raise_())
        self.view.measure_requested.connect(self.measure)

    def attach(self, dock) -> None:
        """The dock the view lives in: predictions wait until it is shown (no CPU is spent on a
        sawtooth nobody looks at, while the simulation of the launch wants it)."""
        self.dock = dock
        dock.visibilityChanged.connect(lambda visible: visible and self.request())
        QTimer.singleShot(0, self, self.request)  # made as its dock came into sight: now

    def request(self) -> None:
        """Predict the current sweep in the worker (latest request wins), once the tab is shown."""
        dock = getattr(self, "dock", None)
        if dock is not None and (not dock.isVisible() or dock.visibleRegion().isEmpty()):
            return  # visibilityChanged asks again
        job = self.model.job()
        if job is not None:
            self.runner.submit(job, "predict the sawtooth")

    def predict_now(self) -> None:
        """On this thread (headless export, screenshots, tests)."""
        self.model.run_now()

    def _on_predicted(self, outcome: TaskOutcome) -> None:
        if outcome.ok:
            self.model.accept(outcome.result)
        elif not outcome.cancelled:
            self.window.show_message(f"Sawtooth prediction failed: {outcome.error}", error=True)

    def show_launch(self, request: LaunchRequest) -> None:
        w = self.window
        if w.model.kernel(request.kernel) is None:  # the registry's matmuls (no GPU library)
            from kernels.declare.registry import all_kernels

            info = w.kernels_info
            w.model.set_kernels(info.kernels if info is not None and info.kernels else all_kernels())
        if w.model.update(**request.changes()):
            w.options.set(cost="compute")

    def set_availability(self, available: dict | None) -> None:
        triton = (available or {}).get("triton")
        self.view.set_can_measure(bool(triton and triton.is_gpu),
                                  triton.reason if triton is not None else "kernels did not load")

    def measure(self) -> None:
        w = self.window
        if w.live_runner.busy() or w.bench.busy:
            w.show_message("The GPU is busy with another measurement; try again when it ends.")
            return
        dims = list(self.model.dims_list)
        # a module-level function with plain arguments: the kernel host imports and runs it
        self._measure_job = w.live_runner.submit(partial(measure_job, dims), "waves sweep")
        self.view.set_busy(True, 0, len(dims) * 4, "starting…")

    def _on_live_progress(self, job: int, done: int, total: int, label: str) -> None:
        if job == self._measure_job:
            self.view.set_busy(True, done, total, label)

    def _on_live_finished(self, outcome: TaskOutcome) -> None:
        if outcome.job_id != self._measure_job:
            return
        self._measure_job = None
        self.view.set_busy(False)
        if outcome.ok:
            self.model.measured_result(outcome.result)
        else:
            self.window.show_message(f"Waves sweep failed: {outcome.error}", error=True)

    def shutdown(self) -> None:
        self.runner.shutdown()
