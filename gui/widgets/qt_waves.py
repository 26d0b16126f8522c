"""QtWaves: the sawtooth. TFLOP/s of the matmul kernels as a matrix grows one tile at a time,
measured (a results file or a live run) beside the block scheduler's prediction, with the sizes
where a new wave starts marked. Clicking a point shows that launch in the SM view and the timeline.

Everything drawn comes from gui.models.waves.WavesModel; curves go through series.draw_series.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QLineEdit, QProgressBar,
                               QPushButton, QVBoxLayout, QWidget)

from gui import style
from gui.file_jobs import FileJobs, PanelFile
from gui.models.waves import MATMULS, TITLES, WavesModel, read_measured
from gui.widgets.series import (clear_series_plot, draw_level, draw_series, fit_legend,
                                legend_entry, series_plot)
from sim.model.throughput import tensor_tflops
from sim.traces.waves import CUBLAS

COLORS = {name: style.CURVE_HUES[i] for i, name in enumerate((*MATMULS, CUBLAS))}
NARROW = 800  # narrower (a 1024-px window): the caption keeps to its first line


class QtWaves(QWidget):
    measure_requested = Signal()  # run the sweep on this machine's GPU
    timeline_requested = Signal()  # bring the timeline forward

    def __init__(self, model: WavesModel, parent: QWidget | None = None,
                 files: FileJobs | None = None) -> None:
        super().__init__(parent)
        self.model, self.files = model, files
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(3)
        row = QHBoxLayout()
        row.setSpacing(6)
        self.sweep = QLineEdit(model.sweep_text)
        self.sweep.setToolTip("Matrix sizes: fixed M, N or K and one range 'lo..hi xSTEP' "
                              "(N=256..14080x256: one tile column per step). Enter applies it.")
        self.sweep.setMinimumWidth(120)
        self.sweep.setCursorPosition(0)  # a long sweep shows its start, not its end
        self.open_button = QPushButton("Open…")
        self.open_button.setToolTip("Measured sawtooth: resources/measured/H200_matmul_sawtooth.json "
                                    "(matmul_run.py) or a file written by `python main.py bench --waves-sweep`.")
        self.measure_button = QPushButton("Measure")
        self.measure_button.setToolTip("Time the three matmul kernels and cuBLAS at every size of "
                                       "the sweep on this machine's GPU, in the background.")
        self.timeline_button = QPushButton("Timeline ▸")
        self.timeline_button.setToolTip("Show the timeline of the chosen point's launch.")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setFormat("")
        self.progress.setTextVisible(True)
        self.progress.setMaximumWidth(160)
        self.progress.hide()
        for w, stretch in ((QLabel("sweep"), 0), (self.sweep, 1), (self.open_button, 0),
                           (self.measure_button, 0), (self.progress, 0), (self.timeline_button, 0)):
            row.addWidget(w, stretch)
        lay.addLayout(row)
        self.plot = series_plot("TFLOP/s as the matrix grows", "N", "TFLOP/s")
        self.plot.setMinimumSize(260, 140)  # fits the bottom dock of a 1024 x 640 window
        lay.addWidget(self.plot, 1)
        self.caption = QLabel("")
        self.caption.setProperty("role", "muted")
        self.caption.setWordWrap(True)
        lay.addWidget(self.caption)
        self._marker = None

        self.sweep.returnPressed.connect(self._on_sweep_entered)
        self.opener = PanelFile(self, "Open a measured sawtooth",
                                "Results (*.json *.csv);;All files (*)", read_measured,
                                model.set_measured, self.show_error, files,
                                lambda path: model.message.emit(f"Opening {path}…"))
        self.open_button.clicked.connect(self.open_dialog)
        self.measure_button.clicked.connect(self.measure_requested)
        self.timeline_button.clicked.connect(self.timeline_requested)
        self.plot.scene().sigMouseClicked.connect(self._on_clicked)
        model.changed.connect(self._on_changed)
        model.selection_changed.connect(self._on_selection_changed)
        self.set_can_measure(False, "Looking for a GPU…")
        self._on_changed()

    # -- model -> view -------------------------------------------------------------------------------
    def set_can_measure(self, ok: bool, why: str = "") -> None:
        self.measure_button.setEnabled(ok)
        self.measure_button.setToolTip("Time the three matmul kernels and cuBLAS at every size of "
                                       "the sweep on this machine's GPU." if ok else
                                       f"No GPU to measure on: {why}. The prediction works anyway.")

    def set_busy(self, busy: bool, done: int = 0, total: int = 0, label: str = "") -> None:
        self.progress.setVisible(busy)
        self.open_button.setEnabled(not busy)
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(min(done, max(1, total)))
        self.progress.setFormat(f"{done}/{total}" if total else label)
        self.progress.setToolTip(label)

    def _on_changed(self) -> None:
        m = self.model
        if self.sweep.text() != m.sweep_text:
            self.sweep.setText(m.sweep_text)
            self.sweep.setCursorPosition(0)
        self.redraw()

    def _on_selection_changed(self, _kernel: str, _index: int) -> None:
        self._draw_marker()
        self._show_caption()

    def _show_caption(self) -> None:
        """Every line when there is room; when narrow, the chosen launch only (all in the tooltip)."""
        text = self.caption_text()
        self.caption.setToolTip(text)
        self.caption.setText(text if self.width() >= NARROW else text.split("\n")[0])

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if (event.oldSize().width() >= NARROW) != (event.size().width() >= NARROW):
            self._show_caption()

    def redraw(self) -> None:
        m = self.model
        pi = self.plot.getPlotItem()
        clear_series_plot(pi)
        self._marker = None
        dims = m.dims_list[0] if m.dims_list else {}
        fixed = ", ".join(f"{d}={dims[d]:,}" for d in "MNK" if d != m.axis and d in dims)
        pi.setLabel("bottom", f"{m.axis} ({fixed})")
        measured = m.measured is not None
        where = f" · measured on {m.measured.device}" if measured else " · predicted"
        pi.setTitle(f"<span style='color:{style.FG};font-size:9pt'>TFLOP/s as the matrix grows on "
                    f"{m.gpu.name}{where}</span>")
        if not m.is_current():
            self.caption.setText("Predicting…")
            self.caption.setToolTip("")
            return
        # cuBLAS first, the tiled kernel last: on top where the persistent one runs beside it
        for s in sorted(m.series(), key=lambda s: -list(COLORS).index(s.kernel)):
            color = COLORS[s.kernel]
            if np.isfinite(s.median).any():
                draw_series(pi, s, color)
            else:  # nothing measured: the prediction is the curve
                line = pi.plot(s.x, s.predicted, pen=pg.mkPen(color, width=2, style=Qt.PenStyle.DashLine))
                pi.legend.addItem(line, f"{s.label} (predicted)")
                pi.addItem(pg.ScatterPlotItem(x=s.x, y=s.predicted, size=6, brush=pg.mkBrush(color),
                                              pen=pg.mkPen(None), hoverable=True,
                                              data=list(s.tips), tip=lambda x, y, data: data))
        for x, label in m.wave_marks():
            pen = pg.mkPen(style.ACCENT, width=1, style=Qt.PenStyle.DotLine)
            line = pg.InfiniteLine(pos=x, angle=90, pen=pen, label=label,
                                   labelOpts=dict(position=0.97, color=style.ACCENT, anchors=[(0, 0), (0, 0)]))
            pi.addItem(line)
        if m.wave_marks():
            legend_entry(pi, "a wave more (tiles)", pg.mkPen(style.ACCENT, width=1, style=Qt.PenStyle.DotLine))
        try:
            peak = tensor_tflops(m.gpu, m.dtype)
            draw_level(pi, peak, f"spec peak {peak:,.0f}", style.BAD, Qt.PenStyle.DotLine)
        except ValueError:  # no sourced tensor rate: no line
            pass
        cub = m.measured.points.get(CUBLAS) if measured else None
        if cub:
            best = max(p.tflops() for p in cub)
            draw_level(pi, best, f"cuBLAS best {best:,.0f}", style.GOOD, Qt.PenStyle.DashLine)
        fit_legend(pi)
        pi.enableAutoRange()
        pi.autoRange()
        self._draw_marker()
        self._show_caption()

    def caption_text(self) -> str:
        """The chosen launch, then where TFLOP/s drops by more than 10%, per kernel, on one line."""
        m = self.model
        fmt = lambda xs: ", ".join(f"{x:,.0f}" for x in xs) or "none"  # noqa: E731
        found, groups = m.drops(), {}
        for name in MATMULS:  # kernels with the same drops share one phrase
            meas, pred = found.get(name, ([], []))
            if not m.measured:
                text = f"at {fmt(pred)}"
            elif meas == pred:
                text = f"at {fmt(meas)}, as predicted"
            else:
                text = (f"measured at {fmt(meas)}, "
                        + (f"predicted at {fmt(pred)}" if pred else "none predicted"))
            groups.setdefault(text, []).append(TITLES[name])
        line = (f"Drops > 10% ({m.axis}): " + "; ".join(f"{' and '.join(names)} {text}"
                                                        for text, names in groups.items())
                if m.is_current() else "")
        notes = m.run.notes if m.run is not None else []
        return "\n".join(p for p in (m.describe_selection(), line, *notes) if p)

    def _draw_marker(self) -> None:
        pi = self.plot.getPlotItem()
        if self._marker is not None:
            pi.removeItem(self._marker)
            self._marker = None
        m = self.model
        if m.selected is None or not m.is_current():
            return
        kernel, i = m.selected
        series = {s.kernel: s for s in m.series()}.get(kernel)
        if series is None:
            return
        y = series.median[i] if np.isfinite(series.median[i]) else series.predicted[i]
        self._marker = pg.ScatterPlotItem(x=[series.x[i]], y=[y], size=18, symbol="o",
                                          brush=pg.mkBrush(None), pen=pg.mkPen("#ffffff", width=2))
        self._marker.setZValue(30)
        pi.addItem(self._marker)

    # -- view -> model -----------------------------------------------------------------------------
    def _on_sweep_entered(self) -> None:
        self.model.set_sweep(self.sweep.text())

    def _on_clicked(self, event) -> None:
        vb = self.plot.getPlotItem().vb
        if not vb.sceneBoundingRect().contains(event.scenePos()):
            return
        p = vb.mapSceneToView(event.scenePos())
        hit = self.nearest_point(p.x(), p.y())
        if hit is not None:
            self.model.select(*hit)

    def nearest_point(self, x: float, y: float, reach: float = 0.04) -> tuple[str, int] | None:
        """The matmul point (kernel, index) nearest to (x, y) in view coordinates, if it lies within
        `reach` of the view's size; a cuBLAS point picks the tiled kernel at that size."""
        (x0, x1), (y0, y1) = self.plot.getPlotItem().vb.viewRange()
        best, where = None, reach
        for s in self.model.series():
            for ys in (s.median, s.predicted):
                d = np.hypot((s.x - x) / max(x1 - x0, 1e-9), (ys - y) / max(y1 - y0, 1e-9))
                if np.isfinite(d).any():
                    i = int(np.nanargmin(d))
                    if d[i] < where:
                        best, where = (s.kernel if s.kernel in MATMULS else MATMULS[0], i), d[i]
        return best

    def open_dialog(self) -> None:
        self.opener.dialog()

    def open_path(self, path: str) -> bool:
        """Read `path` on this thread (tests, screenshots); Open… reads in the background."""
        return self.opener.now(path)

    def open_in_background(self, path: str) -> int | None:
        return self.opener.background(path)

    def show_error(self, line: str) -> None:
        self.model.message.emit(f"Could not open the sawtooth: {line}")

    def export_items(self):
        from gui.export import ExportItem

        m = self.model
        if not m.is_current():
            return []
        rows = []
        for s in m.series():
            for i, x in enumerate(s.x):
                rows.append([s.kernel, *(m.dims_list[i][d] for d in "MNK"), s.median[i], s.predicted[i]])
        return [ExportItem("waves_sawtooth", self.plot.getPlotItem(),
                           ["kernel", "M", "N", "K", "measured_tflops", "predicted_tflops"], rows)]


if __name__ == "__main__":  # this view alone, for a default launch: python -m gui.widgets.qt_waves [GPU N THREADS]
    from gui.panels import open_alone

    raise SystemExit(open_alone("waves"))
