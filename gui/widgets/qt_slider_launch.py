"""QtSliderLaunch: what the slider's launches measured (gui.slider_launcher), beside the model.

A tick box turns launching on slider moves on or off; a line says what happens (launching, the
last measurement, or why the slider cannot launch); the plot has the launch model's predicted
whole-launch time (line) and the measured median with its p20-p80 range (dots) against threads
per block, for the kernel at its size on its GPU. Timings made without a GPU are listed in the
line, never plotted: they time the CPU's interpreter, not a GPU (the predicted line is drawn
all the same, for the GPU the window shows).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from gui import style
from gui.models.launch import LaunchModel
from gui.models.slider_launch import NOT_GPU, SliderLaunchModel


class QtSliderLaunch(QWidget):
    def __init__(self, model: SliderLaunchModel, launch: LaunchModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model, self.launch = model, launch
        row = QHBoxLayout(self)  # a wide, short tab: the words beside the plot
        row.setContentsMargins(6, 6, 6, 6)
        left = QWidget()
        left.setMinimumWidth(200)
        left.setMaximumWidth(260)
        lay = QVBoxLayout(left)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        row.addWidget(left)
        self.enabled = QCheckBox("launch the kernel when a slider settles")
        self.enabled.setToolTip("With a live kernel picked, moving the block size or the elements "
                                "runs it at the new launch: timed with device events, the L2 "
                                f"flushed, the median of the reps. Without a GPU: {NOT_GPU}.")
        self.enabled.setChecked(model.enabled)
        self.enabled.toggled.connect(model.set_enabled)
        lay.addWidget(self.enabled)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        self.key = QLabel("")  # the plot's key: a title would set the plot's least width
        self.key.setWordWrap(True)
        self.key.setProperty("role", "muted")
        lay.addWidget(self.key)
        lay.addStretch(1)
        self.plot = style.make_plot("", "threads per block", "launch µs")
        self.plot.getPlotItem().setTitle(None)
        self.plot.setMinimumHeight(120)
        pi = self.plot.getPlotItem()
        self.predicted = pi.plot([], [], pen=pg.mkPen(style.ACCENT2, width=2), symbol="o", symbolSize=5,
                                 symbolBrush=style.ACCENT2, symbolPen=None)
        self.range = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), pen=pg.mkPen(style.ACCENT, width=1))
        pi.addItem(self.range)
        self.measured = pi.plot([], [], pen=None, symbol="o", symbolSize=10, symbolBrush=style.ACCENT,
                                symbolPen=pg.mkPen(style.MARKER_EDGE, width=1))
        self.current = pg.InfiniteLine(angle=90, pen=pg.mkPen(style.ACCENT, width=1, style=pg.QtCore.Qt.PenStyle.DashLine))
        pi.addItem(self.current)
        row.addWidget(self.plot, 1)
        model.changed.connect(self._draw)
        launch.changed.connect(lambda _state: self._draw())
        self._draw()

    def _draw(self) -> None:
        m = self.model
        self.enabled.setChecked(m.enabled)
        self.status.setText(m.status)
        latest = m.latest
        st = self.launch.state
        self.current.setPos(st.inputs.threads_per_block)
        shown = m.series(latest.wanted) if latest is not None else []
        on_gpu = [p for p in shown if p.is_gpu_timing]
        xs = np.array([p.wanted.threads_per_block for p in on_gpu], dtype=float)
        pred = [(p.wanted.threads_per_block, p.predicted_us) for p in shown if p.predicted_us is not None]
        self.predicted.setData([x for x, _ in pred], [y for _, y in pred])
        med = np.array([p.median_us for p in on_gpu], dtype=float)
        self.measured.setData(xs, med)
        self.range.setData(x=xs, y=med, top=np.array([p.p80_us for p in on_gpu]) - med if on_gpu else med,
                           bottom=med - np.array([p.p20_us for p in on_gpu]) if on_gpu else med)
        if latest is not None:
            w = latest.wanted
            dots = "measured (dots)" if latest.is_gpu_timing else "no GPU timing to draw"
            self.key.setText(f"Plot: {w.kernel} at {w.elements:,} elements, the {w.gpu} predicted "
                             f"(line), {dots}")

    def export_items(self):
        """Every launch measured, with its prediction (nothing before the first)."""
        from gui.export import ExportItem

        if not self.model.points:
            return []
        rows = [[p.wanted.kernel, p.wanted.gpu, p.wanted.elements, p.wanted.threads_per_block,
                 ";".join(f"{k}={v}" for k, v in p.wanted.block), p.elements_run, round(p.median_us, 4),
                 round(p.p20_us, 4), round(p.p80_us, 4),
                 "" if p.predicted_us is None else round(p.predicted_us, 4), int(p.is_gpu_timing),
                 p.device, p.method] for p in self.model.points.values()]
        return [ExportItem("live_launches", self.plot.getPlotItem(),
                           ["kernel", "gpu", "elements", "threads_per_block", "block", "elements_run",
                            "median_us", "p20_us", "p80_us", "predicted_us", "is_gpu_timing",
                            "device", "method"], rows, title="Live launches: predicted and measured")]

    def points(self) -> tuple[np.ndarray, np.ndarray]:
        """The measured points drawn (threads per block, median µs): for tests."""
        x, y = self.measured.getData()
        return (np.zeros(0), np.zeros(0)) if x is None else (np.asarray(x), np.asarray(y))


if __name__ == "__main__":  # this view alone, for a default launch: python -m gui.widgets.qt_slider_launch [GPU N THREADS]
    from gui.panels import open_alone

    raise SystemExit(open_alone("slider_launch"))
