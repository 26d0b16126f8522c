"""QtTimeline: a per-SM Gantt chart of the simulated launch.

One image row per block slot (SM x slot), time across; each block is a bar in its colour. Wave
starts are dashed lines, the tail is shaded, and a cursor follows (and sets) the animation time.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

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


class QtTimeline(QWidget):
    time_picked = Signal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(2)
        self.caption = QLabel("")
        self.caption.setProperty("role", "muted")
        self.caption.setWordWrap(True)
        lay.addWidget(self.caption)
        self.plot = pg.PlotWidget()
        pi = self.plot.getPlotItem()
        pi.setLabel("bottom", "time in the simulated part (µs)")
        pi.setLabel("left", "SM")
        pi.setMenuEnabled(False)
        pi.hideButtons()
        pi.invertY(True)
        self.image = pg.ImageItem(axisOrder="row-major")
        pi.addItem(self.image)
        self.tail = pg.LinearRegionItem(brush=pg.mkBrush(181, 74, 74, 50), movable=False,
                                        pen=pg.mkPen(None))
        self.tail.setZValue(5)
        pi.addItem(self.tail)
        self.cursor = pg.InfiniteLine(angle=90, movable=True,
                                      pen=pg.mkPen("#ffffff", width=1.5),
                                      hoverPen=pg.mkPen(style.ACCENT, width=2))
        self.cursor.setZValue(20)
        pi.addItem(self.cursor)
        self.cursor.sigDragged.connect(self._on_cursor_dragged)
        self._wave_lines: list[pg.InfiniteLine] = []
        lay.addWidget(self.plot, 1)
        self._record: SimRecord | None = None

    def _on_record(self, record: SimRecord | None) -> None:
        self._record = record
        pi = self.plot.getPlotItem()
        for ln in self._wave_lines:
            pi.removeItem(ln)
        self._wave_lines = []
        if record is None:
            self.image.clear()
            self.caption.setText("")
            return
        rgb = raster_rgb(record.raster, np.asarray(record.sim.block_wave))
        self.image.setImage(rgb, autoLevels=False, levels=(0, 255))
        rows = record.raster.shape[0]
        slots = record.slots_per_sm
        self.image.setRect(0.0, 0.0, record.makespan_us, float(record.spec.sm_count))
        # y axis in SMs: the image spans sm_count units, each SM has `slots` rows inside it
        sm = record.spec.sm_count
        step = 1 if sm <= 16 else 5 if sm <= 60 else 10 if sm <= 120 else 20
        ax = pi.getAxis("left")
        ax.setTicks([[(i + 0.5, str(i)) for i in range(0, sm, step)]])
        pi.setXRange(0, record.makespan_us, padding=0.01)
        pi.setLabel("bottom", "time in the simulated part (µs)" if record.skipped_waves
                    else "time since launch (µs)")
        pi.setYRange(0, sm, padding=0.01)
        self.tail.setRegion((record.tail_start_us, record.makespan_us))
        starts = record.wave_starts_us
        show = starts if len(starts) <= 40 else starts[:: max(1, len(starts) // 40)]
        for i, t in enumerate(show[1:], start=1):
            ln = pg.InfiniteLine(pos=t, angle=90, movable=False,
                                 pen=pg.mkPen("#c8ccd6", width=1, style=Qt.PenStyle.DashLine))
            ln.setZValue(10)
            pi.addItem(ln)
            self._wave_lines.append(ln)
        skipped = (f" · {record.skipped_waves:,} identical full waves before this part are not "
                   f"drawn" if record.skipped_waves else "")
        self.caption.setText(
            f"{record.n_sim:,} blocks on {sm} SMs × {slots} block slots · {record.waves:,.2f} waves"
            f" · makespan {record.makespan_us:,.1f} µs · tail {record.tail_fraction:.0%} of the time"
            f" (shaded red) · colour = wave, dashed lines = wave starts · cost {record.cost}, placement "
            f"{record.placement}{skipped}")

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
        if rec is None:
            return []
        s = rec.sim
        rows = [[b + rec.first_block, int(sm), int(sl), round(float(st), 4), round(float(en), 4)]
                for b, (sm, sl, st, en) in enumerate(zip(s.block_sm, s.block_slot,
                                                          s.block_start_us, s.block_end_us))]
        return [ExportItem("timeline", self.plot.getPlotItem(),
                           ["block", "sm", "slot", "start_us", "end_us"], rows)]
