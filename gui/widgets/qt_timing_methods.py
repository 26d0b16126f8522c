"""QtTimingMethods: the Bandwidth panel's "Timing methods" tab. The honest timing (device events,
L2 flushed) always, and a toggle per trap — L2 not flushed, a host timer without synchronize,
a lone launch vs launches back to back — that lays its curve beside it; under the plot, what each
curve really measures. From a latency run's records (the H200's by default) or a live run.
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QComboBox, QHBoxLayout, QLabel,
                               QPushButton, QSizePolicy, QVBoxLayout, QWidget)

from gui import style
from gui.adapter import TaskOutcome, TaskRunner
from gui.file_jobs import FileJobs, PanelFile
from gui.models.timing import HONEST, TOGGLES, TimingModel, timing_task
from gui.widgets.series import clear_series_plot, fit_legend, legend_entry, series_plot
from sim.rules.devices import preset_for_device_name
from sim.traces.latency_data import CHECKED_IN, load_latency_run

CURVE_COLOURS = {HONEST: "GOOD", "events_no_flush": "ACCENT", "host_launch_returned": "BAD",
                 "events_lone_launch": "ACCENT2", "events_back_to_back": "MUTED"}


def _size_label(n: int) -> str:
    """2^k for powers of two (the sizes the runs use), else the number."""
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else f"{n:,}"


class QtTimingMethods(QWidget):
    def __init__(self, timing: TimingModel, runner: TaskRunner | None = None,
                 parent: QWidget | None = None, task_factory=timing_task,
                 files: FileJobs | None = None) -> None:
        super().__init__(parent)
        self.timing, self.runner, self.task_factory = timing, runner, task_factory
        self.files = files
        self._job: int | None = None
        self._device = ""
        self._force = False
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.setSpacing(3)
        row, toggles = QHBoxLayout(), QHBoxLayout()
        self.kernel = QComboBox()
        self.kernel.setToolTip("The kernel whose timings are drawn.")
        row.addWidget(self.kernel)
        self.toggles = {}
        for t in TOGGLES:
            box = QCheckBox(t.title)
            box.setToolTip("Lay this way of timing beside the honest one (device events, L2 "
                           "flushed); the text under the plot says what it really measures.")
            box.toggled.connect(lambda on, key=t.key: timing.set_toggle(key, on))
            self.toggles[t.key] = box
            toggles.addWidget(box)
        toggles.addStretch(1)
        row.addStretch(1)
        self.run_button = QPushButton("Measure here")
        self.run_button.setToolTip("Time add_triton, add_torch and add_numba_naive every way on "
                                   "this machine, in the background (without a GPU the device "
                                   "events are missing and the host clock times the CPU path).")
        self.open_button = QPushButton("Open…")
        self.open_button.setToolTip("A latency run's JSON (benchmarks/latency_run.py).")
        row.addWidget(self.run_button)
        row.addWidget(self.open_button)
        lay.addLayout(row)
        lay.addLayout(toggles)
        self.plot = series_plot("GB/s by timing method", "elements (log)", "GB/s (log)", logx=True,
                                logy=True)
        self.plot.setMinimumSize(260, 200)
        # Ignored: in the scrolling tab the plot takes what is left, the notes stay in view
        self.plot.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
        lay.addWidget(self.plot, 1)
        self.notes = QLabel("")
        self.notes.setWordWrap(True)
        self.notes.setTextFormat(Qt.TextFormat.RichText)
        lay.addWidget(self.notes)

        self.kernel.currentTextChanged.connect(self._on_kernel_selected)
        self.run_button.clicked.connect(self.start_live)
        self.opener = PanelFile(self, "Open latency results", "Latency runs (*.json);;All files (*)",
                                load_latency_run, self.show_run, self.show_error, files,
                                lambda path: self.notes.setText(f"Opening {html.escape(path)}…"))
        self.open_button.clicked.connect(self.opener.dialog)
        timing.changed.connect(self.redraw)
        if runner is not None:
            runner.finished.connect(self._on_finished)
            runner.progress.connect(self._on_progress)
        self.run_button.setEnabled(runner is not None)
        self._stale = True  # drawn when seen: the tab is behind the sweep at first
        self.redraw()

    # -- loading ---------------------------------------------------------------------------------
    def load_file(self, path=CHECKED_IN) -> bool:
        """Read `path` on this thread (the checked-in run at start, tests); Open… reads in the
        background."""
        return self.opener.now(path)

    def open_in_background(self, path: str) -> int | None:
        return self.opener.background(path)

    def show_run(self, run) -> None:
        self._device = run.device_name
        self.timing.set_records(run.methods, run.source())

    def show_error(self, line: str) -> None:
        self.notes.setText(f"<span style='color:{style.BAD}'>{html.escape(line)}</span>")

    def start_live(self) -> int | None:
        if self.runner is None or self._job is not None:
            return None
        self._job = self.runner.submit(self.task_factory(), "timing methods")
        self.run_button.setEnabled(False)
        self.run_button.setText("Measuring…")
        return self._job

    def _on_progress(self, job_id: int, done: int, total: int, label: str) -> None:
        if job_id == self._job:
            self.run_button.setText(f"Measuring {done}/{total}…")

    def _on_finished(self, outcome: TaskOutcome) -> None:
        if outcome.job_id != self._job:
            return
        self._job = None
        self.run_button.setEnabled(True)
        self.run_button.setText("Measure here")
        if not outcome.ok:
            self.notes.setText(f"<span style='color:{style.BAD}'>Timing failed: "
                               f"{html.escape(outcome.error)}</span>")
            return
        records, skipped = outcome.result
        self._device = "this machine"
        self.timing.set_records(records, "a live run on this machine" +
                                (f" (skipped: {'; '.join(skipped)})" if skipped else ""))

    # -- model -> view ---------------------------------------------------------------------------
    def _on_kernel_selected(self, name: str) -> None:
        if name:
            self.timing.set_kernel(name)

    def showEvent(self, event) -> None:
        if self._stale:
            self.redraw()
        super().showEvent(event)

    def redraw(self) -> None:
        if not self.isVisible() and not self._force:
            self._stale = True
            return
        self._stale = False
        t = self.timing
        self.kernel.blockSignals(True)
        self.kernel.clear()
        self.kernel.addItems(t.kernels())
        self.kernel.setCurrentText(t.kernel)
        self.kernel.blockSignals(False)
        for key, box in self.toggles.items():
            box.blockSignals(True)
            box.setChecked(t.is_on(key))
            box.blockSignals(False)
        pi = self.plot.getPlotItem()
        clear_series_plot(pi)
        series = t.series()
        where = self._device or "no records"
        pi.setTitle(f"<span style='color:{style.FG};font-size:9pt'>GB/s by timing method · "
                    f"{html.escape(t.kernel)} · {html.escape(where)}</span>")
        lines = []
        for s in series:
            colour = getattr(style, CURVE_COLOURS.get(s.method, "FG"))
            if s.elements.size:
                fill = pg.mkColor(colour)
                fill.setAlpha(50)
                lx = np.log10(s.elements)
                pi.addItem(pg.FillBetweenItem(
                    pg.PlotDataItem(lx, np.log10(s.gbps_p20), pen=pg.mkPen(None)),
                    pg.PlotDataItem(lx, np.log10(s.gbps_p80), pen=pg.mkPen(None)),
                    brush=pg.mkBrush(fill)))
                line = pi.plot(s.elements, s.gbps, pen=pg.mkPen(colour, width=2), symbol="o",
                               symbolSize=6, symbolBrush=pg.mkBrush(colour),
                               symbolPen=pg.mkPen(style.MARKER_EDGE))
                pi.legend.addItem(line, s.label)
            note = f" <i>({html.escape(s.note)})</i>" if s.note else ""
            lines.append(f"<span style='color:{colour}'>■</span> <b>{html.escape(s.label)}</b>: "
                         f"{html.escape(s.measures)}{note}")
        sizes = sorted({int(x) for s in series for x in s.elements})
        pi.getAxis("bottom").setTicks([[(np.log10(n), _size_label(n)) for n in sizes], []]
                                      if sizes else None)
        spec = preset_for_device_name(self._device) if self._device else None
        if spec is not None and series:  # a log axis: the line sits at log10 of the peak
            pen = pg.mkPen(style.FG, width=1.2, style=Qt.PenStyle.DotLine)
            pi.addItem(pg.InfiniteLine(pos=np.log10(spec.peak_dram_gbps), angle=0, pen=pen))
            legend_entry(pi, f"DRAM peak {spec.peak_dram_gbps:,.0f} GB/s", pen)
        fit_legend(pi)
        pi.enableAutoRange()
        source = (f"<span style='color:{style.MUTED}'>Records: {html.escape(t.source)}. "
                  "Above the DRAM peak a method is not timing the DRAM.</span>"
                  if t.source else "")
        self.notes.setText("<br>".join(lines + [source]))

    def restyle(self) -> None:
        self.redraw()

    def export_items(self):
        from gui.export import ExportItem

        if not self.timing.kernels():
            return []
        if self._stale:
            self._force = True
            try:
                self.redraw()
            finally:
                self._force = False
        return [ExportItem("timing_methods", self.plot.getPlotItem(), *self.timing.export_rows())]


if __name__ == "__main__":  # this view alone, for a default launch: python -m gui.widgets.qt_timing_methods [GPU N THREADS]
    from gui.panels import open_alone

    raise SystemExit(open_alone("timing"))
