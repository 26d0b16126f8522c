"""The main window: wires models, views and the adapter together.

LaunchModel --changed--> controls, occupancy, geometry, (debounced) simulation job
simulation job (TaskRunner) --finished(SimRecord)--> SM view, timeline, playback
PlaybackClock --tick--> PlaybackModel --time_changed--> SM view, timeline cursor, scrubber
"""

from __future__ import annotations

import sys

import datetime as _dt
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from gui import help as help_texts
from gui import style
from gui.adapter import Debouncer, PlaybackClock, TaskOutcome, TaskRunner
from gui.export import (
    ExportItem,
    export_item,
    export_to_folder,
    save_png,
    save_png_message,
    summary_html,
    summary_page,
    write_json,
)
from gui.model import (
    KernelChoice,
    LaunchInputs,
    LaunchModel,
    LaunchState,
    PlaybackModel,
    SimulationModel,
)
from gui.settings import open_settings, saved_inputs, settings_notice
from gui.simrun import SimRecord, run_simulation
from gui.widgets.qt_bandwidth import BandwidthJobs, QtBandwidth
from gui.widgets.qt_geometry import QtGeometry
from gui.widgets.qt_launch_controls import QtLaunchControls
from gui.widgets.qt_occupancy import QtOccupancy
from gui.widgets.qt_playback import QtPlayback
from gui.widgets.qt_sm_view import QtSmView
from gui.widgets.qt_timeline import QtTimeline
from sim.files import write_text_atomic

SESSION_FORMAT = "warpscope-session/1"
SETTINGS_VERSION = 1


@dataclass(frozen=True)
class KernelsInfo:
    """What the background loader learned about `kernels` (immutable, crosses threads)."""

    available: dict | None
    kernels: tuple
    device: Any
    device_reason: str
    error: str = ""


def load_kernels_info(ctx=None) -> KernelsInfo:
    """Import kernels (and with it torch, triton, numba) — runs in a worker thread."""
    try:
        import kernels

        av = kernels.available()
        from kernels.registry import KERNELS

        try:
            from kernels.device import detect_device

            spec, why = detect_device()
        except Exception as exc:  # noqa: BLE001 - no device is a normal answer here
            spec, why = None, str(exc)
        return KernelsInfo(av, tuple(KERNELS), spec, why)
    except Exception as exc:  # noqa: BLE001 - shown in the panel, the app keeps working
        return KernelsInfo(None, (), None, "", f"{type(exc).__name__}: {exc}")


class MainWindow(QMainWindow):
    simulation_ready = Signal(object)  # SimRecord (after the views have it)

    def __init__(
        self,
        inputs: LaunchInputs | None = None,
        *,
        restore: bool = True,
        load_kernels: bool = True,
        autoplay: bool = False,
        jobs: BandwidthJobs | None = None,
        sim_delay_ms: int = 60,
    ) -> None:
        super().__init__()
        self.setWindowTitle("WarpScope — how the GPU schedules your launch")
        self.setObjectName("WarpScopeMainWindow")
        self.setDockNestingEnabled(True)
        self.settings = open_settings()
        saved = self._saved_inputs() if restore else None
        # With no launch given and none saved, the detected GPU (once kernels load) is shown;
        # a saved detected GPU is re-selected when it is detected again.
        self.prefer_detected = inputs is None and saved is None
        self._wanted_gpu = saved.gpu if (inputs is None and saved is not None) else None
        if inputs is None:
            inputs = saved or LaunchInputs()

        # models
        self.model = LaunchModel(inputs, self)
        self.playback = PlaybackModel(parent=self)
        self.simulation = SimulationModel(self)
        self.cost = "uniform"
        self.placement = "sm-order"

        # adapter: the threads and timers
        self.sim_runner = TaskRunner("simulation", self)
        self.live_runner = TaskRunner("live", self)
        self.sim_debounce = Debouncer(self.request_simulation, sim_delay_ms, self)
        self.clock = PlaybackClock(16, self)
        self.settings_debounce = Debouncer(self.save_settings, 1500, self)  # keep work safe
        self._sim_job: int | None = None
        self._kernels_job: int | None = None
        self.record: SimRecord | None = None
        self.kernels_info: KernelsInfo | None = None
        self._autoplay = autoplay
        self._restored_state = False

        try:
            self._build(jobs, restore, load_kernels)
        except BaseException:
            self.shutdown()
            raise

    def _build(self, jobs, restore: bool, load_kernels: bool) -> None:
        # views
        self.sm_view = QtSmView(self.simulation, self.playback)
        self.playback_view = QtPlayback(self.playback, self.simulation)
        central = QWidget()
        cl = QVBoxLayout(central)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(0)
        cl.addWidget(self.sm_view, 1)
        cl.addWidget(self.playback_view)
        self.setCentralWidget(central)

        self.controls = QtLaunchControls(self.model)
        self.occupancy_view = QtOccupancy(self.model)
        self.geometry_view = QtGeometry(self.model)
        self.timeline = QtTimeline(self.simulation, self.playback)
        self.bandwidth = QtBandwidth(self.live_runner, jobs)

        self.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        scroll = QScrollArea()
        scroll.setWidget(self.controls)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setMinimumWidth(330)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.occupancy_view.setMinimumWidth(380)
        self.docks: dict[str, QDockWidget] = {}
        self._add_dock("controls", scroll, Qt.DockWidgetArea.LeftDockWidgetArea)
        self._add_dock("occupancy", self.occupancy_view, Qt.DockWidgetArea.RightDockWidgetArea)
        self._add_dock("geometry", self.geometry_view, Qt.DockWidgetArea.LeftDockWidgetArea)
        self._add_dock("timeline", self.timeline, Qt.DockWidgetArea.BottomDockWidgetArea)
        self._add_dock("bandwidth", self.bandwidth, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.docks["timeline"], self.docks["bandwidth"])
        self.docks["timeline"].raise_()
        self.apply_default_dock_sizes()
        self._default_state = None

        # status bar
        self.kernels_label = QLabel("live kernels: not loaded")
        self.kernels_label.setProperty("role", "muted")
        self.sim_label = QLabel("")
        self.sim_label.setProperty("role", "muted")
        self.statusBar().addPermanentWidget(self.sim_label)
        self.statusBar().addPermanentWidget(self.kernels_label)

        self._build_menus()

        # wiring: model -> views
        self.model.changed.connect(self._on_launch_changed)
        self.model.changed.connect(lambda _s: self.settings_debounce.poke())
        self.playback.speed_changed.connect(lambda _s: self.settings_debounce.poke())
        self.model.rejected.connect(self._on_launch_rejected)
        self.controls.simulation_options_changed.connect(self._on_sim_options_changed)
        self.sim_runner.finished.connect(self._on_simulation_finished)
        self.live_runner.finished.connect(self._on_live_finished)
        self.clock.tick.connect(self._on_clock_tick)
        self.playback.playing_changed.connect(self._on_playing_changed)
        self.playback_view.step_requested.connect(self.step)
        self.timeline.time_picked.connect(self._on_time_picked)
        self.timeline.trace_requested.connect(self.open_trace)
        self.bandwidth.status_message.connect(self.show_message)
        self.bandwidth.result_loaded.connect(self._on_bench_result)

        if restore:
            self._restore_settings()
        else:
            self.resize(1560, 960)
        self._on_launch_changed(self.model.state)
        # The first simulation runs right here (tens of ms), so the first frame already shows
        # the SMs; later changes go through the debounced worker.
        if self.model.state.ok:
            self.simulate_now()
        if load_kernels:
            # after the first paint: the window is usable before torch/triton/numba load
            QTimer.singleShot(150, self.load_kernels)
        else:
            self.bandwidth.set_availability(None, "live kernels were not loaded in this session")

    # -- construction helpers ---------------------------------------------------------------------
    def _add_dock(self, key: str, widget: QWidget, area) -> QDockWidget:
        title, _text = help_texts.PANELS[key]
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock_{key}")
        dock.setWidget(widget)
        dock.setToolTip(f"{title}: Help ▸ What am I looking at? explains this panel.")
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
        )
        self.addDockWidget(area, dock)
        self.docks[key] = dock
        return dock

    def apply_default_dock_sizes(self) -> None:
        self.resizeDocks(
            [self.docks["controls"], self.docks["occupancy"]], [340, 390], Qt.Orientation.Horizontal
        )
        self.resizeDocks(
            [self.docks["controls"], self.docks["geometry"]], [470, 530], Qt.Orientation.Vertical
        )
        self.resizeDocks([self.docks["timeline"]], [330], Qt.Orientation.Vertical)

    def _build_menus(self) -> None:
        mb = self.menuBar()
        m = mb.addMenu("&File")
        self.act_open = self._action(m, "&Open bench results…", "Ctrl+O", self._on_open_results)
        self.act_export = self._action(m, "&Export everything…", "Ctrl+E", self._on_export)
        self.act_shot = self._action(m, "Save &screenshot…", "Ctrl+Shift+S", self._on_screenshot)
        m.addSeparator()
        self._action(m, "&Quit", QKeySequence.StandardKey.Quit, self.close)

        m = mb.addMenu("&Simulation")
        self.act_play = self._action(m, "&Play / pause", "Space", self.playback.toggle)
        self.act_step = self._action(m, "Step &forward", ".", lambda: self.step(+1))
        self.act_back = self._action(m, "Step &back", ",", lambda: self.step(-1))
        self.act_start = self._action(m, "Go to &start", "Home", lambda: self.playback.set_time(0))
        self.act_end = self._action(
            m, "Go to &end", "End", lambda: self.playback.set_time(self.playback.end_us)
        )
        m.addSeparator()
        self._action(m, "F&aster", "]", lambda: self._speed_step(+1))
        self._action(m, "S&lower", "[", lambda: self._speed_step(-1))

        m = mb.addMenu("&View")
        for key, dock in self.docks.items():
            m.addAction(dock.toggleViewAction())
        m.addSeparator()
        self._action(m, "&Reset layout", None, self.reset_layout)

        m = mb.addMenu("&Help")
        sub = m.addMenu("&What am I looking at?")
        for key, (title, _) in help_texts.PANELS.items():
            sub.addAction(title, lambda k=key: self.show_help(k))
        self._action(m, "&About WarpScope", None, self._on_about)

    def _action(self, menu, text, shortcut, slot) -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
            act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        act.triggered.connect(slot)
        menu.addAction(act)
        self.addAction(act)
        return act

    # -- settings ---------------------------------------------------------------------------------
    def _saved_inputs(self) -> LaunchInputs | None:
        return saved_inputs(self.settings)  # checked; a damaged file was already set aside

    def _restore_settings(self) -> None:
        if notice := settings_notice(self.settings):
            self.show_message(f"Settings: {notice}", error=True, timeout_ms=30000)
        geo = self.settings.value("window/geometry")
        if isinstance(geo, QByteArray) and not geo.isEmpty():
            self.restoreGeometry(geo)
        else:
            self._first_run_size()
        state = self.settings.value("window/state")
        if isinstance(state, QByteArray) and not state.isEmpty():
            self._restored_state = bool(self.restoreState(state, SETTINGS_VERSION))
        cost = self.settings.value("sim/cost", "uniform")
        placement = self.settings.value("sim/placement", "sm-order")
        self.controls.set_sim_options(str(cost), str(placement))
        try:
            self.playback.set_speed(float(self.settings.value("sim/speed", 1.0)))
        except (TypeError, ValueError):
            pass

    def _first_run_size(self) -> None:
        """First start: most of the screen, up to 1600 x 1000, centred."""
        screen = self.screen().availableGeometry() if self.screen() else None
        if screen is None or screen.width() < 200:
            self.resize(1560, 960)
            return
        w = min(1600, screen.width() - 20)
        h = min(1000, screen.height() - 20)
        self.resize(w, h)
        self.move(screen.x() + (screen.width() - w) // 2, screen.y() + (screen.height() - h) // 2)

    def save_settings(self) -> None:
        self.settings.setValue("launch/inputs", json.dumps(self.model.inputs.to_dict()))
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState(SETTINGS_VERSION))
        self.settings.setValue("sim/cost", self.cost)
        self.settings.setValue("sim/placement", self.placement)
        self.settings.setValue("sim/speed", self.playback.speed)
        self.settings.sync()

    def reset_layout(self) -> None:
        if self._default_state is not None:
            self.restoreState(self._default_state, SETTINGS_VERSION)
        for dock in self.docks.values():
            dock.show()
        self.docks["timeline"].raise_()
        self.apply_default_dock_sizes()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._default_state is None:
            QTimer.singleShot(0, self._remember_default_state)

    def _remember_default_state(self) -> None:
        if self._default_state is None:
            if not self._restored_state:
                self.apply_default_dock_sizes()
            self._default_state = self.saveState(SETTINGS_VERSION)

    # -- launch changes ---------------------------------------------------------------------------
    def _on_launch_changed(self, state: LaunchState) -> None:
        msg = state.message()
        if msg:
            self.show_message(msg, error=True)
            self.simulation.clear(msg)
            self.record = None
            self.playback.set_playing(False)
            self.playback.set_end(0)
            return
        self.sim_debounce.poke()

    def _on_launch_rejected(self, message: str) -> None:
        self.show_message(f"Not applied: {message}", error=True)

    def _on_sim_options_changed(self, cost: str, placement: str) -> None:
        self.cost, self.placement = cost, placement
        self.sim_debounce.poke()
        self.settings_debounce.poke()

    def _sim_key(self) -> tuple:
        return (self.model.inputs, self.model.state.spec, self.cost, self.placement)

    def _sim_job_fn(self):
        state = self.model.state
        key, cost, placement = self._sim_key(), self.cost, self.placement
        spec, occ, blocks = state.spec, state.occ, state.blocks
        elements = blocks * occ.threads_per_block - state.geometry.idle_threads_last_block

        def job(ctx):
            return run_simulation(
                spec, occ, blocks, cost=cost, placement=placement, elements=elements, key=key
            )

        return job

    def request_simulation(self) -> None:
        """Simulate the current launch in the worker (latest request wins)."""
        state = self.model.state
        if not state.ok:
            return
        if self.record is not None and self.record.key == self._sim_key():
            return
        self._sim_job = self.sim_runner.submit(self._sim_job_fn(), "simulate")
        self.sim_label.setText("simulating…")

    def simulate_now(self) -> SimRecord | None:
        """Run the simulation on this thread (headless export, screenshots, tests)."""
        self.sim_debounce.flush()
        state = self.model.state
        if not state.ok:
            return None
        rec = self._sim_job_fn()(None)
        self._apply_record(rec)
        return rec

    def _on_simulation_finished(self, outcome: TaskOutcome) -> None:
        if not outcome.ok:
            self.sim_label.setText("")
            self.show_message(f"Simulation failed: {outcome.error}", error=True)
            self.simulation.clear(f"Simulation failed: {outcome.error}")
            self.record = None
            return
        rec: SimRecord = outcome.result
        if rec.key != self._sim_key():
            return  # stale: a newer request is queued behind it
        self._apply_record(rec)

    def _apply_record(self, rec: SimRecord) -> None:
        old = self.record
        frac = (
            (self.playback.time_us / old.makespan_us)
            if old is not None and old.makespan_us
            else 0.4
        )
        self.record = rec
        self.playback.set_end(rec.makespan_us)
        self.simulation.set_record(rec)  # views draw it at the time they hold...
        t = frac * rec.makespan_us
        if self.playback.time_us == t:
            self.playback.time_changed.emit(t)  # ...which may be stale if the time did not move
        self.playback.set_time(t)
        skipped = f", {rec.skipped_waves:,} identical waves skipped" if rec.skipped_waves else ""
        self.sim_label.setText(
            f"simulated {rec.n_sim:,} blocks in {rec.elapsed_s * 1e3:,.0f} ms{skipped}"
        )
        if self._autoplay:
            self._autoplay = False
            self.playback.set_playing(True)
        self.simulation_ready.emit(rec)

    # -- time -------------------------------------------------------------------------------------
    def _on_clock_tick(self, dt: float) -> None:
        self.playback.advance(dt)

    def _on_time_picked(self, t: float) -> None:
        self.playback.set_playing(False)
        self.playback.set_time(t)

    def _on_playing_changed(self, playing: bool) -> None:
        if playing:
            self.clock.start()
        else:
            self.clock.stop()

    def step(self, direction: int) -> None:
        """Jump to the next (+1) or previous (-1) moment a block arrives or retires."""
        import numpy as np

        rec = self.record
        if rec is None:
            return
        self.playback.set_playing(False)
        ev = rec.event_times_us
        t = self.playback.time_us
        if direction > 0:
            i = int(np.searchsorted(ev, t, side="right"))
            target = ev[i] if i < len(ev) else rec.makespan_us
        else:
            i = int(np.searchsorted(ev, t, side="left")) - 1
            target = ev[i] if i >= 0 else 0.0
        self.playback.set_time(float(target))

    def _speed_step(self, direction: int) -> None:
        from gui.widgets.qt_playback import SPEEDS

        cur = self.playback.speed
        idx = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - cur))
        idx = max(0, min(len(SPEEDS) - 1, idx + direction))
        self.playback.set_speed(SPEEDS[idx])

    # -- live kernels -----------------------------------------------------------------------------
    def load_kernels(self) -> None:
        if self._kernels_job is not None:
            return
        self.kernels_label.setText("live kernels: loading torch / triton / numba…")
        self._kernels_job = self.live_runner.submit(load_kernels_info, "load kernels")

    def _on_live_finished(self, outcome: TaskOutcome) -> None:
        if outcome.job_id != self._kernels_job:
            return
        info: KernelsInfo = (
            outcome.result if outcome.ok else KernelsInfo(None, (), None, "", outcome.error)
        )
        self.apply_kernels_info(info)

    def apply_kernels_info(self, info: KernelsInfo) -> None:
        self.kernels_info = info
        if info.error or info.available is None:
            self.kernels_label.setText("live kernels: unavailable")
            self.bandwidth.set_availability(None, info.error)
            return
        if info.device is not None:
            self.model.add_detected_spec(info.device)
            label = self.model.gpu_names()[0]
            if self.prefer_detected or self._wanted_gpu == label:
                self.model.update(gpu=label)
        self.model.set_kernels(
            [
                KernelChoice.from_spec(k)
                for k in info.kernels
                if getattr(k, "kind", "elementwise") == "elementwise"
            ]
        )
        self.bandwidth.set_kernels(list(info.kernels))
        self.bandwidth.set_availability(info.available)
        modes = ", ".join(f"{n} {a.mode}" for n, a in info.available.items())
        self.kernels_label.setText(f"live kernels: {modes}")

    def open_trace(self, path: str) -> bool:
        """Lay a recorded block trace beside the simulation of the same grid (Timeline panel)."""
        from gui.simrun import load_trace_view

        try:
            view = load_trace_view(path, self.model.state.spec)
        except (ValueError, OSError, KeyError, TypeError) as exc:
            self.show_message(f"Could not open the trace: {str(exc).splitlines()[0]}", error=True)
            return False
        self.timeline.show_trace(view)
        self.docks["timeline"].show()
        self.docks["timeline"].raise_()
        # Two Gantt charts, one above the other: give the panel the room both need to be read.
        if self.docks["timeline"].height() < 480:
            self.resizeDocks([self.docks["timeline"]], [max(480, self.height() // 2)], Qt.Orientation.Vertical)
        self.show_message(f"Trace {Path(path).name}: {view.lines[1]}")
        return True

    def _on_bench_result(self, result) -> None:
        """Real kernels report their registers and shared memory: use them for the launch."""
        found: dict[str, tuple[int, int]] = {}
        for m in result.measurements:
            if m.regs_per_thread is not None and m.kernel not in found:
                found[m.kernel] = (int(m.regs_per_thread), int(m.smem_per_block_bytes or 0))
        if found:
            self.model.set_measured_resources(found)
            self.show_message(
                f"Registers and shared memory of {len(found)} compiled kernel(s) "
                "taken from the measurements; pick one under Kernel to use them."
            )

    # -- messages and help ------------------------------------------------------------------------
    def show_message(self, text: str, error: bool = False, timeout_ms: int = 8000) -> None:
        self.statusBar().setStyleSheet(f"color: {style.BAD};" if error else "")
        self.statusBar().showMessage(text, timeout_ms)

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

    def _on_about(self) -> None:
        QMessageBox.about(self, "About WarpScope", help_texts.ABOUT)

    # -- export -----------------------------------------------------------------------------------
    def export_items(self) -> list[ExportItem]:
        header, rows = self.sm_view.csv_rows()
        items = [ExportItem("sm_view", self.sm_view, header, rows)]
        items += self.playback_view.export_items()
        items += self.occupancy_view.export_items()
        items += self.geometry_view.export_items()
        items += self.timeline.export_items()
        items += self.bandwidth.export_items()
        return items

    def session_dict(self) -> dict:
        st = self.model.state
        out: dict[str, Any] = {
            "format": SESSION_FORMAT,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "inputs": st.inputs.to_dict(),
            "device": st.spec.to_dict() if hasattr(st.spec, "to_dict") else asdict(st.spec),
            "occupancy": None,
            "geometry": None,
            "simulation": None,
            "animation_time_us": round(self.playback.time_us, 4),
        }
        if st.occ is not None:
            occ = asdict(st.occ)
            occ["can_launch"] = st.occ.can_launch
            out["occupancy"] = occ
        if st.geometry is not None:
            out["geometry"] = asdict(st.geometry)
        if self.record is not None:
            out["simulation"] = self.record.summary()
        out["measurements"] = self.bandwidth.session_dict()
        if self.kernels_info is not None and self.kernels_info.available:
            out["backends"] = {
                n: {"ok": a.ok, "is_gpu": a.is_gpu, "reason": a.reason}
                for n, a in self.kernels_info.available.items()
            }
        return out

    def summary_facts(self) -> list[tuple[str, str]]:
        st = self.model.state
        i, spec, occ, g = st.inputs, st.spec, st.occ, st.geometry
        facts = [
            ("GPU", f"{spec.name} (cc {spec.cc_string})"),
            ("SMs × warp slots", f"{spec.sm_count} × {spec.max_warps_per_sm}"),
            ("Elements", f"{i.elements:,}"),
            ("Threads per block", f"{i.threads_per_block}"),
            ("Registers / thread", f"{i.regs_per_thread}"),
            ("Shared memory / block", f"{i.smem_per_block:,} B"),
        ]
        if g is not None:
            facts += [
                ("Blocks in the grid", f"{g.blocks:,}"),
                ("Warps in the grid", f"{g.warps_in_grid:,}"),
                ("Idle threads in last block", f"{g.idle_threads_last_block:,}"),
                ("Warp slots on the GPU", f"{g.warp_slots_on_gpu:,}"),
                ("Waves at best", f"{g.waves_at_best:,.1f}"),
            ]
        if occ is not None:
            facts += [
                (
                    "Occupancy",
                    f"{occ.occupancy:.0%} ({occ.active_warps_per_sm}/{occ.max_warps_per_sm} warps)",
                ),
                ("Blocks per SM", f"{occ.blocks_per_sm}"),
                ("Limited by", ", ".join(occ.limited_by) if occ.can_launch else occ.reason),
            ]
        if g is not None and g.waves_at_occupancy is not None:
            facts.append(("Waves at this occupancy", f"{g.waves_at_occupancy:,.2f}"))
        if self.record is not None:
            facts += [
                ("Simulated tail", f"{self.record.tail_fraction:.0%} of the run"),
                ("Cost / placement", f"{self.record.cost} / {self.record.placement}"),
            ]
        return facts

    def export_all(self, out_dir: str | Path) -> list[Path]:
        """Every plot as PNG/SVG/CSV, session.json, summary.png and summary.html."""
        out = Path(out_dir)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            from sim.errors import UserError

            raise UserError(f"cannot create {out}: {exc.strerror or exc}") from None
        written: list[Path] = []
        if self.bandwidth.result is not None or self.bandwidth.experiments:
            self._lay_out_hidden_dock("bandwidth")  # plots behind a tab have no size yet
        items = self.export_items()
        for item in items:
            written += export_item(item, out)
        written.append(write_json(out / "session.json", self.session_dict()))
        st = self.model.state
        title = (
            f"WarpScope · {st.spec.name} · {st.inputs.elements:,} elements × "
            f"{st.inputs.threads_per_block} threads per block"
        )
        panels = [
            ("SM view", self.centralWidget().grab().toImage(), True),
            ("Occupancy", self.occupancy_view.grab().toImage()),
            ("Geometry", self.geometry_view.grab().toImage()),
            ("Timeline", self.timeline.grab().toImage(), True),
        ]
        if self.bandwidth.result is not None:
            panels.append(("Bandwidth vs size", self.bandwidth.size_plot.grab().toImage()))
            panels.append(("Bandwidth vs block size", self.bandwidth.block_plot.grab().toImage()))
        page = summary_page(title, self.summary_facts(), panels)
        written.append(save_png(out / "summary.png", page))
        html = summary_html(title, self.summary_facts(), panels, [w.name for w in written])
        h = out / "summary.html"
        write_text_atomic(h, html)
        written.append(h)
        return written

    def _lay_out_hidden_dock(self, key: str) -> None:
        """A dock behind another tab was never laid out: raise it once, then put the other back."""
        from PySide6.QtWidgets import QApplication

        dock = self.docks[key]
        if dock.widget().visibleRegion().isEmpty():
            front = [
                d
                for d in self.tabifiedDockWidgets(dock)
                if not d.widget().visibleRegion().isEmpty()
            ]
            height = dock.height()
            dock.raise_()
            self.resizeDocks([dock], [max(height, 480)], Qt.Orientation.Vertical)
            QApplication.processEvents()
            if front:
                front[0].raise_()
            self.resizeDocks([dock], [height], Qt.Orientation.Vertical)
            QApplication.processEvents()

    def _on_export(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export everything to a folder")
        if not folder:
            return
        try:
            files = export_to_folder(folder, self.export_all)  # replaces an earlier export whole
        except (OSError, ValueError) as exc:
            self.show_message(f"Export failed: {exc}", error=True)
            return
        self.show_message(f"Exported {len(files)} files to {folder}")

    def _on_screenshot(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Save screenshot", "warpscope.png", "PNG (*.png)"
        )
        if path:
            ok, text = save_png_message(path, self.grab())  # written whole, or not at all
            self.show_message(text, error=not ok)

    def _on_open_results(self) -> None:
        self.docks["bandwidth"].show()
        self.docks["bandwidth"].raise_()
        self.bandwidth._on_open_clicked()

    # -- shutdown ---------------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop timers and worker threads (idempotent)."""
        self.sim_debounce._timer.stop()
        self.settings_debounce._timer.stop()
        self.clock.stop()
        self.sim_runner.shutdown()
        experiments = sys.modules.get("kernels.experiments")
        if experiments is not None:  # a child process still measuring would hold the worker
            experiments.stop_children()
        self.live_runner.shutdown()

    def closeEvent(self, event) -> None:
        self.save_settings()
        self.shutdown()
        super().closeEvent(event)
