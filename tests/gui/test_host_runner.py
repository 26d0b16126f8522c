"""HostRunner: the window's jobs in the kernel host process, with TaskRunner's signals. Outcomes
arrive on the GUI thread; jobs run in order; Cancel stops a job, and a job deaf to it (or past
its time limit, or crashing) costs its host, one line, and nothing else: the next job starts a
fresh host."""

from __future__ import annotations

import functools
import os

import pytest

from gui.adapter import HostRunner, live_runners
from tests import host_jobs
from tests.patience import HANG_MS, HANG_S


@pytest.fixture
def runner():
    r = HostRunner("test", cancel_grace_s=0.5)
    yield r
    r.shutdown()
    assert not r.is_running()


def _collect(runner):
    got = []
    runner.finished.connect(got.append)
    return got


def test_outcomes_arrive_in_order_from_another_process(qtbot, runner):
    got = _collect(runner)
    progress = []
    runner.progress.connect(lambda *a: progress.append(a))
    ids = [runner.submit(functools.partial(host_jobs.answer, i), f"job{i}") for i in range(3)]
    assert runner.busy()
    qtbot.waitUntil(lambda: len(got) == 3, timeout=HANG_MS)
    assert [o.job_id for o in got] == ids and all(o.ok for o in got)
    assert [o.result[0] for o in got] == [0, 1, 2]
    assert {o.result[1] for o in got} == {runner.host_pid} and runner.host_pid != os.getpid()
    assert (ids[0], 1, 2, "half") in progress
    assert runner in live_runners() and not runner.busy()


def test_cancel_drops_waiting_jobs_and_stops_the_running_one(qtbot, runner):
    got = _collect(runner)
    with qtbot.waitSignal(runner.progress, timeout=HANG_MS):
        first = runner.submit(host_jobs.until_cancelled, "waits")
    second = runner.submit(functools.partial(host_jobs.answer, 2), "queued")
    runner.cancel(second)
    assert got[-1].job_id == second and got[-1].cancelled and got[-1].error == "cancelled before it started"
    runner.cancel()
    qtbot.waitUntil(lambda: len(got) == 2, timeout=HANG_MS)
    assert got[1].job_id == first and got[1].ok and got[1].cancelled and got[1].result == "stopped"


def test_a_job_deaf_to_cancel_costs_its_host_not_the_window(qtbot, runner):
    got = _collect(runner)
    with qtbot.waitSignal(runner.progress, timeout=HANG_MS):
        runner.submit(host_jobs.deaf, "deaf")
    first_pid = runner.host_pid
    states = []
    runner.host_changed.connect(states.append)
    runner.cancel()
    qtbot.waitUntil(lambda: len(got) == 1, timeout=HANG_MS)
    assert got[0].cancelled and not got[0].ok
    assert got[0].error == ("deaf did not stop within 0.5 s of Cancel; the kernel host was stopped "
                            "(the next job starts a fresh one)")
    assert states and states[0].startswith("stopped")
    runner.submit(functools.partial(host_jobs.answer, "again"))
    qtbot.waitUntil(lambda: len(got) == 2, timeout=HANG_MS)
    assert got[1].ok and got[1].result[1] not in (first_pid, os.getpid())


def test_time_limit_and_crash_are_one_line_each(qtbot, runner):
    got = _collect(runner)
    runner.submit(host_jobs.deaf, "slow", timeout_s=1.0)
    qtbot.waitUntil(lambda: len(got) == 1, timeout=HANG_MS)
    assert got[0].error.startswith("slow did not finish within 1 s; the kernel host was stopped")
    runner.submit(host_jobs.crash, "crashing")
    qtbot.waitUntil(lambda: len(got) == 2, timeout=HANG_MS)
    assert got[1].error.startswith("the kernel host stopped (killed by SIGSEGV")
    assert got[1].error.endswith(") during crashing; the next job starts it again")
    runner.submit(functools.partial(host_jobs.answer, 3))
    qtbot.waitUntil(lambda: len(got) == 3, timeout=HANG_MS)
    assert got[2].ok


def test_jobs_that_cannot_travel_are_refused_at_once(runner):
    with pytest.raises(TypeError, match="module-level functions"):
        runner.submit(lambda ctx: 1, "closure")
    assert not runner.busy() and runner.host_pid is None  # nothing was started for it


def test_job_modules_import_no_qt():
    """The host imports gui.jobs to run its jobs: that must not pull Qt into it."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, gui.jobs, kernels.host.process; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'shiboken6', 'pyqtgraph', 'torch', 'triton', 'numba')))")
    root = Path(__file__).resolve().parents[2]
    p = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                       timeout=HANG_S, env={**os.environ, "PYTHONPATH": str(root)})
    assert p.returncode == 0 and p.stdout.strip() == "[]", p.stderr
