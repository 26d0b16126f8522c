"""The window's rough edges, each pinned by a test that failed before its fix."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt

from tests.gui.conftest import wait_sim

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def test_a_matmul_picked_gets_a_sensible_size_and_every_view_the_same_launch(qtbot, win):
    from gui.models.launch import DEFAULT_SIDE
    from kernels.declare.registry import all_kernels

    w = win("H200", 1_000_000, 256)
    w.model.set_kernels(all_kernels())
    w.controls.kernel.setCurrentIndex(w.controls.kernel.findData("matmul_tiled"))
    st = w.model.state
    assert st.inputs.elements == DEFAULT_SIDE and st.blocks < 10_000  # was 30,525,391 blocks
    run = wait_sim(qtbot, w)
    assert run.timeline.grid_blocks == st.blocks and run.key == w.simulation.key()
    w.controls.kernel.setCurrentIndex(w.controls.kernel.findData("add_triton"))
    assert w.model.inputs.elements == 1_000_000  # a stream kernel starts back at its count


def test_a_click_on_the_scrub_bar_jumps_there(qtbot, win):
    w = win("T4", 1_000_000, 256)
    w.show()
    bar = w.playback_view.scrub
    w.playback.set_time(0)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=QPoint(bar.width() * 3 // 4, bar.height() // 2))
    assert bar.value() / bar.maximum() == pytest.approx(0.75, abs=0.05)  # was 0.001
    assert bar.pageStep() == bar.maximum() // 20


def test_arrow_keys_move_the_snapped_threads_slider_a_warp(qtbot, win):
    w = win("T4", 1_000_000, 256)
    s = w.controls.threads_slider
    qtbot.keyClick(s, Qt.Key.Key_Right)
    assert w.model.inputs.threads_per_block == 288  # 257 snapped back to 256 before
    qtbot.keyClick(s, Qt.Key.Key_Left)
    assert w.model.inputs.threads_per_block == 256


def test_a_fixed_error_leaves_the_status_bar_at_once(win):
    w = win("H200", 1_000_000, 256)
    w.model.update(regs_per_thread=300)
    assert "cannot run" in w.statusBar().currentMessage()
    w.model.update(regs_per_thread=32)
    assert w.statusBar().currentMessage() == ""  # was red for up to 8 s


def test_playback_stops_at_the_end_and_its_clock_with_it(win):
    w = win("T4", 100_000, 256)
    assert not w.playback.loop and not w.act_loop.isChecked()
    w.playback.set_time(0)
    w.playback.set_playing(True)
    assert w.clock.is_active()
    w.playback.advance(w.playback.base_seconds * 2)
    assert not w.playback.playing and not w.clock.is_active()  # idle: no 60 Hz timer
    w.act_loop.trigger()
    w.playback.set_playing(True)
    w.playback.advance(w.playback.base_seconds * 2)
    assert w.playback.playing  # looping only when asked
    w.playback.set_playing(False)
    w.act_loop.trigger()
    w.show()
    w.playback.set_playing(True)
    w.hide()  # a hidden window draws nothing: its clock sleeps until shown again
    assert w.playback.playing and not w.clock.is_active()
    w.show()
    assert w.clock.is_active()
    w.playback.set_playing(False)


def test_compute_bound_cost_says_why_there_is_no_schedule(qtbot, win):
    w = win("H200", 1_000_000, 256)
    assert w.model.state.occ.occupancy == 1.0
    w.options.set(cost="compute")  # the worker's run fails: the caption says why
    qtbot.waitUntil(lambda: "compute-bound" in w.timeline.caption.text(), timeout=5000)
    assert "cannot run" not in w.timeline.caption.text()


@pytest.mark.slow
def test_a_trace_leaves_the_sm_view_room_and_back_restores_it(qtbot, make_window, tmp_path):
    from tests.gui.test_bad_input_and_playback import _write_trace

    w = make_window("H200", 1_000_000, 256)
    w.resize(1366, 768)
    w.show()
    qtbot.waitExposed(w)
    w.apply_default_dock_sizes()
    qtbot.wait(50)
    before = w.docks["timeline"].height()
    path = tmp_path / "trace.json"
    _write_trace(path)
    assert w.open_trace(str(path))
    qtbot.wait(50)
    assert w.sm_view.height() >= 250  # was 150 px
    w.timeline.close_trace_button.click()
    qtbot.wait(50)
    assert abs(w.docks["timeline"].height() - before) <= 8


def test_a_missing_package_reads_plainly_with_its_pip_line(monkeypatch):
    from PySide6.QtGui import QTextDocument

    import kernels.launching.backends as backends
    from gui.widgets.qt_kernel_source import failure_text

    monkeypatch.setattr(backends, "missing_packages", lambda: ["torch", "triton"])
    html_text = failure_text("/x/softmax.py", "/x/softmax.py, line 3: importing it raised "
                             "ModuleNotFoundError: No module named 'triton'")
    doc = QTextDocument()
    doc.setHtml(html_text)
    shown = doc.toPlainText()
    assert "No module named 'triton'" in shown and "&#x27;" not in shown
    assert "pip install" in shown and "triton==" in shown


def test_the_cpu_path_runs_the_default_sizes_it_can(qtbot):
    from gui.models.bench import BenchModel
    from kernels.declare.registry import all_kernels

    b = BenchModel()
    b.set_kernels(all_kernels())
    said = []
    b.message.connect(said.append)
    req = b.sweep_request("2^16..2^28 x4", "", 3, True, allow_cpu=True)
    cap = min(b._kernel_spec(n).cpu_max_elements for n in b.ticked)
    assert req.sizes and max(req.sizes) <= cap and "left out" in said[-1]


@pytest.mark.parametrize("size_px", [120, 300, 900])
def test_log_axis_labels_never_collide(qtbot, size_px):
    from gui.style import LogAxis

    for orient in ("bottom", "left"):
        ax = LogAxis(orient)
        for lo, hi in ((0, 5), (2.2, 3.7), (0, 9)):  # block sizes; GB/s; a wide span
            (_, values), _ = ax.logTickValues(lo, hi, size_px, [])
            gaps = [(b - a) * size_px / (hi - lo) for a, b in zip(values, values[1:])]
            assert all(g >= ax.label_px() - 0.5 for g in gaps), (orient, lo, hi, gaps)
