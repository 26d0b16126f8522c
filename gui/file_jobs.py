"""Data files the user opens in a panel (a latency run, timing records, a measured sawtooth), read
off the GUI thread. `PanelFile` is a panel's whole Open…: its dialog, the read (in the background
through the window's FileJobs, else on this thread), and where the result or the one line goes.

A reader (sim.traces.latency_data.load_latency_run, gui.models.waves.read_measured, ...) already turns
every damaged file into one UserError line; here it runs on a gui.adapter.TaskRunner, so a slow
disk or a 30 MB file never freezes the window, and its result is handed to the panel on the GUI
thread. Every failure, in the read or in the panel taking the result, ends as one line given to
the panel's `fail`: nothing escapes the slot.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from gui.adapter import TaskOutcome, TaskRunner
from kernels.host.process import one_line
from sim.inputs.errors import UserError, printable


def _read(load: Callable[[str], Any], path: str, _ctx) -> Any:
    return load(path)


class FileJobs:
    """One runner for every panel's Open…; jobs run in the order given (none replaces another)."""

    def __init__(self, runner: TaskRunner) -> None:
        self.runner = runner
        self._jobs: dict[int, tuple] = {}
        runner.finished.connect(self._on_finished)

    def open(self, path: str, load: Callable[[str], Any], apply: Callable[[Any], None],
             fail: Callable[[str], None]) -> int:
        """Run `load(path)` in the worker, then `apply(result)` here; `fail(line)` if either
        fails."""
        job = self.runner.submit(partial(_read, load, str(path)), f"open {Path(path).name}")
        self._jobs[job] = (path, apply, fail)
        return job

    def busy(self) -> bool:
        return bool(self._jobs)

    def _on_finished(self, outcome: TaskOutcome) -> None:
        entry = self._jobs.pop(outcome.job_id, None)
        if entry is None:
            return
        path, apply, fail = entry
        if not outcome.ok:
            fail(printable(outcome.error))
            return
        try:
            apply(outcome.result)
        except UserError as exc:  # the file read, but the panel cannot show it
            fail(str(exc))
        except Exception as exc:  # as run_job does in the worker: one line, the window lives on
            fail(printable(f"cannot show {Path(path).name}: {one_line(exc)}"))


class PanelFile:
    """One panel's Open…: `dialog()` asks for a file, `background(path)` reads it with `load` off
    the GUI thread (on this thread when the panel has no FileJobs: a view opened alone),
    `now(path)` reads it here (tests, screenshots, the file a panel starts with); the result goes
    to `apply`, a failure to `fail` as one line. `opening(path)`: what the panel says meanwhile."""

    def __init__(self, panel, title: str, pattern: str, load: Callable[[str], Any],
                 apply: Callable[[Any], None], fail: Callable[[str], None],
                 files: FileJobs | None = None,
                 opening: Callable[[str], None] | None = None) -> None:
        self.panel, self.title, self.pattern = panel, title, pattern
        self.load, self.apply, self.fail = load, apply, fail
        self.files, self.opening = files, opening

    def dialog(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getOpenFileName(self.panel, self.title, "", self.pattern)
        if path:
            self.background(path)

    def now(self, path) -> bool:
        try:
            self.apply(self.load(path))
        except UserError as exc:
            self.fail(str(exc))
            return False
        return True

    def background(self, path: str) -> int | None:
        if self.files is None:
            self.now(path)
            return None
        if self.opening is not None:
            self.opening(printable(path))
        return self.files.open(path, self.load, self.apply, self.fail)
