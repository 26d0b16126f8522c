"""The app's look: a dark or light Fusion palette, pyqtgraph defaults and the block colours.

One place for colours so the SM view, the timeline and the exports agree. The module's colour
names (BG, FG, PLOT_BG, ...) are the current theme's: `set_theme` rebinds them, so code that reads
`style.FG` when it draws follows the theme. gui/theme.py switches a running window.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

THEMES: dict[str, dict[str, str]] = {
    "dark": dict(
        BG="#16181d",  # window background
        PANEL="#1d2027",  # dock/panel background
        PLOT_BG="#14161a",  # plot background
        FG="#d8dce4",  # text
        MUTED="#8b93a3",  # secondary text
        GRID="#2c313b",
        ACCENT="#f5b942",  # the binding limiter, the current launch marker
        ACCENT2="#5fb3f9",  # curves
        GOOD="#6cc987",
        BAD="#f26d6d",
        EMPTY_SLOT="#2b303a",  # a warp slot the launch could use but that is free right now
        NO_SLOT="#1f1a1d",  # a warp slot this launch can never use (its limiter keeps it empty)
        TAIL="#b54a4a",
        BASE="#111317", BUTTON="#252932", HIGHLIGHT="#3d6fb6", DISABLED="#5d6472",
        TOOLTIP_BG="#252a33", TOOLTIP_BORDER="#3a4150", TITLE_BAR="#20242c", BORDER="#2e3440",
        TAB="#1d2027", TAB_SELECTED="#262b35", GRIDLINE="#2a2f38",
        BANNER_BG="#2a2420", BANNER_FG="#f0c987", BANNER_BORDER="#5a4630",
        GAP="#23272f",  # between SM tiles
        FRAME="#3a404c",  # a legend swatch's edge
        CURSOR="#ffffff",  # the time cursor
        TIMELINE_EMPTY="#20242b",  # a block slot with no block in the Gantt chart
        IDLE="#2a2e37", MASKED="#6a4a8a",  # idle lanes, masked threads (geometry)
        WAVE_LINE="#c8ccd6", MARKER_EDGE="#000000", ON_BAR="#0d0f12", OVERLAY_TEXT="#f3c6c6",
        BLOCK_DARK="#10121a",  # the darker shade of the block colours mixes toward this
        QUEUE_BG="#262a33", QUEUE_DONE="#4a505c",  # the grid bar: queued, retired
    ),
    "light": dict(
        BG="#f3f4f6", PANEL="#ffffff", PLOT_BG="#ffffff", FG="#1f2328", MUTED="#5b6472",
        GRID="#cfd4dc", ACCENT="#c27a00", ACCENT2="#1f6fd1", GOOD="#2e8b4e", BAD="#c62828",
        EMPTY_SLOT="#e1e5ec", NO_SLOT="#aab0bb", TAIL="#d9534f",
        BASE="#ffffff", BUTTON="#e8ebf0", HIGHLIGHT="#3d7fd6", DISABLED="#9aa1ad",
        TOOLTIP_BG="#fffbe6", TOOLTIP_BORDER="#c9ced6", TITLE_BAR="#e4e7ec", BORDER="#c9ced6",
        TAB="#e8ebf0", TAB_SELECTED="#ffffff", GRIDLINE="#d9dde3",
        BANNER_BG="#fff4dc", BANNER_FG="#6b4a00", BANNER_BORDER="#e3c27a",
        GAP="#eceff3", FRAME="#8d95a3", CURSOR="#1f2328", TIMELINE_EMPTY="#eef0f3",
        IDLE="#d5d9e0", MASKED="#b79ad6", WAVE_LINE="#4b5260", MARKER_EDGE="#1f2328",
        ON_BAR="#0d0f12", OVERLAY_TEXT="#8a1c1c", BLOCK_DARK="#3a3f4a",
        QUEUE_BG="#9aa1ad", QUEUE_DONE="#5b6472",
    ),
}
THEME_NAMES = tuple(THEMES)
_current = "dark"

# The dark theme's names, bound here so linters and readers see them; set_theme rebinds them.
BG = PANEL = PLOT_BG = FG = MUTED = GRID = ACCENT = ACCENT2 = GOOD = BAD = ""
EMPTY_SLOT = NO_SLOT = TAIL = BASE = BUTTON = HIGHLIGHT = DISABLED = TOOLTIP_BG = ""
TOOLTIP_BORDER = TITLE_BAR = BORDER = TAB = TAB_SELECTED = GRIDLINE = BANNER_BG = ""
BANNER_FG = BANNER_BORDER = GAP = FRAME = CURSOR = TIMELINE_EMPTY = IDLE = MASKED = ""
WAVE_LINE = MARKER_EDGE = ON_BAR = OVERLAY_TEXT = BLOCK_DARK = QUEUE_BG = QUEUE_DONE = ""
globals().update(THEMES[_current])


def current_theme() -> str:
    return _current


def set_theme(name: str) -> None:
    """Make `name` ("dark" or "light") the current theme: rebinds the colour names, the block
    palette and the stylesheet. Views pick it up when they next draw (gui/theme.py redraws)."""
    global _current, PALETTE, STYLESHEET
    if name not in THEMES:
        raise ValueError(f"unknown theme {name!r}; known: {', '.join(THEMES)}")
    _current = name
    globals().update(THEMES[name])
    PALETTE = block_palette()
    STYLESHEET = stylesheet()


# Block colours: 10 hues, each in two lightnesses, so neighbouring blocks differ.
HUES = [
    "#4e9af1",
    "#f28e2b",
    "#59c36a",
    "#e15759",
    "#b07aa1",
    "#edc948",
    "#76b7b2",
    "#ff9da7",
    "#9c755f",
    "#a0cbe8",
]


def _mix(hex_color: str, other: str, t: float) -> QColor:
    a, b = QColor(hex_color), QColor(other)
    return QColor(
        round(a.red() * (1 - t) + b.red() * t),
        round(a.green() * (1 - t) + b.green() * t),
        round(a.blue() * (1 - t) + b.blue() * t),
    )


def block_palette() -> list[QColor]:
    """Colours for block ids: block b gets palette[b % len(palette)]."""
    first = [QColor(h) for h in HUES]
    second = [_mix(h, BLOCK_DARK or "#10121a", 0.35) for h in HUES]
    out = []
    for a, b in zip(first, second):
        out.append(a)
    for b in second[3:] + second[:3]:  # shift so block b and b+10 differ in hue too
        out.append(b)
    return out


# Waves in the timeline: hues far from the tail's red (no red, no pink), so a wave never reads as
# tail shading.
WAVE_HUES = ["#4e9af1", "#f28e2b", "#59c36a", "#edc948", "#76b7b2", "#8f7fd6", "#a0cbe8",
             "#9c755f", "#8cd17d", "#c9b28a"]
# Measured curves: the same hues (the red is the theoretical peak's line).
CURVE_HUES = WAVE_HUES


def wave_rgb() -> np.ndarray:
    """(len(WAVE_HUES), 3) uint8 colours of the timeline's waves."""
    return np.array([rgb_of(h) for h in WAVE_HUES], dtype=np.uint8)


PALETTE = block_palette()
N_COLORS = len(PALETTE)


def block_color_index(block_ids: np.ndarray) -> np.ndarray:
    """Palette index per block id: a multiplicative hash, so blocks that share an SM (ids that
    differ by a multiple of the SM count) still get different colours."""
    ids = np.asarray(block_ids, dtype=np.uint64)
    with np.errstate(over="ignore"):
        h = (ids * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)
    return (h % np.uint64(N_COLORS)).astype(np.int64)


def palette_rgb(dim: float = 0.0, toward: str = "#000000") -> np.ndarray:
    """(N_COLORS, 3) uint8 array of the block colours, optionally mixed toward another colour."""
    return np.array(
        [[c.red(), c.green(), c.blue()] for c in (_mix(q.name(), toward, dim) for q in PALETTE)],
        dtype=np.uint8,
    )


def rgb_of(hex_color: str) -> tuple[int, int, int]:
    c = QColor(hex_color)
    return c.red(), c.green(), c.blue()


def apply_theme(app: QApplication, name: str | None = None) -> None:
    """Fusion style with the theme's palette, plus matching pyqtgraph defaults."""
    if name is not None:
        set_theme(name)
    if app.style().name().lower() != "fusion":
        app.setStyle("Fusion")
    pal = QPalette()
    role = QPalette.ColorRole
    pal.setColor(role.Window, QColor(BG))
    pal.setColor(role.WindowText, QColor(FG))
    pal.setColor(role.Base, QColor(BASE))
    pal.setColor(role.AlternateBase, QColor(PANEL))
    pal.setColor(role.ToolTipBase, QColor(TOOLTIP_BG))
    pal.setColor(role.ToolTipText, QColor(FG))
    pal.setColor(role.Text, QColor(FG))
    pal.setColor(role.Button, QColor(BUTTON))
    pal.setColor(role.ButtonText, QColor(FG))
    pal.setColor(role.BrightText, QColor(BAD))
    pal.setColor(role.Highlight, QColor(HIGHLIGHT))
    pal.setColor(role.HighlightedText, QColor("#ffffff"))
    pal.setColor(role.Link, QColor(ACCENT2))
    pal.setColor(role.PlaceholderText, QColor(MUTED))
    for group in (QPalette.ColorGroup.Disabled,):
        pal.setColor(group, role.Text, QColor(DISABLED))
        pal.setColor(group, role.ButtonText, QColor(DISABLED))
        pal.setColor(group, role.WindowText, QColor(DISABLED))
    app.setPalette(pal)
    font = app.font()
    font.setPointSizeF(max(9.0, font.pointSizeF()))
    app.setFont(font)
    app.setStyleSheet(STYLESHEET)
    configure_pyqtgraph()


def apply_dark_theme(app: QApplication) -> None:
    apply_theme(app, "dark")


def configure_pyqtgraph() -> None:
    import pyqtgraph as pg

    pg.setConfigOptions(background=PLOT_BG, foreground=FG, antialias=True)


def stylesheet() -> str:
    return f"""
QMainWindow::separator {{ background: {BG}; width: 4px; height: 4px; }}
QDockWidget {{ color: {FG}; font-weight: 600; }}
QDockWidget::title {{ background: {TITLE_BAR}; padding: 4px 8px; border-bottom: 1px solid {BORDER}; }}
QGroupBox {{ border: 1px solid {BORDER}; border-radius: 5px; margin-top: 14px; padding-top: 6px; }}
QGroupBox::title {{ subcontrol-origin: margin; left: 8px; padding: 0 4px; color: {MUTED}; }}
QToolTip {{ color: {FG}; background: {TOOLTIP_BG}; border: 1px solid {TOOLTIP_BORDER}; padding: 4px; }}
QTabWidget::pane {{ border: 1px solid {BORDER}; }}
QTabBar::tab {{ background: {TAB}; color: {MUTED}; padding: 5px 12px; border: 1px solid {BORDER};
               border-bottom: none; }}
QTabBar::tab:selected {{ background: {TAB_SELECTED}; color: {FG}; }}
QStatusBar {{ color: {MUTED}; }}
QLabel[role="value"] {{ color: {FG}; font-weight: 600; }}
QLabel[role="muted"] {{ color: {MUTED}; }}
QLabel[role="banner"] {{ background: {BANNER_BG}; color: {BANNER_FG}; border: 1px solid {BANNER_BORDER};
                        border-radius: 4px; padding: 6px; }}
QLabel[role="error"] {{ color: {BAD}; }}
QLabel[role="box_message"] {{ color: {BAD}; background: {PANEL}; border: 1px solid {BAD};
                             border-radius: 3px; }}
QTableWidget {{ gridline-color: {GRIDLINE}; }}
QHeaderView::section {{ background: {TITLE_BAR}; color: {MUTED}; border: none; padding: 3px 6px; }}
"""


def monospace_font(size: float = 9.0) -> QFont:
    f = QFont("DejaVu Sans Mono")
    f.setStyleHint(QFont.StyleHint.Monospace)
    f.setPointSizeF(size)
    return f


def make_plot(title: str, xlabel: str, ylabel: str, log_axes: tuple[str, ...] = ()) -> pg.PlotWidget:
    """A plot in the app's look: small title, labelled axes, faint grid, no pyqtgraph menus;
    `log_axes` ("bottom", "left") are log scales whose labels never collide (LogAxis)."""
    w = pg.PlotWidget(axisItems={k: LogAxis(k) for k in log_axes})
    pi = w.getPlotItem()
    pi.setTitle(f"<span style='color:{FG};font-size:10pt'>{title}</span>")
    pi.setLabel("bottom", xlabel)
    pi.setLabel("left", ylabel)
    pi.showGrid(x=True, y=True, alpha=0.18)
    pi.setMenuEnabled(False)
    pi.hideButtons()
    if log_axes:
        pi.setLogMode(x="bottom" in log_axes, y="left" in log_axes)
    return w


def compact_number(x: float) -> str:
    """200, 5000, 10k, 2.5M: a tick label as short as it can be."""
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e4, "k")):
        if abs(x) >= div:
            return f"{x / (1e3 if unit == 'k' else div):g}{unit}"
    return f"{x:g}"


class LogAxis(pg.AxisItem):
    """A log axis labelled 1, 10, 100 (and 2 and 5 between them where they fit), never closer
    than a label's size: pyqtgraph's own labels every minor tick (2..9) and they collide."""

    STEPS = ((1,), (1, 2, 5), (1, 2, 3, 4, 5, 6, 7, 8, 9))

    def label_px(self) -> float:
        """The room one label needs along the axis."""
        from PySide6.QtGui import QFontMetrics

        fm = QFontMetrics(self.style.get("tickFont") or self.font())
        if self.orientation in ("left", "right"):
            return fm.height() + 6
        return fm.horizontalAdvance("100k") + 12

    def logTickValues(self, minVal, maxVal, size, stdTicks):
        per_decade = size / max(maxVal - minVal, 1e-9)
        need = self.label_px()
        lo, hi = math.floor(minVal), math.ceil(maxVal)
        best = None  # the finest set of mantissas whose closest pair is still a label apart
        for steps in self.STEPS:
            gap = min(math.log10(b / a) for a, b in zip(steps, (*steps[1:], 10)))
            if gap * per_decade >= need:
                best = steps
        if best is None:  # not even one label a decade fits: every k-th decade
            every = max(1, math.ceil(need / max(per_decade, 1e-9)))
            return [(float(every), [float(d) for d in range(lo, hi + 1)
                                    if d % every == 0 and minVal <= d <= maxVal]), (None, [])]
        values = [d + math.log10(m) for d in range(lo, hi + 1) for m in best]
        return [(None, [v for v in values if minVal - 1e-9 <= v <= maxVal + 1e-9]), (None, [])]

    def logTickStrings(self, values, scale, spacing):
        return [compact_number(round(10 ** v, 6)) for v in values]


STYLESHEET = stylesheet()
