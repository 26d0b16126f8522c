"""File ▸ Open Nsight Compute report…: ncu's launch statistics and occupancy beside WarpScope's, as a
table (sim/traces/ncu_compare.py, what `main.py compare --ncu` prints).

The report is read and compared on the window's data-file runner (gui/file_jobs.py), so a big
report never freezes the window; a damaged file is one line in the status bar. The table shows one
kernel at a time (a report holds many: pick it above the table); a derived number that differs
from ncu's is marked DIFFERS in red, never left out.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDialog, QFileDialog, QHeaderView, QLabel,
                               QTableWidget, QTableWidgetItem, QVBoxLayout)

from gui import style
from sim.traces.ncu_compare import compare_report

FLAGS = {True: "equal", False: "DIFFERS", None: ""}


class NcuReportView(QDialog):
    """One report's kernels, each a table of quantity | Nsight Compute | WarpScope | check."""

    def __init__(self, parent, path: str, comparisons) -> None:
        super().__init__(parent)
        self.path, self.comparisons = path, list(comparisons)
        self.setWindowTitle(f"Nsight Compute report: {Path(path).name}")
        layout = QVBoxLayout(self)
        self.summary = QLabel(wordWrap=True)
        self.kernels = QComboBox()
        for c in self.comparisons:
            mark = "  (differs)" if c.differences else ""
            self.kernels.addItem(f"{c.kernel.id}: {c.kernel.name[:70]}{mark}")
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["", "Nsight Compute", "WarpScope", "check"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.notes = QLabel(wordWrap=True)
        for w in (self.summary, self.kernels, self.table, self.notes):
            layout.addWidget(w)
        self.kernels.currentIndexChanged.connect(self.show_kernel)
        same = sum(1 for c in self.comparisons if not c.differences)
        self.summary.setText(f"{len(self.comparisons)} kernel{'s' if len(self.comparisons) != 1 else ''}: "
                             f"{same} with every derived number equal to ncu's, "
                             f"{len(self.comparisons) - same} with a difference (red)")
        self.show_kernel(0)
        self.resize(760, 620)

    def show_kernel(self, index: int) -> None:
        if not 0 <= index < len(self.comparisons):
            return
        c = self.comparisons[index]
        self.table.setRowCount(len(c.rows))
        for i, r in enumerate(c.rows):
            for j, text in enumerate((r.quantity, r.ncu, r.warpscope, FLAGS[r.equal])):
                item = QTableWidgetItem(text)
                if r.equal is False:
                    item.setForeground(QColor(style.BAD))
                self.table.setItem(i, j, item)
        self.notes.setText("\n".join([f"WarpScope on the {c.gpu}."] + c.notes_text()))

    def flagged(self) -> list[str]:
        """The quantities marked DIFFERS in the table shown (for tests and scripts)."""
        return [self.table.item(i, 0).text() for i in range(self.table.rowCount())
                if self.table.item(i, 3).text() == FLAGS[False]]


def open_ncu_report(win, path: str) -> int:
    """Read and compare off the GUI thread; the table opens when done."""
    def apply(comparisons) -> None:
        win.ncu_view = NcuReportView(win, path, comparisons)
        win.ncu_view.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        win.ncu_view.show()
        win.show_message(f"Nsight Compute report {Path(path).name}: {len(comparisons)} kernels")

    def fail(line: str) -> None:
        win.show_message(f"Could not open the report: {line}", error=True)

    load = partial(compare_report, prefer=win.model.state.spec.name)  # the GPU shown, where it fits
    return win.file_jobs.open(path, load, apply, fail)


def ncu_dialog(win) -> None:
    path, _ = QFileDialog.getOpenFileName(win, "Open Nsight Compute report", "",
                                          "Nsight Compute (*.csv *.ncu-rep);;All files (*)")
    if path:
        open_ncu_report(win, path)
