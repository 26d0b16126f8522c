"""The selected kernel's source (read-only), and where its registers and shared memory come from.

`QtKernelSource` is the "Kernel source" panel: the file a kernel came from as it was opened (or a
built-in kernel's module), the kernel's `def` marked, line numbers for compiler messages, and a
banner when a file could not be opened. `QtKernelResources` is the line under the kernel menu:
"from the compiler (triton 3.7.1 for sm_80)", a busy bar and Cancel while compiling, the first
line of a compile error with a button to try again, and a warning when the kernel spills. Both
only render gui.models state (LaunchModel, KernelFilesModel).
"""

from __future__ import annotations

import html
import keyword
import re

from PySide6.QtCore import QRect, QSize, Qt, Signal
from PySide6.QtGui import (QColor, QFont, QPainter, QSyntaxHighlighter, QTextCharFormat,
                           QTextCursor, QTextFormat)
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QPlainTextEdit, QProgressBar, QPushButton,
                               QTextEdit, QVBoxLayout, QWidget)

from gui import style
from gui.models.compiled import BENCH, COMPILER, COMPILING, FAILED, ResourceOrigin
from gui.models.kernel_files import KernelFilesModel, missing_package_hint
from gui.models.launch import LaunchModel, LaunchState

PLACEHOLDER = ("No kernel selected. Pick one under Kernel, or open your own with File ▸ Open "
               "kernel… (a .py file with a @triton.jit or @cuda.jit kernel and a WARPSCOPE "
               "declaration: docs/KERNEL_FILES.md).")


class PythonHighlighter(QSyntaxHighlighter):
    """Keywords, decorators, strings, numbers and comments, in the window's colours."""

    def __init__(self, document) -> None:
        super().__init__(document)

        def fmt(color: str, bold: bool = False, italic: bool = False) -> QTextCharFormat:
            f = QTextCharFormat()
            f.setForeground(QColor(color))
            if bold:
                f.setFontWeight(QFont.Weight.Bold)
            f.setFontItalic(italic)
            return f

        words = "|".join(keyword.kwlist)
        self._rules = [
            (re.compile(rf"\b(?:{words})\b"), fmt(style.ACCENT2, bold=True)),
            (re.compile(r"^\s*@[\w.]+", re.MULTILINE), fmt(style.ACCENT)),
            (re.compile(r"\b\d+(?:\.\d*)?(?:e[-+]?\d+)?\b"), fmt("#c39ac9")),
            (re.compile(r"(?:'[^'\n]*'|\"[^\"\n]*\")"), fmt(style.GOOD)),
            (re.compile(r"#[^\n]*"), fmt(style.MUTED, italic=True)),
        ]
        self._doc_string = fmt(style.GOOD)

    def highlightBlock(self, text: str) -> None:
        for pattern, f in self._rules:
            for m in pattern.finditer(text):
                self.setFormat(m.start(), m.end() - m.start(), f)
        # triple-quoted strings may span lines: state 1 = inside one
        start = 0 if self.previousBlockState() == 1 else -1
        pos = 0
        while True:
            if start < 0:
                found = text.find('"""', pos)
                if found < 0:
                    break
                start, pos = found, found + 3
            end = text.find('"""', pos)
            if end < 0:
                self.setFormat(start, len(text) - start, self._doc_string)
                self.setCurrentBlockState(1)
                return
            self.setFormat(start, end + 3 - start, self._doc_string)
            start, pos = -1, end + 3
        self.setCurrentBlockState(0)


class CodeView(QPlainTextEdit):
    """Read-only code with line numbers in a gutter (compiler messages cite lines)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setFont(style.monospace_font(9))
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                     | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self._gutter = _Gutter(self)
        self.blockCountChanged.connect(self._fit_gutter)
        self.updateRequest.connect(self._scroll_gutter)
        self.highlighter = PythonHighlighter(self.document())
        self._fit_gutter()

    def gutter_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        return 12 + self.fontMetrics().horizontalAdvance("9") * max(3, digits)

    def _fit_gutter(self, *_args) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _scroll_gutter(self, rect, dy) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        cr = self.contentsRect()
        self._gutter.setGeometry(QRect(cr.left(), cr.top(), self.gutter_width(), cr.height()))

    def paint_gutter(self, event) -> None:
        painter = QPainter(self._gutter)
        painter.fillRect(event.rect(), QColor(style.PANEL))
        painter.setPen(QColor(style.MUTED))
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        while block.isValid() and top <= event.rect().bottom():
            if block.isVisible():
                painter.drawText(0, top, self._gutter.width() - 6, height,
                                 Qt.AlignmentFlag.AlignRight, str(block.blockNumber() + 1))
            top += round(self.blockBoundingRect(block).height())
            block = block.next()
        painter.end()

    def show_text(self, text: str, line: int = 0) -> None:
        """Replace the text; mark `line` (1-based) and scroll it near the top."""
        if self.toPlainText() != text:
            self.setPlainText(text)
        marks = []
        if line > 0:
            sel = QTextEdit.ExtraSelection()
            sel.format.setBackground(QColor("#2a2f3a"))
            sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            sel.cursor = QTextCursor(self.document().findBlockByNumber(line - 1))
            marks.append(sel)
            self.verticalScrollBar().setValue(max(0, line - 4))
        self.setExtraSelections(marks)

    def marked_line(self) -> int:
        marks = self.extraSelections()
        return marks[0].cursor.blockNumber() + 1 if marks else 0


class _Gutter(QWidget):
    def __init__(self, view: CodeView) -> None:
        super().__init__(view)
        self._view = view

    def sizeHint(self) -> QSize:
        return QSize(self._view.gutter_width(), 0)

    def paintEvent(self, event) -> None:
        self._view.paint_gutter(event)


def failure_text(path: str, message: str) -> str:
    """The banner's rich text: the message as the user reads it (escaped once, shown as rich
    text: an auto-detected plain label showed `&#x27;triton&#x27;`), and, when the file imports
    a live-kernel package this Python lacks, the pip line that adds it."""
    text = f"Could not open {html.escape(path)}: {html.escape(message)}"
    hint = missing_package_hint(message)
    if hint:
        text += f"<br>Add the live kernels with: <code>{html.escape(hint)}</code>"
    return text


class QtKernelSource(QWidget):
    """The Kernel source panel. `open_requested` / `reopen_requested(path)`: the user asked to
    open a file (the window runs the job)."""

    open_requested = Signal()
    reopen_requested = Signal(str)
    trace_requested = Signal(str)  # the file of the kernel shown

    def __init__(self, launch: LaunchModel, files: KernelFilesModel,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.launch, self.files = launch, files
        self._path = ""
        self._shown: tuple | None = ()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(3)
        self.banner = QLabel("")
        self.banner.setProperty("role", "error")
        self.banner.setWordWrap(True)
        self.banner.setTextFormat(Qt.TextFormat.RichText)
        self.banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.banner.hide()
        lay.addWidget(self.banner)
        head = QHBoxLayout()
        self.title = QLabel("")
        self.title.setProperty("role", "value")
        self.note = QLabel("")
        self.note.setProperty("role", "muted")
        self.note.setWordWrap(True)
        self.open_button = QPushButton("Open kernel…")
        self.open_button.setToolTip("Open a kernel file (.py with a WARPSCOPE declaration). "
                                    "Opening it runs the file's Python code.")
        self.trace_button = QPushButton("Trace on the GPU")
        self.trace_button.setToolTip("Record which SM ran each program of this kernel, and when, "
                                     "at the launch shown (the file's source recompiled with stamps; "
                                     "its cost is measured), then lay it beside the prediction.")
        self.trace_button.hide()  # shown once the kernel host has found a GPU
        self._gpu = False
        self.reopen_button = QPushButton("Open again")
        self.reopen_button.setToolTip("Run the file again as it is on disk now (after you edited "
                                      "it) and show the new version.")
        head.addWidget(self.title, 1)
        head.addWidget(self.trace_button)
        head.addWidget(self.reopen_button)
        head.addWidget(self.open_button)
        lay.addLayout(head)
        lay.addWidget(self.note)
        self.code = CodeView()
        self.code.setPlaceholderText(PLACEHOLDER)
        lay.addWidget(self.code, 1)

        self.open_button.clicked.connect(self.open_requested)
        self.reopen_button.clicked.connect(lambda: self.reopen_requested.emit(self._path))
        self.trace_button.clicked.connect(lambda: self.trace_requested.emit(self._path))
        launch.changed.connect(self._on_launch_changed)
        files.opened.connect(self._on_opened)
        files.failed.connect(self._on_failed)
        self._show(launch.kernel())

    def set_gpu_present(self, present: bool) -> None:
        """The kernel host found a GPU: a Triton or Numba kernel from a file can be traced."""
        self._gpu = bool(present)
        self._shown = ()
        self._show(self.launch.kernel())

    def _on_launch_changed(self, _state: LaunchState) -> None:
        self._show(self.launch.kernel())

    def _on_opened(self, _opened) -> None:
        self.banner.hide()
        self._shown = ()  # the file may be a new version of the one shown
        self._show(self.launch.kernel())

    def _on_failed(self, path: str, message: str) -> None:
        self.banner.setText(failure_text(path, message))
        self.banner.show()

    def _show(self, spec) -> None:
        # the launch changes at every slider step; the source only with the kernel or its file
        key = None if spec is None else (spec.name, spec.origin,
                                         id(self.files.files.get(spec.origin)))
        if key == self._shown:
            return
        self._shown = key
        view = self.files.source_of(spec)
        if view is None:
            self._path = ""
            self.title.setText("")
            self.note.setText("")
            self.code.show_text("")
            self.reopen_button.hide()
            self.trace_button.hide()
            return
        self._path = view.path if view.path in self.files.files else ""
        self.reopen_button.setVisible(bool(self._path))
        self.trace_button.setVisible(bool(self._path) and self._gpu and view.traceable)
        self.title.setText(view.title)
        self.title.setToolTip(view.path)
        self.note.setText(view.note)
        self.code.show_text(view.text, view.line)


class QtKernelResources(QWidget):
    """Where the launch's registers and shared memory come from, under the kernel menu.
    `cancel_requested` / `compile_requested`: the buttons (the window wires them to the jobs)."""

    cancel_requested = Signal()
    compile_requested = Signal()

    def __init__(self, launch: LaunchModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.launch = launch
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.label = QLabel("")
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.spills = QLabel("")
        self.spills.setWordWrap(True)
        self.spills.setProperty("role", "banner")
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)  # the compiler says nothing until it is done
        self.busy.setMaximumHeight(10)
        self.busy.setTextVisible(False)
        self.cancel = QPushButton("Cancel")
        self.cancel.setToolTip("Stop compiling (the compiler process is ended).")
        self.retry = QPushButton("Compile again")
        self.retry.setToolTip("Ask the compiler again for this launch.")
        row.addWidget(self.busy, 1)
        row.addWidget(self.cancel)
        row.addWidget(self.retry)
        row.addStretch(0)
        lay.addWidget(self.label)
        lay.addWidget(self.spills)
        lay.addLayout(row)
        self.cancel.clicked.connect(self.cancel_requested)
        self.retry.clicked.connect(self.compile_requested)
        launch.changed.connect(self._on_changed)
        self._on_changed(launch.state)

    def _on_changed(self, state: LaunchState) -> None:
        origin: ResourceOrigin = state.origin
        shown = self.launch.kernel() is not None
        self.setVisible(shown)
        kind = origin.kind
        self.busy.setVisible(kind == COMPILING)
        self.cancel.setVisible(kind == COMPILING)
        self.retry.setVisible(kind == FAILED)
        text = html.escape(origin.text)
        if kind == COMPILER:
            self.label.setText(f"Registers and shared memory <b>from the compiler</b> ({text}).")
        elif kind == COMPILING:
            self.label.setText(f"<span style='color:{style.MUTED}'>{text}</span>")
        elif kind == FAILED:
            self.label.setText(f"<span style='color:{style.BAD}'>{text}</span><br><span style='"
                               f"color:{style.MUTED}'>The compiler's whole output is in the "
                               "Bandwidth panel's log. Registers below are not from it.</span>")
        elif kind == BENCH:
            self.label.setText(f"Registers and shared memory {text}.")
        else:
            self.label.setText(f"<span style='color:{style.MUTED}'>Registers and shared memory "
                               "set by hand (type a block size or pick the kernel again to ask "
                               "the compiler).</span>")
        self.label.setToolTip(origin.log[:4000] if kind == FAILED else "")
        self.spills.setVisible(kind == COMPILER and origin.spills)
        if origin.spills:
            self.spills.setText(f"⚠ Spills: {origin.stack_bytes:,} B of stack per thread (local "
                                "memory, through L1/L2 and DRAM): slower than the registers "
                                "suggest.")


if __name__ == "__main__":  # this view alone, for a default launch: python -m gui.widgets.qt_kernel_source [GPU N THREADS]
    from gui.panels import open_alone

    raise SystemExit(open_alone("source"))
