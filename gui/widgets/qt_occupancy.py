"""QtOccupancy: the limiter bars and the Occupancy Calculator's three sweeps, live.

Top: blocks per SM each limiter allows (warps, blocks, registers, shared memory); the binding
one(s) in the accent colour. Below: active warps per SM against threads per block, registers per
thread and shared memory per block, with the current launch marked. For a compiled Triton kernel
the threads curve has one point per num_warps, each with the registers the compiler gave it
(recompiled in the background: LaunchModel.curves_changed).
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QCheckBox, QGridLayout, QLabel, QVBoxLayout, QWidget

from gui import style
from gui.models.compiled import provisional_text
from gui.models.launch import LaunchModel, LaunchState
from sim.rules.occupancy import LIMITERS
from sim.rules.occupancy_working import Working, working


def _plot(title: str, xlabel: str, ylabel: str = "active warps / SM") -> pg.PlotWidget:
    w = style.make_plot(title, xlabel, ylabel)
    w.setMinimumHeight(100)
    return w


class QtOccupancy(QWidget):
    def __init__(self, model: LaunchModel, simulation=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.setProperty("export_tall", True)  # the summary page draws it at a fixed size
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(4)
        self._make_labels(lay)
        self._make_plots(lay)
        self._make_bars()
        self._make_sweeps()
        self._state: LaunchState | None = None
        self._working: Working | None = None
        self._sweeps: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        model.changed.connect(self._on_launch_changed)
        model.curves_changed.connect(self._on_curves_changed)
        if simulation is not None:
            simulation.changed.connect(self._on_run_changed)
            self._on_run_changed(simulation.run, simulation.message)
        self._on_launch_changed(model.state)

    def _make_labels(self, lay: QVBoxLayout) -> None:
        """The summary line, achieved occupancy, the working behind the bars and the curve note."""
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        lay.addWidget(self.summary)
        # achieved beside theoretical, once the launch is simulated (gui.models.simulation.SimRun)
        self.achieved = QLabel("")
        self.achieved.setWordWrap(True)
        self.achieved.setToolTip("Achieved occupancy: resident warps averaged over the time each SM "
                                 "is active, over its warp slots (Nsight Compute's "
                                 "sm__warps_active.avg.pct_of_peak_sustained_active). Waves per SM: "
                                 "grid blocks / (SMs x blocks per SM).")
        lay.addWidget(self.achieved)
        self.working = QLabel("")  # the arithmetic behind the bars (sim.rules.occupancy_working)
        self.working.setWordWrap(True)
        self.working.setTextFormat(Qt.TextFormat.RichText)
        self.working.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.working.hide()
        self.show_working = QCheckBox("show the working")
        self.show_working.setToolTip("Each limiter's arithmetic in this launch's numbers, as the "
                                     "CUDA Occupancy Calculator works it (the bars' tooltip too)")
        self.show_working.toggled.connect(lambda _on: self._show_working())
        lay.addWidget(self.show_working)
        lay.addWidget(self.working)
        self.curve_note = QLabel("")
        self.curve_note.setWordWrap(True)
        self.curve_note.setProperty("role", "muted")
        self.curve_note.hide()
        lay.addWidget(self.curve_note)

    def _make_plots(self, lay: QVBoxLayout) -> None:
        self._grid = QGridLayout()
        self._grid.setSpacing(4)
        self.bars = _plot("Blocks per SM, by limit", "", "")  # the title names the axis: room for the bars
        self.bars.setMinimumHeight(130)  # four rows, each as tall as its label: none overlaps
        self.threads_plot = _plot("Warps vs threads per block", "threads per block", "warps / SM")
        self.regs_plot = _plot("vs registers", "registers per thread", "warps / SM")
        self.smem_plot = _plot("vs shared memory", "KiB per block", "warps / SM")
        self._side_by_side: bool | None = None
        self._arrange(side_by_side=True)
        lay.addLayout(self._grid, 1)

    def _make_bars(self) -> None:
        """One bar per limiter, each with its label."""
        bi = self.bars.getPlotItem()
        bi.invertY(True)
        ax = bi.getAxis("left")
        short = {"shared memory": "shared mem"}  # the axis stays narrow in a narrow dock
        ax.setTicks([[(i, short.get(name, name)) for i, name in enumerate(LIMITERS)]])
        self._bar_item = pg.BarGraphItem(
            x0=[0] * 4, y=list(range(4)), height=0.6, width=[0] * 4, brushes=[style.ACCENT2] * 4
        )
        bi.addItem(self._bar_item)
        self._bar_texts = []
        for i in range(4):
            t = pg.TextItem("", color=style.FG, anchor=(0, 0.5))
            bi.addItem(t)
            self._bar_texts.append(t)

    def _make_sweeps(self) -> None:
        """Each sweep's curve, and the current launch on it (a dashed line and a dot)."""
        self._curves = {}
        self._markers = {}
        self._vlines = {}
        for key, plot in (
            ("threads", self.threads_plot),
            ("registers", self.regs_plot),
            ("smem", self.smem_plot),
        ):
            pi = plot.getPlotItem()
            curve = pi.plot(
                [],
                [],
                pen=pg.mkPen(style.ACCENT2, width=2),
                symbol="o" if key == "threads" else None,
                symbolSize=4,
                symbolBrush=style.ACCENT2,
                symbolPen=None,
            )
            vline = pg.InfiniteLine(
                angle=90, pen=pg.mkPen(style.ACCENT, width=1, style=Qt.PenStyle.DashLine)
            )
            marker = pg.ScatterPlotItem(
                size=11, brush=pg.mkBrush(style.ACCENT), pen=pg.mkPen(style.MARKER_EDGE, width=1)
            )
            pi.addItem(vline)
            pi.addItem(marker)
            self._curves[key] = curve
            self._markers[key] = marker
            self._vlines[key] = vline

    # -- layout --------------------------------------------------------------------------------------
    SIDE_BY_SIDE_WIDTH = 440  # below this the two small charts stack, so their labels fit

    def _arrange(self, side_by_side: bool) -> None:
        if side_by_side == self._side_by_side:
            return
        self._side_by_side = side_by_side
        g = self._grid
        for w in (self.bars, self.threads_plot, self.regs_plot, self.smem_plot):
            g.removeWidget(w)
        g.addWidget(self.bars, 0, 0, 1, 2)
        g.addWidget(self.threads_plot, 1, 0, 1, 2)
        if side_by_side:
            g.addWidget(self.regs_plot, 2, 0)
            g.addWidget(self.smem_plot, 2, 1)
        else:
            g.addWidget(self.regs_plot, 2, 0, 1, 2)
            g.addWidget(self.smem_plot, 3, 0, 1, 2)
        for row in range(4):
            g.setRowStretch(row, 0 if row == 3 and side_by_side else 1)

    def resizeEvent(self, event) -> None:
        self._arrange(event.size().width() >= self.SIDE_BY_SIDE_WIDTH)
        super().resizeEvent(event)

    # -- model -> view ----------------------------------------------------------------------------
    def _on_launch_changed(self, state: LaunchState) -> None:
        self._state = state
        spec = state.spec
        occ = state.occ
        if occ is None:
            self.summary.setText(f"<span style='color:{style.BAD}'>{state.error or state.asking}</span>")
            self._working = None
            self._show_working()
            return
        self._working = working(spec, occ)
        self._show_working()
        pending = provisional_text(state.origin)
        self._grey(bool(pending))
        self._show_summary(state, pending)
        self._draw_bars(state, pending)
        self._draw_curves(state)

    def _show_summary(self, state: LaunchState, pending: str) -> None:
        occ, inp = state.occ, state.inputs
        if pending:  # no occupancy yet: what is drawn below assumes the registers shown now
            self.summary.setText(
                f"<b style='font-size:12pt;color:{style.MUTED}'>{pending}</b> &nbsp; "
                f"<span style='color:{style.MUTED}'>occupancy waits for the compiler's registers "
                f"and shared memory; the greyed charts assume {inp.regs_per_thread} registers "
                f"and {inp.smem_per_block:,} B</span>")
        elif occ.can_launch:
            lim = " and ".join(occ.limited_by)
            self.summary.setText(
                f"<b style='font-size:12pt'>{occ.occupancy:.0%}</b> theoretical occupancy &nbsp; "
                f"<b>{occ.blocks_per_sm}</b> blocks/SM × {occ.warps_per_block} warps = "
                f"<b>{occ.active_warps_per_sm}</b>/{occ.max_warps_per_sm} warp slots &nbsp; "
                f"limited by <b style='color:{style.ACCENT}'>{lim}</b>"
            )
        else:
            self.summary.setText(
                f"<span style='color:{style.BAD}'><b>0 blocks per SM</b> — {occ.reason}</span>"
            )

    def _draw_bars(self, state: LaunchState, pending: str) -> None:
        """The limiter bars: the axis stops a little past the hardware's blocks-per-SM cap, so
        small limits stay readable; a limit beyond the axis is drawn to its edge and labelled."""
        occ = state.occ
        vals, brushes, texts = [], [], []
        cap = state.spec.max_blocks_per_sm
        edge = cap * 1.12
        for name in LIMITERS:
            v = occ.limits.get(name)
            binding = name in occ.limited_by
            if v is None:
                vals.append(edge)
                brushes.append(pg.mkBrush(QColor(60, 66, 78, 120)))
                texts.append("no limit")
            else:
                vals.append(min(v, edge))
                brushes.append(pg.mkBrush(style.ACCENT if binding else style.ACCENT2))
                texts.append(
                    f"{v}" + (" ›" if v > edge else "")
                    + ("  ← binding" if binding and occ.can_launch and not pending else "")
                )
        self._bar_item.setOpts(width=vals, brushes=brushes)
        for i, (t, v) in enumerate(zip(texts, vals)):
            # a long bar carries its label inside its end, a short one just after it: a label
            # never runs off the chart
            inside = v > edge * 0.5
            self._bar_texts[i].setAnchor((1, 0.5) if inside else (0, 0.5))
            self._bar_texts[i].setColor(style.ON_BAR if inside and occ.limits.get(LIMITERS[i]) is not None
                                        else style.FG)
            self._bar_texts[i].setText(t)
            self._bar_texts[i].setPos(v - cap * 0.01 if inside else v + cap * 0.01, i)
        self.bars.getPlotItem().setXRange(0, edge, padding=0.02)
        self.bars.getPlotItem().setYRange(-0.6, 3.6, padding=0)

    def _draw_curves(self, state: LaunchState) -> None:
        """The three sweeps around the launch (LaunchModel.curves), the launch marked on each."""
        occ, inp, spec = state.occ, state.inputs, state.spec
        curves = self.model.curves
        note = curves.threads_note if curves is not None else ""
        self.curve_note.setText(f"Threads curve: {note}.")
        self.curve_note.setVisible(bool(note))
        if curves is not None:
            warps = occ.active_warps_per_sm
            self._set_sweep("threads", *curves.threads, inp.threads_per_block, warps)
            self._set_sweep("registers", *curves.registers, inp.regs_per_thread, warps)
            xs, ys = curves.smem
            self._set_sweep("smem", xs / 1024.0, ys, inp.smem_per_block / 1024.0, warps, raw_x=xs)
        for plot in (self.threads_plot, self.regs_plot, self.smem_plot):
            plot.getPlotItem().setYRange(0, spec.max_warps_per_sm * 1.05, padding=0)

    def _grey(self, on: bool) -> None:
        """Charts of numbers not known yet are drawn faint, not hidden: the layout stays put.
        (The plot items' own opacity: a widget's opacity effect on a graphics view paints
        what lay under it.)"""
        for plot in (self.bars, self.threads_plot, self.regs_plot, self.smem_plot):
            plot.getPlotItem().setOpacity(0.3 if on else 1.0)

    @property
    def provisional(self) -> bool:
        return self.bars.getPlotItem().opacity() < 1.0

    def _on_run_changed(self, run, _message: str = "") -> None:
        a = getattr(run, "achieved", None)
        self.achieved.setText("" if a is None else
                              f"Simulated: <b>{a.text()}</b> · {a.waves_per_sm:,.2f} waves per SM")
        self.achieved.setVisible(a is not None)

    def _show_working(self) -> None:
        """Each limiter's steps on one line, arrows between them, the binding ones in the accent
        colour; behind a tick box, as it is taller than the charts it explains."""
        work = self._working
        self.working.setVisible(work is not None and self.show_working.isChecked())
        if work is None:
            self.working.setText("")
            return
        self.bars.setToolTip("\n".join(work.lines()))
        lines = []
        for lw in work.limiters:
            colour = style.ACCENT if lw.binds else style.FG
            steps = " &rarr; ".join(html.escape(s) for s in lw.steps)
            lines.append(f"<b style='color:{colour}'>{html.escape(lw.limiter)}</b> "
                         f"<span style='color:{style.MUTED}'>({lw.ncu_name})</span>: {steps}")
        lines.append(html.escape(work.conclusion))
        self.working.setText("<br>".join(lines))

    def working_text(self) -> list[str]:
        """The working as plain lines (the export's summary)."""
        return self._working.lines() if self._working is not None else []

    def _on_curves_changed(self) -> None:
        self._on_launch_changed(self.model.state)

    def _set_sweep(self, key: str, xs, ys, x_now, y_now, raw_x=None) -> None:
        xs = np.asarray(xs, dtype=float)
        ys = np.asarray(ys, dtype=float)
        self._sweeps[key] = (np.asarray(raw_x if raw_x is not None else xs), ys)
        self._curves[key].setData(xs, ys)
        self._markers[key].setData([x_now], [y_now])
        self._vlines[key].setPos(x_now)

    # -- for tests and export ---------------------------------------------------------------------
    def sweep_data(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        return self._sweeps[key]

    def marker(self, key: str) -> tuple[float, float]:
        x, y = self._markers[key].getData()
        return float(x[0]), float(y[0])

    def limiter_values(self) -> dict:
        return dict(self._state.occ.limits) if self._state and self._state.occ else {}

    def export_items(self):
        from gui.export import ExportItem

        st = self._state
        items = []
        if st is None or st.occ is None:
            return items
        occ = st.occ
        rows = [[lw.limiter, "" if lw.blocks is None else lw.blocks, int(lw.binds), lw.ncu_name,
                 " -> ".join(lw.steps)] for lw in working(st.spec, occ).limiters]
        items.append(
            ExportItem(
                "occupancy_limiters",
                self.bars.getPlotItem(),
                ["limiter", "blocks_per_sm_allowed", "binding", "ncu_name", "working"],
                rows,
            )
        )
        for key, plot, xname in (
            ("threads", self.threads_plot, "threads_per_block"),
            ("registers", self.regs_plot, "regs_per_thread"),
            ("smem", self.smem_plot, "smem_per_block_bytes"),
        ):
            if key in self._sweeps:
                xs, ys = self._sweeps[key]
                cur = {
                    "threads": st.inputs.threads_per_block,
                    "registers": st.inputs.regs_per_thread,
                    "smem": st.inputs.smem_per_block,
                }[key]
                rows = [[int(x), int(y), int(int(x) == cur)] for x, y in zip(xs, ys)]
                items.append(
                    ExportItem(
                        f"occupancy_vs_{key}",
                        plot.getPlotItem(),
                        [xname, "active_warps_per_sm", "is_current_launch"],
                        rows,
                    )
                )
        return items


if __name__ == "__main__":  # this view alone, for a default launch: python -m gui.widgets.qt_occupancy [GPU N THREADS]
    from gui.panels import open_alone

    raise SystemExit(open_alone("occupancy"))
