"""QtExperiments: the article's three experiments, as the BenchModel holds their results.

Eager vs fused add+ReLU (kernels, memory trips, GPU time), launch returned vs work finished, and
the square example's five host steps on a time line.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from gui import style
from gui.jobs import BenchJobs
from gui.models.bench import BenchModel

NOT_GPU = "<br><span style='color:%s'>NOT a GPU timing</span>" % style.BAD
_VARIANTS = {"torch_eager": "torch eager", "torch_compile": "torch.compile", "triton": "Triton",
             "numba": "Numba"}


def variant_label(name: str) -> str:
    """add_relu_torch_compile -> torch.compile: short enough to sit beside its bar."""
    short = name.removeprefix("add_relu_")
    return _VARIANTS.get(short, short.replace("_", " "))


def _plot(title: str, ylabel: str = "") -> pg.PlotWidget:
    w = style.make_plot(title, "", ylabel)
    w.setMinimumSize(150, 190)
    return w


def _title(pi, text: str) -> None:
    pi.setTitle(f"<span style='color:{style.FG};font-size:9pt'>{text}</span>")


def _label_rows(plot: pg.PlotWidget, labels: list[str] | None) -> None:
    """Row labels on the left axis, and the axis as wide as they are (known before the first paint,
    so the layout can make room for them)."""
    pi = plot.getPlotItem()
    axis = pi.getAxis("left")
    if labels is None:
        axis.setTicks(None)
        axis.setWidth(None)
    else:
        axis.setTicks([list(enumerate(labels))])
        metrics = QFontMetrics(axis.style.get("tickFont") or axis.font())
        flags = int(Qt.AlignmentFlag.AlignRight)
        axis.setWidth(max(metrics.boundingRect(0, 0, 1000, 1000, flags, t).width() for t in labels)
                      + axis.style["tickTextOffset"][0] + 12)


def _fit_width(plot: pg.PlotWidget) -> None:
    """As wide as its axes and title need: a narrow tab stacks the plots (fit_to_width) instead of
    laying one under its neighbour (where its labels ran into the next plot's)."""
    need = plot.getPlotItem().effectiveSizeHint(Qt.SizeHint.MinimumSize).width()
    plot.setMinimumWidth(max(150, int(need) + 2))


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
        self.grid = QGridLayout()
        self.fused_plot = _plot("add+ReLU: eager vs fused")
        self.launch_plot = _plot("Launch returned vs done", "µs")
        self.steps_plot = _plot("Square: five host steps")
        self.steps_plot.getPlotItem().setLabel("bottom", "ms")
        self._columns = 0
        self._width = 10_000
        self._arrange(3)
        lay.addLayout(self.grid, 1)
        self.run_button.clicked.connect(jobs.start_experiments)
        bench.experiments_changed.connect(self._on_experiments_changed)
        bench.busy_changed.connect(self._on_busy_changed)

    def _plots(self) -> tuple[pg.PlotWidget, ...]:
        return self.fused_plot, self.launch_plot, self.steps_plot

    def fit_to_width(self, width: int) -> None:
        """Side by side where the three fit `width`, else one above the other: the tab scrolls
        down, never sideways (at 1024 px the titles were cut: "Launch returne", "Square: fi")."""
        self._width = width
        m = self.layout().contentsMargins()
        need = (sum(p.minimumWidth() for p in self._plots()) + 2 * self.grid.horizontalSpacing()
                + m.left() + m.right())
        self._arrange(3 if need <= width else 1)

    def _arrange(self, columns: int) -> None:
        if columns == self._columns:
            return
        self._columns = columns
        # side by side, the eager-vs-fused plot carries names and counts on its axis: most room
        for i, (plot, stretch) in enumerate(zip(self._plots(), (4, 3, 3))):
            self.grid.removeWidget(plot)
            self.grid.addWidget(plot, *((0, i) if columns == 3 else (i, 0)))
            self.grid.setColumnStretch(i, stretch if columns == 3 else int(i == 0))

    def _on_busy_changed(self, busy: str) -> None:
        self.run_button.setEnabled(not busy)

    def _on_experiments_changed(self, out: dict) -> None:
        notes = [self._draw_fused(out.get("count_kernels")),
                 self._draw_launch(out.get("launch_vs_finish")),
                 self._draw_steps(out.get("square_host_steps"))]
        notes = [n for n in notes if n]
        for plot in self._plots():
            _fit_width(plot)
        self.fit_to_width(self._width)  # the axes' labels may have widened the plots
        self.note.setText(" · ".join(notes) if notes else "Done.")

    def _draw_fused(self, kc) -> str:
        """One row per variant, its name, GPU time and counts on the left axis (where long names
        have room: side by side under the bars they ran into each other), the bar its GPU time."""
        pi = self.fused_plot.getPlotItem()
        pi.clear()
        if not (isinstance(kc, list) and kc):
            t = pg.TextItem("eager: 2 kernels, 5 trips\nfused: 1 kernel, 3 trips\n\n"
                            "(counting kernels needs a GPU)", color=style.MUTED, anchor=(0.5, 0.5))
            pi.addItem(t)
            t.setPos(0.5, 0.5)
            _label_rows(self.fused_plot, None)
            for side in ("left", "bottom"):  # a note, not a chart: no axes from 0 to 1
                pi.hideAxis(side)
            pi.setXRange(0, 1)
            pi.setYRange(0, 1)
            return f"kernel count: {kc}"
        for side in ("left", "bottom"):
            pi.showAxis(side)
        fused = [k.count == 1 for k in kc]
        pi.addItem(pg.BarGraphItem(x0=0, y=np.arange(len(kc)), height=0.6,
                                   width=[k.total_gpu_us for k in kc],
                                   brushes=[style.ACCENT if f else style.ACCENT2 for f in fused]))
        longest = max(k.total_gpu_us for k in kc) or 1.0
        _label_rows(self.fused_plot, [f"{variant_label(k.variant)} · {k.total_gpu_us:.3g} µs\n"
                                      f"{k.count} kernel{'s' * (k.count != 1)} · {k.trips} trips" for k in kc])
        pi.setLabel("bottom", "GPU time, µs")
        pi.setXRange(0, longest * 1.08, padding=0)
        pi.setYRange(-0.6, len(kc) - 0.4, padding=0)
        pi.invertY(True)
        self.fused_plot.setToolTip("\n".join(
            f"{k.variant}: {k.count} GPU kernel(s) ({', '.join(n for n, _ in k.kernels)}), "
            f"{k.trips} array-sized memory trips, {k.total_gpu_us:.1f} µs on the GPU, "
            f"{k.elements:,} elements" for k in kc))
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
        pi.addItem(pg.BarGraphItem(  # one item for the five steps: a fifth of the scene work
            x0=[s.start_ms for s in hs.steps], y=np.arange(len(hs.steps)), height=0.6,
            width=[max(s.duration_ms, hs.total_ms * 0.002) for s in hs.steps],
            brushes=[style.ACCENT if s.on_gpu else style.ACCENT2 for s in hs.steps]))
        _label_rows(self.steps_plot, [f"{s.name} {s.duration_ms:.3g} ms" for s in hs.steps])
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
