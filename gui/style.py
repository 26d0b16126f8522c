"""The app's look: a dark Fusion palette, pyqtgraph defaults and the block colours.

One place for colours so the SM view, the timeline and the exports agree.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

BG = "#16181d"  # window background
PANEL = "#1d2027"  # dock/panel background
PLOT_BG = "#14161a"  # plot background
FG = "#d8dce4"  # text
MUTED = "#8b93a3"  # secondary text
GRID = "#2c313b"
ACCENT = "#f5b942"  # the binding limiter, the current launch marker
ACCENT2 = "#5fb3f9"  # curves
GOOD = "#6cc987"
BAD = "#f26d6d"
EMPTY_SLOT = "#2b303a"  # a warp slot the launch could use but that is free right now
NO_SLOT = "#1f1a1d"  # a warp slot this launch can never use (its limiter keeps it empty)
TAIL = "#b54a4a"

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
    second = [_mix(h, "#10121a", 0.35) for h in HUES]
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


def apply_dark_theme(app: QApplication) -> None:
    """Fusion style with a dark palette, plus matching pyqtgraph defaults."""
    app.setStyle("Fusion")
    pal = QPalette()
    role = QPalette.ColorRole
    pal.setColor(role.Window, QColor(BG))
    pal.setColor(role.WindowText, QColor(FG))
    pal.setColor(role.Base, QColor("#111317"))
    pal.setColor(role.AlternateBase, QColor(PANEL))
    pal.setColor(role.ToolTipBase, QColor("#252a33"))
    pal.setColor(role.ToolTipText, QColor(FG))
    pal.setColor(role.Text, QColor(FG))
    pal.setColor(role.Button, QColor("#252932"))
    pal.setColor(role.ButtonText, QColor(FG))
    pal.setColor(role.BrightText, QColor(BAD))
    pal.setColor(role.Highlight, QColor("#3d6fb6"))
    pal.setColor(role.HighlightedText, QColor("#ffffff"))
    pal.setColor(role.Link, QColor(ACCENT2))
    pal.setColor(role.PlaceholderText, QColor(MUTED))
    for group in (QPalette.ColorGroup.Disabled,):
        pal.setColor(group, role.Text, QColor("#5d6472"))
        pal.setColor(group, role.ButtonText, QColor("#5d6472"))
        pal.setColor(group, role.WindowText, QColor("#5d6472"))
    app.setPalette(pal)
    font = app.font()
    font.setPointSizeF(max(9.0, font.pointSizeF()))
    app.setFont(font)
    app.setStyleSheet(STYLESHEET)
    configure_pyqtgraph()


def configure_pyqtgraph() -> None:
    import pyqtgraph as pg

    pg.setConfigOptions(background=PLOT_BG, foreground=FG, antialias=True)


STYLESHEET = f"""
QMainWindow::separator {{ background: {BG}; width: 4px; height: 4px; }}
QDockWidget {{ color: {FG}; font-weight: 600; }}
QDockWidget::title {{ background: #20242c; padding: 4px 8px; border-bottom: 1px solid #2e3440; }}
QGroupBox {{ border: 1px solid #2e3440; border-radius: 5px; margin-top: 14px; padding-top: 6px; }}
QGroupBox::title {{ subcontrol-origin: margin; left: 8px; padding: 0 4px; color: {MUTED}; }}
QToolTip {{ color: {FG}; background: #252a33; border: 1px solid #3a4150; padding: 4px; }}
QTabWidget::pane {{ border: 1px solid #2e3440; }}
QTabBar::tab {{ background: #1d2027; color: {MUTED}; padding: 5px 12px; border: 1px solid #2e3440;
               border-bottom: none; }}
QTabBar::tab:selected {{ background: #262b35; color: {FG}; }}
QStatusBar {{ color: {MUTED}; }}
QLabel[role="value"] {{ color: {FG}; font-weight: 600; }}
QLabel[role="muted"] {{ color: {MUTED}; }}
QLabel[role="banner"] {{ background: #2a2420; color: #f0c987; border: 1px solid #5a4630;
                        border-radius: 4px; padding: 6px; }}
QLabel[role="error"] {{ color: {BAD}; }}
QTableWidget {{ gridline-color: #2a2f38; }}
QHeaderView::section {{ background: #20242c; color: {MUTED}; border: none; padding: 3px 6px; }}
"""


def monospace_font(size: float = 9.0) -> QFont:
    f = QFont("DejaVu Sans Mono")
    f.setStyleHint(QFont.StyleHint.Monospace)
    f.setPointSizeF(size)
    return f


def make_plot(title: str, xlabel: str, ylabel: str) -> pg.PlotWidget:
    """A plot in the app's look: small title, labelled axes, faint grid, no pyqtgraph menus."""
    w = pg.PlotWidget()
    pi = w.getPlotItem()
    pi.setTitle(f"<span style='color:{FG};font-size:10pt'>{title}</span>")
    pi.setLabel("bottom", xlabel)
    pi.setLabel("left", ylabel)
    pi.showGrid(x=True, y=True, alpha=0.18)
    pi.setMenuEnabled(False)
    pi.hideButtons()
    return w
