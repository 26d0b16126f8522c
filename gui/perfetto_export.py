"""File ▸ Export ▸ Perfetto timeline…: the schedule the window shows as a Chrome Trace Event file
(sim/traces/perfetto.py, what `simulate/compare/export --perfetto` write), written off the GUI thread.

The launch's predicted schedule; with a recorded trace open in the Timeline, its prediction and
the recording side by side (the comparison `main.py compare` prints). The file is built and
written whole on the window's data-file runner (gui/file_jobs.py): a big recorded trace never
freezes the window, and every failure is one line in the status bar.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtWidgets import QFileDialog

from sim.inputs.errors import UserError
from sim.traces.perfetto import written_line


def perfetto_sources(win) -> tuple[dict, dict]:
    """(sources, facts for otherData) of what the window shows; UserError when it shows none."""
    traces = win.traces.comparison
    if traces is not None:
        info = {"gpu": traces.comparison.gpu, "trace": str(traces.path)}
        return {"predicted": traces.simulated, "recorded": traces.recorded}, info
    run = win.simulation.run
    if run is None:
        raise UserError(f"no schedule to export: {win.simulation.message}")
    return {"predicted": run.timeline}, {"gpu": run.spec.name, "launch": win.model.state.launch_text()}


def _write(sources: dict, info: dict, path: str) -> str:
    return written_line(path, sources, info).strip()


def export_perfetto(win, path: str) -> int:
    """Write the file in the data-file runner's worker; the outcome is told in the status bar."""
    def fail(line: str) -> None:
        win.show_message(f"Perfetto export failed: {line}", error=True)

    try:
        sources, info = perfetto_sources(win)
    except UserError as exc:
        fail(str(exc))
        return -1
    return win.file_jobs.open(path, partial(_write, sources, info),
                              lambda line: win.show_message(line), fail)


def perfetto_dialog(win) -> None:
    path, _ = QFileDialog.getSaveFileName(win, "Export Perfetto timeline", "warpscope-timeline.json",
                                          "Chrome Trace Event JSON (*.json)")
    if path:
        export_perfetto(win, path)
