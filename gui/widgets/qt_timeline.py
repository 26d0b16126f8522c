"""QtTimeline: a per-SM Gantt chart of the simulated launch (and of a recorded trace beside its
calibrated and ideal predictions).

One image row per block slot (SM x slot), time across; each block is a bar coloured by its wave.
Wave starts are dashed lines, the tail (sim.schedule.timeline's one definition) is shaded, and a cursor
follows and sets the animation time. When the chart has fewer pixels than block slots, rows are
merged so that a busy slot always shows (sim.schedule.timeline.Timeline.raster), never dropped.
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCursor, QFont, QFontMetrics
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QProgressBar, QPushButton, QToolTip,
                               QVBoxLayout, QWidget)

from gui import style
from gui.widgets.fitted_text import FittedCaption, fit_lines
from gui.redraw import StagedRedraw
from gui.models.playback import PlaybackModel, wave_starts_us
from gui.models.simulation import SimRun, SimulationModel
from gui.models.trace import TraceModel
from sim.traces.compare import MODEL_TITLES
from sim.rules.devices import preset_for_device_name
from sim.schedule.policies import COST_MODELS, PLACEMENTS, WAIT_TITLES
from sim.schedule.timeline import Timeline
from sim.inputs.units import fmt_us

MAX_WAVE_LINES = 40
# The least height of a chart; the summary above gets what the charts leave (1024 x 640: 5 lines).
# The launch's chart: its time axis (~40 px with its label) and 70 px of bars. A trace's three
# charts share the panel: each a one-line title and 30 px of bars, the last the time axis too
# (at 1024 x 640 they take all but the summary's first line: its shortest form is the scores).
AXIS_PX, TITLE_PX = 40, 20
CHART_MIN_PX, TRACE_BARS_MIN_PX = AXIS_PX + 70, 30


def raster_rgb(raster: np.ndarray, block_wave: np.ndarray) -> np.ndarray:
    """(rows, bins) block indices -> (rows, bins, 3) colours by wave; empty = background.

    Alternate rows are slightly darker and each block's first bin darker still, so single blocks
    stay visible. One lookup per pixel in a table of every (shade, wave) colour: a 2^18-block
    trace's chart is rasterised in tens of milliseconds, not half a second."""
    waves = style.wave_rgb().astype(float)
    empty = np.asarray(style.rgb_of(style.TIMELINE_EMPTY), dtype=np.uint8)
    # table rows: shade 1.0, 0.80 (odd rows), 0.45 (a block's first bin); last column: empty
    lut = np.concatenate([(waves[None] * np.array([1.0, 0.80, 0.45])[:, None, None]).astype(np.uint8),
                          np.broadcast_to(empty, (3, 1, 3))], axis=1)
    busy = raster >= 0
    colour = np.where(busy, block_wave[np.where(busy, raster, 0)] % len(waves), len(waves))
    shade = np.broadcast_to((np.arange(raster.shape[0]) % 2 == 1)[:, None], raster.shape).astype(np.intp)
    shade[:, 1:][busy[:, 1:] & (raster[:, 1:] != raster[:, :-1])] = 2
    return lut[shade, colour]


def describe_block_at(run: SimRun | None, t_us: float, y: float) -> str:
    """The block under a point of the Gantt chart (time, SM + slot fraction), or ""."""
    if run is None:
        return ""
    tl = run.timeline
    sm = int(np.floor(y))
    if not 0 <= sm < tl.sm_count or not 0 <= t_us < tl.makespan_us:
        return ""
    slot = min(int((y - sm) * tl.lanes), tl.lanes - 1)
    b = int(tl.resident_at(t_us)[sm, slot])
    if b < 0:
        return f"SM {sm}, block slot {slot}: free at {t_us:,.2f} µs"
    start, end = float(tl.start_us[b]), float(tl.end_us[b])
    wave = int(tl.wave[b]) + tl.skipped_waves
    return (f"block {b + tl.first_block:,} on SM {sm}, block slot {slot}\n"
            f"wave {wave + 1:,} · runs {start:,.2f}–{end:,.2f} µs ({end - start:,.2f} µs)")


class _Gantt(pg.PlotWidget):
    """One Gantt chart of a Timeline, re-rasterised to its own pixel size when it is resized."""

    def __init__(self) -> None:
        super().__init__()
        self.setProperty("export_strip", True)  # exported wide and flat, as it is drawn
        pi = self.getPlotItem()
        pi.setLabel("left", "SM")
        pi.setMenuEnabled(False)
        pi.hideButtons()
        pi.invertY(True)
        self.image = pg.ImageItem(axisOrder="row-major")
        pi.addItem(self.image)
        self.timeline: Timeline | None = None
        self._span = 1.0
        # a resize re-rasterises once the layout has settled (a window being laid out resizes
        # the chart several times in one go), and only while the chart is seen
        self.redraws = StagedRedraw(self, self._redraw_steps)
        pi.vb.sigResized.connect(self.redraws.request)
        pi.vb.sigResized.connect(self.fit_title)
        self.full_title = self._shown_title = ""
        self.restyle = self._redraw  # the theme changed (gui/theme.py): re-rasterise

    def set_title(self, text: str | None) -> None:
        """A one-line title: its " · " parts that fit the chart's width, whole (then "…"); all of
        it in the tooltip and in exports (gui.export_layout reads `full_title`)."""
        self.full_title = text or ""
        self.setToolTip(self.full_title)
        self.fit_title(force=True)

    def fit_title(self, *_args, force: bool = False) -> None:
        """The title again for this width (on every resize; an export's own title is left be)."""
        pi = self.getPlotItem()
        if not force and pi.titleLabel.text != self._shown_title:
            return  # a slide's title while it is exported (gui.export_layout.slide_plot)
        if not self.full_title:
            pi.setTitle(None)
            self._shown_title = pi.titleLabel.text
            return
        font = QFont(self.font())
        font.setPointSizeF(9)
        parts = [(part,) for part in self.full_title.split(" · ")]
        line = fit_lines(QFontMetrics(font), parts, [max(40, self.width() - 24)], more="…")[0]
        pi.setTitle(f"<span style='color:{style.FG};font-size:9pt'>{html.escape(line)}</span>")
        pi.titleLabel.setMaximumHeight(TITLE_PX)  # pyqtgraph keeps 30 px: 10 more for the bars
        pi.layout.setRowFixedHeight(0, TITLE_PX)
        self._shown_title = pi.titleLabel.text

    def show_timeline(self, tl: Timeline | None, makespan_us: float | None = None,
                      staged: bool = False) -> None:
        """`staged`: rasterise on a later event-loop turn, one chart a turn (a trace's three
        charts of up to 2^18 blocks would otherwise hold the GUI thread for all three)."""
        self.timeline = tl
        pi = self.getPlotItem()
        if tl is None:  # nothing can be scheduled: an empty chart with plain axes
            self.image.clear()
            pi.getAxis("left").setTicks(None)
            pi.setXRange(0, 1, padding=0)
            pi.setYRange(0, 1, padding=0)
            return
        span = makespan_us or tl.makespan_us
        pi.setXRange(0, span, padding=0.01)
        pi.setYRange(0, tl.sm_count, padding=0.01)
        self._span = span
        if self.redraws.seen() and not staged:
            self._redraw()
        else:  # a dock behind another: rasterised when it is shown
            self.redraws.request()

    def _redraw_steps(self):
        self._redraw()
        yield

    def _redraw(self, *_args) -> None:
        self.redraws.cancel()  # drawn now: a resize waiting to re-rasterise has nothing left to do
        tl = self.timeline
        if tl is None:
            return
        vb = self.getPlotItem().vb
        # SM numbers at least 16 px apart, whatever the chart's height
        per_sm = max(vb.height(), 1.0) / tl.sm_count
        step = next((s for s in (1, 2, 5, 10, 20, 50, 100, 200) if s * per_sm >= 16), 500)
        first = 0 if per_sm >= 16 else step  # "0" at the very top edge would be cut in half
        self.getPlotItem().getAxis("left").setTicks(
            [[(i + 0.5, str(i)) for i in range(first, tl.sm_count, step)]])
        dpr = max(1.0, self.devicePixelRatioF())
        rows = max(1, int(vb.height() * dpr))
        bins = int(min(4000, max(300, vb.width() * dpr)))
        span = self._span
        # a shorter schedule beside a longer one shares its time axis: pad with empty time
        keep = bins if span <= tl.makespan_us else max(1, round(bins * tl.makespan_us / span))
        raster = tl.raster(keep, max_rows=rows)
        if keep < bins:
            raster = np.pad(raster, ((0, 0), (0, bins - keep)), constant_values=-1)
        self.image.setImage(raster_rgb(raster, tl.wave), autoLevels=False, levels=(0, 255))
        self.image.setRect(0.0, 0.0, span, float(tl.sm_count))


def trace_caption(view) -> list[tuple[str, ...]]:
    """The comparison's three scores, as `main.py compare` prints them (sim.traces.compare), in
    parts with their shorter forms (gui.widgets.fitted_text)."""
    c = view.comparison
    rows = "tiles and units" if c.model == "compute" else "blocks"
    ideal = (f", ideal {view.predictions[1].comparison.simulated_makespan_us:,.1f} µs"
             if len(view.predictions) > 1 else "")
    who = "predicted" if c.model == "compute" else c.mode
    predicted = f"{who} {c.simulated_makespan_us:,.1f} µs ({c.makespan_error:+.1%})"
    return [(f"{c.blocks:,} {rows}", ""),
            (f"makespan recorded {c.recorded_makespan_us:,.1f} µs, {predicted}{ideal}",
             f"makespan recorded {c.recorded_makespan_us:,.1f} µs, {predicted}",
             f"recorded {c.recorded_makespan_us:,.0f} µs, {who} {c.makespan_error:+.1%}"),
            (f"median peak per SM recorded {c.recorded_median_peak_blocks_per_sm:g}, predicted "
             f"{c.simulated_median_peak_blocks_per_sm:g}",
             f"median peak per SM {c.recorded_median_peak_blocks_per_sm:g} recorded, "
             f"{c.simulated_median_peak_blocks_per_sm:g} predicted"),
            (f"residency error {c.residency_error:.3f}",),
            *([(f"achieved occupancy recorded {o['recorded_achieved_occupancy']:.0%}, predicted "
                f"{o['simulated_achieved_occupancy']:.0%} of theoretical {o['theoretical_occupancy']:.0%}",
                f"achieved {o['recorded_achieved_occupancy']:.0%} recorded, "
                f"{o['simulated_achieved_occupancy']:.0%} predicted", "")] if (o := c.occupancy) else []),
            (MODEL_TITLES[c.model], "")]


class QtTimeline(QWidget):
    trace_requested = Signal(str)  # a recorded trace file to lay beside its simulation
    trace_cancelled = Signal()  # stop the comparison being worked out

    def __init__(self, simulation: SimulationModel, playback: PlaybackModel, traces: TraceModel,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.simulation, self.playback, self.traces = simulation, playback, traces
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(2)
        self._make_caption(lay)
        self._make_plots(lay)

        self.open_trace_button.clicked.connect(self.open_trace_dialog)
        self.trace_cancel_button.clicked.connect(self.trace_cancelled)
        traces.busy.connect(self._on_trace_busy)
        self.close_trace_button.clicked.connect(traces.close)
        self.cursor.sigDragged.connect(self._on_cursor_dragged)
        self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)
        simulation.changed.connect(self._on_run_changed)
        playback.time_changed.connect(self._on_time)
        traces.changed.connect(self._on_trace_changed)
        self._on_run_changed(simulation.run, simulation.message)

    def _make_caption(self, lay: QVBoxLayout) -> None:
        """The summary, flowing around the trace buttons and keeping to the lines the chart
        leaves it, and the bar shown while a comparison is worked out."""
        self.caption = FittedCaption(self._caption_lines)
        self.open_trace_button = QPushButton("Compare a recorded trace…")
        self.open_trace_button.setToolTip(
            "Open a block trace recorded on a real GPU (`python main.py trace`, a matmul trace, "
            "Triton Proton's per-program timeline, or one of a trace bundle's, from its "
            "dispatch_index.json) and lay it beside its prediction, scored (File ▸ Open trace…).")
        self.close_trace_button = QPushButton("Back to the launch")
        self.close_trace_button.setToolTip("Leave the trace comparison; show the current launch.")
        self.close_trace_button.hide()
        self.caption.add_button(self.open_trace_button)
        self.caption.add_button(self.close_trace_button)
        lay.addWidget(self.caption)
        busy = QHBoxLayout()  # while a comparison is worked out (on the trace runner)
        self.trace_progress = QProgressBar()
        self.trace_progress.setTextVisible(True)
        self.trace_cancel_button = QPushButton("Cancel")
        self.trace_cancel_button.setToolTip("Stop comparing this trace; what is shown stays.")
        busy.addWidget(self.trace_progress, 1)
        busy.addWidget(self.trace_cancel_button)
        self.trace_busy = QWidget()
        self.trace_busy.setLayout(busy)
        busy.setContentsMargins(0, 0, 0, 0)
        self.trace_busy.hide()
        lay.addWidget(self.trace_busy)

    def _make_plots(self, lay: QVBoxLayout) -> None:
        """The launch's Gantt chart (its tail and the playback cursor on it), and a trace's."""
        self.trace_plot = _Gantt()
        self.trace_plot.hide()
        lay.addWidget(self.trace_plot, 1)
        self.plot = _Gantt()
        self.ideal_plot = _Gantt()  # a trace's ideal prediction, under the calibrated one
        self.ideal_plot.hide()
        pi = self.plot.getPlotItem()
        pi.setLabel("bottom", "time since launch (µs)")
        self.image = self.plot.image
        # red over the wave colours, with a solid edge where the tail starts
        self.tail = pg.LinearRegionItem(brush=pg.mkBrush(181, 74, 74, 90), movable=False,
                                        pen=pg.mkPen(style.TAIL, width=2))
        self.tail.setZValue(5)
        pi.addItem(self.tail)
        self.cursor = pg.InfiniteLine(angle=90, movable=True, pen=pg.mkPen(style.CURSOR, width=1.5),
                                      hoverPen=pg.mkPen(style.ACCENT, width=2))
        self.cursor.setZValue(20)
        pi.addItem(self.cursor)
        self._wave_lines: list[pg.InfiniteLine] = []
        lay.addWidget(self.plot, 1)
        lay.addWidget(self.ideal_plot, 1)

    @property
    def run(self) -> SimRun | None:
        return self.simulation.run

    @property
    def trace_view(self):
        return self.traces.comparison

    # -- the launch ------------------------------------------------------------------------------
    def _on_run_changed(self, run: SimRun | None, message: str = "") -> None:
        if self.traces.comparison is not None:
            return  # the comparison stays until the user leaves it
        pi = self.plot.getPlotItem()
        for ln in self._wave_lines:
            pi.removeItem(ln)
        self._wave_lines = []
        self.tail.setVisible(run is not None)
        self.cursor.setVisible(run is not None)
        self.plot.set_title(None)
        self.plot.setMinimumHeight(CHART_MIN_PX)
        pi.showAxis("bottom")
        pi.setLabel("bottom", "time since launch (µs)")  # not a trace's, after one
        self.plot.show_timeline(None if run is None else run.timeline)
        if run is None:
            # the simulation's own reason: a launch that fits can still have no schedule (the
            # compute-bound cost without a matmul), and "cannot run" beside 100% misled
            self.caption.setText(f"No schedule: {message}" if message and message != "Simulating…"
                                 else "No schedule: this launch cannot run (see Occupancy).")
            return
        tl = run.timeline
        pi.setLabel("bottom", "time in the simulated part (µs)" if tl.skipped_waves else "time since launch (µs)")
        self.tail.setRegion((tl.tail_start_us, tl.makespan_us))
        starts = wave_starts_us(tl)  # as Geometry counts waves, where Step stops
        shown = starts if len(starts) <= MAX_WAVE_LINES else starts[:: len(starts) // MAX_WAVE_LINES]
        for t in shown[1:]:
            ln = pg.InfiniteLine(pos=float(t), angle=90, movable=False,
                                 pen=pg.mkPen(style.WAVE_LINE, width=1, style=Qt.PenStyle.DashLine))
            ln.setZValue(10)
            pi.addItem(ln)
            self._wave_lines.append(ln)
        self.caption.set_parts(self.caption_parts(run))
        self._on_time(self.playback.time_us)

    @staticmethod
    def caption_parts(run: SimRun) -> list[tuple[str, ...]]:
        """The summary of a run, each part in its forms, longest first (a narrow panel shows
        shorter ones; the tooltip all of it)."""
        tl = run.timeline
        of = "of the simulated part" if tl.skipped_waves else "of the time"
        whole = fmt_us(run.prediction.whole_launch_us)  # sim.model.launch_model: what every view shows
        span = ((f"whole launch {whole} (drawn: the last {tl.waves:,} waves, {fmt_us(tl.makespan_us)})",
                 f"whole launch {whole} (last {tl.waves:,} waves drawn)")
                if tl.skipped_waves else
                (f"makespan {fmt_us(tl.makespan_us)}, whole launch {whole}",))
        cost = COST_MODELS[run.cost].title
        if run.cost == "uniform":
            cost += f" ({WAIT_TITLES[run.wait]} warps)"
        waves = tl.waves_told
        parts = [(f"{tl.n_blocks:,} blocks on {tl.sm_count} SMs × {tl.lanes} slots",),
                 (f"{waves} (colours; dashed: wave starts)", waves.split(",")[0]), span,
                 (f"tail {tl.tail_fraction:.0%} {of} (red, from {tl.tail_start_us:,.1f} µs)",
                  f"tail {tl.tail_fraction:.0%} (red)"),
                 (f"{cost}, {PLACEMENTS[run.placement].title}", cost),
                 (f"schedule: {run.schedule_label}", run.schedule_label.split(",")[0])]
        if tl.skipped_waves:
            parts.append((f"{tl.skipped_waves:,} identical full waves before this part are not drawn",
                          f"{tl.skipped_waves:,} identical waves before, not drawn"))
        return parts

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.caption.place()  # taller or shorter: the lines the summary may take changed

    def _caption_lines(self) -> int:
        """The lines the summary may take: what the charts shown leave, each its least height."""
        charts = [g for g in (self.trace_plot, self.plot, self.ideal_plot) if not g.isHidden()]
        keep = sum(g.minimumHeight() for g in charts)
        if not self.trace_busy.isHidden():
            keep += self.trace_busy.sizeHint().height() + self.layout().spacing()
        m = self.layout().contentsMargins()
        room = self.height() - m.top() - m.bottom() - self.layout().spacing() * len(charts) - keep
        return room // self.caption.head.fontMetrics().lineSpacing()

    def _on_time(self, t_us: float) -> None:
        if not self.cursor.moving:
            self.cursor.blockSignals(True)
            self.cursor.setPos(t_us)
            self.cursor.blockSignals(False)

    def _on_cursor_dragged(self, line) -> None:
        self.playback.pick(float(line.value()))

    def _on_mouse_moved(self, scene_pos) -> None:
        """Hovering a bar names its block: grid id, SM, slot, wave, start and end."""
        vb = self.plot.getPlotItem().vb
        text = ""
        if self.traces.comparison is None and vb.sceneBoundingRect().contains(scene_pos):
            p = vb.mapSceneToView(scene_pos)
            text = describe_block_at(self.run, p.x(), p.y())
        if text:
            QToolTip.showText(QCursor.pos(), text, self.plot)
        else:
            QToolTip.hideText()

    # -- a recorded trace beside its simulation ----------------------------------------------------
    def open_trace_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open a recorded trace", "",
            "Traces (*.json *.chrome_trace);;WarpScope traces (*.json);;"
            "Trace bundles (dispatch_index.json);;Triton Proton timelines (*.chrome_trace);;"
            "All files (*)")
        if path:
            self.trace_requested.emit(path)

    def _on_trace_busy(self, label: str, done: int, total: int) -> None:
        self.trace_busy.setVisible(bool(label))
        self.trace_progress.setRange(0, max(total, 1))
        self.trace_progress.setValue(done)
        self.trace_progress.setFormat(label)
        self.caption.refit()

    def _on_trace_changed(self, view) -> None:
        """Recorded (top), then its launch predicted by the calibrated dispatch model and by the
        ideal textbook schedule, each titled with its scores."""
        if view is None:
            for gantt in (self.trace_plot, self.ideal_plot):
                gantt.hide()
                gantt.setXLink(None)
            self.close_trace_button.hide()
            self.open_trace_button.show()
            self._on_run_changed(self.run, self.simulation.message)
            self.caption.refit()
            return
        for ln in self._wave_lines:
            self.plot.getPlotItem().removeItem(ln)
        self._wave_lines = []
        self.tail.hide()
        self.cursor.hide()
        span = view.makespan_us
        where = (view.gpu_name if preset_for_device_name(view.gpu_name) is not None
                 else f"a GPU the file does not name (predicted on {view.spec.name})")
        charts = [(self.trace_plot, view.recorded, f"{view.title}: recorded on {where} "
                                                   f"({view.blocks_per_sm} blocks/SM allowed)")]
        charts += [(gantt, p.timeline, p.title)
                   for gantt, p in zip((self.plot, self.ideal_plot), view.predictions)]
        for gantt, tl, title in charts:
            gantt.show_timeline(tl, span, staged=True)
            gantt.set_title(title)
            gantt.getPlotItem().setLabel("bottom", "time since the first block started (µs)")  # exports show it
            gantt.setMinimumHeight(TITLE_PX + TRACE_BARS_MIN_PX
                                   + (AXIS_PX if gantt is charts[-1][0] else 0))
            gantt.getPlotItem().hideAxis("bottom")
        charts[-1][0].getPlotItem().showAxis("bottom")
        for gantt in (chart[0] for chart in charts if chart[0] is not self.plot):
            gantt.setXLink(self.plot)
            gantt.show()
        if len(charts) < 3:
            self.ideal_plot.hide()
        self.open_trace_button.hide()
        self.close_trace_button.show()
        self.caption.set_parts(
            trace_caption(view),
            "\n".join(view.lines + tuple(f"note: {n}" for n in view.notes))
            + "\n\nTop: recorded. Below: the same launch predicted from its launch alone (grid, "
            "warps, occupancy, the model its trace calls for), scored as `main.py compare` scores it.")
        self.caption.refit()

    # -- export ------------------------------------------------------------------------------------
    def export_items(self):
        from gui.export import ExportItem

        items = []
        view = self.traces.comparison
        if view is not None:
            rows = [[p.mode, line] for p in view.predictions for line in p.comparison.lines()]
            items.append(ExportItem("trace_recorded_vs_predicted", self.trace_plot.getPlotItem(),
                                    ["schedule", "comparison"], rows))
        run = self.run
        if run is None:
            return items
        rows = [[b, sm, slot, round(s, 4), round(e, 4)]
                for b, sm, slot, s, e in run.simulation.trace_records()]
        return items + [ExportItem("timeline", self.plot.getPlotItem(),
                                   ["block", "sm", "slot", "start_us", "end_us"], rows)]


if __name__ == "__main__":  # this view alone, for a default launch: python -m gui.widgets.qt_timeline [GPU N THREADS]
    from gui.panels import open_alone

    raise SystemExit(open_alone("timeline"))
