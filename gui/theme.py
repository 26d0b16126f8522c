"""Switch a running window between the dark and the light theme (gui/style.THEMES).

The views draw with `style`'s colour names, so most of them only need to draw again. What was
made once with a colour in it (a plot's background and axes, a cursor's pen, a title's HTML, a
QLabel's rich text) is recoloured here: every colour of the old theme becomes the same name's
colour in the new one. Views that keep a colour table (the SM view, the Gantt charts) offer
`restyle()`, which is called. The export uses this to render slides in the light theme and put
the window back afterwards (gui/window_export.py).
"""

from __future__ import annotations

import re
from contextlib import contextmanager

import pyqtgraph as pg
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from gui import style

_HEX = re.compile(r"#[0-9a-fA-F]{6}\b")


def colour_map(old: str, new: str) -> dict[str, str]:
    """Lower-case '#rrggbb' of theme `old` -> the same name's colour in theme `new`."""
    a, b = style.THEMES[old], style.THEMES[new]
    out: dict[str, str] = {}
    for name, value in a.items():
        out.setdefault(value.lower(), b[name])
    return {k: v for k, v in out.items() if k != v.lower()}


def recolour_text(text: str, mapping: dict[str, str]) -> str:
    return _HEX.sub(lambda m: mapping.get(m.group(0).lower(), m.group(0)), text)


def apply_window_theme(win: QWidget, name: str) -> None:
    """Make `name` the theme of the application and redraw `win` (and its floating docks) in it."""
    old = style.current_theme()
    if old == name:  # the application already wears it (gui.app.make_app applied it)
        return
    style.apply_theme(QApplication.instance(), name)
    mapping = colour_map(old, name)
    for w in [win, *win.findChildren(QWidget)]:
        if isinstance(w, pg.GraphicsView):
            _recolour_view(w, mapping)
        elif isinstance(w, QLabel) and w.text():
            text = recolour_text(w.text(), mapping)
            if text != w.text():
                w.setText(text)
        restyle = getattr(w, "restyle", None)
        if callable(restyle):
            restyle()
        w.update()


@contextmanager
def theme(win: QWidget, name: str | None):
    """Within the block the window is in theme `name` (None: leave it); then back as it was."""
    before = style.current_theme()
    if name is None or name == before:
        yield
        return
    apply_window_theme(win, name)
    QApplication.processEvents()
    try:
        yield
    finally:
        apply_window_theme(win, before)
        QApplication.processEvents()


def _mapped_pen(pen, mapping):
    if pen is None:
        return None
    colour = pen.color().name().lower()
    if colour not in mapping:
        return None
    new = pg.mkPen(pen)
    c = QColor(mapping[colour])
    c.setAlpha(pen.color().alpha())
    new.setColor(c)
    return new


def _recolour_view(view: pg.GraphicsView, mapping: dict[str, str]) -> None:
    view.setBackground(style.PLOT_BG)
    scene = view.scene()
    if scene is None:
        return
    for item in scene.items():
        if isinstance(item, pg.AxisItem):
            item.setPen(pg.mkPen(style.FG))
            item.setTextPen(pg.mkPen(style.FG))
        elif isinstance(item, pg.LegendItem):
            item.setLabelTextColor(style.FG)
        elif isinstance(item, pg.LabelItem):
            colour = item.opts.get("color")
            if colour is not None and isinstance(colour, str):
                item.opts["color"] = mapping.get(colour.lower(), colour)
            item.setText(recolour_text(item.text, mapping))
        elif isinstance(item, pg.TextItem):
            colour = item.color.name().lower()
            if colour in mapping:
                item.setColor(mapping[colour])
        elif isinstance(item, pg.InfiniteLine):
            pen = _mapped_pen(item.pen, mapping)
            if pen is not None:
                item.setPen(pen)
        elif isinstance(item, pg.PlotDataItem):
            pen = _mapped_pen(pg.mkPen(item.opts["pen"]) if item.opts.get("pen") is not None
                              else None, mapping)
            if pen is not None:
                item.setPen(pen)
        elif isinstance(item, pg.ScatterPlotItem):
            pen = _mapped_pen(pg.mkPen(item.opts["pen"]), mapping)
            if pen is not None:
                item.setPen(pen)
