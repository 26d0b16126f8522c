"""The main window: makes the models, the views and the adapter, and wires them together.

LaunchModel --changed--> controls, occupancy, geometry, SimulationModel
SimulationModel --wanted--> SimulationJobs: (debounced) job on its TaskRunner --finished--> accept()
SimulationModel --changed(run)--> PlaybackModel, SM view, timeline, playback bar
PlaybackClock --tick--> PlaybackModel.advance --time_changed--> SM view, timeline cursor, scrubber
BenchModel <--> BenchJobs (HostRunner: the kernel host process) --> sweep, experiments, log;
    results -> LaunchModel. torch/triton/numba load and run only in the host (kernels.host.process).

All state lives in the models (gui/models); nothing here computes it. The window's parts live
beside it: live_kernels.py (loading the kernel host), window_menus.py, window_settings.py (what is
remembered), window_export.py (export and the dialogs); panels.py makes every view.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtWidgets import (QDockWidget, QFrame, QLabel, QMainWindow, QMessageBox, QTabBar,
                               QVBoxLayout, QWidget)

from gui import help as help_texts
from gui import panels, style, teach_panels
from gui.adapter import Debouncer, HostRunner, PlaybackClock, SimulationJobs, TaskRunner
from gui.file_jobs import FileJobs
from gui.jobs import BandwidthJobs
from gui import slider_launcher
from gui.live_kernels import KernelsInfo, LiveKernels
from gui.models.kernel_menu import Availability
from gui.models.launch import LaunchInputs
from gui.models.simulation import SimRun
from gui.trace_opening import TraceOpening
from gui.settings import open_settings, saved_inputs
from gui.user_kernels import UserKernels
from gui.window_menus import build_menus, export_dialog
from gui.window_settings import SETTINGS_VERSION, restore_window, save_window

if TYPE_CHECKING:
    from gui.export import ExportItem

MIN_SIZE = (1024, 640)
NARROW_PX = 1200  # narrower: the bottom panels take the left corner (their tabs fit)
SM_VIEW_KEEPS = 0.55  # of the height the SM view and the timeline share, when a trace opens


class MainWindow(QMainWindow):
    def __init__(self, inputs: LaunchInputs | None = None, *, restore: bool = True,
                 load_kernels: bool = True, autoplay: bool = False,
                 jobs: BandwidthJobs | None = None, sim_delay_ms: int = 60,
                 adjust: Callable[[LaunchInputs], LaunchInputs] | None = None) -> None:
        """`adjust`: the command line's changes to the launch the window opens with (given or
        saved), made before anything is drawn or simulated, so the first frame shows that launch."""
        super().__init__()
        # Qt adds the application's display name (gui/app.py): "… — WarpScope", said once
        self.setWindowTitle("How the GPU schedules your launch")
        self.setObjectName("WarpScopeMainWindow")
        self.setDockNestingEnabled(True)
        self.setMinimumSize(*MIN_SIZE)
        self.settings = open_settings()
        saved = self._saved_inputs() if restore else None

        # models: the same ones a view opened alone makes (gui/panels.py)
        start = inputs or saved or LaunchInputs()
        self.models = m = panels.Models(adjust(start) if adjust is not None else start)
        self.model, self.options, self.simulation = m.model, m.options, m.simulation
        self.playback, self.bench, self.traces = m.playback, m.bench, m.traces
        self.playback.play_when_ready = autoplay

        # adapter: the threads and timers; the simulation's runs are its jobs' (gui.adapter)
        self.sim_runner = TaskRunner("simulation", self)
        self.sim_jobs = SimulationJobs(self.simulation, self.sim_runner, sim_delay_ms, self,
                                       lambda: self.sim_label.setText("simulating…"),
                                       self._on_simulation_failed)
        self.sim_debounce = self.sim_jobs.debounce
        self.live_runner = HostRunner("kernels", self)
        self.file_jobs = FileJobs(TaskRunner("data files", self, keep_all=True))  # panels' Open…
        self.models.files, self.models.live = self.file_jobs, self.live_runner
        self.models.bandwidth_jobs = jobs
        self.clock = PlaybackClock(16, self)
        self.settings_debounce = Debouncer(self.save_settings, 1500, self)  # keep work safe
        self.bench_jobs = m.bench_jobs
        # With no launch given and none saved, the detected GPU (once kernels load) is shown;
        # a saved detected GPU is re-selected when it is detected again.
        self.live_kernels = LiveKernels(self, prefer_detected=inputs is None and saved is None,
                                        wanted_gpu=saved.gpu if inputs is None and saved is not None else None)
        self._restored_state = False
        self._default_state = None
        self._launch_error = ""  # the launch's error the status bar shows, cleared once fixed
        self._sim_error = ""  # the simulation's failure it shows, cleared by the next run
        self._kernel_shown: str | None = None  # the kernel whose cost model the options follow
        self._timeline_height: int | None = None  # before a trace made the timeline taller
        self._restore = restore
        self.later = panels.LaterPanels(self)  # the panels behind a tab, made after the first paint
        try:
            self._build(restore, load_kernels)
        except BaseException:
            self.shutdown()
            raise

    def _build(self, restore: bool, load_kernels: bool) -> None:
        self._build_panels()
        self._build_status_bar()
        build_menus(self)
        self.teach = teach_panels.install(self)  # verdicts, latency, two GPUs, timing, theme
        self.slider_launcher = slider_launcher.install(self)  # the slider launches the kernel
        self._wire()
        if restore:
            self._restored_state = restore_window(self)
        else:
            self.resize(1560, 960)
        self.apply_default_dock_sizes()
        if self.model.state.message():
            self._on_launch_changed(self.model.state)
        # The first simulation runs right here (tens of ms), so the first frame already shows
        # the SMs; later changes go through the debounced worker.
        if load_kernels:  # declarations listed now, marked loading (gui/models/kernel_menu.py)
            self.live_kernels.list_declared()
        self.simulate_now()
        if load_kernels:  # after the first paint; torch/triton/numba load in the kernel host
            QTimer.singleShot(150, self.load_kernels)
        else:
            self.controls.set_availability(Availability(loading=False))
            self.bench.set_availability(None, "live kernels were not loaded in this session")

    def _build_panels(self) -> None:
        m = self.models
        self.sm_view = panels.make("sm_view", m)
        self.playback_view = panels.make("playback", m)
        central = QWidget()
        cl = QVBoxLayout(central)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(0)
        cl.addWidget(self.sm_view, 1)
        cl.addWidget(self.playback_view)
        self.setCentralWidget(central)
        self.docks: dict[str, QDockWidget] = {}
        left, right, bottom = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea,
                               Qt.DockWidgetArea.BottomDockWidgetArea)
        for key, area in (("controls", left), ("occupancy", right), ("geometry", left),
                          ("timeline", bottom)):
            panels.mount(self, key, area)
        # behind the timeline's tab: made after the first paint, or once shown (gui/panels.py)
        panels.mount_later(self, "bandwidth", bottom, tab_with="timeline")
        teach_panels.add_bandwidth_tabs(self)  # Timing methods, Bandwidth vs occupancy
        self._fit_corners(self.width())
        self.controls.setMinimumWidth(286)  # the form (270) and its scroll bar
        self.occupancy_view.setMinimumWidth(250)
        panels.mount_later(self, "waves", bottom, self._make_waves, tab_with="bandwidth",
                           attrs=("waves_panel", "waves", "waves_runner"))
        # your own kernel: File ▸ Open kernel…, the source panel, compiles in their own process
        self.user_kernels = UserKernels(self, ask_to_reopen=self._restore)
        self.docks["timeline"].raise_()

    def _make_waves(self):
        """The Waves tab: the matmul sawtooth; a point becomes this launch (gui/waves_panel.py)."""
        from gui.waves_panel import WavesPanel

        self.waves_panel = WavesPanel(self)
        self.waves, self.waves_runner = self.waves_panel.model, self.waves_panel.runner
        self.waves_panel.attach(self.docks["waves"])
        return self.waves_panel.view

    def __getattr__(self, name: str):
        # a panel made after the first paint (gui.panels.LaterPanels), asked for before: now
        later = self.__dict__.get("later")
        if later is not None and later.make_for(name):
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def paintEvent(self, event) -> None:
        super().paintEvent(event)
        self.later.painted()

    def _build_status_bar(self) -> None:
        self.sim_label = QLabel("")
        self.sim_label.setProperty("role", "muted")
        self.sim_label.setContentsMargins(0, 0, 12, 0)  # apart from the live kernels' label
        self.statusBar().addPermanentWidget(self.sim_label)
        self._status_rule = QFrame()  # the two labels read as two, not one run-on line
        self._status_rule.setFrameShape(QFrame.Shape.VLine)
        self._status_rule.setFrameShadow(QFrame.Shadow.Plain)
        self.statusBar().addPermanentWidget(self._status_rule)
        self.statusBar().addPermanentWidget(self.live_kernels.label)
        self.statusBar().messageChanged.connect(self._make_room_for_message)

    def _wire(self) -> None:
        """Models -> window (a model's own jobs are wired where they are made)."""
        self.model.changed.connect(self._on_launch_changed)
        self.model.rejected.connect(self._on_launch_rejected)
        self.options.changed.connect(self._on_options_changed)
        self.playback.speed_changed.connect(self._on_speed_changed)
        self.playback.playing_changed.connect(self._on_playing_changed)
        self.simulation.changed.connect(self._on_run_changed)
        self.bench.message.connect(self.show_message)
        self.clock.tick.connect(self.playback.advance)
        self.trace_opening = TraceOpening(self, self.traces, self.timeline)
        self.trace_runner = self.trace_opening.runner
        self.traces.changed.connect(self._on_trace_changed)
        self.traces.busy.connect(self._on_trace_busy)

    def event(self, event) -> bool:
        # Qt makes the bars of tabbed docks eliding ("Ti…", "Ban…" at 1024 px wide): keep the
        # panels' names whole and let the bar scroll instead. ChildPolished comes after Qt has
        # configured the new bar.
        if event.type() == QEvent.Type.ChildPolished and isinstance(event.child(), QTabBar):
            event.child().setElideMode(Qt.TextElideMode.ElideNone)
            event.child().setUsesScrollButtons(True)
        return super().event(event)

    # -- construction helpers ---------------------------------------------------------------------
    def apply_default_dock_sizes(self) -> None:
        """Side panels about a fifth of the width each, the timeline a third of the height."""
        w, h = max(self.width(), MIN_SIZE[0]), max(self.height(), MIN_SIZE[1])
        self._fit_corners(w)
        side = max(286, min(360, w // 5))
        self.resizeDocks([self.docks["controls"], self.docks["occupancy"]], [side, max(250, side + 30)],
                         Qt.Orientation.Horizontal)
        # the form whole if it fits beside the launch table, else the two share the height; in
        # a small window, where the bottom panels take the left corner, they are two tabs
        form = self.controls.sizeHint().height() + 36
        table = self.geometry_view.sizeHint().height() + 30
        controls, geometry = self.docks["controls"], self.docks["geometry"]
        small = w < NARROW_PX and form + table > h - 60
        if small != (geometry in self.tabifiedDockWidgets(controls)):
            self.removeDockWidget(geometry)  # split beside a tabbed dock would make a tab
            if small:
                self.tabifyDockWidget(controls, geometry)
            else:
                self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, geometry)
                self.splitDockWidget(controls, geometry, Qt.Orientation.Vertical)
            geometry.show()
        if small:
            controls.raise_()
        split = form if form + table <= h - 60 else (h - 60) * form // (form + table)
        if not small:
            self.resizeDocks([controls, geometry], [split, h - 60 - split], Qt.Orientation.Vertical)
        self.resizeDocks([self.docks["timeline"]], [max(240, h // 3)], Qt.Orientation.Vertical)
        if hasattr(self, "teach"):
            teach_panels.default_sizes(self, h - 60)

    # -- settings (gui/window_settings.py) --------------------------------------------------------
    def _saved_inputs(self) -> LaunchInputs | None:
        return saved_inputs(self.settings)  # checked; a damaged file was already set aside

    def save_settings(self) -> None:
        save_window(self)

    def reset_layout(self) -> None:
        if self._default_state is not None:
            self.restoreState(self._default_state, SETTINGS_VERSION)
        for dock in self.docks.values():
            dock.show()
        self.docks["timeline"].raise_()
        self.apply_default_dock_sizes()

    def _fit_corners(self, width: int) -> None:
        """The side columns run to the bottom; in a narrow window the bottom panels take the
        left column's corner, so their seven tabs fit without scroll arrows (the left panels
        scroll; the Occupancy charts keep their height)."""
        area = (Qt.DockWidgetArea.BottomDockWidgetArea if width < NARROW_PX
                else Qt.DockWidgetArea.LeftDockWidgetArea)
        if self.corner(Qt.Corner.BottomLeftCorner) != area:
            self.setCorner(Qt.Corner.BottomLeftCorner, area)
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)

    def resizeEvent(self, event) -> None:
        self._fit_corners(event.size().width())
        super().resizeEvent(event)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._on_playing_changed(self.playback.playing)
        if self._default_state is None:
            QTimer.singleShot(0, self._remember_default_state)

    def _remember_default_state(self) -> None:
        if self._default_state is None:
            if not self._restored_state:
                self.apply_default_dock_sizes()
            self._default_state = self.saveState(SETTINGS_VERSION)

    # -- models -> window -------------------------------------------------------------------------
    def _on_launch_changed(self, state) -> None:
        if state.inputs.kernel != self._kernel_shown:  # a new kernel brings its cost model
            self._kernel_shown = state.inputs.kernel
            self.options.follow_kernel(self.model.launched_kernel())
        if state.work is None and self.options.cost == "compute":  # nothing to time tile by tile
            self.options.set(cost="memory")
        msg = "" if state.asking else state.message()  # asking a kernel file: no error
        if msg:
            self._show_launch_error(msg)
        elif self._launch_error and self.statusBar().currentMessage() == self._launch_error:
            self.statusBar().clearMessage()  # fixed: not red for the rest of its 8 s
        self.settings_debounce.poke()

    def _on_launch_rejected(self, message: str) -> None:
        self._show_launch_error(f"Not applied: {message}")

    def _show_launch_error(self, text: str) -> None:
        self._launch_error = text
        self.show_message(text, error=True)

    def _on_options_changed(self, _cost: str, _placement: str) -> None:
        self.settings_debounce.poke()

    def _on_speed_changed(self, _speed: float) -> None:
        self.settings_debounce.poke()

    def _on_playing_changed(self, playing: bool) -> None:
        if playing and not self.isMinimized():
            self.clock.start()
        else:
            self.clock.stop()

    def changeEvent(self, event) -> None:
        # a minimized window draws nothing: its clock sleeps until it is shown again
        if event.type() == QEvent.Type.WindowStateChange:
            self._on_playing_changed(self.playback.playing)
        super().changeEvent(event)

    def hideEvent(self, event) -> None:
        self.clock.stop()  # hidden: no frames to draw; showEvent wakes it if still playing
        super().hideEvent(event)

    def _on_run_changed(self, run: SimRun | None, message: str) -> None:
        if run is None:
            self.sim_label.setText("")
            return
        if self._sim_error and self.statusBar().currentMessage() == self._sim_error:
            self.statusBar().clearMessage()  # a run came: the failure is over, not red for 8 s
        tl = run.timeline
        skipped = f", {tl.skipped_waves:,} identical waves skipped" if tl.skipped_waves else ""
        self.sim_label.setText(f"simulated {tl.n_blocks:,} blocks in {run.elapsed_s * 1e3:,.0f} ms{skipped}")

    def predict_waves_now(self) -> None:
        """Predict the sawtooth on this thread (headless export, screenshots, tests)."""
        self.waves_panel.predict_now()

    @property
    def record(self) -> SimRun | None:
        return self.simulation.run

    # -- simulation jobs (gui.adapter.SimulationJobs) ----------------------------------------------
    def _on_simulation_failed(self, line: str) -> None:
        self._sim_error = line  # shown until a run comes (_on_run_changed clears it)
        self.show_message(line, error=True)

    def request_simulation(self) -> None:
        """Simulate the current launch in the worker (latest request wins)."""
        self.sim_jobs.request()

    def simulate_now(self) -> SimRun | None:
        """Run the simulation on this thread (headless export, screenshots, tests): the
        debounced worker job for the same launch is not made as well."""
        return self.sim_jobs.run_now()

    # -- live kernels (gui/live_kernels.py) --------------------------------------------------------
    @property
    def kernels_info(self) -> KernelsInfo | None:
        return self.live_kernels.info

    def load_kernels(self) -> None:
        """Start the kernel host; it imports torch/triton/numba and detects the device."""
        self.live_kernels.load()

    def apply_kernels_info(self, info: KernelsInfo) -> None:
        self.live_kernels.apply(info)

    # -- traces -----------------------------------------------------------------------------------
    def open_trace(self, path: str, wait: bool = False) -> bool:
        """Lay a recorded trace beside its prediction (gui/trace_opening.py)."""
        return self.trace_opening.open(path, wait)

    def make_room_for_trace(self) -> None:
        """Two Gantt charts, one above the other: room for both, but the SM view keeps at least
        SM_VIEW_KEEPS of the height they share (it was squeezed to 150 px at 768 px tall)."""
        dock = self.docks["timeline"]
        dock.show()
        dock.raise_()
        room = self.centralWidget().height() + dock.height()
        want = min(max(480, self.height() // 2), int(room * (1 - SM_VIEW_KEEPS)))
        if dock.height() < want:
            self.resizeDocks([dock], [want], Qt.Orientation.Vertical)

    def _on_trace_busy(self, label: str, *_progress) -> None:
        """A comparison starts from the launch: its timeline's height, for *Back to the launch*
        (taken now: once the three charts show, their least heights may already have grown it)."""
        dock = self.docks["timeline"]
        if label and self.traces.comparison is None:
            self._timeline_height = dock.height() if dock.isVisible() and dock.height() > 0 else None

    def _on_trace_changed(self, comparison) -> None:
        """Back to the launch: the timeline goes back to the height it had before the trace."""
        if comparison is None and self._timeline_height is not None:
            height, self._timeline_height = self._timeline_height, None
            # on the next turn: the docks' least heights still count the trace's three charts
            QTimer.singleShot(0, self, lambda: self._resize_timeline(height))

    def _resize_timeline(self, height: int) -> None:
        """The timeline dock `height` px tall: resizeDocks sizes its tabbed group, tab bar and
        all, so ask again by what the first answer missed."""
        dock, ask = self.docks["timeline"], height
        for _ in range(2):
            if ask <= 0 or not dock.isVisible():
                return
            self.resizeDocks([dock], [ask], Qt.Orientation.Vertical)
            self.layout().activate()
            if dock.height() == height:
                return
            ask += height - dock.height()

    # -- messages and help ------------------------------------------------------------------------
    def show_message(self, text: str, error: bool = False, timeout_ms: int = 8000) -> None:
        self.statusBar().setStyleSheet(f"color: {style.BAD};" if error else "")
        self.statusBar().showMessage(text, timeout_ms)

    def _make_room_for_message(self, text: str) -> None:
        """Qt cuts a message where the permanent labels start (a trace's scores were cut mid-number
        at 1024 px): while one is shown that would not fit beside them, the simulation's label
        steps aside."""
        bar = self.statusBar()
        room = bar.width() - self.live_kernels.label.sizeHint().width() - self.sim_label.sizeHint().width() - 40
        self.sim_label.setVisible(not text or bar.fontMetrics().horizontalAdvance(text) <= room)
        self._status_rule.setVisible(self.sim_label.isVisibleTo(bar))

    def show_help(self, key: str) -> None:
        title, text = help_texts.PANELS[key]
        box = QMessageBox(self)
        box.setWindowTitle(f"What am I looking at? — {title}")
        box.setTextFormat(Qt.TextFormat.RichText)
        box.setText(text)
        box.setIcon(QMessageBox.Icon.Information)
        box.setModal(False)
        box.show()
        self._help_box = box

    # -- export -----------------------------------------------------------------------------------
    def export_items(self) -> list[ExportItem]:
        self.later.make_all()  # every panel is exported, those not yet shown too
        from gui.export import ExportItem

        header, rows = self.sm_view.csv_rows()
        return ([ExportItem("sm_view", self.sm_view, header, rows)] + self.playback_view.export_items()
                + self.occupancy_view.export_items() + self.geometry_view.export_items()
                + self.timeline.export_items() + self.bandwidth.export_items()
                + self.waves_view.export_items() + self.teach.export_items()
                + self.slider_launch_view.export_items())

    def session_dict(self) -> dict:
        from gui.models.session import session_dict

        return {**session_dict(self.model, self.simulation, self.playback, self.bench),
                **self.teach.session()}

    def export_all(self, out_dir: str | Path, theme: str | None = None) -> list[Path]:
        """Every plot as PNG/SVG/CSV, session.json, summary.png and summary.html, drawn in
        `theme` (default: the export theme setting, light unless changed)."""
        from gui.window_export import export_window

        self.later.make_all()  # before the theme is switched and the hidden docks laid out
        return export_window(self, out_dir, theme or self.teach.export_theme)

    def _on_export(self) -> None:
        export_dialog(self)  # File ▸ Export ▸ Everything…

    # -- shutdown ---------------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop timers and worker threads (idempotent)."""
        for timer in (self.sim_debounce, self.settings_debounce):
            timer.cancel()
        self.clock.stop()
        self.sim_runner.shutdown()
        self.file_jobs.runner.shutdown()
        self.trace_opening.shutdown()
        if "waves_panel" in self.__dict__:  # made (hasattr would make it)
            self.waves_panel.shutdown()
        self.live_runner.shutdown()
        if hasattr(self, "user_kernels"):
            self.user_kernels.shutdown()

    def closeEvent(self, event) -> None:
        self.save_settings()
        self.shutdown()
        super().closeEvent(event)
