"""Exported plots laid out for slides, and the check that they are whole.

Every plot is exported at a fixed size (`slide_size`), not at whatever its dock, a narrow window
or a hidden tab left it: at 1024 x 640 a long caption made the occupancy plots wider than their
image (cut on the right) and a plot behind a tab kept a stale size. `layout_problems` says what
leaves its image or covers the data; tests/gui/test_export_layout.py runs it on every export.
"""

from __future__ import annotations

import html
import re
from contextlib import contextmanager

from PySide6.QtCore import QRectF
from PySide6.QtGui import QFont, QFontMetricsF, QImage, QPainter, QResizeEvent
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from gui import style

SLIDE_SIZE = (720, 450)  # px: every exported plot, whatever the window's size (x2 in the PNG)
SLIDE_STRIP = (1200, 360)  # a plot much wider than tall (the timeline, the residency strip)


STRIP = "export_strip"  # a view's property: exported as a strip (the timeline, the residency)


WIDE = "export_wide"  # a widget's property: two plots side by side, exported at SLIDE_WIDE
SLIDE_WIDE = (1200, 480)
TALL = "export_tall"  # a column of small plots (the occupancy view), exported at SLIDE_TALL
SLIDE_TALL = (420, 780)


def slide_size(view) -> tuple[int, int]:
    """The size a plot is exported at: fixed, so an export is the same at every window size."""
    for prop, size in ((STRIP, SLIDE_STRIP), (WIDE, SLIDE_WIDE), (TALL, SLIDE_TALL)):
        if view.property(prop):
            return size
    return SLIDE_SIZE


@contextmanager
def sized_view(view, size: tuple[int, int]):
    """`view` (a pyqtgraph GraphicsView, or a widget holding some) laid out at `size` for
    rendering, then put back. Its parent layout is not asked: what is inside is re-laid out at
    `size` directly."""
    old, limits = view.size(), (view.minimumSize(), view.maximumSize())
    view.setMinimumSize(0, 0)
    view.setMaximumSize(16777215, 16777215)  # a strip's fixed 78 px would refuse the slide size
    _resize(view, size)
    try:
        yield view
    finally:
        view.setMinimumSize(limits[0])
        view.setMaximumSize(limits[1])
        _resize(view, (old.width(), old.height()))


def _resize(widget, size) -> None:
    import pyqtgraph as pg

    old = widget.size()
    widget.resize(*size)
    # sent now, not when shown: a view behind a tab would render its viewport at the old size
    QApplication.sendEvent(widget, QResizeEvent(widget.size(), old))
    if widget.layout() is not None:
        widget.layout().activate()
    views = [widget] if isinstance(widget, pg.GraphicsView) else widget.findChildren(pg.GraphicsView)
    for view in views:
        if view is not widget:
            QApplication.sendEvent(view, QResizeEvent(view.size(), view.size()))
        view.resizeEvent(None)  # pyqtgraph sizes its plot here; a never-shown view skips the event
        item = getattr(view, "centralWidget", None)
        layout = getattr(item, "layout", None)
        if layout is None:
            continue
        # twice, drawn in between: an axis sets its height from the tick labels it draws
        # (no posted events otherwise: the parent's layout would size the view back)
        for _ in range(2):
            layout.invalidate()
            layout.activate()
            img = QImage(max(1, view.width()), max(1, view.height()), QImage.Format.Format_ARGB32)
            p = QPainter(img)
            view.scene().render(p)  # the scene, not the view: a hidden view paints nothing
            p.end()
            QApplication.sendPostedEvents(item, 0)
        layout.activate()


@contextmanager
def widget_slide(widget: QWidget):
    """A widget marked `export_wide` or `export_tall` (the latency plots and their legend, the
    occupancy column) at its slide size; any other as it is on screen."""
    if widget.property(WIDE) or widget.property(TALL):
        with sized_view(widget, slide_size(widget)):
            yield
    else:
        yield


def lay_out(widget: QWidget) -> None:
    """Apply every pending layout under `widget` now: a view behind a tab keeps the geometry of
    before its last change (a legend that grew a line was still one line tall when drawn)."""
    QApplication.sendPostedEvents()
    for w in [widget, *widget.findChildren(QWidget)]:
        if w.layout() is not None:
            w.layout().activate()


def plot_image(widget, scale: float = 2.0) -> QImage:
    """A plot, or a widget marked for its slide size, rendered at that size (the summary
    page's panels: grabbed at the window's size, a narrow window cut them)."""
    from gui.export import render_image

    with sized_view(widget, slide_size(widget)):
        return render_image(widget, scale)


def wrapped(text: str, width_px: float, point_size: float) -> str:
    """`text` as escaped lines of at most `width_px` (joined with <br>), broken at its " · "
    separators first, then at spaces."""
    f = QFont()
    f.setPointSizeF(point_size)
    fm = QFontMetricsF(f)
    lines: list[str] = []
    for word in re.split(r"(?<=·) | (?=·)|\s+", text.strip()):
        trial = f"{lines[-1]} {word}" if lines else word
        if lines and fm.horizontalAdvance(trial) <= width_px:
            lines[-1] = trial
        else:
            lines.append(word)
    # a line never starts with the separator
    lines = [ln[2:] if ln.startswith("· ") else ln for ln in lines]
    return "<br>".join(html.escape(ln) for ln in lines if ln)


@contextmanager
def slide_plot(pi, item, caption: str):
    """The plot at its slide size, titled with what it shows and the caption (wrapped to its
    width), both axes shown and labelled; put back as it was afterwards."""
    old_title = pi.titleLabel.text if pi.titleLabel.isVisible() else ""
    view = pi.getViewWidget()
    # a chart whose title keeps to what fits the window (qt_timeline) is exported with all of it
    plain = (getattr(view, "full_title", "") or re.sub(r"<[^>]+>", "", old_title).strip()
             or item.title or item.name.replace("_", " "))
    hidden = [k for k in ("bottom", "left") if not pi.getAxis(k).isVisible()]
    relabelled = []
    for key, label in zip(("bottom", "left"), item.axes or ("", "")):
        if label and not pi.getAxis(key).labelText:
            relabelled.append(key)
            pi.setLabel(key, label)
    for key in hidden:
        pi.showAxis(key)
    size = slide_size(view) if view is not None else SLIDE_SIZE
    room = size[0] - 40
    pi.setTitle(f"<span style='color:{style.FG};font-size:9pt'>{wrapped(plain, room, 9)}</span><br>"
                f"<span style='color:{style.MUTED};font-size:8pt'>{wrapped(caption, room, 8)}</span>")
    # a chart whose time axis follows another's (a trace's three) keeps its own range: linked, a
    # slide wider than the window would stretch the axis past the data
    linked = pi.vb.linkedView(pi.vb.XAxis)
    if linked is not None:
        pi.vb.setXLink(None)
    QApplication.processEvents()
    try:
        if view is None:
            yield
        else:
            with sized_view(view, size):
                yield
    finally:
        if linked is not None:
            pi.vb.setXLink(linked)
        pi.setTitle(old_title or None)
        if hasattr(view, "fit_title"):
            view.fit_title(force=True)  # its one window line again
        for key in hidden:
            pi.hideAxis(key)
        for key in relabelled:
            pi.setLabel(key, "")
            pi.getAxis(key).showLabel(False)
        QApplication.processEvents()


# -- the check -------------------------------------------------------------------------------------

def layout_problems(target, name: str = "") -> list[str]:
    """What leaves the exported image or covers the data: for a plot, its title, axes, legend
    and data area outside the view, or a legend over a curve's points; for a widget, a child
    outside it, two children overlapping, or a wrapped label shorter than its text."""
    import pyqtgraph as pg

    if isinstance(target, pg.PlotItem):
        return _plot_problems(target, name)
    out: list[str] = []
    kids = [w for w in target.findChildren(QWidget) if w.parentWidget() is target
            and w.isVisibleTo(target) and not w.isWindow()]
    for w in kids:
        if not QRectF(target.rect()).adjusted(-1, -1, 1, 1).contains(QRectF(w.geometry())):
            out.append(f"{name}: {type(w).__name__} {_r(w.geometry())} leaves {_r(target.rect())}")
        if isinstance(w, QLabel) and w.wordWrap() and w.text():
            need = w.heightForWidth(w.width())
            if need > w.height() + 1:
                out.append(f"{name}: a label needs {need} px and has {w.height()}: its text spills")
        if isinstance(w, pg.PlotWidget):
            out += _plot_problems(w.getPlotItem(), name)
    for i, a in enumerate(kids):
        for b in kids[i + 1:]:
            if a.geometry().intersects(b.geometry()):
                out.append(f"{name}: {type(a).__name__} {_r(a.geometry())} overlaps "
                           f"{type(b).__name__} {_r(b.geometry())}")
    return out


def _plot_problems(pi, name: str) -> list[str]:
    import pyqtgraph as pg

    view = pi.getViewWidget()
    if view is None:
        return []
    image = view.mapToScene(view.rect()).boundingRect().adjusted(-1, -1, 1, 1)
    parts = [("title", pi.titleLabel), ("data area", pi.vb)]
    parts += [(f"{k} axis", pi.getAxis(k)) for k in ("left", "bottom", "right", "top")]
    legends = [it for it in pi.scene().items() if isinstance(it, pg.LegendItem)
               and it.isVisible() and it.items and (it.parentItem() in (pi, pi.vb) or it.parentItem() is None
                                                   or pi.isAncestorOf(it))]
    parts += [("legend", lg) for lg in legends]
    out = []
    for what, item in parts:
        # its own rectangle (an axis's bounding rect spans the grid lines it draws)
        rect = QRectF(item.scenePos(), item.geometry().size())
        if item.isVisible() and not image.contains(rect):
            out.append(f"{name}: its {what} {_r(rect)} leaves the image {_r(image)}")
    data = pi.vb.sceneBoundingRect()
    if data.width() < 60 or data.height() < 40:
        out.append(f"{name}: the data area is squeezed to {_r(data)}")
    for lg in legends:
        box = QRectF(lg.scenePos(), lg.geometry().size())
        if not box.intersects(data):
            continue
        for curve in pi.listDataItems():
            x, y = curve.getData()
            if x is None or not curve.isVisible():
                continue
            for px, py in zip(x, y):
                if box.contains(pi.vb.mapViewToScene(pg.Point(float(px), float(py)))):
                    out.append(f"{name}: the legend {_r(box)} covers a point of a curve")
                    break
    return out


def _r(rect) -> str:
    return f"({rect.x():.0f},{rect.y():.0f} {rect.width():.0f}x{rect.height():.0f})"


def image_problems(pi, image: QImage, name: str = "") -> list[str]:
    """What the rendered `image` of plot `pi` lost: the bottom axis line is drawn across the
    whole data area, so a row of it that stops short means the image was cut (a view behind a
    tab once rendered its stale 240 px viewport into a 720 px image)."""
    axis = pi.getAxis("bottom")
    if not axis.isVisible():
        return []
    view = pi.getViewWidget()
    scale = image.width() / max(1, view.width())
    data = pi.vb.sceneBoundingRect()
    y = round(QRectF(axis.scenePos(), axis.geometry().size()).top() * scale)
    x0, x1 = round(data.left() * scale) + 2, round(data.right() * scale) - 2
    if not 0 <= y < image.height() or x1 <= x0:
        return [f"{name}: the bottom axis is outside the image"]
    bg = image.pixelColor(1, 1)
    # the pen is a pixel or two wide at this scale: look at the rows around it
    drawn = sum(any(image.pixelColor(x, yy) != bg for yy in range(max(0, y - 2), min(image.height(), y + 3)))
                for x in range(x0, x1))
    if drawn < 0.9 * (x1 - x0):
        return [f"{name}: the axis line is drawn across {drawn / (x1 - x0):.0%} of the data area: the image is cut"]
    return []
