"""The window's views and the models they subscribe to, made one way: in the window's docks, in
a window of their own, and in the tests.

`Models(inputs)` makes the launch, simulation, playback, bench, trace, waves, timing and teaching
models (the window holds one; a view opened alone makes its own). `PANELS[key](models)` makes a
view of them. `mount(window, key, area)` is how the window mounts any panel (`mount_later`: one
behind a tab, its view made after the window's first paint by `LaterPanels`); `Stage(keys,
inputs)` mounts views without the window (tests, and `python -m gui.widgets.qt_<view>`, as
pyqtgraph's examples open: `open_alone(key)`), simulating (and predicting the sawtooth) on this
thread so what is drawn is the launch the models hold. Live jobs (a sweep, a timing run) go to
`Models.live`, the window's kernel host or the stage's own, which starts only with a first job.
"""

from __future__ import annotations

import sys
from functools import cached_property
from typing import Callable

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow, QSplitter, QWidget

from gui import help as help_texts
from gui.models.bench import BenchModel
from gui.models.launch import LaunchInputs, LaunchModel
from gui.models.playback import PlaybackModel
from gui.models.simulation import SimulationModel, SimulationOptions
from gui.models.trace import TraceModel


class Models:
    """Every model a view may subscribe to, for one launch (no Qt here: models are plain)."""

    def __init__(self, inputs: LaunchInputs | None = None) -> None:
        self.model = LaunchModel(inputs or LaunchInputs())
        self.options = SimulationOptions()
        self.simulation = SimulationModel(self.model, self.options)
        self.playback = PlaybackModel(self.simulation)
        self.bench = BenchModel()
        self.traces = TraceModel()
        self.files = None  # the window's gui.file_jobs.FileJobs: panels' Open… off the GUI thread
        self.live = None  # a gui.adapter.HostRunner (the window's, or a stage's): the kernel host
        self.bandwidth_jobs = None  # gui.jobs.BandwidthJobs to run there (None: the real ones)

    @cached_property
    def insight(self):
        from gui.models.insight import InsightModel

        return InsightModel(self.model)

    @cached_property
    def compare(self):
        from gui.models.compare_gpus import CompareGpusModel

        return CompareGpusModel(self.model, self.insight)

    @cached_property
    def bench_jobs(self):
        from gui.jobs import BenchJobs

        return BenchJobs(self.bench, self.live, self.bandwidth_jobs)

    @cached_property
    def waves(self):
        """The matmul sawtooth, for the launch's GPU (it follows the launch's GPU)."""
        from gui.models.waves import WavesModel

        waves = WavesModel(self.model.state.spec)
        self.model.changed.connect(lambda state: waves.set_launch_gpu(state.spec))
        return waves

    @cached_property
    def timing(self):
        from gui.models.timing import TimingModel

        return TimingModel()

    @cached_property
    def slider(self):
        """What the slider's launches measured (gui.slider_launcher runs them)."""
        from gui.models.slider_launch import SliderLaunchModel

        return SliderLaunchModel()

    @cached_property
    def kernel_files(self):
        """The kernel files opened (the window's gui.user_kernels sets its own)."""
        from gui.models.kernel_files import KernelFilesModel

        return KernelFilesModel()


def _controls(m: Models):
    from gui.widgets.qt_launch_controls import QtLaunchControls

    return QtLaunchControls(m.model, m.options)


def _occupancy(m: Models):
    from gui.widgets.qt_occupancy import QtOccupancy

    return QtOccupancy(m.model, m.simulation)


def _geometry(m: Models):
    from gui.widgets.qt_geometry import QtGeometry

    return QtGeometry(m.model)


def _sm_view(m: Models):
    from gui.widgets.qt_sm_view import QtSmView

    return QtSmView(m.simulation, m.playback)


def _playback(m: Models):
    from gui.widgets.qt_playback import QtPlayback

    return QtPlayback(m.playback, m.simulation)


def _timeline(m: Models):
    from gui.widgets.qt_timeline import QtTimeline

    return QtTimeline(m.simulation, m.playback, m.traces)


def _verdicts(m: Models):
    from gui.widgets.qt_verdicts import QtVerdicts

    return QtVerdicts(m.insight, m.simulation, m.bench)


def _latency(m: Models):
    from gui.widgets.qt_latency import QtLatency

    return QtLatency(m.insight, files=m.files)


def _compare(m: Models):
    from gui.widgets.qt_compare_gpus import QtCompareGpus

    return QtCompareGpus(m.compare, m.model)


def _bandwidth(m: Models):
    from gui.widgets.qt_bandwidth import QtBandwidth

    return QtBandwidth(m.bench, m.bench_jobs)


def _waves(m: Models):
    from gui.widgets.qt_waves import QtWaves

    return QtWaves(m.waves, files=m.files)


def _timing(m: Models):
    from gui.widgets.qt_timing_methods import QtTimingMethods

    view = QtTimingMethods(m.timing, m.live, files=m.files)
    view.load_file()  # the checked-in H200 run, until a live run replaces it
    return view


def _source(m: Models):
    from gui.widgets.qt_kernel_source import QtKernelSource

    return QtKernelSource(m.model, m.kernel_files)


def _slider_launch(m: Models):
    from gui.widgets.qt_slider_launch import QtSliderLaunch

    return QtSliderLaunch(m.slider, m.model)


def _diff(m: Models):
    from gui.widgets.qt_run_diff import QtRunDiff

    return QtRunDiff(m.model)


# key -> (make the view of the models, the window's attribute for it)
PANELS: dict[str, tuple[Callable[[Models], QWidget], str]] = {
    "controls": (_controls, "controls"), "occupancy": (_occupancy, "occupancy_view"),
    "geometry": (_geometry, "geometry_view"), "sm_view": (_sm_view, "sm_view"),
    "playback": (_playback, "playback_view"), "timeline": (_timeline, "timeline"),
    "verdicts": (_verdicts, "verdicts_view"), "latency": (_latency, "latency_view"),
    "compare": (_compare, "compare_view"), "bandwidth": (_bandwidth, "bandwidth"),
    "waves": (_waves, "waves_view"), "timing": (_timing, "timing_view"),
    "source": (_source, "source_view"), "slider_launch": (_slider_launch, "slider_launch_view"),
    "diff": (_diff, "diff_view"),
}


SIMULATED = {"sm_view", "playback", "timeline", "verdicts"}  # the views that draw a simulated run
LIVE = {"bandwidth", "timing"}  # the views whose jobs run in the kernel host


def make(key: str, models: Models) -> QWidget:
    return PANELS[key][0](models)


def mount(window: QMainWindow, key: str, area, view: QWidget | None = None, *,
          tab_with: str | None = None, scrolled: bool = False) -> QDockWidget:
    """THE way a panel joins the window: its view (made from PANELS unless given) becomes the
    window's attribute of PANELS' name for it and sits in a dock titled from the one titles
    table (gui/help.PANELS); `tab_with`: tabbed with that panel's dock; `scrolled`: in a scroll
    area (a panel taller than a short window's bottom row)."""
    view = view if view is not None else make(key, window.models)
    setattr(window, PANELS[key][1], view)
    if scrolled:
        from gui.widgets.qt_bandwidth import _scrolled

        view = _scrolled(view)
    d = dock(window, key, view, area)
    if tab_with is not None:
        window.tabifyDockWidget(window.docks[tab_with], d)
    return d


def mount_later(window: QMainWindow, key: str, area, view: Callable[[], QWidget] | None = None, *,
                tab_with: str | None = None, scrolled: bool = False,
                attrs: tuple[str, ...] = ()) -> QDockWidget:
    """`mount`, with the view made after the window's first paint (`LaterPanels`): the dock is
    placed now (so a saved layout is restored and the tabs read as they will), its view made by
    `view()` (default: from PANELS) once needed. `attrs`: other attributes of the window that
    `view()` sets (asking for one makes the panel)."""
    d = dock(window, key, None, area)
    if tab_with is not None:
        window.tabifyDockWidget(window.docks[tab_with], d)

    def build() -> None:
        made = view() if view is not None else PANELS[key][0](window.models)
        setattr(window, PANELS[key][1], made)
        if scrolled:
            from gui.widgets.qt_bandwidth import _scrolled

            made = _scrolled(made)
        d.setWidget(made)

    window.later.add(key, d, build, (PANELS[key][1], *attrs))
    return d


class LaterPanels(QObject):
    """The panels a window does not show at first: their views are made one per event-loop turn
    once the window has painted (`painted()`), or at once when their dock comes into sight
    (before it is painted), or when one of their attributes is asked for (an export, a menu
    entry, a test). The first frame waits only for the panels it shows."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self._builds: dict[str, Callable[[], None]] = {}
        self.at_first_paint: tuple[str, ...] | None = None  # those still waiting then
        self._owner: dict[str, str] = {}  # the window's attribute -> the panel whose make sets it
        self._parts: dict[str, list[str]] = {}
        self._part_of: dict[str, str] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._make_next)

    def add(self, key: str, dock: QDockWidget, build: Callable[[], None], attrs: tuple[str, ...]) -> None:
        self._builds[key] = build
        self._owner.update(dict.fromkeys(attrs, key))
        dock.visibilityChanged.connect(lambda shown: shown and self.make(key))

    def add_part(self, panel: str, key: str, build: Callable[[], None], attrs: tuple[str, ...]) -> None:
        """A part of `panel` (a tab of its) made on a turn of its own after it: no one turn holds
        the GUI thread long; the panel shown or asked for is made whole at once."""
        self._builds[key] = build
        self._owner.update(dict.fromkeys(attrs, key))
        self._parts.setdefault(panel, []).append(key)
        self._part_of[key] = panel

    def pending(self) -> list[str]:
        """The panels (and parts) not made yet."""
        return list(self._builds)

    def make(self, key: str) -> None:
        """Make `key`'s panel whole: the panel, then its parts still waiting."""
        panel = self._part_of.get(key, key)
        for k in (panel, *self._parts.get(panel, ())):
            self._make_one(k)

    def _make_one(self, key: str) -> None:
        build = self._builds.pop(key, None)
        if build is not None:
            build()

    def make_for(self, attr: str) -> bool:
        """Make the panel that sets the window's `attr`; False if none is waiting to."""
        key = self._owner.get(attr)
        if key not in self._builds:
            return False
        self.make(key)
        return True

    def make_all(self) -> None:
        while self._builds:
            self.make(next(iter(self._builds)))

    def painted(self) -> None:
        """The window has painted: make the rest, one per turn, so input is answered between."""
        if self.at_first_paint is None:
            self.at_first_paint = tuple(self._builds)
        if self._builds and not self._timer.isActive():
            self._timer.start()

    def _make_next(self) -> None:
        if self._builds:  # in the order added: a panel before its parts
            self._make_one(next(iter(self._builds)))
        self.painted()


def dock(window: QMainWindow, key: str, widget: QWidget | None, area) -> QDockWidget:
    """A named, movable dock (`window.docks[key]`) for `widget` (None: set by `mount_later`),
    titled from gui/help.PANELS (`mount` is how a panel gets one)."""
    title, _text = help_texts.PANELS[key]
    d = QDockWidget(title, window)
    d.setObjectName(f"dock_{key}")
    if widget is not None:
        d.setWidget(widget)
    d.setToolTip(f"{title}: Help ▸ What am I looking at? explains this panel.")
    d.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                  | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                  | QDockWidget.DockWidgetFeature.DockWidgetClosable)
    window.addDockWidget(area, d)
    window.docks[key] = d
    return d


class Stage(QMainWindow):
    """Views `keys` of one `Models`, side by side, without the rest of the window. Each view is
    also an attribute by the window's name for it (`stage.occupancy_view`), and the models by
    theirs (`stage.model`, `stage.simulation`, …), so a test reads as it would on the window.
    The launch is simulated on this thread, once per burst of changes (no worker thread)."""

    def __init__(self, keys, inputs: LaunchInputs | None = None, bandwidth_jobs=None) -> None:
        super().__init__()
        self.models = m = Models(inputs)
        for name in ("model", "options", "simulation", "playback", "bench", "traces"):
            setattr(self, name, getattr(m, name))
        self.live_runner = None
        if set(keys) & LIVE:  # its host process starts with the first job, and ends with the stage
            from gui.adapter import HostRunner

            self.live_runner = m.live = HostRunner("kernels", self)
            m.bandwidth_jobs = bandwidth_jobs
        self.views: dict[str, QWidget] = {}
        split = QSplitter(Qt.Orientation.Vertical)
        for key in keys:
            view = make(key, m)
            self.views[key] = view
            setattr(self, PANELS[key][1], view)
            split.addWidget(view)
        self.setCentralWidget(split)
        title = ", ".join(help_texts.PANELS[k][0] if k in help_texts.PANELS else k for k in keys)
        self.setWindowTitle(f"WarpScope — {title}")
        # a burst of changes (a slider dragged) is simulated once, when the event loop next
        # runs, as the window's debounce does, and only for views that draw the simulation
        self._sim_timer = QTimer(self)
        self._sim_timer.setSingleShot(True)
        self._sim_timer.setInterval(0)
        self._sim_timer.timeout.connect(self.simulate_now)
        if set(keys) & SIMULATED:
            m.simulation.wanted.connect(self._want_run)
            self.simulate_now()
        self._waves_timer = QTimer(self)  # the same for the sawtooth of the Waves view
        self._waves_timer.setSingleShot(True)
        self._waves_timer.setInterval(0)
        self._waves_timer.timeout.connect(self.predict_waves_now)
        if "waves" in keys:
            self.waves = m.waves
            m.waves.wanted.connect(self._want_waves)
            self.predict_waves_now()

    def _want_run(self) -> None:
        self._sim_timer.start()

    def _want_waves(self) -> None:
        self._waves_timer.start()

    def predict_waves_now(self) -> None:
        self._waves_timer.stop()
        self.models.waves.run_now()

    def shutdown(self) -> None:
        """Stop the kernel host, if a live view started one (idempotent)."""
        self._sim_timer.stop()
        self._waves_timer.stop()
        if self.live_runner is not None:
            self.live_runner.shutdown()

    def closeEvent(self, event) -> None:
        self.shutdown()
        super().closeEvent(event)

    def simulate_now(self):
        """The current launch's run (None if it cannot run), made here."""
        self._sim_timer.stop()
        try:
            return self.simulation.run_now()
        except Exception as exc:  # noqa: BLE001 - shown as the window shows a failed run
            self.simulation.fail(f"Simulation failed: {str(exc).splitlines()[0]}")
            return None


def open_alone(key: str, argv: list[str] | None = None) -> int:
    """`python -m gui.widgets.qt_<view> [GPU [ELEMENTS [THREADS]]]`: that view alone, for a
    default launch (the H200, 2^24 elements, 256 threads per block), in the app's theme."""
    from gui.app import make_app
    from gui.style import apply_dark_theme

    args = sys.argv[1:] if argv is None else argv
    from sim.inputs.units import parse_count

    inputs = LaunchInputs(gpu=args[0] if args else "H200",
                          elements=parse_count(args[1], "elements") if len(args) > 1 else 2**24,
                          threads_per_block=parse_count(args[2], "threads") if len(args) > 2 else 256)
    app = make_app()
    apply_dark_theme(app)
    stage = Stage([key], inputs)
    stage.resize(900, 620)
    stage.show()
    return app.exec()
