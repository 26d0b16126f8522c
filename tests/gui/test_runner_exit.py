"""Leaving the app while a worker thread runs a job: an exception out of the program, or
`app.quit()` without the window's closeEvent. Qt aborts a process that destroys a running QThread
("QThread: Destroyed while thread ... is still running"); the adapter shuts every live runner
down on aboutToQuit and at exit instead. Each case runs in a fresh interpreter: it is about
exiting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.patience import HANG_S

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import sys, threading, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from gui.adapter import TaskRunner, live_runners

app = QApplication([])
runner = TaskRunner("busy")
started = threading.Event()

def job(ctx):
    started.set()
    while not ctx.cancelled():
        time.sleep(0.005)

runner.submit(job)
assert started.wait(10), "the job never started"
if sys.argv[1] == "raise":
    raise RuntimeError("left without closing the window")
QTimer.singleShot(0, app.quit)
app.exec()
print("left running:", [r.name for r in live_runners()], flush=True)
"""


@pytest.mark.parametrize("how, status", [("raise", 1), ("quit", 0)])
def test_leaving_with_a_job_running_does_not_abort(how, status):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", CHILD, how], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=HANG_S)
    assert "QThread: Destroyed" not in done.stderr
    assert done.returncode == status, done.stderr[-2000:]  # an abort is -6
    if how == "raise":
        assert "RuntimeError: left without closing the window" in done.stderr
    else:
        assert "left running: []" in done.stdout  # shut down by aboutToQuit, before exit
