"""QtExperiments: the article's three experiments, as the BenchModel holds their results.

Eager vs fused add+ReLU (kernels, memory trips, GPU time), launch returned vs work finished, and
the square example's five host steps on a time line.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from gui import style
from gui.jobs import BenchJobs
from gui.models.bench import BenchModel

NOT_GPU = "<br><span style='color:%s'>NOT a GPU timing</span>" % style.BAD


def _plot(title: str, ylabel: str = "") -> pg.PlotWidget:
    w = style.make_plot(title, "", ylabel)
    w.setMinimumSize(150, 190)
    return w


def _title(pi, text: str) -> None:
    pi.setTitle(f"<span style='color:{style.FG};font-size:9pt'>{text}</span>")


class QtExperiments(QWidget):
    def __init__(self, bench: BenchModel, jobs: BenchJobs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bench = bench
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        row = QHBoxLayout()
        self.run_button = QPushButton("Run experiments")
        self.run_button.setToolTip("Count the kernels of eager vs fused add+ReLU, time launch vs "
                                   "finish, and time the square example's five host steps.")
        self.note = QLabel("")
        self.note.setProperty("role", "muted")
        self.note.setWordWrap(True)
        row.addWidget(self.run_button)
        row.addWidget(self.note, 1)
        lay.addLayout(row)
        grid = QGridLayout()
        self.fused_plot = _plot("add+ReLU: eager vs fused")
        self.launch_plot = _plot("Launch returned vs done", "µs")
        self.steps_plot = _plot("Square: five host steps")
        self.steps_plot.getPlotItem().setLabel("bottom", "ms")
        for col, plot in enumerate((self.fused_plot, self.launch_plot, self.steps_plot)):
            grid.addWidget(plot, 0, col)
            grid.setColumnStretch(col, 1)
        lay.addLayout(grid, 1)
        self.run_button.clicked.connect(jobs.start_experiments)
        bench.experiments_changed.connect(self._on_experiments_changed)
        bench.busy_changed.connect(self._on_busy_changed)

    def _on_busy_changed(self, busy: str) -> None:
        self.run_button.setEnabled(not busy)

    def _on_experiments_changed(self, out: dict) -> None:
        notes = [self._draw_fused(out.get("count_kernels")),
                 self._draw_launch(out.get("launch_vs_finish")),
                 self._draw_steps(out.get("square_host_steps"))]
        notes = [n for n in notes if n]
        self.note.setText(" · ".join(notes) if notes else "Done.")

    def _draw_fused(self, kc) -> str:
        pi = self.fused_plot.getPlotItem()
        pi.clear()
        if not (isinstance(kc, list) and kc):
            t = pg.TextItem("eager: 2 kernels, 5 trips\nfused: 1 kernel, 3 trips\n\n"
                            "(counting kernels needs a GPU)", color=style.MUTED, anchor=(0.5, 0.5))
            pi.addItem(t)
            t.setPos(0.5, 0.5)
            pi.setXRange(0, 1)
            pi.setYRange(0, 1)
            return f"kernel count: {kc}"
        x = np.arange(len(kc))
        for dx, values, color in ((-0.2, [k.count for k in kc], style.ACCENT2),
                                  (0.0, [k.trips for k in kc], style.ACCENT),
                                  (0.2, [k.total_gpu_us for k in kc], style.GOOD)):
            pi.addItem(pg.BarGraphItem(x=x + dx, height=values, width=0.2, brush=color))
        pi.getAxis("bottom").setTicks([[(i, k.variant.replace("add_relu_", "")) for i, k in enumerate(kc)]])
        pi.setLabel("left", "kernels · trips · GPU µs")
        pi.autoRange()
        return ""

    def _draw_launch(self, lv) -> str:
        pi = self.launch_plot.getPlotItem()
        pi.clear()
        if lv is None or isinstance(lv, str):
            return f"launch vs finish: {lv}"
        pi.addItem(pg.BarGraphItem(x=[0, 1], height=[lv.launch_returned_us, lv.work_finished_us],
                                   width=0.6, brushes=[style.ACCENT2, style.ACCENT]))
        pi.getAxis("bottom").setTicks([[(0, "returned"), (1, "finished")]])
        pi.setXRange(-0.6, 1.6, padding=0)
        pi.setYRange(0, max(lv.work_finished_us, lv.launch_returned_us) * 1.15, padding=0)
        _title(pi, f"{lv.kernel}, {lv.elements:,}" + ("" if lv.is_gpu_timing else NOT_GPU))
        self.launch_plot.setToolTip(f"{lv.launch_returned_us:,.1f} µs until the launch call returned, "
                                    f"{lv.work_finished_us:,.1f} µs until the work was done. {lv.method}")
        return ""

    def _draw_steps(self, hs) -> str:
        pi = self.steps_plot.getPlotItem()
        pi.clear()
        if hs is None or isinstance(hs, str):
            return f"host steps: {hs}"
        for i, s in enumerate(hs.steps):
            pi.addItem(pg.BarGraphItem(x0=[s.start_ms], y=[i], height=0.6,
                                       width=[max(s.duration_ms, hs.total_ms * 0.002)],
                                       brush=style.ACCENT if s.on_gpu else style.ACCENT2))
        pi.getAxis("left").setTicks([[(i, f"{s.name} {s.duration_ms:.3g} ms") for i, s in enumerate(hs.steps)]])
        pi.invertY(True)
        pi.autoRange()
        _title(pi, f"square, {hs.elements:,}" + ("" if hs.is_gpu_timing else NOT_GPU))
        self.steps_plot.setToolTip(hs.method)
        return ""

    def export_items(self):
        from gui.export import ExportItem

        out, items = self.bench.experiments, []
        kc = out.get("count_kernels")
        if isinstance(kc, list):
            items.append(ExportItem("add_relu_eager_vs_fused", self.fused_plot.getPlotItem(),
                                    ["variant", "kernels", "trips", "gpu_us"],
                                    [[k.variant, k.count, k.trips, k.total_gpu_us] for k in kc]))
        lv = out.get("launch_vs_finish")
        if lv is not None and not isinstance(lv, str):
            items.append(ExportItem("launch_vs_finish", self.launch_plot.getPlotItem(),
                                    ["kernel", "elements", "launch_returned_us", "work_finished_us", "is_gpu_timing"],
                                    [[lv.kernel, lv.elements, lv.launch_returned_us, lv.work_finished_us,
                                      lv.is_gpu_timing]]))
        hs = out.get("square_host_steps")
        if hs is not None and not isinstance(hs, str):
            items.append(ExportItem("square_host_steps", self.steps_plot.getPlotItem(),
                                    ["step", "start_ms", "duration_ms", "on_gpu"],
                                    [[s.name, s.start_ms, s.duration_ms, s.on_gpu] for s in hs.steps]))
        return items
