"""The user's kernel files: which are open, what went wrong opening one, and the source to show.

Opening a file runs it (docs/KERNEL_FILES.md, "Your file is your code"), so the window opens one
only when the user asks: File ▸ Open kernel…, or a yes to "open again?" for the files of an
earlier session, which this model remembers (`remembered`) but never opens by itself. Plain
data and psygnal signals, no Qt; the job that imports a file lives in gui/jobs.py.
"""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass, field
from typing import Any

from psygnal import Signal

from kernels.tracing.trace_file import TRACED_BACKENDS
from sim.inputs.errors import UserError
from sim.inputs.files import read_user_file

MAX_REMEMBERED = 8


@dataclass(frozen=True)
class OpenedFile:
    """A kernel file as it was when opened: its text and the kernels it declared (KernelSpecs,
    torch peers included)."""

    path: str  # absolute
    source: str
    kernels: tuple
    digest: str = ""  # sha256 of the file as opened (other processes open this version or none)
    process: Any = field(default=None, compare=False, repr=False)  # evaluates its declarations

    def close(self) -> None:
        if self.process is not None:
            self.process.close()

    @property
    def name(self) -> str:
        return os.path.basename(self.path)

    def launchable(self) -> list:
        return [k for k in self.kernels if k.launchable]


@dataclass(frozen=True)
class SourceView:
    """What the source panel shows for the selected kernel."""

    title: str  # "softmax_triton.py — softmax_kernel"
    path: str
    text: str
    line: int  # 1-based line of the kernel's def (0: not found)
    note: str = ""  # read-only, where it comes from
    traceable: bool = False  # a user's file whose backend `trace --kernel-file` stamps


def def_line(text: str, function: str) -> int:
    """The 1-based line where `def function(` starts (0 if it is not there)."""
    match = re.search(rf"^[ \t]*def\s+{re.escape(function)}\s*\(", text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else 0


def _function_name(spec) -> str:
    kernel = spec.kernel
    if isinstance(kernel, str):
        return kernel.rpartition(":")[2]
    fn = getattr(kernel, "py_func", None) or getattr(kernel, "fn", None) or kernel
    return getattr(fn, "__name__", spec.name)


class KernelFilesModel:
    """Signals: `opened(OpenedFile)`, `failed(path, message)`, `remembered_changed()`."""

    opened = Signal(object)
    failed = Signal(str, str)
    remembered_changed = Signal()

    def __init__(self, remembered=()) -> None:
        self.files: dict[str, OpenedFile] = {}
        self.remembered: list[str] = _clean(remembered)
        self.last_error: tuple[str, str] | None = None  # (path, message) of the last failure

    # -- opening ----------------------------------------------------------------------------
    def add(self, opened: OpenedFile) -> None:
        """A file opened (again): it replaces its earlier copy and heads the remembered list."""
        old = self.files.get(opened.path)
        self.files[opened.path] = opened
        if old is not None and old is not opened:
            old.close()
        self.last_error = None
        self.remember(opened.path)
        self.opened.emit(opened)

    def close(self) -> None:
        """Let every file's process go (the window is closing)."""
        for opened in self.files.values():
            opened.close()

    def fail(self, path: str, message: str) -> None:
        self.last_error = (path, message)
        self.failed.emit(path, message)

    def remember(self, path: str) -> None:
        self.remembered = _clean([path] + self.remembered)
        self.remembered_changed.emit()

    def forget_remembered(self) -> None:
        self.remembered = []
        self.remembered_changed.emit()

    def to_reopen(self) -> list[str]:
        """Files of an earlier session that are not open now and still exist."""
        return [p for p in self.remembered if p not in self.files and os.path.isfile(p)]

    # -- showing ----------------------------------------------------------------------------
    def source_of(self, spec) -> SourceView | None:
        """The source of a registry kernel: its user file as opened, or a built-in's module."""
        if spec is None:
            return None
        function = _function_name(spec)
        opened = self.files.get(spec.origin)
        if opened is not None:
            return SourceView(f"{opened.name} — {function}", opened.path, opened.source,
                              def_line(opened.source, function),
                              "Read-only: the file as it was opened. Edit it in your editor, then "
                              "File ▸ Open kernel… again.",
                              traceable=spec.backend in TRACED_BACKENDS)
        if spec.origin != "built-in" or not isinstance(spec.kernel, str):
            return None
        found = importlib.util.find_spec(spec.kernel.rpartition(":")[0])
        if found is None or not found.origin or not os.path.isfile(found.origin):
            return None
        try:
            text = read_user_file(found.origin, "kernel source", 4 << 20)
        except UserError:
            return None
        return SourceView(f"{os.path.basename(found.origin)} — {function} (built-in)",
                          found.origin, text, def_line(text, function),
                          "Read-only: one of WarpScope's built-in kernels.")


def _clean(paths) -> list[str]:
    out: list[str] = []
    for p in paths:
        if isinstance(p, str) and p and os.path.isabs(p) and p not in out:
            out.append(p)
    return out[:MAX_REMEMBERED]


def missing_package_hint(message: str) -> str:
    """The pip line for a kernel file that failed on `No module named 'triton'` (or torch,
    numba) where this Python lacks it; "" otherwise. The live kernels need each other (Triton's
    interpreter runs on torch), so the line adds every one that is missing."""
    from kernels.launching.backends import CPU_PINS, install_hint, missing_packages

    found = re.search(r"No module named '([\w.]+)'", message)
    if found and found.group(1).split(".")[0] in CPU_PINS and missing_packages():
        return install_hint()
    return ""
