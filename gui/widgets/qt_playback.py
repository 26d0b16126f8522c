"""QtPlayback: play / pause / step / speed and a time scrubber over the residency curve.

The curve is the schedule being shown (filled); the same launch under the other schedule —
ideal beside calibrated, or the other way round — is the dashed line over it."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QGraphicsItem,
    QHBoxLayout,
    QLabel,
    QSlider,
    QStyle,
    QStyleOptionSlider,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gui import style
from gui.models.playback import SPEEDS, PlaybackModel
from gui.models.simulation import SimRun, SimulationModel

SCRUB_STEPS = 10000
SCRUB_PAGE = SCRUB_STEPS // 20  # Page Up/Down: 5% of the launch


class ScrubSlider(QSlider):
    """A click on the groove jumps to that moment (Qt's default pages 10 of 10,000 steps:
    0.1% a click); dragging works as before."""

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            opt = QStyleOptionSlider()
            self.initStyleOption(opt)
            handle = self.style().subControlRect(QStyle.ComplexControl.CC_Slider, opt,
                                                 QStyle.SubControl.SC_SliderHandle, self)
            if not handle.contains(event.position().toPoint()):
                span = self.width() - handle.width()
                x = event.position().x() - handle.width() / 2
                self.setValue(QStyle.sliderValueFromPosition(self.minimum(), self.maximum(),
                                                             round(x), max(1, span)))
        super().mousePressEvent(event)


class QtPlayback(QWidget):
    def __init__(self, playback: PlaybackModel, simulation: SimulationModel,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.playback, self.simulation = playback, simulation
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 2, 8, 4)
        lay.setSpacing(2)
        lay.addWidget(self._build_curve_plot())
        lay.addLayout(self._build_controls_row(playback))
        self._scrubbing = False
        self._connect_models(playback, simulation)
        self._on_speed(playback.speed)
        self._on_run_changed(simulation.run)

    def _build_curve_plot(self) -> pg.PlotWidget:
        """The residency curve: resident warps over time, tail shaded, cursor."""
        self.curve_plot = pg.PlotWidget()
        self.curve_plot.setFixedHeight(78)
        self.curve_plot.setProperty("export_strip", True)
        pi = self.curve_plot.getPlotItem()
        pi.setMenuEnabled(False)
        pi.hideButtons()
        pi.setMouseEnabled(x=False, y=False)
        pi.hideAxis("bottom")
        pi.getAxis("left").setWidth(48)
        self.curve_plot.setToolTip(
            "Resident warps on the whole GPU over time (filled: the schedule shown); the dashed "
            "line is the same launch under the other schedule (ideal or calibrated); the dotted "
            "line is all the warps this launch can keep resident; red = the tail."
        )
        self.curve = pi.plot(
            [0, 1],
            [0],
            stepMode="center",
            pen=pg.mkPen(style.GOOD, width=1.5),
            fillLevel=0,
            brush=pg.mkBrush(108, 201, 135, 50),
        )
        self.other_curve = pi.plot([0, 1], [0], stepMode="center",
                                   pen=pg.mkPen(style.ACCENT2, width=1.2, style=Qt.PenStyle.DashLine))
        # a point per block event (tens of thousands): drawn once, not again under each frame's
        # cursor (that redraw took 10-60 ms a frame while playing)
        for curve in (self.curve, self.other_curve):
            curve.curve.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.legend = pg.TextItem("", color=style.MUTED, anchor=(1, 0))
        self.legend.setZValue(30)
        pi.addItem(self.legend, ignoreBounds=True)
        self.full_line = pg.InfiniteLine(
            angle=0, pen=pg.mkPen(style.MUTED, style=Qt.PenStyle.DotLine)
        )
        pi.addItem(self.full_line)
        self.tail_region = pg.LinearRegionItem(
            brush=pg.mkBrush(181, 74, 74, 60), movable=False, pen=pg.mkPen(None)
        )
        pi.addItem(self.tail_region)
        self.cursor = pg.InfiniteLine(angle=90, pen=pg.mkPen(style.CURSOR, width=1.2))
        pi.addItem(self.cursor)
        return self.curve_plot

    def _build_controls_row(self, playback: PlaybackModel) -> QHBoxLayout:
        """Back, play, forward, speed, the scrubber and the time."""
        row = QHBoxLayout()
        row.setSpacing(6)
        icons = self.style()
        sp = QStyle.StandardPixmap
        self._icon_play = icons.standardIcon(sp.SP_MediaPlay)
        self._icon_pause = icons.standardIcon(sp.SP_MediaPause)
        self.back = QToolButton()
        self.back.setIcon(icons.standardIcon(sp.SP_MediaSeekBackward))
        self.back.setToolTip("Step back to the previous scheduling event (,)")
        self.play = QToolButton()
        self.play.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.play.setIcon(self._icon_play)
        self.play.setText("Play")
        self.play.setToolTip("Play or pause the animation (Space)")
        self.play.setMinimumWidth(72)
        self.fwd = QToolButton()
        self.fwd.setIcon(icons.standardIcon(sp.SP_MediaSeekForward))
        self.fwd.setToolTip("Step to the next scheduling event: a block arrives or retires (.)")
        self.speed = QComboBox()
        for s in SPEEDS:
            self.speed.addItem(f"{s:g}×", s)
        self.speed.setCurrentIndex(SPEEDS.index(1.0))
        self.speed.setToolTip(
            "Playback speed: at 1× the whole launch plays in about "
            f"{playback.base_seconds:g} seconds."
        )
        self.scrub = ScrubSlider(Qt.Orientation.Horizontal)
        self.scrub.setRange(0, SCRUB_STEPS)
        self.scrub.setPageStep(SCRUB_PAGE)
        self.scrub.setSingleStep(SCRUB_STEPS // 200)
        self.scrub.setToolTip("Click or drag to any moment of the simulated launch "
                              "(arrows: 0.5%, Page Up/Down: 5%).")
        self.time_label = QLabel("0 µs")
        self.time_label.setMinimumWidth(110)
        self.scrub.setMinimumWidth(60)
        self.time_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        for w in (self.back, self.play, self.fwd):
            row.addWidget(w)
        row.addWidget(QLabel("speed"))
        row.addWidget(self.speed)
        row.addWidget(self.scrub, 1)
        row.addWidget(self.time_label)
        return row

    def _connect_models(self, playback: PlaybackModel, simulation: SimulationModel) -> None:
        """Controls -> playback, and the models back to the controls."""
        self.play.clicked.connect(playback.toggle)
        self.back.clicked.connect(self._on_back_clicked)
        self.fwd.clicked.connect(self._on_forward_clicked)
        self.speed.currentIndexChanged.connect(self._on_speed_selected)
        self.scrub.valueChanged.connect(self._on_scrub)
        playback.time_changed.connect(self._on_time)
        playback.playing_changed.connect(self._on_playing)
        playback.speed_changed.connect(self._on_speed)
        simulation.changed.connect(self._on_run_changed)

    def _on_run_changed(self, run: SimRun | None, _message: str = "") -> None:
        self.tail_region.setVisible(run is not None)
        self.full_line.setVisible(run is not None)
        self.other_curve.setVisible(run is not None and run.other is not None)
        self.legend.setVisible(run is not None)
        if run is None:  # nothing can be scheduled: an empty curve on plain axes, no tail
            self.curve.setData([0, 1], [0])
            self.curve_plot.getPlotItem().setXRange(0, 1, padding=0)
            self.curve_plot.getPlotItem().setYRange(0, 1, padding=0)
            return
        tl = run.timeline
        times, blocks = tl.residency
        self.curve.setData(np.append(times, tl.makespan_us), blocks * run.occ.warps_per_block)
        end = tl.makespan_us
        if run.other is not None:
            other = run.other.timeline
            o_times, o_blocks = other.residency
            self.other_curve.setData(np.append(o_times, other.makespan_us),
                                     o_blocks * run.occ.warps_per_block)
            end = max(end, other.makespan_us)
        shown = "calibrated" if run.schedule == "calibrated" else "ideal"
        self.legend.setText(f"filled: {shown} · dashed: {run.other_schedule}"
                            if run.other is not None else f"{shown} schedule")
        # headroom above the dotted full line for the legend, so it never sits on the curves
        top = run.full_warps * 1.35
        self.legend.setPos(end, top)
        self.full_line.setPos(run.full_warps)
        self.tail_region.setRegion((tl.tail_start_us, tl.makespan_us))
        pi = self.curve_plot.getPlotItem()
        pi.setXRange(0, end, padding=0)
        pi.setYRange(0, top, padding=0)
        # as wide as the longest time this run shows, so the row does not jitter while playing
        end = f"{tl.makespan_us:,.2f}"
        self.time_label.setMinimumWidth(
            self.time_label.fontMetrics().horizontalAdvance(f"{end} / {end} µs") + 8)
        self._on_time(self.playback.time_us)

    def _on_back_clicked(self) -> None:
        self.playback.step(-1)

    def _on_forward_clicked(self) -> None:
        self.playback.step(+1)

    def _on_time(self, t: float) -> None:
        end = self.playback.end_us
        self.cursor.setPos(t)
        self.time_label.setText(f"{t:,.2f} / {end:,.2f} µs")
        if end > 0 and not self._scrubbing:
            self.scrub.blockSignals(True)
            self.scrub.setValue(round(t / end * SCRUB_STEPS))
            self.scrub.blockSignals(False)

    def _on_playing(self, playing: bool) -> None:
        self.play.setText("Pause" if playing else "Play")
        self.play.setIcon(self._icon_pause if playing else self._icon_play)

    def _on_speed(self, speed: float) -> None:
        idx = self.speed.findData(speed)
        if idx >= 0:
            self.speed.blockSignals(True)
            self.speed.setCurrentIndex(idx)
            self.speed.blockSignals(False)

    def _on_speed_selected(self, index: int) -> None:
        self.playback.set_speed(self.speed.itemData(index))

    def _on_scrub(self, v: int) -> None:
        self._scrubbing = True
        try:
            self.playback.set_time(v / SCRUB_STEPS * self.playback.end_us)
        finally:
            self._scrubbing = False

    def export_items(self):
        from gui.export import ExportItem

        run = self.simulation.run
        if run is None:
            return []
        rows = []
        for schedule, sim in ((run.schedule, run.simulation), (run.other_schedule, run.other)):
            if sim is None:
                continue
            times, blocks = sim.timeline.residency
            rows += [[schedule, round(float(t), 4), int(b) * run.occ.warps_per_block]
                     for t, b in zip(times, blocks)]
        return [
            ExportItem(
                "residency", self.curve_plot.getPlotItem(),
                ["schedule", "time_us", "resident_warps"], rows,
                title="resident warps over time (red: the tail; dashed: the other schedule)",
                axes=("time since launch (µs)", "resident warps"),
            )
        ]


if __name__ == "__main__":  # this view alone, for a default launch: python -m gui.widgets.qt_playback [GPU N THREADS]
    from gui.panels import open_alone

    raise SystemExit(open_alone("playback"))
