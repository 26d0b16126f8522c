"""Ctrl+C or a polite kill closes the window through the event loop (settings saved, threads
stopped), and waiting for one polls nothing: no timer runs while the window is idle."""

from __future__ import annotations

import os
import signal

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QWidget

from gui.app import _close_on_signals


def test_a_term_signal_closes_the_window_and_no_timer_waits_for_it(qtbot):
    w = QWidget()
    qtbot.addWidget(w)
    w.show()
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        _close_on_signals(w)
        assert not [t for t in w.findChildren(QTimer) if t.isActive()]  # no polling
        os.kill(os.getpid(), signal.SIGTERM)
        qtbot.waitUntil(lambda: not w.isVisible(), timeout=5000)
    finally:
        signal.set_wakeup_fd(-1)
        for s, handler in before.items():
            signal.signal(s, handler)
