"""QtBandwidth: the live panel. A banner that says what the curves are, and three tabs: the sweep
(qt_sweep), the article's experiments (qt_experiments) and a log.

All state is in gui.models.bench.BenchModel; jobs run through gui.jobs.BenchJobs. Without a GPU
the banner says why (kernels.available()) and what still works.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton,
                               QScrollArea, QTabWidget, QVBoxLayout, QWidget)

from gui import style
from gui.jobs import BenchJobs
from gui.models.bench import LOG_LINES, BenchModel
from gui.widgets.qt_experiments import QtExperiments
from gui.widgets.qt_sweep import QtSweep


class _WidthScroll(QScrollArea):
    """Scrolls up and down only; a widget that can lay itself out again for another width
    (`fit_to_width(px)`) is told the width it has, before it would be cut on the right."""

    def resizeEvent(self, event) -> None:
        fit = getattr(self.widget(), "fit_to_width", None)
        if fit is not None:
            fit(self.viewport().width() - self.verticalScrollBar().sizeHint().width())
        super().resizeEvent(event)


def _scrolled(widget: QWidget) -> QScrollArea:
    """A tab that scrolls when the dock is shorter than its plots need, instead of squashing
    them until their axes are cut off."""
    area = _WidthScroll()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return area


class QtBandwidth(QWidget):
    def __init__(self, bench: BenchModel, jobs: BenchJobs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bench = bench
        self.setMinimumHeight(170)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.banner = QLabel("")
        self.banner.setProperty("role", "banner")
        self.banner.setWordWrap(True)
        self.banner.setTextFormat(Qt.TextFormat.RichText)
        lay.addWidget(self.banner)
        self.tabs = QTabWidget()
        lay.addWidget(self.tabs, 1)
        self.sweep = QtSweep(bench, jobs)
        self.experiments = QtExperiments(bench, jobs)
        log_tab = QWidget()
        log_lay = QVBoxLayout(log_tab)
        log_lay.setContentsMargins(2, 2, 2, 2)
        self.check_button = QPushButton("Correctness run")
        self.check_button.setToolTip("Run every registry kernel against its float64 reference on "
                                     "whatever runs here (the interpreter/simulator without a GPU).")
        row = QHBoxLayout()
        row.addWidget(self.check_button)
        row.addStretch(1)
        log_lay.addLayout(row)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(LOG_LINES)
        self.log.setFont(style.monospace_font(8.5))
        self.log.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.log.setPlaceholderText("Results of the correctness run and notes on loaded files appear here.")
        log_lay.addWidget(self.log, 1)
        # tabs are raised by widget, not by index: other panels insert tabs (Timing methods)
        self.sweep_tab, self.experiments_tab, self.log_tab = (
            _scrolled(self.sweep), _scrolled(self.experiments), log_tab)
        self.tabs.addTab(self.sweep_tab, "Sweep")
        self.tabs.addTab(self.experiments_tab, "Experiments")
        self.tabs.addTab(self.log_tab, "Checks and log")
        self.check_button.clicked.connect(jobs.start_checks)

        bench.availability_changed.connect(self._on_banner_facts_changed)
        bench.result_changed.connect(self._on_result_changed)
        for line in bench.log_lines:  # logged before this view was made
            self._on_log(line)
        bench.log.connect(self._on_log)
        bench.busy_changed.connect(self._on_busy_changed)
        bench.experiments_changed.connect(self._on_experiments_changed)
        self._on_banner_facts_changed()

    def _on_banner_facts_changed(self, *_args) -> None:
        text, tip = self.bench.banner()
        self.banner.setText(text)
        self.banner.setToolTip(tip)
        self.banner.setVisible(bool(text))

    def _on_log(self, line: str) -> None:
        self.log.appendPlainText(line)

    def _on_result_changed(self, _result) -> None:
        self._on_banner_facts_changed()
        self.tabs.setCurrentWidget(self.sweep_tab)

    def _on_busy_changed(self, busy: str) -> None:
        self.check_button.setEnabled(not busy)
        if busy == "check":
            self.tabs.setCurrentWidget(self.log_tab)

    def _on_experiments_changed(self, _out) -> None:
        self.tabs.setCurrentWidget(self.experiments_tab)

    def export_items(self):
        return self.sweep.export_items() + self.experiments.export_items()


if __name__ == "__main__":  # this view alone, for a default launch: python -m gui.widgets.qt_bandwidth [GPU N THREADS]
    from gui.panels import open_alone

    raise SystemExit(open_alone("bandwidth"))
