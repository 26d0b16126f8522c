"""The adapter's worker threads: results arrive on the GUI thread, cancel works, errors are
one line, the newest waiting job wins, and shutdown stops the thread."""

from __future__ import annotations

import threading
import time

import pytest

from gui.adapter import TaskRunner, live_runners


@pytest.fixture
def runner():
    r = TaskRunner("test")
    yield r
    r.shutdown()


def test_runner_result_arrives_on_gui_thread(qtbot, runner):
    seen = {}

    def job(ctx):
        seen["thread"] = threading.current_thread()
        ctx.progress(1, 2, "half")
        return 42

    with qtbot.waitSignal(runner.finished, timeout=3000) as blocker:
        with qtbot.waitSignal(runner.progress, timeout=3000) as prog:
            runner.submit(job)
    out = blocker.args[0]
    assert out.ok and out.result == 42 and not out.cancelled
    assert prog.args[1:] == [1, 2, "half"]
    assert seen["thread"] is not threading.main_thread()


def test_runner_cancel_and_errors(qtbot, runner):
    started = threading.Event()

    def forever(ctx):
        started.set()
        while not ctx.cancelled():
            time.sleep(0.005)
        return "stopped"

    with qtbot.waitSignal(runner.finished, timeout=3000) as blocker:
        runner.submit(forever)
        assert started.wait(2)
        runner.cancel()
    assert blocker.args[0].cancelled and blocker.args[0].result == "stopped"

    def boom(ctx):
        raise ValueError("bad things\nmore lines")

    with qtbot.waitSignal(runner.finished, timeout=3000) as blocker:
        runner.submit(boom)
    out = blocker.args[0]
    assert not out.ok and out.error == "ValueError: bad things"

    def user_error(ctx):
        from sim.inputs.errors import UserError

        raise UserError("Triton BLOCK_SIZE must be a power of two up to 131072, got 2000")

    with qtbot.waitSignal(runner.finished, timeout=3000) as blocker:
        runner.submit(user_error)
    assert blocker.args[0].error.startswith("Triton BLOCK_SIZE")  # was 'UserError: Triton ...'


def test_runner_latest_request_wins(qtbot, runner):
    gate = threading.Event()
    results = []
    runner.finished.connect(lambda o: results.append(o.result))
    runner.submit(lambda ctx: (gate.wait(2), "first")[1])
    runner.submit(lambda ctx: "second")
    runner.submit(lambda ctx: "third")  # replaces "second" while "first" runs
    gate.set()
    qtbot.waitUntil(lambda: len(results) == 2, timeout=3000)
    assert results == ["first", "third"]


def test_runner_shutdown_stops_thread(runner):
    assert runner in live_runners()
    assert runner.shutdown()
    assert runner not in live_runners()
    with pytest.raises(RuntimeError):
        runner.submit(lambda ctx: None)


def test_staged_redraw_waits_until_shown_coalesces_and_restarts(qtbot, qapp):
    from PySide6.QtWidgets import QWidget

    from gui.redraw import StagedRedraw

    widget = QWidget()
    qtbot.addWidget(widget)
    ran: list[str] = []

    def steps():
        ran.append("first")
        yield
        ran.append("second")
        yield

    redraws = StagedRedraw(widget, steps)
    redraws.request()
    redraws.request()
    for _ in range(3):  # event-loop turns (zero-delay timers fire): a hidden widget is not drawn
        qapp.processEvents()
    assert redraws.pending() and ran == []
    widget.show()
    qtbot.waitUntil(lambda: not redraws.pending())
    assert ran == ["first", "second"]  # two requests, one redraw
    ran.clear()
    redraws.request()
    redraws.flush()
    assert ran == ["first", "second"] and not redraws.pending()
