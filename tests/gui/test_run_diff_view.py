"""The Diff view: in the window (A = this launch) and on its own, the story `main.py diff` tells."""

from __future__ import annotations

from sim.model.run_diff import diff_runs


def test_the_window_diff_of_two_launches_tells_the_story(win, qtbot):
    w = win("H200", 2**24, 1024, regs=40)
    view = w.diff_view  # the panel, made on asking if the window has not made it yet
    view.a.setText(view.current_launch())
    w.model.update(regs_per_thread=32)
    view.b.setText(view.current_launch())
    assert "regs=40" in view.a.text() and "regs=32" in view.b.text()
    view.compare()
    qtbot.waitUntil(lambda: view.diff is not None, timeout=10000)
    expected = diff_runs(view.a.text(), view.b.text()).story()
    assert view.story.text() == expected  # the CLI's story, one source
    assert "2 blocks fit per SM instead of 1" in expected
    labels = [view.table.item(i, 0).text() for i in range(view.table.rowCount())]
    assert "blocks per SM" in labels and "time" in labels
    qtbot.waitUntil(lambda: view.runner is None, timeout=5000)
    qtbot.wait(50)  # the runner's shutdown runs from the event loop


def test_the_view_alone_says_a_bad_run_in_one_line(qtbot):
    from gui.widgets.qt_run_diff import QtRunDiff

    view = QtRunDiff()
    qtbot.addWidget(view)
    view.a.setText("gpu=H200,foo=1")
    view.b.setText("gpu=H200")
    view.compare()
    qtbot.waitUntil(lambda: "is not one of" in view.story.text(), timeout=10000)
    assert view.table.rowCount() == 0
    qtbot.waitUntil(lambda: view.runner is None, timeout=5000)
    qtbot.wait(50)  # the runner's shutdown runs from the event loop
