"""Measured curves, drawn one way everywhere: median line, p20-p80 band, the scheduler's dashed
prediction and hoverable points, with the legend beside the plot where it covers nothing."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from gui import style
from gui.models.bench import Series

PREDICTION_LABEL = "simulated (dashed)"


def series_plot(title: str, xlabel: str, ylabel: str, logx: bool = False,
                logy: bool = False) -> pg.PlotWidget:
    """A plot for measured series, with its legend in a column right of the data."""
    w = style.make_plot(title, xlabel, ylabel,
                        tuple(k for k, on in (("bottom", logx), ("left", logy)) if on))
    pi = w.getPlotItem()
    legend = pg.LegendItem(labelTextSize="8pt", labelTextColor=style.FG, brush=pg.mkBrush(None),
                           pen=pg.mkPen(None), verSpacing=-8)
    pi.layout.addItem(legend, 2, 3)
    pi.layout.setAlignment(legend, Qt.AlignmentFlag.AlignTop)
    # the title spans the data and the legend, so a long title does not squeeze the legend
    pi.layout.removeItem(pi.titleLabel)
    pi.layout.addItem(pi.titleLabel, 0, 1, 1, 3)
    pi.legend = legend
    return w


def clear_series_plot(pi: pg.PlotItem) -> None:
    """Remove every curve; the range stays put until the caller autoranges once after adding
    them (a range refitted after each item added is most of the cost of a redraw)."""
    pi.disableAutoRange()
    pi.clear()
    pi.legend.clear()


def legend_entry(pi: pg.PlotItem, label: str, pen) -> None:
    """A legend line that is not a curve (the prediction's dash, a ceiling)."""
    pi.legend.addItem(pg.PlotDataItem([], [], pen=pen), label)


def draw_series(pi: pg.PlotItem, series: Series, color: str) -> None:
    """One kernel's curve: the median as a line, the p20-p80 band, the dashed prediction in the
    same colour, and points whose tooltip tells the launch and how it was timed."""
    x = series.x
    lx = np.log10(x) if pi.ctrl.logXCheck.isChecked() else x  # items below the curve use view x
    c = QColor(color)
    band = pg.FillBetweenItem(pg.PlotDataItem(lx, series.p20, pen=pg.mkPen(None)),
                              pg.PlotDataItem(lx, series.p80, pen=pg.mkPen(None)),
                              brush=pg.mkBrush(c.red(), c.green(), c.blue(), 60))
    pi.addItem(band)
    line = pi.plot(x, series.median, pen=pg.mkPen(color, width=2))
    pi.legend.addItem(line, series.label)
    if np.isfinite(series.predicted).any():
        pi.plot(x, series.predicted, connect="finite",
                pen=pg.mkPen(color, width=1.5, style=Qt.PenStyle.DashLine))
        if not any(label.text == PREDICTION_LABEL for _, label in pi.legend.items):
            legend_entry(pi, PREDICTION_LABEL, pg.mkPen(style.FG, width=1.5, style=Qt.PenStyle.DashLine))
    pi.addItem(pg.ScatterPlotItem(x=lx, y=series.median, size=8, brush=pg.mkBrush(color),
                                  pen=pg.mkPen(style.MARKER_EDGE), hoverable=True, data=list(series.tips),
                                  tip=lambda x, y, data: data))


def draw_level(pi: pg.PlotItem, gbps: float, label: str, color: str, dash) -> None:
    """A horizontal reference (copy ceiling, theoretical peak), named in the legend."""
    pen = pg.mkPen(color, width=1.2, style=dash)
    pi.addItem(pg.InfiniteLine(pos=gbps, angle=0, pen=pen))
    legend_entry(pi, label, pen)


def fit_legend(pi: pg.PlotItem) -> None:
    """Keep the legend as tall as its entries (the plot's row would spread them out) and as wide
    as its longest one (a narrow plot would cut its names)."""
    legend = pi.legend
    legend.layout.activate()
    legend.setMaximumHeight(legend.layout.preferredHeight() + 4)
    legend.setMinimumWidth(legend.layout.preferredWidth())
    # Qt lays the plot out on a posted LayoutRequest: until that event runs, the legend keeps
    # its old geometry (x=0 on a first draw). Lay it out now, so a drawn plot is a placed plot.
    pi.layout.invalidate()
    pi.layout.activate()
