"""What the window's first frame waits for: only the panels it shows (those behind the timeline's
tab are made after the first paint, gui.panels.LaterPanels), and the launch the command line asked
for, built and simulated once. A panel comes into sight, or is asked for, made."""

from __future__ import annotations

from functools import partial

from PySide6.QtWidgets import QApplication

from gui.panels import PANELS

BEHIND_A_TAB = {"bandwidth", "waves", "latency", "compare", "diff", "slider_launch"}
WAITING = BEHIND_A_TAB | {"timing", "occupancy_bandwidth"}  # with the Bandwidth panel's own tabs


def _made(win, key: str) -> bool:
    return PANELS[key][1] in win.__dict__ and (key not in win.docks
                                                or win.docks[key].widget() is not None)


def test_the_panels_behind_a_tab_are_made_after_the_first_paint(qtbot, make_window):
    win = make_window("H200")
    assert set(win.later.pending()) == WAITING
    assert not any(_made(win, key) for key in BEHIND_A_TAB)
    assert all(_made(win, key) for key in ("controls", "occupancy", "geometry", "timeline",
                                           "verdicts", "sm_view", "playback", "source"))
    assert "waves_panel" not in win.__dict__  # nor the Waves tab's worker thread
    win.show()
    qtbot.waitExposed(win)
    qtbot.waitUntil(lambda: not win.later.pending(), timeout=20_000)
    assert all(_made(win, key) for key in BEHIND_A_TAB)
    assert win.bandwidth.tabs.count() == 5  # with Timing methods and Bandwidth vs occupancy


def test_a_panel_in_front_at_the_first_paint_is_made_before_it(qtbot, make_window):
    win = make_window("H200")
    win.docks["waves"].raise_()  # as a restored layout may have it
    win.show()  # its dock comes into sight in here, before the window paints
    assert _made(win, "waves") and set(win.later.pending()) == WAITING - {"waves"}
    qtbot.waitExposed(win)
    assert not win.waves_view.visibleRegion().isEmpty()


def test_a_panel_asked_for_is_made_at_once_and_alone(make_window):
    win = make_window("H200")
    tabs = win.bandwidth.tabs  # e.g. File ▸ Open bench results… reads it
    assert _made(win, "bandwidth") and tabs.count() == 5  # made whole, its own tabs too
    assert set(win.later.pending()) == BEHIND_A_TAB - {"bandwidth"}
    assert "Timing methods" == tabs.tabText(1)
    assert win.teach.latency_view is win.latency_view and _made(win, "latency")
    win.later.make_all()
    assert not win.later.pending()


def test_the_launch_on_the_command_line_is_the_one_simulated_first(make_window):
    """`python main.py --gpu "RTX 5090" --elements 10M`: the saved or default launch is never
    built, simulated or drawn first."""
    from gui.app import build_inputs

    runs = []
    win = make_window("H200", adjust=partial(build_inputs, gpu="RTX 5090", elements=10_000_000,
                                             block=256))
    win.simulation.changed.connect(lambda run, _m: runs.append(run))
    QApplication.processEvents()
    st = win.model.state
    assert st.spec.name == "RTX 5090" and st.inputs.elements == 10_000_000
    run = win.simulation.run
    assert win.simulation.is_current() and run.key[0] == st.inputs  # simulated in the build
    assert runs == []  # nothing more to simulate once the window is up


def test_a_line_logged_before_the_log_is_made_is_in_it(make_window):
    win = make_window("H200")
    win.bench.log.emit("Could not open kernel file x.py: line 2: syntax error")
    assert "bandwidth" in win.later.pending()
    assert "line 2: syntax error" in win.bandwidth.log.toPlainText()
