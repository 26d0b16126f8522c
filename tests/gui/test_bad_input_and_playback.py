"""Bad input gets messages, not crashes; the animation plays, steps and scrubs; the timeline
shows the tail and a recorded trace."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.gui.conftest import wait_sim


@pytest.mark.slow
def test_launch_that_cannot_run_says_why_beside_the_box(qtbot, win):
    w = win("H200", 1_000_000, 256)
    w.controls.regs.setValue(300)  # over the 255 registers a thread may have
    st = w.model.state
    assert st.occ is not None and not st.occ.can_launch
    assert w.controls.error.isVisibleTo(w.controls) and "register" in w.controls.error.text()
    # over the form, beside the registers box, outside any layout: nothing moved for it
    assert w.controls.error.anchor is w.controls.regs
    assert w.controls.scroll.widget().layout().indexOf(w.controls.error) == -1
    assert w.simulation.run is None and "cannot run" in w.sm_view._message
    assert "0 blocks per SM" in w.occupancy_view.summary.text()
    w.controls.regs.setValue(32)  # fixing it brings the simulation back and clears the error
    assert wait_sim(qtbot, w).occ.regs_per_thread == 32
    assert not w.controls.error.isVisibleTo(w.controls)


def test_too_much_shared_memory(mount):
    w = mount("T4", 1_000_000, 256, views=("controls",))
    w.controls.smem.setValue(200_000)
    assert not w.model.state.occ.can_launch and "shared memory" in w.controls.error.text()


def test_block_over_device_limit_says_why(mount):
    w = mount("T4", 1_000_000, 256, views=("controls",))
    w.controls.threads.setValue(1024)
    assert w.model.state.occ.blocks_per_sm == 1
    w.controls.threads.setValue(2000)  # was silently cut to 200 by the box
    assert w.model.inputs.threads_per_block == 2000
    assert "2000 threads per block is over the limit of 1024" in w.controls.error.text()


def test_rejected_change_restores_controls(win):
    w = win("H200", 1_000_000, 256)
    w.model.update(elements=0)  # e.g. from a script; refused
    assert w.model.inputs.elements == 1_000_000 and w.controls.elements.value() == 1_000_000
    assert "elements" in w.controls.error.text() and "elements" in w.statusBar().currentMessage()


def test_values_past_the_controls_are_refused(win):
    """Registers or shared memory no box can hold (a script, the command line) are refused with a
    message instead of an OverflowError in the controls."""
    w = win("H200", 1_000_000, 256)
    assert not w.model.update(regs_per_thread=2**40)
    assert not w.model.update(smem_per_block=2**32)
    assert "at most 1,048,576 B" in w.controls.error.text()
    assert w.model.inputs.regs_per_thread == 0 and w.controls.regs.value() == 0
    assert w.model.update(regs_per_thread=512)  # the box's own maximum still shows why
    assert w.controls.regs.value() == 512 and not w.model.state.occ.can_launch


def test_play_pause_and_clock(qtbot, win):
    w = win("T4", 1_000_000, 256)
    run = w.simulation.run
    w.playback.set_time(0)
    w.act_play.trigger()
    assert w.playback.playing and w.clock.is_active()
    qtbot.waitUntil(lambda: w.playback.time_us > 0, timeout=3000)
    w.act_play.trigger()
    assert not w.playback.playing and not w.clock.is_active()
    assert 0 < w.playback.time_us <= run.makespan_us


def test_space_shortcut_toggles_play(qtbot, win):
    w = win("T4", 1_000_000, 256)
    w.show()
    qtbot.waitExposed(w)
    w.activateWindow()
    # the shared window shown again after an earlier test hid it: offscreen, its native window
    # is still the focus window, so no focus change makes it Qt's active window (and shortcuts
    # need one); a window manager would activate it
    qtbot.waitUntil(lambda: w.windowHandle().isActive(), timeout=3000)
    if not w.isActiveWindow():
        with warnings.catch_warnings():  # deprecated, and the one way to say it here
            warnings.simplefilter("ignore", DeprecationWarning)
            QApplication.setActiveWindow(w)
    assert w.isActiveWindow()
    w.sm_view.setFocus()
    qtbot.keyClick(w.sm_view, Qt.Key.Key_Space)
    assert w.playback.playing
    qtbot.keyClick(w.sm_view, Qt.Key.Key_Space)
    assert not w.playback.playing


def test_step_buttons_go_event_by_event(win):
    w = win("T4", 100_000, 256)
    events = list(w.simulation.run.timeline.event_times_us)
    w.playback.set_time(0)
    w.playback_view.fwd.click()
    assert w.playback.time_us == pytest.approx(events[1])
    w.act_step.trigger()
    assert w.playback.time_us == pytest.approx(events[2])
    w.playback_view.back.click()
    assert w.playback.time_us == pytest.approx(events[1])
    w.act_end.trigger()
    assert w.playback.time_us == pytest.approx(w.simulation.run.makespan_us)


def test_scrubber_and_timeline_cursor_follow_time(mount):
    w = mount("L40S", 1_000_000, 256, views=("sm_view", "playback", "timeline"))
    end = w.simulation.run.makespan_us
    w.playback_view.scrub.setValue(5000)
    assert w.playback.time_us == pytest.approx(end / 2, rel=1e-3)
    assert w.timeline.cursor.value() == pytest.approx(end / 2, rel=1e-3)
    w.timeline.cursor.setValue(end * 0.9)
    w.timeline._on_cursor_dragged(w.timeline.cursor)
    assert w.playback.time_us == pytest.approx(end * 0.9, rel=1e-3)
    assert w.sm_view.frame.time_us == pytest.approx(end * 0.9, rel=1e-3)


def test_one_tail_in_caption_shading_curve_and_export(win):
    """The memory-bound H200 launch said '36% tail' while 23% was shaded: now one number."""
    w = win("H200", 1_000_000, 256)
    w.options.set("memory", "tpc-spread")
    run = w.simulate_now()
    tl = run.timeline
    assert 0 < tl.tail_fraction < 1
    assert w.timeline.tail.getRegion() == pytest.approx((tl.tail_start_us, tl.makespan_us))
    assert w.playback_view.tail_region.getRegion() == pytest.approx((tl.tail_start_us, tl.makespan_us))
    shaded = (tl.makespan_us - tl.tail_start_us) / tl.makespan_us
    assert f"tail {shaded:.0%}" in w.timeline.caption.text()
    assert w.session_dict()["simulation"]["tail_fraction"] == round(shaded, 4)
    from gui.models.session import summary_facts

    assert dict(summary_facts(w.model, w.simulation))["Simulated tail"].startswith(f"{shaded:.0%}")


def test_huge_grid_simulates_only_the_end(qtbot, win):
    w = win("RTX 5090", 2**31, 32)
    tl = w.simulation.run.timeline
    assert tl.grid_blocks == 2**31 // 32 and tl.n_blocks < tl.grid_blocks and tl.skipped_waves > 0
    assert tl.first_block == tl.skipped_waves * tl.capacity
    assert "identical full waves" in w.timeline.caption.text()


def _write_trace(path, blocks_per_sm_real=2, predicted=4, sms=8, grid=64, spin=20.0):
    """A small 'recorded' trace: fewer blocks resident per SM than predicted (the short-block
    ramp-up seen on the H200)."""
    from sim.traces.trace import save_trace

    rows, per_sm_time = [], {}
    for b in range(grid):
        sm = ((b * 2) % sms + (b // sms) % 2) % sms
        k = per_sm_time.setdefault(sm, [0.0] * blocks_per_sm_real)
        lane = min(range(blocks_per_sm_real), key=lambda i: k[i])
        start = k[lane] + 0.5
        k[lane] = start + spin
        rows.append((b, sm, -1, start, start + spin))
    save_trace(path, source="recorded", gpu="NVIDIA H200", records=rows,
               meta={"sm_count": 132, "predicted": {"blocks_per_sm": predicted}, "spin_us": spin})


def test_recorded_trace_beside_simulation(qtbot, win, tmp_path):
    w = win("H200", 1_000_000, 256)
    path = tmp_path / "trace.json"
    _write_trace(path)
    assert w.open_trace(str(path), wait=True)
    tv = w.timeline.trace_view
    assert tv.blocks_per_sm == 4 and tv.spec.name == "H200"
    assert tv.comparison.recorded_max_blocks_per_sm == 2 and tv.recorded.lanes == 4
    assert [p.mode for p in tv.predictions] == ["calibrated", "ideal"]
    assert w.timeline.trace_plot.isVisibleTo(w.timeline)
    assert w.timeline.ideal_plot.isVisibleTo(w.timeline)
    caption = w.timeline.caption.text()
    assert "makespan recorded" in caption and "calibrated" in caption and "ideal" in caption
    titles = [g.getPlotItem().titleLabel.text for g in (w.timeline.plot, w.timeline.ideal_plot)]
    assert "calibrated on NVIDIA H200" in titles[0] and "residency error" in titles[0]
    assert "ideal (textbook)" in titles[1]
    assert [i.name for i in w.timeline.export_items()][0] == "trace_recorded_vs_predicted"
    # a new launch does not throw the comparison away; leaving it shows the launch again
    w.controls.threads.setValue(512)
    wait_sim(qtbot, w)
    assert w.timeline.trace_view is tv
    w.timeline.close_trace_button.click()
    assert w.timeline.trace_view is None and not w.timeline.trace_plot.isVisibleTo(w.timeline)
    assert not w.timeline.ideal_plot.isVisibleTo(w.timeline)
    assert "blocks on 132 SMs" in w.timeline.caption.text()


def test_schedule_switch_and_the_residency_curve_shows_both(qtbot, win):
    """Ideal vs calibrated: the controls switch the schedule, the curve draws the other dashed,
    and the note says whose dispatch model it is."""
    w = win("H200", 4646 * 128, 128)
    c = w.controls
    c.schedule.setCurrentIndex(c.schedule.findData("calibrated"))
    assert w.options.schedule == "calibrated"
    run = wait_sim(qtbot, w)
    assert run.schedule == "calibrated" and run.other is not None
    assert "calibrated on NVIDIA H200" in c.schedule_note.text()
    assert "schedule: calibrated on NVIDIA H200" in w.timeline.caption.text()
    pb = w.playback_view
    assert pb.other_curve.isVisible() and "dashed: ideal" in pb.legend.toPlainText()
    x, y = pb.other_curve.getData()
    assert x[-1] == run.other.timeline.makespan_us < run.timeline.makespan_us
    c.wait.setCurrentIndex(c.wait.findData("sleep"))
    assert w.options.wait == "sleep"
    asleep = wait_sim(qtbot, w)
    assert asleep.timeline.makespan_us < run.timeline.makespan_us
    c.cost.setCurrentIndex(c.cost.findData("memory"))
    assert not c.wait.isEnabled()  # what warps do is a uniform block's property
    c.schedule.setCurrentIndex(c.schedule.findData("ideal"))
    assert "Textbook" in c.schedule_note.text()


def test_broken_trace_file_gets_a_message(win, tmp_path):
    w = win("H200")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    assert not w.open_trace(str(bad), wait=True)
    assert "not a WarpScope trace" in w.statusBar().currentMessage()
    assert not w.open_trace(str(tmp_path / "missing.json"), wait=True)
    assert w.timeline.trace_view is None


def test_hovering_the_timeline_names_the_block(mount):
    from gui.widgets.qt_timeline import describe_block_at

    w = mount("L40S", 1_000_000, 256, views=("timeline",))  # 6 block slots per SM, 4.59 waves
    run = w.simulation.run
    tl = run.timeline
    b = int(np.flatnonzero((tl.block_sm == 3) & (tl.block_lane == 2) & (tl.wave == 1))[0])
    t = (tl.start_us[b] + tl.end_us[b]) / 2
    text = describe_block_at(run, t, 3 + (2 + 0.5) / tl.lanes)
    assert f"block {b:,} on SM 3, block slot 2" in text and "wave 2" in text
    assert "free" in describe_block_at(run, tl.makespan_us * 0.99, tl.sm_count - 0.01)
    assert describe_block_at(run, -1.0, 3.5) == "" and describe_block_at(run, t, 500.0) == ""


def _painted_texts(w, monkeypatch, view=None):
    """Every string the SM view paints (its header and badge are drawn, not widgets)."""
    import gui.widgets.qt_sm_view as smv

    texts = []

    class Recording(smv.QPainter):
        def drawText(self, *args):
            texts.append(str(args[-1]))
            return super().drawText(*args)

    monkeypatch.setattr(smv, "QPainter", Recording)
    (view or w.sm_view).grab()
    return texts


def test_header_of_tiny_and_huge_grids(mount, monkeypatch):
    w = mount("H200", 1, 1, views=("sm_view",))  # 1 block of 4,224 per wave
    assert any("wave 1 of 0.0002" in t for t in _painted_texts(w, monkeypatch))
    w = mount("T4", 2**31, 2, views=("sm_view",))  # 1.7 million waves
    w.playback.set_time(w.simulation.run.makespan_us * 0.4)
    texts = _painted_texts(w, monkeypatch)
    badge = [t for t in texts if t.startswith("WAVE ")]
    assert badge and "," in badge[0]  # 1,677,587, not 1677587
    assert any(f"wave {badge[0][5:]} of 1,677,721.60" in t for t in texts)


def test_header_fits_a_narrow_window(qtbot, mount, monkeypatch):
    from PySide6.QtGui import QFontMetrics

    w = mount("H200", 1_000_000, 256, views=("sm_view",))
    view = w.sm_view
    view.setParent(None)  # on its own at 360 px (in the stage its splitter sizes it)
    qtbot.addWidget(view)
    view.resize(360, 300)
    texts = _painted_texts(w, monkeypatch, view)
    line = next(t for t in texts if t.startswith("t = "))
    font = w.sm_view.font()
    font.setPointSizeF(9.0)
    assert QFontMetrics(font).horizontalAdvance(line) <= 360 - 24
    assert "wave" in line


def test_trace_with_nonsense_meta_opens_with_what_was_recorded(win, tmp_path):
    """A predicted 100000 blocks per SM wanted a 44 GiB raster; a list as meta was an
    AttributeError out of the slot."""
    w = win("T4", 1_000_000, 256)
    blocks = [[b, b % 132, -1, 0.0, 10.0] for b in range(300)]
    for meta in ([1, 2], {"predicted": {"blocks_per_sm": 100000}}, {"predicted": {"blocks_per_sm": "eight"}}):
        path = tmp_path / "t.json"
        path.write_text(json.dumps({"format": "warpscope-trace/1", "source": "recorded",
                                    "gpu": "Mystery GPU", "meta": meta, "blocks": blocks}))
        assert w.open_trace(str(path), wait=True)
        assert w.timeline.trace_view.blocks_per_sm == 3  # the recorded peak


def test_damaged_trace_is_a_message(win, tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"format": "warpscope-trace/1", "blocks": [[0, 10000000, -1, 0.0, 1.0]]}')
    w = win("T4", 1_000_000, 256)
    assert not w.open_trace(str(path), wait=True)
    assert "an SM in 0..1023" in w.statusBar().currentMessage()
