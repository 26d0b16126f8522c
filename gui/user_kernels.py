"""Your own kernel in the window: File ▸ Open kernel…, the Kernel source panel, and the jobs that
open files and compile the selected kernel.

`UserKernels(window)` makes the KernelFilesModel, a thread that opens files (their declarations:
the grid rule the window evaluates at every change), the compiler host (a HostRunner of its own,
so compiles never wait behind a sweep in the kernel host and never run in the window's process),
`KernelFileJobs` and `CompileJobs` (gui/jobs.py), and the source panel; it adds the File menu's
entries and wires them. The kernel host opens the same files before a sweep or a correctness run
(`gui.jobs.with_kernel_files`). A file is run only when the user opens it: the files of an earlier
session are offered again with a question, never opened behind the user's back
(docs/KERNEL_FILES.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QLabel, QMessageBox, QProgressBar,
                               QPushButton, QWidget)

from functools import partial

from gui import panels
from gui.adapter import HostRunner, TaskRunner
from gui.jobs import CompileJobs, KernelFileJobs, KernelJobs, with_kernel_files
from gui.models.kernel_files import KernelFilesModel, OpenedFile
from gui.rules_jobs import RulesJobs
from sim.inputs.files import load_json_bounded
from sim.inputs.places import resource

SETTINGS_KEY = "kernels/files"
EXAMPLES = resource("examples")


class UserKernels:
    def __init__(self, window, jobs: KernelJobs | None = None, ask_to_reopen: bool = False) -> None:
        self.window = w = window
        self.files = KernelFilesModel(_saved_paths(w.settings))
        self.compiler = HostRunner("compiler", w)
        # a thread per file being opened: one that hangs never holds up the next
        self.file_jobs = KernelFileJobs(self.files, lambda: TaskRunner("kernel file", w), jobs)
        self.compile_jobs = CompileJobs(w.model, self.files, self.compiler, jobs,
                                        log=w.bench.log.emit)
        # a file's grid rule and bytes formula answer on a thread of their own, never the GUI's
        self.rules_jobs = RulesJobs(w.model, TaskRunner("kernel rules", w))
        self.second_gpu_rules = RulesJobs(w.models.compare, TaskRunner("kernel rules, 2nd GPU", w))
        bench_jobs = w.bench_jobs.jobs
        self._bench_work = (bench_jobs.sweep, bench_jobs.run_checks)
        w.models.kernel_files = self.files  # the source panel shows the files opened here
        self.dock = panels.mount(w, "source", Qt.DockWidgetArea.BottomDockWidgetArea,
                                 tab_with="timeline")
        self.source = w.source_view
        self.reopen_box: QMessageBox | None = None
        self._syncing_bench = False

        self._make_opening_bar()
        self.files.opened.connect(self._on_opened)
        self.files.failed.connect(self._on_failed)
        self.files.remembered_changed.connect(self._on_remembered_changed)
        self.source.open_requested.connect(self.open_dialog)
        self.source.reopen_requested.connect(self.open)
        self.tracer = TaskRunner("trace on the GPU", w)  # the user's file runs in a kernel host
        self.tracer.finished.connect(self._on_traced)
        self.source.trace_requested.connect(self.trace_on_gpu)
        w.controls.resources.cancel_requested.connect(self.compile_jobs.cancel)
        w.controls.resources.compile_requested.connect(w.model.request_compile)
        w.bench.kernels_changed.connect(self._sync_bench)
        if ask_to_reopen and self.files.to_reopen():
            QTimer.singleShot(0, self.ask_to_reopen)

    # -- menu ---------------------------------------------------------------------------------
    def add_file_actions(self, menu) -> None:
        """File ▸ Open kernel… and File ▸ Recent kernel files."""
        act = QAction("Open &kernel…", self.window)
        act.setShortcut(QKeySequence("Ctrl+K"))
        act.setToolTip("Open a Python file with your kernel and its WARPSCOPE declaration "
                       "(docs/KERNEL_FILES.md). Opening it runs the file.")
        act.triggered.connect(self.open_dialog)
        menu.addAction(act)
        self.window.addAction(act)
        self.act_open = act
        self.recent_menu = menu.addMenu("Recent &kernel files")
        self._on_remembered_changed()

    def _on_remembered_changed(self) -> None:
        _save_paths(self.window.settings, self.files.remembered)
        menu = getattr(self, "recent_menu", None)
        if menu is None:
            return
        menu.clear()
        for path in self.files.remembered:
            menu.addAction(path, lambda p=path: self.open(p))
        if self.files.remembered:
            menu.addSeparator()
            menu.addAction("Clear this list", self.files.forget_remembered)
        menu.setEnabled(bool(self.files.remembered))

    # -- opening ------------------------------------------------------------------------------
    def open_dialog(self) -> None:
        start = (os.path.dirname(self.files.remembered[0]) if self.files.remembered
                 else str(EXAMPLES))
        path, _ = QFileDialog.getOpenFileName(self.window, "Open a kernel file (it will run)",
                                              start, "Python kernel files (*.py)")
        if path:
            self.open(path)

    def open(self, path: str) -> bool:
        """Run the file in the background and add its kernels (the user asked for it)."""
        if not path:
            return False
        if not self.file_jobs.open(path):
            self.window.show_message(f"{path} is being opened already…")
            return False
        self.window.show_message(f"Opening {path}…")
        self._show_opening()
        return True

    def _make_opening_bar(self) -> None:
        """While files open: which, how long their own code may run, and Cancel (status bar)."""
        self.opening_bar = bar = QWidget()
        row = QHBoxLayout(bar)
        row.setContentsMargins(0, 0, 8, 0)
        self.opening_label = QLabel("")
        busy = QProgressBar()
        busy.setRange(0, 0)  # how long an import takes is unknown: a busy bar
        busy.setMaximumSize(60, 12)
        self.opening_cancel = QPushButton("Cancel")
        self.opening_cancel.setToolTip("Stop opening (the file's process is ended)")
        self.opening_cancel.clicked.connect(self.cancel_opening)
        for widget in (self.opening_label, busy, self.opening_cancel):
            row.addWidget(widget)
        bar.setVisible(False)
        self.window.statusBar().addPermanentWidget(bar)

    def _show_opening(self) -> None:
        from kernels.declare.declarations import Limits

        paths = list(self.file_jobs.opening)
        self.opening_bar.setVisible(bool(paths))
        if paths:
            self.opening_label.setText(
                f"Opening {', '.join(os.path.basename(p) for p in paths)} (its code may run "
                f"{Limits.from_env().open_s:g} s once torch, Triton and Numba load)…")

    def cancel_opening(self) -> None:
        paths = [p for p in list(self.file_jobs.opening) if self.file_jobs.cancel(p)]
        self._show_opening()
        if paths:
            self.window.show_message(f"Stopped opening {', '.join(paths)}")

    def ask_to_reopen(self) -> None:
        """The question for the files of an earlier session (never opened without a yes)."""
        paths = self.files.to_reopen()
        if not paths:
            return
        box = QMessageBox(self.window)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle("Open your kernel files again?")
        box.setText("Open the kernel files of your last session again?")
        box.setInformativeText("Opening a kernel file runs its Python code:\n"
                               + "\n".join(paths))
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.finished.connect(lambda result: self._on_reopen_answer(result, paths))
        self.reopen_box = box
        box.open()

    def _on_reopen_answer(self, result: int, paths: list[str]) -> None:
        if result == QMessageBox.StandardButton.Yes:
            for path in paths:
                self.open(path)

    def _on_opened(self, opened: OpenedFile) -> None:
        self._show_opening()
        w = self.window
        w.model.add_opened_kernels(opened.kernels)
        self._sync_bench()
        # the kernel host opens the same versions before it measures or checks
        files = tuple((f.path, f.digest) for f in self.files.files.values())
        sweep, checks = self._bench_work
        w.bench_jobs.jobs.sweep = partial(with_kernel_files, files, sweep)
        w.bench_jobs.jobs.run_checks = partial(with_kernel_files, files, checks)
        names = [k.name for k in opened.kernels]
        w.bench.set_ticked(tuple(dict.fromkeys(list(w.bench.ticked) + names)))
        first = opened.launchable()
        if first:
            w.model.select_kernel(first[0].name)
        self.dock.show()
        self.dock.raise_()
        w.show_message(f"Opened {opened.name}: {', '.join(names)}. Registers and shared memory "
                       f"come from the compiler for {w.model.state.spec.name}.")

    def _on_failed(self, path: str, message: str) -> None:
        self._show_opening()
        w = self.window
        w.show_message(message, error=True, timeout_ms=15000)
        w.bench.log.emit(f"Could not open kernel file {path}: {message}")
        self.dock.show()
        self.dock.raise_()

    def _sync_bench(self) -> None:
        """The Bandwidth panel lists the opened kernels and their torch peers too (its list is
        reset when the built-in kernels load)."""
        if self._syncing_bench:
            return
        bench = self.window.bench
        opened = [k for f in self.files.files.values() for k in f.kernels]
        names = {k.name for k in opened}
        have = {k.name: k for k in bench.kernels}
        if all(have.get(k.name) is k for k in opened):
            return
        self._syncing_bench = True
        try:
            ticked = bench.ticked
            bench.set_kernels([k for k in bench.kernels if k.name not in names] + opened)
            bench.set_ticked([n for n in ticked if n in {k.name for k in bench.kernels}])
        finally:
            self._syncing_bench = False

    def runners(self) -> tuple:
        return (self.compiler, self.tracer, self.rules_jobs.runner, self.second_gpu_rules.runner,
                *self.file_jobs.runners())

    # -- tracing the kernel shown ----------------------------------------------------------------
    def trace_on_gpu(self, path: str) -> int | None:
        """Record the shown kernel at the window's launch (`trace --kernel-file` in the
        background), then open the trace beside its prediction."""
        spec, inputs = self.window.model.kernel(), self.window.model.inputs
        if not path or spec is None:
            return None
        if self.tracer.busy():
            self.window.show_message("A trace is being recorded already…")
            return None
        block = inputs.block_size if spec.sweep else None
        warps = max(1, inputs.threads_per_block // 32) if spec.backend == "triton" else None
        out = trace_path(path, spec.name, inputs.elements)
        self.window.show_message(f"Tracing {spec.name} at {inputs.elements:,} elements on the GPU…")
        return self.tracer.submit(partial(_trace_job, f"{path}:{spec.name}", inputs.elements, block,
                                          warps, out), f"trace {spec.name}")

    def _on_traced(self, outcome) -> None:
        if outcome.cancelled:
            return
        if not outcome.ok:
            self.window.show_message(f"Trace on the GPU failed: {outcome.error}", error=True)
            return
        self.window.open_trace(outcome.result)

    def shutdown(self) -> None:
        self.tracer.shutdown()
        self.rules_jobs.shutdown()
        self.second_gpu_rules.shutdown()
        self.file_jobs.shutdown()
        self.compiler.shutdown()
        self.files.close()


def trace_path(path: str, name: str, elements: int) -> str:
    """Where a trace recorded from the window goes: the user's cache, never beside their file."""
    from sim.inputs.places import cache_dir

    folder = cache_dir() / "traces"
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / f"{Path(path).stem}-{name}-{elements}.json")


def _trace_job(target: str, elements: int, block, warps, out: str, ctx) -> str:
    from kernels.tracing.trace import save
    from kernels.tracing.trace_file import trace_kernel_file

    ctx.progress(0, 0, "recording (compile, time plain and stamped, stamp)")
    trace = trace_kernel_file(target, elements, block, warps,
                              f"warpscope trace --kernel-file {target} --elements {elements}")
    save(trace, out)
    return out


def _saved_paths(settings) -> list[str]:
    try:
        paths = load_json_bounded(str(settings.value(SETTINGS_KEY, "[]") or "[]"), SETTINGS_KEY,
                                  max_depth=2)
    except (TypeError, ValueError):  # UserError is a ValueError
        return []
    return paths if isinstance(paths, list) else []


def _save_paths(settings, paths) -> None:
    settings.setValue(SETTINGS_KEY, json.dumps(list(paths)))
