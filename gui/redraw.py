"""Views redraw in steps, and only while they can be seen.

A pyqtgraph panel rebuilt in one slot held the GUI thread for 200-500 ms (the aim: no stall over
100 ms). `StagedRedraw` runs a view's redraw, written as a generator, a piece per event-loop turn,
after a burst of changes, and not at all while the view is out of sight; `flush_redraws(window)`
finishes every waiting one before a screenshot or an export. Its timer lives here, beside the
view it serves, like `gui.adapter.Debouncer`'s.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Iterator

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QTimer, Slot
from PySide6.QtWidgets import QWidget

__all__ = ["StagedRedraw", "flush_redraws"]

_REDRAWS: weakref.WeakSet = weakref.WeakSet()  # every StagedRedraw, for flush_redraws()

_WAKE = (QEvent.Type.Show, QEvent.Type.Move, QEvent.Type.Resize)  # a view may have come into sight


class StagedRedraw(QObject):
    """Redraws `widget` by running `steps()`, a generator that yields between pieces of its work,
    one piece per event-loop turn: the window paints what changed and answers input between them
    (a panel of pyqtgraph plots redrawn in one go held the GUI thread 200-500 ms).

    `request()` marks the view stale; a burst of requests makes one redraw (a zero-delay timer),
    a request during a redraw restarts it from the first step, and a widget out of sight (a tab
    behind another, a dock behind another, a closed dock) is redrawn only when it comes into
    sight. `flush()` finishes at once, for exports, grabs and tests."""

    TURN_S = 0.012  # GUI-thread time one turn may take (the target: no stall over 0.1 s)

    def __init__(self, widget, steps: Callable[[], Iterator], parent: QObject | None = None) -> None:
        super().__init__(parent or widget)
        self.widget, self._steps = widget, steps
        self._run: Iterator | None = None
        self._stale = False
        self._dock = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._step)
        widget.installEventFilter(self)
        _REDRAWS.add(self)

    def request(self) -> None:
        self._stale, self._run = True, None
        if self.seen():
            self._timer.start()
        else:
            self._watch_dock()

    def seen(self) -> bool:
        """Shown and inside its window: Qt keeps a dock behind a tab 'visible', moved off screen.
        (Not visibleRegion(): a plot's opaque viewport covers the whole of its QGraphicsView, whose
        own region is then empty although the plot is on screen.)"""
        widget = self.widget
        if not widget.isVisible():
            return False
        top = QWidget.window(widget)  # unbound: a view may name a child `window`
        return QRect(widget.mapTo(top, QPoint(0, 0)), widget.size()).intersects(top.rect())

    def _watch_dock(self) -> None:
        """A dock brought to the front is moved on screen, not shown: watch the widget's dock."""
        if self._dock is None:
            dock = self.widget.parentWidget()
            while dock is not None and not dock.inherits("QDockWidget"):
                dock = dock.parentWidget()
            if dock is not None:
                self._dock = dock
                dock.installEventFilter(self)

    def pending(self) -> bool:
        return self._stale

    def cancel(self) -> None:
        """The view was drawn another way: forget the waiting redraw."""
        self._timer.stop()
        self._stale, self._run = False, None

    def flush(self) -> None:
        self._timer.stop()
        while self._stale:
            self._step(schedule=False)

    def eventFilter(self, obj, event) -> bool:
        kind = event.type()
        if (self._stale and not self._timer.isActive() and kind in _WAKE
                and self.seen()):
            self._timer.start()
        return False

    @Slot()
    def _step(self, schedule: bool = True) -> None:
        """Run steps for up to TURN_S (steps may be small: this batches them), then yield. A
        request or cancel during a step (a redraw that resizes its own view) ends this run."""
        t0 = time.perf_counter()
        if self._run is None:
            self._run = iter(self._steps())
        run = self._run
        try:
            next(run)
            while self._run is run and time.perf_counter() - t0 < self.TURN_S:
                next(run)
        except StopIteration:
            if self._run is run:
                self._run, self._stale = None, False
            return
        except BaseException:
            self._run, self._stale = None, False  # a failing redraw is not retried in a loop
            raise
        if schedule and self._stale:
            self._timer.start()


def flush_redraws(root) -> None:
    """Finish the waiting redraws of `root`'s views now: before a screenshot or an export."""
    for redraw in list(_REDRAWS):
        try:
            widget = redraw.widget
            mine = widget is root or root.isAncestorOf(widget)
        except RuntimeError:  # a view of a window already deleted
            continue
        if mine:
            redraw.flush()
