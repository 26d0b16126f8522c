"""Everything the window shows, written to one folder: each view's PNG, SVG and CSV (the points it
draws), session.json, and a one-page summary.png and summary.html, for slides: drawn in the
export theme (light unless asked otherwise), every figure named with its GPU and launch, the
summary without any button or box of the window."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

from gui.export_layout import plot_image
from gui.export import (export_item, export_to_folder, save_png, save_png_message, summary_html,
                        summary_page, write_json)
from gui.export_folder import SUBFOLDER, foreign_files
from gui.models.session import summary_facts
from gui.theme import theme
from sim.inputs.errors import UserError
from sim.inputs.files import write_text_atomic


def launch_caption(win) -> str:
    """The GPU and the launch, as every exported figure names them."""
    st = win.model.state
    kernel = st.inputs.kernel if st.inputs.kernel != "custom" else "custom launch"
    return f"{st.spec.name} · {kernel} · {st.launch_text()}"


def export_window(win, out_dir: str | Path, theme_name: str | None = "light") -> list[Path]:
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {out}: {exc.strerror or exc}") from None
    with theme(win, theme_name):
        # after the theme: its new text (a legend a line longer) must be laid out too
        if win.bench.result is not None or win.bench.experiments:
            lay_out_hidden_dock(win, "bandwidth")  # plots behind a tab have no size yet
        for key in ("latency", "compare"):
            if key in win.docks:
                lay_out_hidden_dock(win, key)
        return _export(win, out)


def _export(win, out: Path) -> list[Path]:
    from gui.redraw import flush_redraws

    flush_redraws(win)  # views redraw in steps and hidden ones wait (gui.redraw.StagedRedraw)
    caption = launch_caption(win)
    written: list[Path] = []
    for item in win.export_items():
        written += export_item(item, out, caption)
    written.append(write_json(out / "session.json", win.session_dict()))
    st = win.model.state
    title = f"WarpScope · {st.spec.name} · {st.launch_text()}"
    panels = [("SM view", win.sm_view.grab().toImage(), True),
              ("Resident warps over time (red: the tail)", plot_image(win.playback_view.curve_plot, 1.0), True),
              ("Occupancy", plot_image(win.occupancy_view, 1.0)),
              ("Geometry", _inner(win.geometry_view).grab().toImage()),
              (win.timeline.caption.text() or "Timeline", plot_image(win.timeline.plot, 1.0), True)]
    teach = getattr(win, "teach", None)
    if teach is not None:
        panels += [("Latency hiding: one SM's warp schedulers", teach.latency_view.lanes.grab().toImage()),
                   ("Little's law", plot_image(teach.latency_view.plots, 1.0), True),
                   ("Two GPUs", teach.compare_view.figure.grab().toImage(), True)]
    if win.bench.result is not None:
        sweep = win.bandwidth.sweep
        # at the slide size: behind a tab (a narrow window) a plot keeps a stale size
        panels += [("Bandwidth vs size", plot_image(sweep.size_plot, 1.0)),
                   ("Bandwidth vs block size", plot_image(sweep.block_plot, 1.0))]
    facts = summary_facts(win.model, win.simulation)
    notes = _notes(win)
    page = summary_page(title, facts, panels, notes=notes)
    written.append(save_png(out / "summary.png", page))
    h = out / "summary.html"
    write_text_atomic(h, summary_html(title, facts, panels, [w.name for w in written], notes))
    return written + [h]


def _inner(view):
    """What a scrolling view holds, without its scroll bar."""
    area = getattr(view, "scroll", None)
    return area.widget() if area is not None and area.widget() is not None else view


def _notes(win) -> list[tuple[str, list[str]]]:
    worked = win.occupancy_view.working_text()
    achieved = getattr(win.simulation.run, "achieved", None)
    worked += [achieved.long_text()] if achieved is not None and worked else []
    notes = [("Occupancy, worked (Nsight Compute's block limits)", worked)] if worked else []
    live = win.models.slider.verdict() if win.models.slider.latest is not None else ""
    notes += [("Live launch", [live])] if live else []
    teach = getattr(win, "teach", None)
    if teach is None:
        return notes
    found = teach.insight.findings
    verdicts = [f"{i}. {f.title}. {f.detail} Try: {f.action}" for i, f in enumerate(found, 1)]
    notes += [("Time", teach.insight.time_lines(win.simulation.run)),
               ("Verdicts, biggest waste first", verdicts or ["Nothing to fix in this launch."])]
    if teach.compare.differences:
        other = teach.compare.sides[1].gpu.name if teach.compare.sides else "?"
        notes.append((f"Beside the {other}", [d.text for d in teach.compare.differences]))
    return notes


def lay_out_hidden_dock(win, key: str) -> None:
    """A dock behind another tab was never laid out: raise it once, then put the other back."""
    dock = win.docks[key]
    win.later.make_all()  # its neighbours too: each is asked whether it is in front
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


def export_dialog(win) -> None:
    """File ▸ Export ▸ Everything…: a folder asked for; one with files WarpScope did not write gets
    a subfolder instead (those files are never touched)."""
    folder = QFileDialog.getExistingDirectory(win, "Export everything to a folder")
    if not folder:
        return
    force = False
    try:
        strangers = foreign_files(Path(folder))
    except ValueError as exc:
        win.show_message(f"Export failed: {exc}", error=True)
        return
    if strangers:
        answer = QMessageBox.question(
            win, "Export into a folder with other files?",
            f"{folder} holds files WarpScope did not write ({', '.join(strangers[:3])}"
            f"{', …' if len(strangers) > 3 else ''}).\n\nExport into its subfolder "
            f"{SUBFOLDER}/ instead? Your files are not touched.")
        if answer != QMessageBox.StandardButton.Yes:
            return
        force = True
    try:  # replaces an earlier export whole, in one rename
        files = export_to_folder(folder, win.export_all, force)
    except (OSError, ValueError) as exc:
        win.show_message(f"Export failed: {exc}", error=True)
        return
    win.show_message(f"Exported {len(files)} files to {files[0].parent if files else folder}")


def screenshot_dialog(win) -> None:
    """File ▸ Save screenshot…: the window as a PNG, written whole or not at all."""
    path, _ = QFileDialog.getSaveFileName(win, "Save screenshot", "warpscope.png", "PNG (*.png)")
    if path:
        ok, text = save_png_message(path, win.grab())
        win.show_message(text, error=not ok)
