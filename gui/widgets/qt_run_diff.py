"""QtRunDiff: two runs side by side (launches, traces or bench results) and the story of what
changed (sim.model.run_diff, as `main.py diff A B` prints it). Reading the runs happens in a worker
thread (gui.adapter.TaskRunner). Opens on its own too: `python -m gui.widgets.qt_run_diff [A B]`."""

from __future__ import annotations

import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (QGridLayout, QLabel, QLineEdit, QPushButton, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from gui import style
from sim.model.run_diff import RunDiff, diff_runs, launch_spec
from sim.model.what_if import from_geometry

PLACEHOLDER = "gpu=H200,elements=2^24,block=256,regs=40  or a trace / bench file (FILE#N)"


def _diff_job(a: str, b: str, _ctx) -> RunDiff:
    return diff_runs(a, b)


class QtRunDiff(QWidget):
    def __init__(self, launch=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.launch = launch  # gui.models.launch.LaunchModel, for "this launch"; None alone
        self.diff: RunDiff | None = None
        self.runner = None  # a worker thread while a diff is read, none between
        lay = QVBoxLayout(self)
        grid = QGridLayout()
        self.a, self.b = QLineEdit(), QLineEdit()
        for row, (name, edit) in enumerate((("A", self.a), ("B", self.b))):
            edit.setPlaceholderText(PLACEHOLDER)
            edit.returnPressed.connect(self.compare)
            grid.addWidget(QLabel(name), row, 0)
            grid.addWidget(edit, row, 1)
            if launch is not None:
                here = QPushButton("this launch")
                here.setToolTip(f"{name} = the launch the sliders set")
                here.clicked.connect(lambda _=False, e=edit: e.setText(self.current_launch()))
                grid.addWidget(here, row, 2)
        lay.addLayout(grid)
        self.go = QPushButton("Compare")
        self.go.clicked.connect(self.compare)
        lay.addWidget(self.go)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["", "A", "B"])
        self.table.verticalHeader().hide()
        lay.addWidget(self.table, 1)
        self.story = QLabel()
        self.story.setWordWrap(True)
        lay.addWidget(self.story)

    def current_launch(self) -> str:
        st = self.launch.state
        if not st.ok or st.geometry is None:
            return ""
        return launch_spec(st.spec.name, from_geometry(st.occ, st.geometry, st.bytes_moved))

    def compare(self) -> None:
        a, b = self.a.text().strip(), self.b.text().strip()
        if not a or not b:
            self.story.setText("Give two runs, A and B.")
            return
        from functools import partial

        from gui.adapter import TaskRunner

        self.story.setText("Reading…")
        if self.runner is None:
            self.runner = TaskRunner("run diff", self)
            self.runner.finished.connect(self._on_finished)
        self.runner.submit(partial(_diff_job, a, b), "run diff")

    def _on_finished(self, outcome) -> None:
        if self.runner is not None and not self.runner.busy():  # the last job: stop the thread
            runner, self.runner = self.runner, None
            QTimer.singleShot(0, runner.shutdown)
        self._show(outcome)

    def _show(self, outcome) -> None:
        if not outcome.ok:
            self.diff = None
            self.table.setRowCount(0)
            self.story.setText(f"<span style='color:{style.BAD}'>{outcome.error}</span>")
            return
        self.diff = d = outcome.result
        rows = [("source", d.a.source, d.b.source, False), *d.rows()]
        self.table.setRowCount(len(rows))
        for i, (name, va, vb, changed) in enumerate(rows):
            for j, text in enumerate((name, va, vb)):
                item = QTableWidgetItem(text)
                if changed and j:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(i, j, item)
        self.table.resizeColumnsToContents()
        self.story.setText(d.story())


def main(argv=None) -> int:
    """The Diff view alone: `python -m gui.widgets.qt_run_diff [A B]`."""
    from PySide6.QtWidgets import QApplication

    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:  # no two runs: the view for a launch, as every view opens alone
        from gui.panels import open_alone

        return open_alone("diff")  # GPU, elements, threads from the command line
    app = QApplication.instance() or QApplication([])
    view = QtRunDiff()
    view.setWindowTitle("WarpScope: run diff")
    if len(argv) == 2:
        view.a.setText(argv[0])
        view.b.setText(argv[1])
        view.compare()
    view.resize(720, 480)
    view.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
