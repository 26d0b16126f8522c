"""Bad input gets messages, not crashes; the animation plays, steps and scrubs."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from .conftest import wait_sim


def test_launch_that_cannot_run_says_why(qtbot, make_window):
    win = make_window("H200", 1_000_000, 256)
    wait_sim(qtbot, win)
    win.controls.regs.setValue(300)  # over the 255 registers a thread may have
    st = win.model.state
    assert st.occ is not None and not st.occ.can_launch
    assert "register" in win.controls.error.text()
    assert win.sm_view.record is None
    assert "cannot run" in win.sm_view._message
    assert "0 blocks per SM" in win.occupancy_view.summary.text()
    # fixing it brings the simulation back
    win.controls.regs.setValue(32)
    rec = wait_sim(qtbot, win)
    assert rec.occ.regs_per_thread == 32
    assert win.controls.error.text() == ""


def test_too_much_shared_memory(qtbot, make_window):
    win = make_window("T4", 1_000_000, 256)
    win.controls.smem.setValue(200_000)
    assert not win.model.state.occ.can_launch
    assert "shared memory" in win.controls.error.text()


def test_block_over_device_limit(qtbot, make_window):
    win = make_window("T4", 1_000_000, 256)
    win.controls.threads.setValue(1024)
    assert win.model.state.occ.can_launch
    assert win.model.state.occ.blocks_per_sm == 1


def test_rejected_change_restores_controls(qtbot, make_window):
    win = make_window("H200", 1_000_000, 256)
    win.model.update(elements=0)  # e.g. from a script; refused
    assert win.model.inputs.elements == 1_000_000
    assert win.controls.elements.value() == 1_000_000
    assert "elements" in win.controls.error.text()
    assert "elements" in win.statusBar().currentMessage()


def test_values_past_the_controls_are_refused(qtbot, make_window):
    """Registers or shared memory no spin box can hold (a script, the command line) are refused
    with a message instead of an OverflowError in the controls."""
    win = make_window("H200", 1_000_000, 256)
    assert not win.model.update(regs_per_thread=2**40)
    assert not win.model.update(smem_per_block=2**32)
    assert "at most 1,048,576 B" in win.controls.error.text()
    assert win.model.inputs.regs_per_thread == 0 and win.controls.regs.value() == 0
    assert win.model.update(regs_per_thread=512)  # the box's own maximum still shows why
    assert win.controls.regs.value() == 512 and not win.model.state.occ.can_launch


def test_play_pause_and_clock(qtbot, make_window):
    win = make_window("T4", 1_000_000, 256)
    rec = wait_sim(qtbot, win)
    win.playback.set_time(0)
    win.act_play.trigger()
    assert win.playback.playing and win.clock.is_active()
    qtbot.waitUntil(lambda: win.playback.time_us > 0, timeout=3000)
    win.act_play.trigger()
    assert not win.playback.playing and not win.clock.is_active()
    assert 0 < win.playback.time_us <= rec.makespan_us


def test_space_shortcut_toggles_play(qtbot, make_window):
    win = make_window("T4", 1_000_000, 256)
    win.show()
    qtbot.waitExposed(win)
    wait_sim(qtbot, win)
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=3000)
    win.sm_view.setFocus()
    qtbot.keyClick(win.sm_view, Qt.Key.Key_Space)
    assert win.playback.playing
    qtbot.keyClick(win.sm_view, Qt.Key.Key_Space)
    assert not win.playback.playing


def test_step_goes_event_by_event(qtbot, make_window):
    win = make_window("T4", 100_000, 256)
    rec = wait_sim(qtbot, win)
    win.playback.set_time(0)
    events = list(rec.event_times_us)
    win.step(+1)
    assert win.playback.time_us == pytest.approx(events[1])
    win.step(+1)
    assert win.playback.time_us == pytest.approx(events[2])
    win.step(-1)
    assert win.playback.time_us == pytest.approx(events[1])
    win.act_end.trigger()
    assert win.playback.time_us == pytest.approx(rec.makespan_us)
    win.step(+1)  # stays at the end
    assert win.playback.time_us == pytest.approx(rec.makespan_us)


def test_scrubber_and_timeline_cursor_follow_time(qtbot, make_window):
    win = make_window("L40S", 1_000_000, 256)
    rec = wait_sim(qtbot, win)
    win.playback_view.scrub.setValue(5000)
    assert win.playback.time_us == pytest.approx(rec.makespan_us / 2, rel=1e-3)
    assert win.timeline.cursor.value() == pytest.approx(rec.makespan_us / 2, rel=1e-3)
    win.timeline.cursor.setValue(rec.makespan_us * 0.9)
    win.timeline._on_cursor_dragged(win.timeline.cursor)
    assert win.playback.time_us == pytest.approx(rec.makespan_us * 0.9, rel=1e-3)
    assert win.sm_view._time == pytest.approx(rec.makespan_us * 0.9, rel=1e-3)


def test_tail_is_marked(qtbot, make_window):
    win = make_window("L40S", 1_000_000, 256)  # 4.59 waves: the last wave is partial
    rec = wait_sim(qtbot, win)
    assert 0 < rec.tail_fraction < 1
    assert rec.tail_start_us < rec.makespan_us
    lo, hi = win.timeline.tail.getRegion()
    assert (lo, hi) == pytest.approx((rec.tail_start_us, rec.makespan_us))
    assert len(rec.wave_starts_us) == 5


def test_huge_grid_simulates_only_the_end(qtbot, make_window):
    win = make_window("RTX 5090", 2**31, 32)
    rec = wait_sim(qtbot, win, timeout=10000)
    assert rec.n_blocks == 2**31 // 32
    assert rec.n_sim < rec.n_blocks and rec.skipped_waves > 0
    bpw = rec.occ.blocks_per_sm * rec.spec.sm_count
    assert rec.n_blocks - rec.n_sim == rec.skipped_waves * bpw
    assert "identical full waves" in win.timeline.caption.text()


def _write_trace(path, blocks_per_sm_real=2, predicted=4, sms=8, grid=64, spin=20.0):
    """A small 'recorded' trace: fewer blocks resident per SM than predicted (the short-block
    ramp-up seen on the H200)."""
    from sim.trace import save_trace

    rows = []
    per_sm_time = {}
    for b in range(grid):
        sm = (b * 2) % sms + (b // sms) % 2
        sm %= sms
        k = per_sm_time.setdefault(sm, [0.0] * blocks_per_sm_real)
        lane = min(range(blocks_per_sm_real), key=lambda i: k[i])
        start = k[lane] + 0.5
        k[lane] = start + spin
        rows.append((b, sm, -1, start, start + spin))
    save_trace(
        path,
        source="recorded",
        gpu="NVIDIA H200",
        records=rows,
        meta={"sm_count": 132, "predicted": {"blocks_per_sm": predicted}, "spin_us": spin},
    )


def test_recorded_trace_beside_simulation(qtbot, make_window, tmp_path):
    win = make_window("H200", 1_000_000, 256)
    path = tmp_path / "trace.json"
    _write_trace(path)
    assert win.open_trace(str(path))
    tv = win.timeline.trace_view
    assert tv.blocks_per_sm == 4 and tv.spec.name == "H200"
    assert tv.comparison.recorded_max_blocks_per_sm == 2
    assert win.timeline.trace_plot.isVisibleTo(win.timeline)
    assert "predicted 4, recorded peak 2" in win.timeline.caption.text()
    names = [i.name for i in win.timeline.export_items()]
    assert names[0] == "trace_recorded_vs_simulated"
    # a new launch does not throw the comparison away; leaving it shows the launch again
    win.controls.threads.setValue(512)
    wait_sim(qtbot, win)
    assert win.timeline.trace_view is tv
    win.timeline.close_trace_button.click()
    assert win.timeline.trace_view is None
    assert not win.timeline.trace_plot.isVisibleTo(win.timeline)
    assert "blocks on 132 SMs" in win.timeline.caption.text()


def test_broken_trace_file_gets_a_message(qtbot, make_window, tmp_path):
    win = make_window("H200")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    assert not win.open_trace(str(bad))
    assert "not a WarpScope trace" in win.statusBar().currentMessage()
    assert not win.open_trace(str(tmp_path / "missing.json"))
    assert win.timeline.trace_view is None


def test_hovering_the_timeline_names_the_block(qtbot, make_window):
    from gui.widgets.qt_timeline import describe_block_at

    win = make_window("L40S", 1_000_000, 256)  # 6 block slots per SM, 4.59 waves
    rec = wait_sim(qtbot, win)
    sim = rec.sim
    # The block in SM 3's slot 2 during the second wave, found from the trace itself.
    b = int(np.flatnonzero((sim.block_sm == 3) & (sim.block_slot == 2) & (sim.block_wave == 1))[0])
    t = (sim.block_start_us[b] + sim.block_end_us[b]) / 2
    text = describe_block_at(rec, t, 3 + (2 + 0.5) / rec.slots_per_sm)
    assert f"block {b:,} on SM 3, block slot 2" in text and "wave 2" in text
    # In the tail, the last wave leaves slots free; off the chart there is nothing.
    assert "free" in describe_block_at(rec, rec.makespan_us * 0.99, rec.spec.sm_count - 0.01)
    assert describe_block_at(rec, -1.0, 3.5) == "" and describe_block_at(rec, t, 500.0) == ""


def _header_texts(win, monkeypatch):
    """Every string the SM view paints (its header and badge are drawn, not widgets)."""
    import gui.widgets.qt_sm_view as smv

    texts = []

    class Recording(smv.QPainter):
        def drawText(self, *args):
            texts.append(str(args[-1]))
            return super().drawText(*args)

    monkeypatch.setattr(smv, "QPainter", Recording)
    win.sm_view.grab()
    return texts


def test_header_of_tiny_and_huge_grids(qtbot, make_window, monkeypatch):
    win = make_window("H200", 1, 1)  # 1 block of 4,224 per wave
    wait_sim(qtbot, win)
    assert any("wave 1 of 0.0002" in t for t in _header_texts(win, monkeypatch))
    win = make_window("T4", 2**31, 2)  # 1.7 million waves
    rec = wait_sim(qtbot, win, timeout=10000)
    win.playback.set_time(rec.makespan_us * 0.4)
    texts = _header_texts(win, monkeypatch)
    badge = [t for t in texts if t.startswith("WAVE ")]
    assert badge and "," in badge[0]  # 1,677,587, not 1677587
    assert any(f"wave {badge[0][5:]} of 1,677,721.60" in t for t in texts)


def _type_into(qtbot, box, text):
    box.setFocus()
    box.selectAll()
    qtbot.keyClick(box, Qt.Key.Key_Delete)
    qtbot.keyClicks(box, text)
    qtbot.keyClick(box, Qt.Key.Key_Return)


@pytest.mark.parametrize("text,value", [("1234567", 1_234_567), ("1,234,567", 1_234_567)])
def test_typing_elements_is_not_rewritten_under_the_cursor(qtbot, make_window, text, value):
    """Each keystroke updates the launch; writing the value back into the box while it is being
    typed in moved the cursor, so 1,234,567 came out as 1,235,467."""
    win = make_window("T4", 1_000_000, 256)
    win.show()
    qtbot.waitExposed(win)
    _type_into(qtbot, win.controls.elements, text)
    assert win.model.inputs.elements == value
    _type_into(qtbot, win.controls.smem, "12345")
    assert win.model.inputs.smem_per_block == 12345


@pytest.mark.parametrize(
    "text,value",
    [("4M", 4_000_000), ("2^20", 2**20), ("1e6", 1_000_000), ("3000000000", 2**31),
     ("2^40", 2**31), ("lots", 777)],
)
def test_elements_box_reads_what_the_command_line_reads(qtbot, make_window, text, value):
    """4M used to become 4 elements; a number past 2^31 lost its last digit; nonsense keeps the
    last good value."""
    win = make_window("T4", 777, 256)
    win.show()
    qtbot.waitExposed(win)
    _type_into(qtbot, win.controls.elements, text)
    assert win.model.inputs.elements == value
    assert win.controls.elements.value() == value


@pytest.mark.parametrize(
    "meta", [[1, 2], {"predicted": {"blocks_per_sm": 100000}}, {"predicted": {"blocks_per_sm": "eight"}}]
)
def test_trace_with_nonsense_meta_opens_with_what_was_recorded(qtbot, make_window, tmp_path, meta):
    """A predicted 100000 blocks per SM wanted a 44 GiB raster; a list as meta was an
    AttributeError out of the slot."""
    import json

    path = tmp_path / "t.json"
    blocks = [[b, b % 132, -1, 0.0, 10.0] for b in range(300)]
    path.write_text(json.dumps({"format": "warpscope-trace/1", "source": "recorded",
                                "gpu": "Mystery GPU", "meta": meta, "blocks": blocks}))
    win = make_window("T4", 1_000_000, 256)
    assert win.open_trace(str(path))
    assert win.timeline.trace_view.blocks_per_sm == 3  # the recorded peak


def test_damaged_trace_is_a_message(qtbot, make_window, tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"format": "warpscope-trace/1", "blocks": [[0, 10000000, -1, 0.0, 1.0]]}')
    win = make_window("T4", 1_000_000, 256)
    assert not win.open_trace(str(path))
    assert "an SM in 0..1023" in win.statusBar().currentMessage()


def test_speed_ignores_values_that_are_not_numbers(qtbot, make_window):
    win = make_window("T4", 1_000_000, 256)
    win.playback.set_speed(2.0)
    win.playback.set_speed(float("nan"))  # a damaged settings file made this 0.05x
    win.playback.set_speed(float("inf"))
    assert win.playback.speed == 2.0
    win.playback.set_speed(1000)
    assert win.playback.speed == 64.0
