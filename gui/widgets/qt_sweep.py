"""QtSweep: the sweep form and its two plots, throughput against size and against block size.

The form starts jobs (gui.jobs.BenchJobs); the plots draw the BenchModel's series, each with
gui.widgets.series.draw_series, in the model's metric: GB/s for memory-bound kernels with the copy
ceiling and the DRAM peak, TFLOP/s for compute-bound ones (the matmuls) with cuBLAS measured in
the same run and the tensor cores' datasheet peak.
"""

from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QFileDialog, QHBoxLayout, QLabel, QLineEdit,
                               QListWidget, QListWidgetItem, QMenu, QProgressBar, QPushButton,
                               QSpinBox, QTabBar, QToolButton, QVBoxLayout, QWidget,
                               QWidgetAction)

from gui import style
from gui.redraw import StagedRedraw
from gui.jobs import BenchJobs
from gui.models.bench import BenchModel
from gui.widgets.series import clear_series_plot, draw_level, draw_series, fit_legend, series_plot

TITLES = {"size": "{metric} vs size", "block": "{metric} vs block size"}
SIDE_BY_SIDE_WIDTH = 760  # narrower: one plot at a time, chosen by a tab


class QtSweep(QWidget):
    def __init__(self, bench: BenchModel, jobs: BenchJobs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bench, self.jobs = bench, jobs
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.setSpacing(3)
        # two short rows: the panel fits between the side docks of a 1024-pixel window
        lay.addLayout(self._make_what_row())
        lay.addLayout(self._make_run_row())
        self._make_plots(lay)

        # results redraw in steps, the scheduler's predictions first, and only while seen
        self.redraws = StagedRedraw(self, self._redraw_steps)
        self.run_button.clicked.connect(self._on_run_clicked)
        self.cancel_button.clicked.connect(jobs.cancel)
        self.open_button.clicked.connect(self.open_results_dialog)
        self.kernel_list.itemChanged.connect(self._on_kernel_ticked)
        bench.kernels_changed.connect(self._on_kernels_changed)
        bench.shown_changed.connect(self._on_shown_changed)
        bench.result_changed.connect(self._on_result_changed)
        bench.busy_changed.connect(self._on_busy_changed)
        bench.progress_changed.connect(self._on_progress)
        self._on_kernels_changed()
        self._on_busy_changed(bench.busy)

    def _make_what_row(self) -> QHBoxLayout:
        """What to measure: the kernels, sizes, block sizes and repetitions."""
        row1 = QHBoxLayout()
        row1.setSpacing(6)
        self.kernel_list = QListWidget()
        self.kernel_list.setToolTip("Registry kernels to measure (tick several to compare).")
        self.kernel_list.setMinimumSize(320, 300)
        self.kernels_button = QToolButton()
        self.kernels_button.setText("Kernels ▾")
        self.kernels_button.setToolTip("Choose the registry kernels to measure and to draw.")
        self.kernels_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.kernels_button)
        action = QWidgetAction(menu)
        action.setDefaultWidget(self.kernel_list)
        menu.addAction(action)
        self.kernels_button.setMenu(menu)
        self.sizes = QLineEdit("2^16..2^28 x4")
        self.sizes.setToolTip("Element counts: a list (1e6, 2^20, 1048583) or a range of powers of "
                              "two (2^16..2^28, add 'x4' to take every second one).")
        self.sizes.setMinimumWidth(60)  # so the row fits a 1024-pixel window's tab
        self.sizes.setCursorPosition(0)  # the start of the list, not its end
        self.blocks = QLineEdit("default")
        self.blocks.setToolTip("Block sizes to try: threads per block for Numba, BLOCK_SIZE for "
                               "Triton; 'default' uses each kernel's own.")
        self.blocks.setMinimumWidth(50)
        self.reps = QSpinBox()
        self.reps.setPrefix("reps ")
        self.reps.setRange(3, 500)
        self.reps.setValue(50)
        self.reps.setKeyboardTracking(False)
        self.reps.setToolTip("Timed repetitions per point; the median and p20/p80 come from them.")
        for w, stretch in ((self.kernels_button, 0), (QLabel("sizes"), 0), (self.sizes, 2),
                           (QLabel("blocks"), 0), (self.blocks, 1), (self.reps, 0)):
            row1.addWidget(w, stretch)
        return row1

    def _make_run_row(self) -> QHBoxLayout:
        """How to measure, and the buttons that start, stop and open a run."""
        row2 = QHBoxLayout()
        row2.setSpacing(6)
        self.flush = QCheckBox("flush L2")
        self.flush.setChecked(True)
        self.flush.setToolTip("Evict the L2 cache before each timed run; untick it to see the "
                              "cache trap (numbers above DRAM speed on small sizes).")
        self.allow_cpu = QCheckBox("CPU path")
        self.allow_cpu.setToolTip("Without a GPU, time the interpreter/simulator anyway; every "
                                  "point is labelled as not a GPU timing.")
        self.run_button = QPushButton("Run sweep")
        self.run_button.setToolTip("Measure every ticked kernel at every size and block size, in the background.")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop after the point being measured; what was measured stays.")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setTextVisible(True)
        self.progress.setFormat("idle")
        self.progress.setMinimumWidth(40)
        self.open_button = QPushButton("Open…")
        self.open_button.setToolTip("Plot a results file written by `python main.py bench` (JSON "
                                    "or CSV), e.g. from a GPU server (also File ▸ Open, Ctrl+O).")
        for w, stretch in ((self.flush, 0), (self.allow_cpu, 0), (self.run_button, 0),
                           (self.cancel_button, 0), (self.progress, 1), (self.open_button, 0)):
            row2.addWidget(w, stretch)
        return row2

    def _make_plots(self, lay: QVBoxLayout) -> None:
        """Throughput against size and against block size: side by side, or tabs when narrow."""
        self.plots = {"size": series_plot(TITLES["size"].format(metric="GB/s"), "elements (log)",
                                          "GB/s", logx=True),
                      "block": series_plot(TITLES["block"].format(metric="GB/s"),
                                           "block size (threads or BLOCK_SIZE)", "GB/s", logx=True)}
        self.plot_tabs = QTabBar()
        self.plot_tabs.addTab("vs size")
        self.plot_tabs.addTab("vs block size")
        self.plot_tabs.setExpanding(False)
        self.plot_tabs.hide()
        lay.addWidget(self.plot_tabs)
        plots = QHBoxLayout()
        plots.setSpacing(4)
        for plot in self.plots.values():
            plot.setMinimumSize(200, 210)  # shorter, and the axes would be cut off: the tab scrolls
            plots.addWidget(plot)
        lay.addLayout(plots, 1)
        self.size_plot, self.block_plot = self.plots["size"], self.plots["block"]
        self._side_by_side = True
        self._size_span: tuple[int, int] | None = None  # log2 of the smallest and largest size drawn
        self.plot_tabs.currentChanged.connect(self._show_plots)
        self.size_plot.getPlotItem().vb.sigResized.connect(self._size_ticks)

    # -- layout ------------------------------------------------------------------------------------
    def resizeEvent(self, event) -> None:
        side_by_side = event.size().width() >= SIDE_BY_SIDE_WIDTH
        if side_by_side != self._side_by_side:
            self._side_by_side = side_by_side
            self.plot_tabs.setVisible(not side_by_side)
            self._show_plots()
        super().resizeEvent(event)

    def _size_ticks(self, *_args) -> None:
        """2^k labels, as many as fit side by side (pyqtgraph's own minor labels collide)."""
        if self._size_span is None:
            return
        lo, hi = self._size_span
        pi = self.size_plot.getPlotItem()
        step = max(1, math.ceil((hi - lo + 1) / max(2, int(pi.vb.width() // 48))))
        pi.getAxis("bottom").setTicks([[(k * math.log10(2), f"2^{k}") for k in range(lo, hi + 1, step)], []])

    def _show_plots(self, *_args) -> None:
        for i, plot in enumerate(self.plots.values()):
            plot.setVisible(self._side_by_side or i == self.plot_tabs.currentIndex())

    # -- model -> view -----------------------------------------------------------------------------
    def _on_kernels_changed(self) -> None:
        self.kernel_list.blockSignals(True)
        self.kernel_list.clear()
        for k in self.bench.kernels:
            it = QListWidgetItem(f"{k.name}  [{k.backend}]")
            it.setData(Qt.ItemDataRole.UserRole, k.name)
            it.setToolTip(getattr(k, "description", "") or getattr(k, "title", ""))
            it.setFlags(it.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            it.setCheckState(Qt.CheckState.Checked if k.name in self.bench.ticked else Qt.CheckState.Unchecked)
            self.kernel_list.addItem(it)
        self.kernel_list.blockSignals(False)
        self._on_shown_changed()

    def _on_shown_changed(self) -> None:
        self.kernels_button.setText(f"Kernels ({len(self.bench.ticked)}) ▾")
        self.redraws.request()

    def _on_result_changed(self, _result) -> None:
        self.redraws.request()

    def _on_busy_changed(self, busy: str) -> None:
        for w in (self.run_button, self.open_button):
            w.setEnabled(not busy)
        self.cancel_button.setEnabled(bool(busy))
        self.cancel_button.setVisible(bool(busy))  # room for the progress bar when idle

    def _on_progress(self, done: int, total: int, label: str) -> None:
        self.progress.setRange(0, max(0, total))
        self.progress.setValue(min(done, max(1, total)))
        self.progress.setFormat(label if not total or label in ("done", "failed", "cancelled")
                                else f"{done}/{total}  {label}")

    def redraw(self) -> None:
        """Draw both plots now."""
        self.redraws.request()
        self.redraws.flush()

    def _redraw_steps(self):
        bench, result = self.bench, self.bench.result
        shown = result is not None and bool(result.measurements)
        if shown:  # one scheduler run per launch shape not seen before, one step each
            for key in self.plots:
                for name in bench.shown_kernels():
                    for m in bench.points(key, name):
                        bench.predicted(m)
                        yield
        for key, plot in self.plots.items():
            pi = plot.getPlotItem()
            clear_series_plot(pi)
            if shown:
                yield from self._draw_plot(key, pi)

    def _draw_plot(self, key: str, pi):
        bench, result = self.bench, self.bench.result
        dev = result.device.get("name", "") if isinstance(result.device, dict) else ""
        gpu = bench.gpu_timings_shown
        series = bench.series(key)
        at = f" at {series[0].points[0].elements:,}" if key == "block" and series else ""
        tag = (f" · {dev}" if dev else "") if gpu else " · NOT GPU timings"
        metric = bench.metric()
        _set_label(pi, "left", metric)
        if key == "size":
            _set_label(pi, "bottom",
                       "n: M = N = K = n (log)" if metric == "TFLOP/s" else "elements (log)")
        title = (f"<span style='color:{style.FG if gpu else style.BAD};font-size:9pt'>"
                 f"{TITLES[key].format(metric=metric)}{at}{tag}</span>")
        if pi.titleLabel.text != title:  # a new title re-lays the plot out: only when it changes
            pi.setTitle(title)
        for i, s in enumerate(series):
            draw_series(pi, s, style.CURVE_HUES[i % len(style.CURVE_HUES)])
            yield
        if key == "size" and series:
            xs = [x for s in series for x in s.x]
            self._size_span = (math.floor(math.log2(min(xs))), math.ceil(math.log2(max(xs))))
            self._size_ticks()
        for c in bench.ceilings():
            measured = c.kind == "measured"
            draw_level(pi, c.value, c.label, style.GOOD if measured else style.BAD,
                       Qt.PenStyle.DashLine if measured else Qt.PenStyle.DotLine)
        fit_legend(pi)
        pi.enableAutoRange()
        pi.autoRange()
        yield

    # -- view -> model -----------------------------------------------------------------------------
    def _on_kernel_ticked(self, _item) -> None:
        items = (self.kernel_list.item(i) for i in range(self.kernel_list.count()))
        self.bench.set_ticked([it.data(Qt.ItemDataRole.UserRole) for it in items
                               if it.checkState() == Qt.CheckState.Checked])

    def _on_run_clicked(self) -> None:
        self.start_sweep()

    def start_sweep(self) -> int | None:
        return self.jobs.start_sweep(self.sizes.text(), self.blocks.text(), self.reps.value(),
                                     self.flush.isChecked(), self.allow_cpu.isChecked())

    def open_results_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open bench results", "",
                                              "Bench results (*.json *.csv);;All files (*)")
        if path:
            self.jobs.open_results(path)

    def export_items(self):
        from gui.export import ExportItem

        if self.bench.result is None or not self.bench.result.measurements:
            return []
        self.redraws.flush()
        what = "tflops" if self.bench.metric() == "TFLOP/s" else "bandwidth"
        return [ExportItem(f"{what}_vs_{key}", plot.getPlotItem(), *self.bench.export_rows(key))
                for key, plot in self.plots.items()]


def _set_label(pi, axis: str, text: str) -> None:
    if pi.getAxis(axis).labelText != text:  # each new label re-lays the plot out
        pi.setLabel(axis, text)
