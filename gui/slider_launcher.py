"""The slider launches the kernel: `SliderLauncher` watches the launch, and once the block size or
the element count has settled (`DELAY_MS` after the last move) runs the picked registry kernel at
that launch on `runner` (the kernel host; never the GUI thread), and hands the timing to
gui.models.slider_launch.SliderLaunchModel beside the window's prediction for that launch.

A move while a launch waits cancels it; a launch already running finishes (a timing takes well
under a second, and stopping it midway would kill the kernel host) and its answer, now stale, is
dropped. Without a GPU the same path runs the interpreter or simulator at a small size, labelled
as no GPU timing; where the kernel cannot run at all, the model says why.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtCore import QObject

from gui.adapter import Debouncer, TaskOutcome
from gui.models.launch import CUSTOM_KERNEL, LaunchModel, LaunchState
from gui.models.simulation import SimulationModel
from gui.models.slider_launch import LaunchWanted, SliderLaunchModel, measure_launch, wanted_of

DELAY_MS = 300  # after the slider stops: a drag launches once, where it ends
TIMEOUT_S = 120  # one launch, its first compile included


class SliderLauncher(QObject):
    def __init__(self, launch: LaunchModel, simulation: SimulationModel, model: SliderLaunchModel,
                 runner, availability: Callable[[], dict | None],
                 files: Callable[[], tuple] = tuple, delay_ms: int = DELAY_MS, parent=None) -> None:
        """`availability()`: the kernel host's backends (kernels.launching.backends.available),
        None until the live kernels have loaded; `files()`: the opened kernel files' (path,
        digest) pairs."""
        super().__init__(parent)
        self.launch, self.simulation, self.model, self.runner = launch, simulation, model, runner
        self.availability, self.files = availability, files
        self.debounce = Debouncer(self.fire, delay_ms, self)
        self._jobs: dict[int, LaunchWanted] = {}
        self._started: set[int] = set()
        self._asked: LaunchWanted | None = None  # the launch last asked for
        runner.started.connect(self._on_started)
        runner.finished.connect(self._on_finished)
        launch.changed.connect(self._on_launch_changed)
        self._on_launch_changed(launch.state)

    def wanted(self) -> tuple[LaunchWanted | None, str]:
        """The launch to run now, or None and why none."""
        state: LaunchState = self.launch.state
        name = state.inputs.kernel
        if not self.model.enabled:
            return None, "launching on slider moves is off"
        if name == CUSTOM_KERNEL:
            return None, "pick a live kernel under Kernel: the slider then launches it"
        kernel = self.launch.kernel(name)
        if kernel is None or not getattr(kernel, "benchable", False):
            return None, f"{name} has no time of its own to measure (it is not launched alone)"
        backends = self.availability()
        if backends is None:
            return None, "the live kernels have not loaded: the slider launches once they have"
        status = backends.get(kernel.backend)
        if status is None or not status.ok:
            return None, f"{name} cannot run here: {getattr(status, 'reason', 'no ' + kernel.backend)}"
        if not state.ok:
            return None, state.message()
        return wanted_of(state, kernel, tuple(self.files())), ""

    def _on_launch_changed(self, _state) -> None:
        wanted, why = self.wanted()
        if wanted is None:
            self.debounce.cancel()
            self._cancel_waiting()
            self._asked = None
            self.model.say(why)
        elif wanted != self._asked:
            self._cancel_waiting()
            self._asked = wanted
            self.debounce.poke()

    def fire(self) -> int | None:
        """Launch what the window shows now (the debounce calls this); its job id, or None."""
        if getattr(self.runner, "closed", False):  # the window is closing: nothing to launch on
            return None
        wanted, why = self.wanted()
        if wanted is None:
            self.model.say(why)
            return None
        self._cancel_waiting()
        submit = partial(self.runner.submit, partial(measure_launch, wanted), "slider launch")
        job = submit(timeout_s=TIMEOUT_S) if hasattr(self.runner, "host_pid") else submit()
        self._jobs[job] = wanted
        self.model.say(f"launching {wanted.describe()}…")
        return job

    def busy(self) -> bool:
        return bool(self._jobs) or self.debounce.pending()

    def _cancel_waiting(self) -> None:
        for job in [j for j in self._jobs if j not in self._started]:
            self._jobs.pop(job)
            self.runner.cancel(job)

    def _on_started(self, job_id: int, _name: str) -> None:
        self._started.add(job_id)  # a runner may say so before submit returns the id

    def _on_finished(self, outcome: TaskOutcome) -> None:
        wanted = self._jobs.pop(outcome.job_id, None)
        self._started.discard(outcome.job_id)
        if wanted is None or outcome.cancelled or wanted != self.wanted()[0]:
            return  # cancelled, or stale: the slider moved on
        result = outcome.result if outcome.ok else None
        if not isinstance(result, dict) or result.get("cancelled"):
            self.model.say(f"{wanted.kernel} could not be launched: {outcome.error or 'cancelled'}")
            return
        self.model.add(wanted, result, self._predicted_us())

    def _predicted_us(self) -> float | None:
        """The window's prediction of the launch shown, where its simulation is current."""
        run = self.simulation.run
        return run.prediction.whole_launch_us if run is not None and self.simulation.is_current() else None


def install(win) -> SliderLauncher:
    """The Live launch panel of `win` (a MainWindow), a tab beside the Bandwidth one (the sweeps),
    its launcher on the kernel host, and the latest launch heading the Verdicts."""
    from PySide6.QtCore import Qt

    from gui import panels

    panels.mount_later(win, "slider_launch", Qt.DockWidgetArea.BottomDockWidgetArea,
                       tab_with="bandwidth")  # its view made after the first paint
    win.docks["timeline"].raise_()
    menu = win.view_menu
    menu.insertAction(menu.actions()[-2], win.docks["slider_launch"].toggleViewAction())
    win.teach.verdicts_view.show_measured(win.models.slider)

    def availability():
        info = win.live_kernels.info
        return info.available if info is not None and not info.error else None

    def files():
        return tuple((f.path, f.digest) for f in win.user_kernels.files.files.values())

    launcher = SliderLauncher(win.model, win.simulation, win.models.slider, win.live_runner,
                              availability, files, parent=win)
    win.live_runner.host_changed.connect(lambda _state: launcher._on_launch_changed(None))
    return launcher
