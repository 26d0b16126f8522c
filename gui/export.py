"""Export: every plot to PNG, SVG and CSV; the session to JSON; a one-page PNG + HTML summary.

Every file is written whole (sim.inputs.files: a temporary file in the same folder, flushed, renamed),
PNG and SVG included, so a kill, a full disk or an unwritable folder never leaves a truncated
file in place of a good one. `export_to_folder` renders a whole export into a staging folder
and swaps it for the earlier export in one rename (gui/export_folder.py: old and new are never
mixed, and a file WarpScope did not write is never changed or removed).

For slides: every file names its GPU and launch (`caption`): a plot gets it under its title (and
its axes shown, labelled), a view drawn by hand gets a title band above it. The theme is chosen by
the caller (gui/window_export.py renders in the light theme unless told otherwise).

SVG: pyqtgraph 0.14's SVGExporter breaks on Qt >= 6.11 (pyqtgraph issue #3495: Qt now closes
paths with `Z`). We try it and, if it raises or writes nothing parseable, render the same item
with QSvgGenerator instead, so SVG export works on every Qt.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter
from PySide6.QtWidgets import QWidget

from gui import style
from gui.export_layout import lay_out, slide_plot, widget_slide
from sim.inputs.errors import UserError
from gui.export_folder import export_target, replace_folder
from sim.inputs.files import atomic_file, write_bytes_atomic, write_text_atomic


@dataclass(frozen=True)
class ExportItem:
    """One exportable view: a pyqtgraph PlotItem or a QWidget, plus the points it shows."""

    name: str
    target: Any
    header: list
    rows: list
    title: str = ""  # what the figure shows, when its plot has no title of its own
    axes: tuple[str, str] | None = None  # (bottom, left) labels for a plot drawn without them


def _is_plot_item(target) -> bool:
    import pyqtgraph as pg

    return isinstance(target, pg.PlotItem)


def write_csv(path: Path, header: list, rows: list) -> Path:
    text = io.StringIO()
    w = csv.writer(text)
    w.writerow(header)
    w.writerows(rows)
    write_text_atomic(path, text.getvalue())
    return Path(path)


def render_image(target, scale: float = 2.0) -> QImage:
    """What the view shows, rendered at `scale` times its on-screen size (like a high-DPI screen):
    every element, text included, scales together. Works for views behind a tab too."""
    widget = target.getViewWidget() if _is_plot_item(target) else target
    if widget is None:  # a PlotItem not in any view: pyqtgraph's exporter is all there is
        from pyqtgraph.exporters import ImageExporter

        img = ImageExporter(target).export(toBytes=True)
        return img if isinstance(img, QImage) else QImage()
    size = widget.size()
    img = QImage(
        max(1, round(size.width() * scale)),
        max(1, round(size.height() * scale)),
        QImage.Format.Format_ARGB32,
    )
    img.setDevicePixelRatio(scale)
    img.fill(QColor(style.PLOT_BG))
    p = QPainter(img)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    try:
        import pyqtgraph as pg

        if isinstance(widget, pg.GraphicsView):  # the scene: a view behind a tab has a stale viewport
            widget.scene().render(p, QRectF(0, 0, size.width(), size.height()), widget.sceneRect())
        else:
            QWidget.render(widget, p, QPoint(0, 0))  # the widget as drawn
    finally:
        p.end()
    return img


def export_png(target, path: Path, scale: float = 2.0) -> Path:
    return save_png(path, render_image(target, scale))


def save_png(path, image) -> Path:
    """A QImage or QPixmap as a PNG file, written whole (UserError if it cannot be)."""
    data = _png_bytes(image)
    if not data:
        raise UserError(f"cannot write {path}: the image could not be encoded as PNG")
    write_bytes_atomic(path, data)
    return Path(path)


def save_png_message(path, image) -> tuple[bool, str]:
    """For the window's Save screenshot: (ok, the status-bar message)."""
    try:
        save_png(path, image)
    except UserError as exc:
        return False, str(exc)
    return True, f"Saved {path}"


def _svg_ok(path: Path) -> bool:
    try:
        root = ET.parse(path).getroot()
        return root.tag.endswith("svg")
    except (ET.ParseError, OSError):
        return False


def export_svg(target, path: Path, heading: str = "") -> Path:
    """pyqtgraph's SVG exporter if it works here; otherwise QSvgGenerator (a widget's SVG gets
    `heading` above it). Written whole."""
    path = Path(path)
    with atomic_file(path) as tmp:
        if _is_plot_item(target) and not heading:
            try:
                from pyqtgraph.exporters import SVGExporter

                SVGExporter(target).export(tmp)
                if _svg_ok(Path(tmp)):
                    return path
            except Exception:  # noqa: BLE001 - pyqtgraph issue #3495 on Qt >= 6.11, fall back below
                pass
        _render_svg(target, Path(tmp), title=path.stem, heading=heading)
    return path


def _render_svg(target, path: Path, title: str, heading: str = "") -> None:
    from PySide6.QtSvg import QSvgGenerator

    gen = QSvgGenerator()
    gen.setFileName(str(path))
    if _is_plot_item(target):
        rect = target.sceneBoundingRect()
        size = QSize(max(1, int(rect.width())), max(1, int(rect.height())))
    else:
        font, flags, band = _heading_band(target.width(), heading)
        size = QSize(target.width(), target.height() + band)
    gen.setSize(size)
    gen.setViewBox(QRect(0, 0, size.width(), size.height()))
    gen.setTitle(title)
    gen.setDescription("WarpScope export")
    p = QPainter(gen)
    try:
        if _is_plot_item(target):
            p.fillRect(QRectF(0, 0, size.width(), size.height()), QColor(style.PLOT_BG))
            target.scene().render(p, QRectF(0, 0, size.width(), size.height()), rect)
        else:
            p.fillRect(QRectF(0, 0, size.width(), size.height()), QColor(style.PLOT_BG))
            if heading:
                p.setFont(font)
                p.setPen(QColor(style.FG))
                p.drawText(QRectF(8, 0, size.width() - 16, band), flags, heading)
            QWidget.render(target, p, QPoint(0, band))
    finally:
        p.end()
    if not _svg_ok(path):
        raise OSError(f"could not write a valid SVG to {path}")


# -- a whole export, into a folder ----------------------------------------------------------------


def export_to_folder(out_dir, render: Callable[[Path], list], force: bool = False) -> list[Path]:
    """`render(folder) -> files` writes a whole export into a staging folder; it then replaces
    the earlier export in `out_dir` in one rename (gui/export_folder.py). A folder holding files
    WarpScope did not write is refused in one line, or with `force` exported into its
    subfolder warpscope-export/: a stranger's file is never changed or removed."""
    return replace_folder(export_target(out_dir, force), render)


def export_item(item: ExportItem, out_dir: Path, caption: str = "") -> list[Path]:
    """PNG, SVG and CSV of one view; with `caption` (the GPU and launch) every figure says
    what it shows."""
    out_dir = Path(out_dir)
    base = out_dir / item.name
    if _is_plot_item(item.target):
        with slide_plot(item.target, item, caption):
            png = export_png(item.target, base.with_suffix(".png"))
            svg = export_svg(item.target, base.with_suffix(".svg"))
    else:
        lay_out(item.target)
        heading = " — ".join(t for t in (item.title or item.name.replace("_", " "), caption) if t)
        with widget_slide(item.target):
            png = save_png(base.with_suffix(".png"), titled_image(render_image(item.target), heading))
            svg = export_svg(item.target, base.with_suffix(".svg"), heading)
    return [png, svg, write_csv(base.with_suffix(".csv"), item.header, item.rows)]


def _heading_band(width: float, heading: str) -> tuple[QFont, int, int]:
    """The font, flags and height of the band a heading takes above an image `width` wide,
    wrapped: the same in the PNG and the SVG (the SVG's one-line band clipped long headings)."""
    from PySide6.QtGui import QFontMetrics

    f = QFont("DejaVu Sans")
    f.setPixelSize(13)
    flags = int(Qt.TextFlag.TextWordWrap) | int(Qt.AlignmentFlag.AlignVCenter)
    if not heading:
        return f, flags, 0
    text = QFontMetrics(f).boundingRect(QRect(0, 0, int(width - 16), 1000), flags, heading)
    return f, flags, text.height() + 10


def titled_image(image: QImage, heading: str) -> QImage:
    """`image` under a band with `heading` (same scale as the image)."""
    dpr = image.devicePixelRatio() or 1.0
    width = image.width() / dpr
    f, flags, band = _heading_band(width, heading)
    out = QImage(image.width(), image.height() + round(band * dpr), QImage.Format.Format_ARGB32)
    out.setDevicePixelRatio(dpr)
    out.fill(QColor(style.PLOT_BG))
    p = QPainter(out)
    p.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    p.setFont(f)
    p.setPen(QColor(style.FG))
    p.drawText(QRectF(8, 0, width - 16, band), flags, heading)
    p.drawImage(QPoint(0, band), image)
    p.end()
    return out


def write_json(path: Path, data: dict) -> Path:
    write_text_atomic(path, json.dumps(data, indent=2, default=_json_default))
    return Path(path)


def _json_default(o):
    import numpy as np

    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, tuple):
        return list(o)
    if hasattr(o, "to_dict"):
        return o.to_dict()
    if hasattr(o, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(o)
    return str(o)


# -- one-page summary ----------------------------------------------------------------------------


def _png_bytes(image) -> bytes:
    ba = QByteArray()
    buf = QBuffer(ba)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buf, "PNG")
    buf.close()
    return bytes(ba.data())


def _panel(entry):
    """(name, image) or (name, image, full_width)."""
    name, img = entry[0], entry[1]
    return name, img, bool(entry[2]) if len(entry) > 2 else False


def summary_page(
    title: str, facts: list[tuple[str, str]], panels: list[tuple], width: int = 1600,
    notes: list[tuple[str, list[str]]] = (),
) -> QImage:
    """A single tall image: title, a facts table, text sections (`notes`: heading and its
    paragraphs, e.g. the verdicts), then the panels (full width, or two per row). Panels are
    scaled down to fit, never up."""
    margin, gap = 28, 18
    col_w = (width - 2 * margin - gap) // 2
    full_w = width - 2 * margin
    rows = _panel_rows(panels, full_w, col_w)
    fact_rows = (len(facts) + 1) // 2
    facts_h = fact_rows * 22 + 16
    text_font = QFont("DejaVu Sans")
    text_font.setPixelSize(14)
    notes_h = _notes_height(notes, text_font, width - 2 * margin)
    y_notes = margin + 46 + facts_h + 6
    y_panels = y_notes + notes_h + 10
    from PySide6.QtGui import QFontMetrics

    cap_font = QFont(text_font)  # a panel's caption, wrapped to its width (no "…" mid-caption)
    cap_fm = QFontMetrics(cap_font)
    captions = [[_caption_lines(name, cap_fm, full_w if len(row) == 1 and img.width() > col_w
                                else col_w) for name, img in row] for row in rows]
    extra = [(max(len(c) for c in caps) - 1) * cap_fm.lineSpacing() for caps in captions]
    heights = [max(img.height() for _, img in row) + 26 + e for row, e in zip(rows, extra)]
    height = y_panels + sum(h + gap for h in heights) + margin
    page = QImage(width, height, QImage.Format.Format_RGB32)
    page.fill(QColor(style.BG))
    p = QPainter(page)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    _paint_head(p, title, facts, fact_rows, margin, col_w, gap)
    _paint_notes(p, notes, text_font, margin, y_notes, width - 2 * margin)
    y = y_panels
    p.setFont(cap_font)
    for r, row in enumerate(rows):
        for j, (_name, img) in enumerate(row):
            x = margin + j * (col_w + gap)
            p.setPen(QColor(style.MUTED))
            for k, line in enumerate(captions[r][j]):
                p.drawText(x, y + 16 + k * cap_fm.lineSpacing(), line)
            p.drawImage(x, y + 24 + extra[r], img)
        y += heights[r] + gap
    p.end()
    return page


def _panel_rows(panels: list[tuple], full_w: int, col_w: int) -> list[list[tuple[str, QImage]]]:
    """The panels' images in rows: a full-width one alone, the others two by two, each scaled
    down (never up) to the width it gets."""
    rows: list[list[tuple[str, QImage]]] = []
    pending: list[tuple[str, QImage]] = []
    for entry in panels:
        name, img, full = _panel(entry)
        if img.isNull():
            continue
        limit = full_w if full else col_w
        if img.width() > limit:
            img = img.scaledToWidth(limit, Qt.TransformationMode.SmoothTransformation)
        if full:
            if pending:
                rows.append(pending)
                pending = []
            rows.append([(name, img)])
        else:
            pending.append((name, img))
            if len(pending) == 2:
                rows.append(pending)
                pending = []
    if pending:
        rows.append(pending)
    return rows


def _paint_head(p: QPainter, title: str, facts: list[tuple[str, str]], fact_rows: int,
                margin: int, col_w: int, gap: int) -> None:
    """The page's title, then its facts in two striped columns of name and value."""
    f = QFont("DejaVu Sans")
    f.setPixelSize(26)
    f.setBold(True)
    p.setFont(f)
    p.setPen(QColor(style.FG))
    p.drawText(margin, margin + 26, title)
    f.setPixelSize(14)
    f.setBold(False)
    p.setFont(f)
    y0 = margin + 46
    for i, (k, v) in enumerate(facts):
        col, row = divmod(i, fact_rows)
        x = margin + col * (col_w + gap)
        y = y0 + row * 22
        if row % 2 == 0:
            p.fillRect(x, y, col_w, 22, QColor(style.PANEL))
        p.setPen(QColor(style.MUTED))
        p.drawText(QRect(x + 8, y, col_w // 2, 22), Qt.AlignmentFlag.AlignVCenter, k)
        p.setPen(QColor(style.FG))
        p.drawText(
            QRect(x + col_w // 2, y, col_w // 2 - 8, 22),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
            v,
        )


def _caption_lines(text: str, fm, room: int) -> list[str]:
    """`text` in lines of at most `room` px, broken between words."""
    lines = [""]
    for word in text.split(" "):
        trial = f"{lines[-1]} {word}" if lines[-1] else word
        if fm.horizontalAdvance(trial) <= room or not lines[-1]:
            lines[-1] = trial
        else:
            lines.append(word)
    return lines


def _note_blocks(notes, font: QFont, width: int):
    """(text, bold, rect height) of each line of the notes, wrapped to `width`."""
    from PySide6.QtGui import QFontMetrics

    bold = QFont(font)
    bold.setBold(True)
    out = []
    for heading, paragraphs in notes:
        out.append((heading, bold, QFontMetrics(bold).height() + 6))
        fm = QFontMetrics(font)
        for text in paragraphs:
            r = fm.boundingRect(QRect(0, 0, width, 10_000), int(Qt.TextFlag.TextWordWrap), text)
            out.append((text, font, r.height() + 4))
    return out


def _notes_height(notes, font: QFont, width: int) -> int:
    return sum(h for _, _, h in _note_blocks(notes, font, width)) + (8 if notes else 0)


def _paint_notes(p: QPainter, notes, font: QFont, x: int, y: int, width: int) -> None:
    for text, f, h in _note_blocks(notes, font, width):
        p.setFont(f)
        p.setPen(QColor(style.FG))
        p.drawText(QRect(x, y, width, h), int(Qt.TextFlag.TextWordWrap), text)
        y += h


def summary_html(
    title: str, facts: list[tuple[str, str]], panels: list[tuple[str, QImage]], files: list[str],
    notes: list[tuple[str, list[str]]] = (),
) -> str:
    rows = "\n".join(
        f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in facts
    )
    figs = []
    for entry in panels:
        name, img, full = _panel(entry)
        if img.isNull():
            continue
        data = base64.b64encode(_png_bytes(img)).decode("ascii")
        cls = " class='full'" if full else ""
        figs.append(
            f"<figure{cls}><img alt='{html.escape(name)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{html.escape(name)}</figcaption></figure>"
        )
    links = "\n".join(f"<li><a href='{html.escape(f)}'>{html.escape(f)}</a></li>" for f in files)
    sections = "".join(
        f"<h2>{html.escape(heading)}</h2>" + "".join(f"<p>{html.escape(t)}</p>" for t in paras)
        for heading, paras in notes)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ background:{style.BG}; color:{style.FG}; margin: 24px;
        font-family: 'DejaVu Sans', sans-serif; }}
h1 {{ font-size: 22px; }}
th {{ text-align:left; color:{style.MUTED}; font-weight: normal; padding: 3px 16px 3px 6px; }}
td {{ text-align:right; padding: 3px 6px; }} tr:nth-child(odd) {{ background:{style.PANEL}; }}
table {{ border-collapse: collapse; margin-bottom: 18px; }}
.figs {{ display:grid; grid-template-columns: 1fr 1fr; gap: 16px; }}
figure {{ margin:0; }} figure.full {{ grid-column: 1 / span 2; }}
img {{ width:100%; border:1px solid {style.BORDER}; }}
figcaption {{ color:{style.MUTED}; font-size: 13px; }} a {{ color:{style.ACCENT2}; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<table>{rows}</table>
{sections}
<div class="figs">{"".join(figs)}</div>
<h2>Files</h2><ul>{links}</ul>
</body></html>
"""
