"""Everything the window shows, written to one folder: each view's PNG, SVG and CSV (the points it
draws), session.json, and a one-page summary.png and summary.html."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from gui.export import export_item, save_png, summary_html, summary_page, write_json
from gui.models.session import summary_facts
from sim.errors import UserError
from sim.files import write_text_atomic


def export_window(win, out_dir: str | Path) -> list[Path]:
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {out}: {exc.strerror or exc}") from None
    if win.bench.result is not None or win.bench.experiments:
        lay_out_hidden_dock(win, "bandwidth")  # plots behind a tab have no size yet
    written: list[Path] = []
    for item in win.export_items():
        written += export_item(item, out)
    written.append(write_json(out / "session.json", win.session_dict()))
    st = win.model.state
    title = (f"WarpScope · {st.spec.name} · {st.inputs.elements:,} elements × "
             f"{st.inputs.threads_per_block} threads per block")
    panels = [("SM view", win.centralWidget().grab().toImage(), True),
              ("Occupancy", win.occupancy_view.grab().toImage()),
              ("Geometry", win.geometry_view.grab().toImage()),
              ("Timeline", win.timeline.grab().toImage(), True)]
    if win.bench.result is not None:
        sweep = win.bandwidth.sweep
        panels += [("Bandwidth vs size", sweep.size_plot.grab().toImage()),
                   ("Bandwidth vs block size", sweep.block_plot.grab().toImage())]
    facts = summary_facts(win.model, win.simulation)
    page = summary_page(title, facts, panels)
    written.append(save_png(out / "summary.png", page))
    h = out / "summary.html"
    write_text_atomic(h, summary_html(title, facts, panels, [w.name for w in written]))
    return written + [h]


def lay_out_hidden_dock(win, key: str) -> None:
    """A dock behind another tab was never laid out: raise it once, then put the other back."""
    dock = win.docks[key]
    if dock.widget().visibleRegion().isEmpty():
        front = [d for d in win.tabifiedDockWidgets(dock) if not d.widget().visibleRegion().isEmpty()]
        height = dock.height()
        dock.raise_()
        win.resizeDocks([dock], [max(height, 480)], Qt.Orientation.Vertical)
        QApplication.processEvents()
        if front:
            front[0].raise_()
        win.resizeDocks([dock], [height], Qt.Orientation.Vertical)
        QApplication.processEvents()
