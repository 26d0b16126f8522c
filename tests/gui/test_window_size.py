"""The window at its smallest (1024 x 640) and at its usual size: every panel gets at least the room
its contents need, scroll areas are never narrower than what they hold, nothing is drawn over the
launch table, and the timeline merges rows instead of dropping them."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from tests.gui.conftest import drawn, summary_problems, wait_sim


def _lay_out(qtbot, w, width, height, dock=None):
    w.resize(width, height)
    w.show()
    qtbot.waitExposed(w)
    if dock:
        w.docks[dock].raise_()
    w.apply_default_dock_sizes()
    for _ in range(3):
        QApplication.processEvents()


@pytest.mark.parametrize("size", [(1024, 640), (1600, 1000)])
@pytest.mark.parametrize("front", ["timeline", "bandwidth"])
def test_every_panel_has_the_room_it_needs(qtbot, win, size, front):
    w = win("H200", 1_000_000, 256)
    w.bench.set_result(__import__("tests.models.fakes", fromlist=["fake_sweep"]).fake_sweep()(
        ["add_triton", "add_torch"], [2**20, 2**24], [1024]))
    _lay_out(qtbot, w, *size, dock=front)
    hint = w.minimumSizeHint()
    assert hint.width() <= 1024 and hint.height() <= 640
    assert (w.width(), w.height()) == size
    for key, dock in w.docks.items():
        if dock.widget() is None or dock.widget().visibleRegion().isEmpty():
            continue  # behind another tab (its view made once shown: gui.panels.LaterPanels)
        need, got = dock.widget().minimumSizeHint(), dock.widget().size()
        assert got.width() >= need.width() and got.height() >= need.height(), (key, need, got)
    # what scrolls, scrolls up and down only: its contents are never wider than the view
    from PySide6.QtWidgets import QScrollArea

    shown = [a for a in w.findChildren(QScrollArea) if a.widget() and not a.visibleRegion().isEmpty()]
    tabbed = w.docks["geometry"] in w.tabifiedDockWidgets(w.docks["controls"])
    assert tabbed == (size == (1024, 640))  # a small window: the form and the table are two tabs
    assert {w.controls.scroll} | ({w.geometry_view.scroll} if not tabbed else set()) <= set(shown)
    if front == "bandwidth":
        assert w.bandwidth.sweep_tab in shown  # its form was 10 px under the scroll bar at 1024
    for area in shown:
        assert area.widget().minimumSizeHint().width() <= area.viewport().width(), area.widget()
    central = w.centralWidget()
    assert central.size().width() >= central.minimumSizeHint().width()
    if front == "timeline":  # its summary whole above its chart (the last line was half hidden)
        assert summary_problems(w.timeline) == []


def test_nothing_is_drawn_over_the_launch_table(qtbot, win):
    w = win("H200", 1_000_000, 256)
    _lay_out(qtbot, w, 1024, 640)
    geo = w.geometry_view
    assert geo.lanes_label.geometry().top() >= geo.table.geometry().bottom()
    assert geo.table.height() == geo.table.sizeHint().height() or geo.table.height() >= 14 * 20


def test_timeline_merges_rows_it_cannot_show(qtbot, win):
    """100 tail blocks on 100 SMs were drawn as ~5 clusters when the chart was short."""
    w = win("H200", 132 * 8 * 2 * 256 + 100 * 256, 256)  # two full waves, then 100 blocks
    _lay_out(qtbot, w, 1024, 640)
    wait_sim(qtbot, w)  # the run drawn is this launch's, whichever thread finished it
    drawn(w.timeline.plot)  # the shared window's Gantt may still hold an earlier test's image
    image = w.timeline.image.image  # (rows, bins, 3) as drawn
    rows_shown = image.shape[0]
    assert rows_shown <= w.timeline.plot.getPlotItem().vb.height() * w.devicePixelRatioF() + 1
    tl = w.simulation.run.timeline
    busy_at_end = tl.resident_per_sm(tl.makespan_us * 0.99) > 0
    assert busy_at_end.sum() == 100
    lanes_per_row = -(-tl.sm_count * tl.lanes // rows_shown)
    last = image[:, -1, :]
    empty = np.array([int(c, 16) for c in ("20", "24", "2b")])
    painted_rows = int((np.abs(last.astype(int) - empty).sum(axis=1) > 0).sum())
    # every SM that still runs a block owns at least one painted row at the end
    assert painted_rows >= min(100, -(-100 * tl.lanes // lanes_per_row) // tl.lanes)
    assert painted_rows > 5


def test_wave_colours_stay_clear_of_the_tail_red():
    import colorsys

    from gui import style

    for hex_color in style.WAVE_HUES:
        r, g, b = (int(hex_color[i:i + 2], 16) / 255 for i in (1, 3, 5))
        hue, light, sat = colorsys.rgb_to_hls(r, g, b)
        red_like = (hue < 0.04 or hue > 0.88) and sat > 0.3
        assert not red_like, hex_color


@pytest.mark.slow
def test_a_hidden_timeline_waits_until_shown_or_exported(qtbot, win):
    """A Gantt behind another dock is not rasterised at every launch change; it is when shown,
    and an export (flush_redraws) draws it first."""
    from gui.redraw import flush_redraws


    w = win("H200", 1_000_000, 256)
    _lay_out(qtbot, w, 1600, 1000, dock="bandwidth")
    gantt = w.timeline.plot
    assert not gantt.redraws.seen()  # behind the Bandwidth tab (Qt keeps it "visible", off screen)
    w.model.update(elements=3_000_000)
    run = wait_sim(qtbot, w)
    assert gantt.timeline is run.timeline and gantt.redraws.pending()
    flush_redraws(w)
    assert not gantt.redraws.pending() and gantt.image.image is not None
    w.model.update(elements=2_000_000)
    wait_sim(qtbot, w)
    assert gantt.redraws.pending()
    w.docks["timeline"].raise_()
    qtbot.waitUntil(lambda: not gantt.redraws.pending())


@pytest.mark.parametrize("size", [(1024, 640), (1600, 1000)])
def test_a_timeline_in_front_redraws_each_new_run_by_itself(qtbot, win, size):
    """In front, the Gantt is redrawn for every new run without anybody flushing: a plot's
    QGraphicsView has an empty visibleRegion (its viewport covers it), which once made the
    chart think itself hidden and show the previous run's raster."""


    w = win("H200", 1_000_000, 256)
    _lay_out(qtbot, w, *size, dock="timeline")
    gantt = w.timeline.plot
    for elements in (2_000_000, 500_000):
        w.model.update(elements=elements)
        run = wait_sim(qtbot, w)
        qtbot.waitUntil(lambda: not gantt.redraws.pending(), timeout=3000)
        drawn = gantt.image.mapRectToParent(gantt.image.boundingRect())
        assert drawn.width() == pytest.approx(run.timeline.makespan_us, rel=1e-6)


def test_tabbed_docks_keep_their_names_whole(qtbot, win):
    """At 1024 px Qt elided the bottom tabs to 'Ti…', 'Ban…'; the bars scroll instead."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QTabBar

    w = win("H200", 1_000_000, 256)
    _lay_out(qtbot, w, 1024, 640, dock="timeline")
    bars = [b for b in w.findChildren(QTabBar) if b.parent() is w and b.count()]
    assert bars and all(b.elideMode() == Qt.TextElideMode.ElideNone and b.usesScrollButtons()
                        for b in bars)
    titles = {bar.tabText(i) for bar in bars for i in range(bar.count())}
    assert {"Timeline", "Bandwidth"} <= titles


def test_the_sm_views_status_line_leaves_out_what_does_not_fit(qapp):
    """At 1024 x 640 the SM view's status line (time, wave, busy slots, all blocks) was cut
    mid-word ("all b") in the window and in its export: parts that don't fit go whole."""
    from PySide6.QtGui import QFont, QFontMetrics

    from gui.widgets.qt_sm_view import _fit_line

    fm = QFontMetrics(QFont("DejaVu Sans", 9))
    parts = [("t = 2.18 µs (drawn part)",), ("wave 14 of 14.80",), ("74% busy",), ("all blocks 13.1 µs",)]
    full = _fit_line(fm, parts, 10_000)
    assert full.endswith("all blocks 13.1 µs")
    narrow = fm.horizontalAdvance(full) - 20
    line = _fit_line(fm, parts, narrow)
    assert fm.horizontalAdvance(line) <= narrow and line.endswith("74% busy")
