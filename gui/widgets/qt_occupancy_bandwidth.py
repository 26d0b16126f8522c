"""QtOccupancyBandwidth: predicted bandwidth against blocks per SM for the launch being looked at,
with a number of blocks per SM forced (the shared-memory "spoiler" published occupancy benchmarks
use), and the points of an open `bench --occupancy-sweep` result beside their predictions
(sim.model.occupancy_bandwidth, the launch model). In the window it is the Bandwidth panel's
"Bandwidth vs occupancy" tab; `python -m gui.occupancy_bandwidth` opens it alone.
"""

from __future__ import annotations

import html
import math

import pyqtgraph as pg
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSpinBox, QVBoxLayout, QWidget

from gui import style
from gui.models.launch import LaunchModel
from sim.model.confidence import prediction_confidence
from sim.model.launch_model import achievable_gbps, bytes_of, launch_of, predict_launch
from sim.model.occupancy_bandwidth import occupancy_curve, predict_point, sweep_points
from sim.rules.physics import same_gpu

KERNEL_COLORS = {"add": "ACCENT2", "copy": "GOOD", "scale": "MASKED"}


class QtOccupancyBandwidth(QWidget):
    """Reads `launch` (the GPU and launch) and, if given, `bench`'s open results (a sweep's points
    are drawn when they were measured on this GPU at this block size). The curve is computed when
    the view is shown (up to 32 launch-model runs, ~0.1 s), not while it is hidden."""

    def __init__(self, launch: LaunchModel, bench=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.launch, self.bench = launch, bench
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        row = QHBoxLayout()
        row.addWidget(QLabel("Force blocks per SM:"))
        self.forced = QSpinBox()
        self.forced.setSpecialValueText("not forced")
        self.forced.setToolTip("Blocks per SM a shared-memory spoiler (padding no thread touches) "
                               "leaves room for; 'not forced' is the launch's own occupancy")
        self.forced.valueChanged.connect(self._refresh)
        row.addWidget(self.forced)
        row.addStretch(1)
        lay.addLayout(row)
        self.plot = style.make_plot("Bandwidth against blocks per SM (launch model)",
                                    "blocks per SM (occupancy)", "GB/s")
        self.plot.setMinimumHeight(240)  # the window scrolls the tab rather than squash the axes
        self.plot.addLegend(offset=(8, 24))  # top left: the curve rises to the right
        lay.addWidget(self.plot, 1)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setTextFormat(pg.QtCore.Qt.TextFormat.RichText)
        lay.addWidget(self.note)
        self._curve_key, self._curve, self._dirty = None, [], True
        launch.changed.connect(self._on_changed)
        if bench is not None:
            bench.result_changed.connect(self._on_changed)
        self._on_changed()

    # -- following the models ----------------------------------------------------------------
    def _on_changed(self, *_args) -> None:
        self._dirty = True
        if self.isVisible():
            self._refresh()

    def showEvent(self, event) -> None:  # noqa: N802 (Qt)
        super().showEvent(event)
        if self._dirty:
            self._refresh()

    def restyle(self) -> None:
        self._refresh()

    def _refresh(self, *_args) -> None:
        self._dirty = False
        st = self.launch.state
        self.plot.clear()
        if not st.ok:
            self.note.setText(html.escape(st.error or (st.occ.reason if st.occ else "no launch")))
            return
        occ, geo, spec = st.occ, st.geometry, st.spec
        self.forced.blockSignals(True)
        self.forced.setRange(0, occ.blocks_per_sm)
        self.forced.blockSignals(False)
        key = (spec, occ, geo, st.bytes_moved)
        if key != self._curve_key:
            self._curve_key, self._curve = key, occupancy_curve(spec, occ, geo,
                                                                bytes_moved=st.bytes_moved)
        xs = [c.blocks_per_sm for c in self._curve]
        self.plot.plot(xs, [c.gbps for c in self._curve], pen=pg.mkPen(style.FG, width=2),
                       symbol="o", symbolSize=5, symbolBrush=style.FG, name="this launch, predicted")
        ceiling = achievable_gbps(spec)
        self.plot.addItem(pg.InfiniteLine(ceiling, angle=0, pen=pg.mkPen(style.MUTED, style=pg.QtCore.Qt.PenStyle.DashLine),
                                          label=f"ceiling {ceiling:,.0f} GB/s",
                                          labelOpts={"position": 0.5, "color": style.MUTED}))
        step = max(1, math.ceil(len(xs) / 8))
        shown = [c for c in self._curve if (c.blocks_per_sm - 1) % step == 0]
        if shown[-1] is not self._curve[-1]:  # the launch's own count, in place of a crowded one
            shown[-1 if xs[-1] - shown[-1].blocks_per_sm < step else len(shown):] = [self._curve[-1]]
        ticks = [(c.blocks_per_sm, f"{c.blocks_per_sm} ({c.occupancy:.0%})") for c in shown]
        self.plot.getPlotItem().getAxis("bottom").setTicks([ticks])
        own = self._curve[-1]
        n = self.forced.value() or own.blocks_per_sm
        pick = self._curve[n - 1]
        measured = self._measured(spec, geo.threads_per_block)  # drawn first: the marker on top
        self.plot.plot([pick.blocks_per_sm], [pick.gbps], pen=None, symbol="o", symbolSize=13,
                       symbolBrush=style.ACCENT, symbolPen=style.MARKER_EDGE,
                       name="forced" if self.forced.value() else "the launch's occupancy")
        p = predict_launch(spec, launch_of(occ, geo, bytes_moved=st.bytes_moved, blocks_per_sm=n))
        lines = [f"<b>{n} blocks/SM</b> ({pick.occupancy:.0%} of the warp slots"
                 f"{', forced' if self.forced.value() else ''}): <b>{p.bandwidth_gbps:,.0f} GB/s</b> "
                 f"predicted, {p.bound}-bound; the launch's own {own.blocks_per_sm} blocks/SM: "
                 f"{own.gbps:,.0f} GB/s ({html.escape(bytes_of(geo, st.bytes_moved)[1])}).",
                 html.escape(prediction_confidence(spec, p).label)]
        lines += measured
        self.note.setText("<br>".join(f"<span style='color:{style.MUTED if i else style.FG}'>{t}</span>"
                                      for i, t in enumerate(lines)))

    def _measured(self, spec, threads: int) -> list[str]:
        """Draw the open sweep's points at this block size; the lines that say what they are."""
        result = getattr(self.bench, "result", None)
        points = sweep_points(result.measurements) if result is not None else []
        if not points:
            return []
        device = str(result.device.get("name", "")) if isinstance(result.device, dict) else ""
        if not same_gpu(device, spec):
            return [f"The open sweep was measured on the {html.escape(device or 'another GPU')}: "
                    f"choose that GPU to see its points."]
        here = [q for q in points if q.threads == threads]
        if not here:
            sizes = sorted({q.threads for q in points})
            return [f"The open sweep has no {threads}-thread points (it has {sizes})."]
        out = []
        for kernel in dict.fromkeys(q.kernel for q in here):
            mine = [q for q in here if q.kernel == kernel]
            color = getattr(style, KERNEL_COLORS.get(kernel, "ACCENT2"))
            preds = [predict_point(spec, q).bandwidth_gbps for q in mine]
            dtype = mine[0].dtype
            self.plot.plot([q.blocks_per_sm for q in mine], [q.measured_gbps for q in mine], pen=None,
                           symbol="s", symbolSize=9, symbolBrush=color,
                           name=f"{kernel} {dtype}, measured")
            self.plot.plot([q.blocks_per_sm for q in mine], preds, pen=None, symbol="s", symbolSize=9,
                           symbolBrush=None, symbolPen=pg.mkPen(color, width=2),
                           name=f"{kernel} {dtype}, its prediction")
            errs = ", ".join(f"{q.forced_text} {p / q.measured_gbps - 1:+.0%}" for q, p in zip(mine, preds))
            out.append(f"{kernel} {dtype} (measured {html.escape(str(result.created)[:10])}): "
                       f"prediction vs measured {errs}")
        return out

