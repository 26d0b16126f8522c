"""QtLatency: latency hiding. One SM's four warp schedulers over a few microseconds (QtWarpLanes),
and Little's law as two plots: GB/s against blocks per SM, and against the bytes each SM keeps in
flight, with the measured sweep beside the model where it was measured on this GPU.

Everything drawn comes from gui.models.insight.InsightModel (sim.model.latency, sim.schedule.warps).
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import (QBoxLayout, QComboBox, QGridLayout, QHBoxLayout, QLabel,
                               QPushButton, QSizePolicy, QSpinBox, QVBoxLayout, QWidget)

from gui import style
from gui.file_jobs import FileJobs, PanelFile
from gui.redraw import StagedRedraw
from gui.models.insight import WINDOWS_NS, InsightModel
from sim.traces.latency_data import load_latency_run
from sim.inputs.units import fmt_us
from sim.schedule.warps import EMPTY, ISSUING, MEMORY, READY, STARTING, STATES

STATE_COLOURS = {EMPTY: "EMPTY_SLOT", STARTING: "MUTED", ISSUING: "GOOD", MEMORY: "ACCENT2",
                 READY: "ACCENT"}
STATE_NAMES = {EMPTY: "empty slot", STARTING: "block start/retire", ISSUING: "issuing",
               MEMORY: "waiting on memory", READY: "ready, not picked"}
SIDE_BY_SIDE_WIDTH = 760  # narrower: the plots go under the warp view
MEASURED_HUES = {"naive": style.CURVE_HUES[1], "fast": style.CURVE_HUES[5]}


def _swatch(colour: str, mark: str) -> str:
    return f"<span style='color:{colour}'>{mark}</span>"


def state_colour(state: int) -> QColor:
    return QColor(getattr(style, STATE_COLOURS[state]))


class QtWarpLanes(QWidget):
    """Rows of warp slots grouped by scheduler, time to the right, each segment its state; a
    strip per scheduler shows when it issues; the bottom strip the bytes of loads in flight."""

    LEFT, GROUP_GAP, STRIP, BYTES_H, AXIS_H = 64, 6, 4, 34, 18

    def __init__(self, insight: InsightModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.insight = insight
        self.setMinimumSize(260, 236)
        # Ignored: the scrolling dock sizes by the minimum, never by a tall preferred height
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
        self.setToolTip("One SM's warp slots, grouped by the scheduler that issues for them "
                        "(warp i on scheduler i mod 4), over the window: each row a slot, each "
                        "colour what its warp does. The thin strip above a group is the "
                        "scheduler issuing. Bottom: bytes of loads in flight on this SM.")
        insight.changed.connect(self._on_changed)
        insight.sm_changed.connect(self._on_changed)

    def sizeHint(self) -> QSize:
        return QSize(560, 300)

    def _on_changed(self) -> None:
        self.update()

    def restyle(self) -> None:
        self.update()

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(style.PLOT_BG))
        f = QFont(self.font())
        f.setPointSizeF(8.0)
        p.setFont(f)
        act = self.insight.activity()
        if act is None:
            p.setPen(QColor(style.MUTED))
            why = ("No blocks on this SM: the grid is smaller than one wave."
                   if self.insight.prediction is not None else
                   "No latency prediction for this launch (it cannot run, or the GPU has no "
                   "DRAM latency figure).")
            p.drawText(self.rect().adjusted(12, 0, -12, 0),
                       Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, why)
            p.end()
            return
        top = self._paint_legend(p)
        w = self.width() - self.LEFT - 10
        h = self.height() - top - self.BYTES_H - self.AXIS_H - 8
        per = act.slots // act.schedulers
        row_h = max(1.0, (h - act.schedulers * (self.GROUP_GAP + self.STRIP)) / max(1, act.slots))
        scale = w / act.window_ns
        y = float(top)
        for s in range(act.schedulers):
            p.setPen(QColor(style.MUTED))
            group_h = self.STRIP + per * row_h
            p.drawText(QRect(2, int(y), self.LEFT - 6, int(group_h)),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                       f"sched {s}\n{act.issue_busy[s]:.0%} busy")
            p.fillRect(QRect(self.LEFT, int(y), w, self.STRIP), QColor(style.GRID))
            slots = np.arange(s, act.slots, act.schedulers)
            issuing = np.isin(act.slot, slots) & (act.state == ISSUING)
            for b, e in zip(act.begin_ns[issuing], act.end_ns[issuing]):
                p.fillRect(QRect(self.LEFT + int(b * scale), int(y),
                                 max(1, int((e - b) * scale)), self.STRIP), QColor(style.GOOD))
            y += self.STRIP + 1
            for k, slot in enumerate(slots):
                top = int(y + k * row_h)
                height = max(1, int(y + (k + 1) * row_h) - top - (1 if row_h >= 4 else 0))
                if slot >= act.used_slots:
                    p.fillRect(QRect(self.LEFT, top, w, height), QColor(style.NO_SLOT))
                    continue
                mine = act.slot == slot
                for b, e, st in zip(act.begin_ns[mine], act.end_ns[mine], act.state[mine]):
                    p.fillRect(QRect(self.LEFT + int(b * scale), top, max(1, round((e - b) * scale)),
                                     height), state_colour(int(st)))
            y += per * row_h + self.GROUP_GAP
        self._paint_bytes(p, act, int(y), w, scale)
        self._paint_axis(p, act, int(y) + self.BYTES_H + 2, w, scale)
        p.end()

    def _legend_rows(self, fm) -> list[list[tuple[QColor, str]]]:
        """The colour key, wrapped into as many rows as the width needs."""
        entries = [(state_colour(s), STATE_NAMES[s]) for s in (ISSUING, MEMORY, READY, STARTING,
                                                               EMPTY)]
        entries.append((QColor(style.NO_SLOT), "unusable"))
        rows, x = [[]], self.LEFT
        for colour, name in entries:
            w = 22 + fm.horizontalAdvance(name)
            if rows[-1] and x + w > self.width() - 4:
                rows.append([])
                x = self.LEFT
            rows[-1].append((colour, name))
            x += w
        return rows

    def _paint_legend(self, p: QPainter) -> int:
        """Draws the colour key; returns its height."""
        fm = p.fontMetrics()
        rows = self._legend_rows(fm)
        for r, row in enumerate(rows):
            x, y = self.LEFT, 4 + 15 * r
            for colour, name in row:
                p.fillRect(QRect(x, y + 2, 10, 10), colour)
                p.setPen(QColor(style.FG))
                p.drawText(x + 14, y + 11, name)
                x += 22 + fm.horizontalAdvance(name)
        return 15 * len(rows) + 6

    def _paint_bytes(self, p: QPainter, act, top: int, w: int, scale: float) -> None:
        times, kib = act.memory_bytes[0], act.memory_bytes[1] / 1024
        pred = act.prediction
        need = pred.bytes_needed_at_loaded_latency_per_sm / 1024
        peak = max(float(kib.max(initial=0.0)), need, 1e-9)
        h = self.BYTES_H - 12
        p.setPen(QColor(style.MUTED))
        p.drawText(QRect(2, top, self.LEFT - 6, self.BYTES_H), Qt.AlignmentFlag.AlignRight
                   | Qt.AlignmentFlag.AlignVCenter, "KiB in\nflight")
        p.fillRect(QRect(self.LEFT, top, w, h), QColor(style.GRID))
        pen = p.pen()
        p.setPen(QColor(style.ACCENT2))
        xs = self.LEFT + np.r_[0.0, times] * scale
        ys = top + h - np.r_[0.0, kib] / peak * h
        for i in range(len(times)):
            x0, x1 = xs[i], xs[i + 1] if i + 1 < len(xs) else self.LEFT + w
            p.drawLine(int(x0), int(ys[i]), int(x1), int(ys[i]))
            if i + 1 < len(ys):
                p.drawLine(int(x1), int(ys[i]), int(x1), int(ys[i + 1]))
        p.setPen(QColor(style.BAD))
        ny = int(top + h - need / peak * h)
        p.drawLine(self.LEFT, ny, self.LEFT + w, ny)
        p.setPen(pen)
        p.setPen(QColor(style.MUTED))
        text = (f"loads in flight, peak {kib.max(initial=0):.1f} KiB · red: {need:.1f} KiB "
                "would reach the ceiling")
        p.drawText(QRect(self.LEFT, top + h, w, 12), Qt.AlignmentFlag.AlignLeft,
                   p.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, w))

    def _paint_axis(self, p: QPainter, act, top: int, w: int, scale: float) -> None:
        p.setPen(QColor(style.MUTED))
        step = next(s for s in (100, 200, 500, 1000, 2000, 5000) if s * scale >= 60)
        t = 0.0
        while t <= act.window_ns + 1e-6:
            x = self.LEFT + int(t * scale)
            p.drawLine(x, top, x, top + 3)
            label = f"{t / 1000:g} µs" if step >= 1000 or t == 0 else f"{t:g} ns"
            p.drawText(QRect(x - 40, top + 3, 80, 14), Qt.AlignmentFlag.AlignHCenter, label)
            t += step


class WrappedLabel(QLabel):
    """A word-wrapped label that asks for the height its lines need: a grid gives a wrapped
    label one line, and at 1366 x 768 the latency legend's three lines covered the plots."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setWordWrap(True)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def setText(self, text: str) -> None:
        super().setText(text)
        self._fit()

    def _fit(self) -> None:
        need = self.heightForWidth(max(1, self.width()))
        if need > 0 and need != self.minimumHeight():
            self.setMinimumHeight(need)


class QtLatency(QWidget):
    def __init__(self, insight: InsightModel, parent: QWidget | None = None,
                 files: FileJobs | None = None) -> None:
        super().__init__(parent)
        self.insight, self.files = insight, files
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(3)
        lay.addLayout(self._make_top_row())
        lay.addWidget(self.summary)
        self.lanes = QtWarpLanes(insight)
        self._make_plots()
        self.body = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        self.body.setSpacing(6)
        self.body.addWidget(self.lanes, 5)
        self.body.addWidget(self.plots, 6)
        lay.addLayout(self.body, 1)

        self.sm.valueChanged.connect(insight.set_sm)
        self.window.currentIndexChanged.connect(self._on_window_selected)
        self.opener = PanelFile(self, "Open latency results", "Latency runs (*.json);;All files (*)",
                                load_latency_run, insight.set_measured, self.show_error, files,
                                lambda path: self.summary.setText(f"Opening {html.escape(path)}…"))
        self.open_button.clicked.connect(self.opener.dialog)
        insight.changed.connect(self._on_changed)
        insight.sm_changed.connect(self._on_sm_changed)
        # the plots are drawn when seen (a dock behind a tab waits), one per event-loop turn
        self.redraws = StagedRedraw(self, self._redraw_steps)
        self._on_changed()

    def _make_top_row(self) -> QHBoxLayout:
        """The SM watched, the time the warp view spans, and Open (the summary comes under it)."""
        row = QHBoxLayout()
        self.sm = QSpinBox()
        self.sm.setPrefix("SM ")
        self.sm.setToolTip("The SM to watch. In a long launch every SM runs the same; a grid "
                           "smaller than one wave leaves the SMs past its blocks empty.")
        self.window = QComboBox()
        for ns in WINDOWS_NS:
            self.window.addItem(f"{ns / 1000:g} µs", ns)
        self.window.setToolTip("How much time the warp view spans.")
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.summary.setProperty("role", "muted")
        self.open_button = QPushButton("Open latency results…")
        self.open_button.setToolTip("A latency run's JSON (benchmarks/latency_run.py) to plot "
                                    "beside the model; the H200's run is shown by default.")
        row.addWidget(self.sm)
        row.addWidget(self.window)
        row.addStretch(1)
        row.addWidget(self.open_button)
        return row

    def _make_plots(self) -> None:
        """GB/s against resident blocks and against loads in flight, under one legend."""
        self.blocks_plot = style.make_plot("GB/s vs blocks per SM", "resident blocks per SM", "GB/s")
        self.bytes_plot = style.make_plot("Little's law", "KiB of loads in flight per SM", "GB/s")
        self.plots = QWidget()  # both plots and their one legend: exported as one figure
        self.plots.setProperty("export_wide", True)
        pl = QGridLayout(self.plots)
        pl.setContentsMargins(0, 0, 0, 0)
        pl.setSpacing(2)
        for i, plot in enumerate((self.blocks_plot, self.bytes_plot)):
            plot.setMinimumSize(150, 170)
            plot.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
            pl.addWidget(plot, 0, i)
        self.legend = WrappedLabel("")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setContentsMargins(6, 0, 6, 2)  # its first swatch clear of the edge
        pl.addWidget(self.legend, 1, 0, 1, 2)
        pl.setRowStretch(0, 1)

    # -- model -> view ---------------------------------------------------------------------------
    def _on_changed(self) -> None:
        self.redraws.request()  # the summary too: the insight is worked out when first read

    def _show_sm(self) -> None:
        ins = self.insight
        self.sm.blockSignals(True)
        self.sm.setRange(0, ins.gpu.sm_count - 1)
        self.sm.setValue(ins.sm)
        self.sm.blockSignals(False)
        self._on_sm_changed()

    def _on_sm_changed(self) -> None:
        ins, p = self.insight, self.insight.prediction
        if p is None:
            self.summary.setText("No latency prediction: " + (ins.state.message()
                                 or f"no DRAM latency figure for {ins.gpu.name}"))
            return
        blocks = ins.blocks_on_sm()
        ceiling, where = ins.ceiling
        self.summary.setText(
            f"SM {ins.sm}: {blocks} resident block{'s' if blocks != 1 else ''} × "
            f"{ins.state.occ.warps_per_block} warps · a load's round trip {p.loaded_latency_ns:,.0f} ns "
            f"under this load ({p.latency_ns:,.0f} unloaded) · a full GPU streams "
            f"{p.steady_gbps:,.0f} GB/s, {p.bound}-bound, of {ceiling:,.0f} ({where}) · "
            f"{_whole(ins.launch_prediction)} · traffic: {ins.basis}")

    def _on_window_selected(self, index: int) -> None:
        self.insight.set_window(self.window.itemData(index))

    def open_results(self, path: str) -> bool:
        """Read `path` on this thread (tests, scripts); the dialog reads in the background."""
        return self.opener.now(path)

    def open_in_background(self, path: str) -> int | None:
        return self.opener.background(path)

    def show_error(self, line: str) -> None:
        self.summary.setText(f"<span style='color:{style.BAD}'>{html.escape(line)}</span>")

    def restyle(self) -> None:
        self.redraw()

    def resizeEvent(self, event) -> None:
        """Narrow: the plots under the warp view (the dock scrolls), else beside it."""
        wide = event.size().width() >= SIDE_BY_SIDE_WIDTH
        self.body.setDirection(QBoxLayout.Direction.LeftToRight if wide
                               else QBoxLayout.Direction.TopToBottom)
        super().resizeEvent(event)

    def redraw(self) -> None:
        """Draw both plots now."""
        self.redraws.request()
        self.redraws.flush()

    def _redraw_steps(self):
        self._show_sm()
        yield
        ins = self.insight
        curves = ins.curves()
        p = ins.prediction
        gpu = ins.gpu.name
        legend: dict[str, str] = {}
        for plot, xkey, title in ((self.blocks_plot, "blocks_per_sm", "GB/s vs blocks per SM"),
                                  (self.bytes_plot, "kib_in_flight", "Little's law")):
            pi = plot.getPlotItem()
            pi.disableAutoRange()  # one fit after the curves are in, not one per curve
            pi.clear()
            title = f"<span style='color:{style.FG};font-size:9pt'>{title} · {gpu}</span>"
            if pi.titleLabel.text != title:  # a new title re-lays the plot out
                pi.setTitle(title)
            if p is None:
                continue
            for c in curves:
                legend[c.label] = self._draw_curve(pi, c, getattr(c, xkey))
                yield
            pen = pg.mkPen(style.FG, width=1, style=Qt.PenStyle.DotLine)
            pi.addItem(pg.InfiniteLine(pos=p.ceiling_gbps, angle=0, pen=pen))
            legend[f"ceiling {p.ceiling_gbps:,.0f} GB/s"] = _swatch(style.FG, "┈")
            here = p.blocks_per_sm if xkey == "blocks_per_sm" else p.bytes_in_flight_per_sm / 1024
            pi.addItem(pg.InfiniteLine(pos=here, angle=90, pen=pg.mkPen(style.ACCENT, width=1.5)))
            legend[f"this launch ({p.blocks_per_sm} blocks/SM, "
                   f"{p.bytes_in_flight_per_sm / 1024:.1f} KiB)"] = _swatch(style.ACCENT, "│")
            if xkey == "kib_in_flight":
                need = p.bytes_in_flight_needed_per_sm / 1024
                pi.addItem(pg.InfiniteLine(pos=need, angle=90,
                                           pen=pg.mkPen(style.BAD, style=Qt.PenStyle.DotLine)))
                legend[f"Little's law at the ceiling, unloaded: {need:.1f} KiB"] = \
                    _swatch(style.BAD, "┊")
            pi.enableAutoRange()
            pi.setYRange(0, p.ceiling_gbps * 1.08, padding=0)
            yield
        self.legend.setText(" &nbsp; ".join(f"{mark}&nbsp;{html.escape(label)}"
                                            for label, mark in legend.items()))

    @staticmethod
    def _draw_curve(pi, c, x) -> str:
        """Draw one curve; returns its legend swatch (rich text)."""
        if c.kind == "loaded":
            pi.plot(x, c.gbps, pen=pg.mkPen(style.ACCENT2, width=2.2))
            return _swatch(style.ACCENT2, "━")
        if c.kind == "little":
            pi.plot(x, c.gbps, pen=pg.mkPen(style.MUTED, width=1.5, style=Qt.PenStyle.DashLine))
            return _swatch(style.MUTED, "╌")
        colour = MEASURED_HUES["naive" if c.label.startswith("naive") else "fast"]
        if c.kind == "measured":
            fill = QColor(colour)
            fill.setAlpha(70)
            pi.addItem(pg.FillBetweenItem(pg.PlotDataItem(x, c.gbps_p20, pen=pg.mkPen(None)),
                                          pg.PlotDataItem(x, c.gbps_p80, pen=pg.mkPen(None)),
                                          brush=pg.mkBrush(fill)))
            pi.plot(x, c.gbps, pen=None, symbol="o", symbolSize=7, symbolBrush=pg.mkBrush(colour),
                    symbolPen=pg.mkPen(style.MARKER_EDGE))
            return _swatch(colour, "●")
        pi.plot(x, c.gbps, pen=pg.mkPen(colour, width=1.5, style=Qt.PenStyle.DashLine))
        return _swatch(colour, "╌")

    def export_items(self):
        from gui.export import ExportItem

        self.redraws.flush()
        curves = self.insight.curves()
        if not curves:
            return []
        rows = [[c.label, c.kind, int(b), round(float(k), 3), round(float(g), 1)]
                for c in curves for b, k, g in zip(c.blocks_per_sm, c.kib_in_flight, c.gbps)]
        header = ["curve", "kind", "blocks_per_sm", "kib_in_flight_per_sm", "gbps"]
        act = self.insight.activity()
        lane_rows = [] if act is None else [
            [int(s), STATES[int(st)], round(float(b), 2), round(float(e), 2)]
            for s, st, b, e in zip(act.slot, act.state, act.begin_ns, act.end_ns)]
        return [ExportItem("latency_plots", self.plots, header, rows),
                ExportItem("latency_warp_schedulers", self.lanes,
                           ["warp_slot", "state", "begin_ns", "end_ns"], lane_rows)]


def _whole(p) -> str:
    """The launch model's whole-launch time, as every surface shows it."""
    if p is None:
        return ""
    return f"whole launch {fmt_us(p.whole_launch_us)} at {p.bandwidth_gbps:,.0f} GB/s"


if __name__ == "__main__":  # this view alone, for a default launch: python -m gui.widgets.qt_latency [GPU N THREADS]
    from gui.panels import open_alone

    raise SystemExit(open_alone("latency"))
