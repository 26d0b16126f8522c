"""QtTimeline: a per-SM Gantt chart of the simulated launch.

One image row per block slot (SM x slot), time across; each block is a bar in its colour. Wave
starts are dashed lines, the tail is shaded, and a cursor follows (and sets) the animation time.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QLabel, QPushButton, QToolTip,
                               QVBoxLayout, QWidget)

from gui import style
from gui.simrun import SimRecord


def raster_rgb(raster: np.ndarray, block_wave: np.ndarray | None = None) -> np.ndarray:
    """(rows, bins) block ids -> (rows, bins, 3) uint8 colours, empty = background.

    Colour = the block's wave (so waves read as columns), slightly darker on alternate slot rows
    and on the first bin of every block (so individual blocks stay visible)."""
    base = style.palette_rgb(0.0)[:10].astype(np.int16)
    bg = np.array(style.rgb_of("#20242b"), dtype=np.uint8)
    busy = raster >= 0
    ids = np.where(busy, raster, 0)
    wave = block_wave[ids] if block_wave is not None else ids
    rgb = base[wave % 10]
    rows = np.arange(raster.shape[0])[:, None]
    shade = np.where(rows % 2 == 1, 0.80, 1.0)
    edge = np.zeros_like(busy)
    edge[:, 1:] = busy[:, 1:] & (raster[:, 1:] != raster[:, :-1])
    shade = np.where(edge, 0.45, shade)
    out = (rgb * shade[..., None]).astype(np.uint8)
    out[~busy] = bg
    return out


def describe_block_at(record: SimRecord, t_us: float, y: float) -> str:
    """The block under a point of the Gantt chart (time, SM + slot fraction), or ""."""
    sm = int(np.floor(y))
    if record is None or not 0 <= sm < record.spec.sm_count or not 0 <= t_us < record.makespan_us:
        return ""
    slot = min(int((y - sm) * record.slots_per_sm), record.slots_per_sm - 1)
    b = int(record.sim.resident_at(t_us)[sm, slot])
    if b < 0:
        return f"SM {sm}, block slot {slot}: free at {t_us:,.2f} µs"
    start, end = float(record.sim.block_start_us[b]), float(record.sim.block_end_us[b])
    wave = int(record.sim.block_wave[b]) + record.skipped_waves
    return (f"block {b + record.first_block:,} on SM {sm}, block slot {slot}\n"
            f"wave {wave + 1:,} · runs {start:,.2f}–{end:,.2f} µs ({end - start:,.2f} µs)")


def _gantt_plot(ylabel: str = "SM") -> pg.PlotWidget:
    w = pg.PlotWidget()
    pi = w.getPlotItem()
    pi.setLabel("left", ylabel)
    pi.setMenuEnabled(False)
    pi.hideButtons()
    pi.invertY(True)
    return w


class QtTimeline(QWidget):
    time_picked = Signal(float)
    trace_requested = Signal(str)  # a recorded trace file to lay beside its simulation

    def __init__(self, simulation=None, playback=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(2)
        top = QHBoxLayout()
        self.caption = QLabel("")
        self.caption.setProperty("role", "muted")
        self.caption.setWordWrap(True)
        top.addWidget(self.caption, 1)
        self.open_trace_button = QPushButton("Compare a recorded trace…")
        self.open_trace_button.setToolTip(
            "Open a block trace recorded on a real GPU (`python main.py trace`) and lay it beside "
            "the simulation of the same grid."
        )
        self.close_trace_button = QPushButton("Back to the launch")
        self.close_trace_button.setToolTip("Leave the trace comparison; show the current launch.")
        self.close_trace_button.hide()
        top.addWidget(self.open_trace_button)
        top.addWidget(self.close_trace_button)
        lay.addLayout(top)
        self.trace_plot = _gantt_plot()
        self.trace_image = pg.ImageItem(axisOrder="row-major")
        self.trace_plot.getPlotItem().addItem(self.trace_image)
        self.trace_plot.hide()
        lay.addWidget(self.trace_plot, 1)
        self.trace_view = None
        self.open_trace_button.clicked.connect(self._on_open_trace_clicked)
        self.close_trace_button.clicked.connect(self.close_trace)
        self.plot = pg.PlotWidget()
        pi = self.plot.getPlotItem()
        pi.setLabel("bottom", "time in the simulated part (µs)")
        pi.setLabel("left", "SM")
        pi.setMenuEnabled(False)
        pi.hideButtons()
        pi.invertY(True)
        self.image = pg.ImageItem(axisOrder="row-major")
        pi.addItem(self.image)
        self.tail = pg.LinearRegionItem(
            brush=pg.mkBrush(181, 74, 74, 50), movable=False, pen=pg.mkPen(None)
        )
        self.tail.setZValue(5)
        pi.addItem(self.tail)
        self.cursor = pg.InfiniteLine(
            angle=90,
            movable=True,
            pen=pg.mkPen("#ffffff", width=1.5),
            hoverPen=pg.mkPen(style.ACCENT, width=2),
        )
        self.cursor.setZValue(20)
        pi.addItem(self.cursor)
        self.cursor.sigDragged.connect(self._on_cursor_dragged)
        self._wave_lines: list[pg.InfiniteLine] = []
        lay.addWidget(self.plot, 1)
        self._record: SimRecord | None = None
        self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)
        if simulation is not None:
            simulation.record_changed.connect(lambda rec, _msg: self._on_record(rec))
        if playback is not None:
            playback.time_changed.connect(self._on_time)

    def _on_record(self, record: SimRecord | None) -> None:
        self._record = record
        if self.trace_view is not None:
            return  # the comparison stays until the user leaves it
        pi = self.plot.getPlotItem()
        for ln in self._wave_lines:
            pi.removeItem(ln)
        self._wave_lines = []
        self.tail.setVisible(record is not None)
        if record is None:  # nothing can be scheduled: an empty chart with plain axes
            self.image.clear()
            self.caption.setText("No schedule: this launch cannot run (see Occupancy).")
            pi.getAxis("left").setTicks(None)
            pi.setXRange(0, 1, padding=0)
            pi.setYRange(0, 1, padding=0)
            return
        rgb = raster_rgb(record.raster, np.asarray(record.sim.block_wave))
        self.image.setImage(rgb, autoLevels=False, levels=(0, 255))
        slots = record.slots_per_sm
        self.image.setRect(0.0, 0.0, record.makespan_us, float(record.spec.sm_count))
        # y axis in SMs: the image spans sm_count units, each SM has `slots` rows inside it
        sm = record.spec.sm_count
        step = 1 if sm <= 16 else 5 if sm <= 60 else 10 if sm <= 120 else 20
        ax = pi.getAxis("left")
        ax.setTicks([[(i + 0.5, str(i)) for i in range(0, sm, step)]])
        pi.setXRange(0, record.makespan_us, padding=0.01)
        pi.setLabel(
            "bottom",
            "time in the simulated part (µs)" if record.skipped_waves else "time since launch (µs)",
        )
        pi.setYRange(0, sm, padding=0.01)
        self.tail.setRegion((record.tail_start_us, record.makespan_us))
        starts = record.wave_starts_us
        show = starts if len(starts) <= 40 else starts[:: max(1, len(starts) // 40)]
        for i, t in enumerate(show[1:], start=1):
            ln = pg.InfiniteLine(
                pos=t,
                angle=90,
                movable=False,
                pen=pg.mkPen("#c8ccd6", width=1, style=Qt.PenStyle.DashLine),
            )
            ln.setZValue(10)
            pi.addItem(ln)
            self._wave_lines.append(ln)
        skipped = (
            f" · {record.skipped_waves:,} identical full waves before this part are not drawn"
            if record.skipped_waves
            else ""
        )
        self.caption.setText(
            f"{record.n_sim:,} blocks on {sm} SMs × {slots} block slots · {record.waves:,.2f} waves"
            f" · makespan {record.makespan_us:,.1f} µs · tail {record.tail_fraction:.0%} of the"
            f" time (shaded red) · colour = wave, dashed lines = wave starts · cost {record.cost},"
            f" placement {record.placement}{skipped}"
        )

    def _on_mouse_moved(self, scene_pos) -> None:
        """Hovering a bar names its block: grid id, SM, slot, wave, start and end."""
        vb = self.plot.getPlotItem().vb
        text = ""
        if self.trace_view is None and vb.sceneBoundingRect().contains(scene_pos):
            p = vb.mapSceneToView(scene_pos)
            text = describe_block_at(self._record, p.x(), p.y())
        if text:
            QToolTip.showText(QCursor.pos(), text, self.plot)
        else:
            QToolTip.hideText()

    # -- recorded trace beside its simulation -----------------------------------------------------
    def _on_open_trace_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open a recorded block trace", "", "WarpScope traces (*.json);;All files (*)"
        )
        if path:
            self.trace_requested.emit(path)

    @staticmethod
    def _set_gantt(
        plot: pg.PlotWidget,
        image: pg.ImageItem,
        raster,
        wave,
        sm_count: int,
        makespan: float,
        title: str,
    ) -> None:
        image.setImage(raster_rgb(raster, wave), autoLevels=False, levels=(0, 255))
        image.setRect(0.0, 0.0, makespan, float(sm_count))
        pi = plot.getPlotItem()
        step = 1 if sm_count <= 16 else 5 if sm_count <= 60 else 10 if sm_count <= 120 else 20
        pi.getAxis("left").setTicks([[(i + 0.5, str(i)) for i in range(0, sm_count, step)]])
        pi.setXRange(0, makespan, padding=0.01)
        pi.setYRange(0, sm_count, padding=0.01)
        pi.setTitle(f"<span style='color:{style.FG};font-size:9pt'>{title}</span>")
        pi.setLabel("bottom", "time since the first block started (µs)")

    def show_trace(self, view) -> None:
        """Recorded (top) and simulated with the same grid, block time and SM order (bottom)."""
        self.trace_view = view
        for ln in self._wave_lines:
            self.plot.getPlotItem().removeItem(ln)
        self._wave_lines = []
        self.tail.hide()
        self.cursor.hide()
        self._set_gantt(
            self.trace_plot,
            self.trace_image,
            view.raster,
            view.wave,
            view.sm_count,
            view.makespan_us,
            f"recorded on {view.gpu_name} (%smid, %globaltimer)",
        )
        self.trace_plot.getPlotItem().hideAxis("bottom")
        self._set_gantt(
            self.plot,
            self.image,
            view.sim_raster,
            view.sim_wave,
            view.sm_count,
            view.makespan_us,
            f"simulated on the {view.spec.name} preset: same grid, "
            f"median block time, recorded SM order, {view.blocks_per_sm} blocks/SM",
        )
        self.trace_plot.setXLink(self.plot)
        self.trace_plot.show()
        self.open_trace_button.hide()
        self.close_trace_button.show()
        self.caption.setText(" · ".join(view.lines))

    def close_trace(self) -> None:
        self.trace_view = None
        self.trace_plot.hide()
        self.trace_plot.setXLink(None)
        self.plot.getPlotItem().setLabel("bottom", "time since launch (µs)")
        self.plot.getPlotItem().setTitle(None)
        self.tail.show()
        self.cursor.show()
        self.close_trace_button.hide()
        self.open_trace_button.show()
        self._on_record(self._record)

    def _on_time(self, t_us: float) -> None:
        if not self.cursor.moving:
            self.cursor.blockSignals(True)
            self.cursor.setPos(t_us)
            self.cursor.blockSignals(False)

    def _on_cursor_dragged(self, line) -> None:
        self.time_picked.emit(float(line.value()))

    def export_items(self):
        from gui.export import ExportItem

        rec = self._record
        items = []
        tv = self.trace_view
        if tv is not None:
            rows = [[line] for line in tv.lines]
            items.append(
                ExportItem(
                    "trace_recorded_vs_simulated",
                    self.trace_plot.getPlotItem(),
                    ["comparison"],
                    rows,
                )
            )
        if rec is None:
            return items
        s = rec.sim
        rows = [
            [b + rec.first_block, int(sm), int(sl), round(float(st), 4), round(float(en), 4)]
            for b, (sm, sl, st, en) in enumerate(
                zip(s.block_sm, s.block_slot, s.block_start_us, s.block_end_us)
            )
        ]
        return items + [
            ExportItem(
                "timeline",
                self.plot.getPlotItem(),
                ["block", "sm", "slot", "start_us", "end_us"],
                rows,
            )
        ]
