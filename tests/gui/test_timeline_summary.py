"""The Timeline's summary and chart are both whole at every window size: the summary's lines fit
their width and height (at 1024 x 640 its last line, "… are not drawn", was half hidden and the
chart squeezed to 68 px), flow around the buttons, and leave the chart its least height.

The view is opened alone at the size the window gives it (tests/gui/test_window_size.py checks
the window itself at 1024 x 640); gui.widgets.fitted_text's choices are checked on their own."""

from __future__ import annotations

import html
import itertools
import re
from pathlib import Path

import pytest
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QApplication

from gui.widgets.fitted_text import FittedCaption, fit_lines
from gui.widgets.qt_timeline import AXIS_PX, CHART_MIN_PX, TITLE_PX, TRACE_BARS_MIN_PX
from tests.gui.conftest import summary_problems

TRACE = Path(__file__).resolve().parents[1] / "data" / "trace_h200.json"
# the Timeline panel's size in the window (H200, 2^24 x 256)
PANEL = {(1024, 640): (434, 193), (1366, 768): (756, 209), (1600, 1000): (922, 286),
         (1920, 1080): (1162, 313)}


def _settle():
    for _ in range(3):  # layout requests go up from the view to the stage, one a turn
        QApplication.processEvents()


def _at(qtbot, stage, view, size):
    _settle()  # the view's least size follows what it shows
    stage.resize(*size)
    _settle()
    assert (view.width(), view.height()) == size  # the panel's size in that window
    return view


@pytest.mark.parametrize("window", sorted(PANEL))
def test_the_summary_and_the_chart_are_whole_at_each_window_size(qtbot, mount, window):
    stage = mount("H200", 2**24, 256, views=("timeline",), show=True)
    view = _at(qtbot, stage, stage.timeline, PANEL[window])
    assert view.run.timeline.skipped_waves  # the longest summary: its "not drawn" part too
    assert summary_problems(view) == []
    shown = " ".join(view.caption.shown_lines())
    assert FittedCaption.MORE not in shown  # every part is there, if in a shorter form
    assert f"tail {view.run.timeline.tail_fraction:.0%}" in shown and "not drawn" in shown
    assert view.plot.height() >= CHART_MIN_PX
    # the whole summary, longest forms, is the tooltip (and what exports title the chart with)
    assert view.caption.toolTip() == view.caption.text()
    assert view.caption.text().endswith("identical full waves before this part are not drawn")


def test_a_short_panel_keeps_the_chart_and_says_what_it_leaves_out(qtbot, mount):
    stage = mount("H200", 2**24, 256, views=("timeline",), show=True)
    stage.resize(434, 60)  # a dock dragged as short as it goes
    _settle()
    view = stage.timeline
    assert view.height() < PANEL[(1024, 640)][1]
    assert summary_problems(view) == []
    assert view.plot.height() >= CHART_MIN_PX
    lines = view.caption.shown_lines()
    _, beside = view.caption.line_widths()
    assert len(lines) <= beside and lines[-1].endswith("…")  # beside the button, "more" in short


def test_a_trace_beside_its_predictions_is_whole_in_the_small_window(qtbot, mount):
    stage = mount("H200", 2112 * 256, 256, views=("timeline",), show=True)
    stage.traces.open(str(TRACE), stage.model.state.spec)
    view = _at(qtbot, stage, stage.timeline, (434, 226))  # the panel a trace gets at 1024 x 640
    assert summary_problems(view) == []
    titled = TITLE_PX + TRACE_BARS_MIN_PX
    assert [g.minimumHeight() for g in (view.trace_plot, view.plot, view.ideal_plot)] == [
        titled, titled, titled + AXIS_PX]  # the last one carries the time axis
    # one line beside the button: its shortest form still gives the makespans' scores, as
    # `compare` scores them (the recording's 477.3 us; the model's number is the comparison's)
    scored = stage.traces.comparison.comparison
    assert scored.recorded_makespan_us == pytest.approx(477.3, abs=0.05)
    assert view.caption.shown_lines() == [f"recorded 477 µs, calibrated {scored.makespan_error:+.1%} · …"]
    assert view.caption.text().startswith(
        f"2,112 blocks · makespan recorded 477.3 µs, calibrated {scored.simulated_makespan_us:,.1f} µs")
    pair = scored.occupancy  # sim.traces.compare: what `compare` prints
    assert (f"achieved occupancy recorded {pair['recorded_achieved_occupancy']:.0%}, predicted "
            f"{pair['simulated_achieved_occupancy']:.0%} of theoretical 100%") in view.caption.text()
    # each chart's title keeps to one line of whole parts ("… " for the rest); all in its tooltip
    fm = QFontMetrics(QFont(view.plot.font().family(), 9))
    for gantt in (view.trace_plot, view.plot, view.ideal_plot):
        full = gantt.full_title
        line = html.unescape(re.sub(r"<[^>]+>", "", gantt.getPlotItem().titleLabel.text))
        assert gantt.toolTip() == full != ""
        assert fm.horizontalAdvance(line) <= gantt.width()
        assert line == full or (line.endswith(" · …") and full.startswith(line[:-1].rstrip()))
    assert view.plot.getPlotItem().titleLabel.text != view.plot.full_title  # one was shortened
    stage.traces.close()
    assert summary_problems(_at(qtbot, stage, view, PANEL[(1024, 640)])) == []


def test_fit_lines_shortens_the_last_parts_first_and_leaves_out_whole_ones(qapp):
    fm = QFontMetrics(QFont("DejaVu Sans", 9))
    parts = [("5,344 blocks on 132 SMs",), ("65 waves (colours; dashed: wave starts)", "65 waves"),
             ("tail 20% of the time (red, from 4.3 µs)", "tail 20% (red)")]
    full = " · ".join(alts[0] for alts in parts)
    wide = fm.horizontalAdvance(full)
    assert fit_lines(fm, parts, [wide]) == [full]
    # a little narrower: the last part takes its short form, the others stay long
    assert fit_lines(fm, parts, [wide - 10]) == [
        "5,344 blocks on 132 SMs · 65 waves (colours; dashed: wave starts) · tail 20% (red)"]
    # two narrow lines: wrapped between words; a break between parts leaves the "·" at the end
    width = wide * 6 // 10
    lines = fit_lines(fm, parts, [width, width])
    assert len(lines) == 2 and all(fm.horizontalAdvance(ln) <= width for ln in lines)
    assert not lines[1].startswith("·")
    assert " ".join(lines) in {" · ".join(c) for c in itertools.product(*parts)}
    # room for the first part only: the rest go whole, and say so
    lines = fit_lines(fm, parts, [fm.horizontalAdvance("5,344 blocks on 132 SMs · …") + 1], more="…")
    assert lines == ["5,344 blocks on 132 SMs · …"]
    # lines beside a button are narrower than those under it
    narrow, under = fm.horizontalAdvance("5,344 blocks on 132"), wide
    lines = fit_lines(fm, parts, [narrow, under])
    assert fm.horizontalAdvance(lines[0]) <= narrow and len(lines) == 2
