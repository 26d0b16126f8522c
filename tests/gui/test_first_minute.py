"""What a new user meets in the window's first minute: numbers that wait for the compiler say
so, the animation teaches, and the counters count what the Geometry table counts."""

from __future__ import annotations

from functools import partial

import pytest

from gui.jobs import KernelJobs
from gui.live_kernels import KernelsInfo
from gui.models.compiled import COMPILER, COMPILING, FAILED
from sim.rules.occupancy import occupancy
from tests import compile_fakes as fake
from tests.models.fakes import NO_GPU
from tests.patience import HANG_MS


def _kernel_window(make_window, gpu="H200"):
    from kernels.declare.registry import KERNELS

    win = make_window(gpu, 1_000_000, 256)
    win.apply_kernels_info(KernelsInfo(NO_GPU, tuple(KERNELS), None, "no CUDA GPU"))
    return win


def _provisional_everywhere(win) -> bool:
    return (win.occupancy_view.provisional and "registers: compiling…" in
            win.occupancy_view.summary.text() and win.geometry_view.value("bps") == "compiling…"
            and win.geometry_view.value("waves_occ") == "compiling…"
            and "compiling" in win.sm_view.provisional)


def test_the_occupancy_panels_wait_for_the_compiler_and_never_answer_from_zero_registers(
        qtbot, make_window):
    win = _kernel_window(make_window)
    win.user_kernels.compile_jobs.jobs = KernelJobs(compile=fake.until_cancelled,
                                                    compile_many=fake.no_sweep)
    win.controls.kernel.setCurrentIndex(win.controls.kernel.findData("add_triton"))
    assert win.model.state.origin.kind == COMPILING
    assert _provisional_everywhere(win)
    assert "theoretical occupancy" not in win.occupancy_view.summary.text()
    assert "binding" not in "".join(t.textItem.toPlainText()
                                    for t in win.occupancy_view._bar_texts)
    tpb = f"{win.model.inputs.threads_per_block:,}"
    assert win.geometry_view.value("tpb") == tpb  # what the registers do not decide stays
    qtbot.waitUntil(lambda: win.user_kernels.compiler.host_pid is not None, timeout=HANG_MS)
    win.controls.resources.cancel.click()
    qtbot.waitUntil(lambda: win.model.state.origin.kind == FAILED, timeout=HANG_MS)
    assert win.occupancy_view.provisional and win.geometry_view.value("bps") == "unknown"
    # the compiler answers 214 registers: now the panels answer, as sim.rules.occupancy does
    win.user_kernels.compile_jobs.jobs = KernelJobs(compile=partial(fake.fixed, 214, 0),
                                                    compile_many=fake.no_sweep)
    win.controls.resources.retry.click()
    qtbot.waitUntil(lambda: win.model.state.origin.kind == COMPILER, timeout=HANG_MS)
    st = win.model.state
    want = occupancy(st.spec, st.inputs.threads_per_block, 214, st.inputs.smem_per_block,
                     st.inputs.carveout_percent)
    assert not win.occupancy_view.provisional and not win.sm_view.provisional
    assert win.geometry_view.value("bps") == str(want.blocks_per_sm)
    assert f"{want.occupancy:.0%}</b> theoretical occupancy" in win.occupancy_view.summary.text()


def test_the_kernel_list_is_filled_at_first_paint_without_torch_triton_or_numba(tmp_path):
    """`python main.py` to its first painted frame (gui/app.py's startup probe): the Kernel menu
    holds every declared kernel WarpScope can show, this process has not imported torch,
    Triton or Numba (they load in the kernel host afterwards), and the panels behind the
    timeline's tab were not made before that frame (gui.panels.LaterPanels)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from gui.models.launch import LaunchModel
    from kernels.declare.registry import KERNELS

    model = LaunchModel()
    model.set_kernels(KERNELS)
    env = dict(os.environ, WARPSCOPE_STARTUP_PROBE="visible", QT_QPA_PLATFORM="offscreen",
               WARPSCOPE_SETTINGS_DIR=str(tmp_path))
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "main.py"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("WARPSCOPE_VISIBLE"))
    fields = dict(kv.split("=", 1) for kv in line.split()[2:])
    assert int(fields["kernels"]) == len(model.kernels()) > 10
    assert fields["imported"] == "-"
    from tests.gui.test_first_paint import WAITING

    assert set(fields["later"].split(",")) == WAITING


@pytest.mark.slow
def test_each_kernel_is_marked_loading_available_or_missing_with_the_reason(make_window):
    from dataclasses import replace

    from kernels.declare.registry import KERNELS

    from gui.models.kernel_menu import Availability

    win = make_window("H200")
    win.user_kernels.compile_jobs.jobs = KernelJobs(compile=partial(fake.fixed, 32, 0),
                                                    compile_many=fake.no_sweep)
    win.live_kernels.list_declared()
    win.controls.set_availability(Availability())  # as a window that loads them starts
    combo = win.controls.kernel
    add = combo.findData("add_triton")
    assert combo.count() > 10 and combo.itemText(add).endswith("loading…")
    assert "loading in the kernel host" in combo.itemData(add, 3)  # its tooltip
    no_triton = dict(NO_GPU, triton=replace(NO_GPU["triton"], ok=False,
                                            reason="triton is not installed"))
    win.apply_kernels_info(KernelsInfo(no_triton, tuple(KERNELS), None, "no CUDA GPU"))
    add, numba = combo.findData("add_triton"), combo.findData("add_numba")
    assert combo.itemText(add).endswith("missing") and combo.itemText(numba).endswith("[numba]")
    assert "triton is not installed" in combo.itemData(add, 3)
    assert "available: runs live (interpreter" in combo.itemData(numba, 3)
    combo.setCurrentIndex(add)
    assert "triton missing: triton is not installed" in win.controls.kernel_note.text()


def test_played_through_it_rests_on_a_busy_wave_not_an_all_grey_gpu(win):
    w = win("H200", 1_000_000, 256)
    pb = w.playback
    assert not pb.loop
    pb.set_time(0.0)
    pb.set_playing(True)
    pb.advance(10 * pb.base_seconds)  # past the end
    frame = pb.frame
    assert not pb.playing and frame.running > 0 and 0 < pb.time_us < pb.end_us
    assert not w.clock.is_active()  # at rest: nothing animates, no CPU spent
    pb.set_playing(True)
    assert pb.time_us == 0.0  # Play again shows it from the start
    pb.set_playing(False)


def test_step_moves_one_wave_and_the_counter_counts_waves_as_geometry_does(win):
    """H200, 1,000,000 x 256: Geometry says 3.70 waves, so the SM view's counter reads 1..4
    (never "wave 6 of 3.70"), and each Step moves a whole wave, the tail or the end; the
    counter counts blocks started as waves of Geometry's blocks per wave."""
    import math

    import numpy as np

    w = win("H200", 1_000_000, 256)
    geo = w.model.state.geometry
    waves = float(w.geometry_view.value("waves_occ"))
    per_wave = int(w.geometry_view.value("bpw").replace(",", ""))
    assert abs(waves - geo.blocks / per_wave) < 0.006
    pb, tl = w.playback, w.simulation.run.timeline
    pb.pick(0.0)
    seen, times = [w.sm_view.wave_now()], [0.0]
    while pb.time_us < pb.end_us and len(times) < 20:
        pb.step(+1)
        times.append(pb.time_us)
        seen.append(w.sm_view.wave_now())
    assert len(times) <= math.ceil(waves) + 3  # waves, tail and end: not thousands of events
    assert seen == sorted(seen) and set(seen) == set(range(1, math.ceil(waves) + 1))
    for t in np.linspace(0, tl.makespan_us, 57):
        pb.pick(float(t))
        started = int((tl.start_us <= t).sum())
        assert w.sm_view.wave_now() == min(max(1, math.ceil(started / per_wave)),
                                           math.ceil(waves))
    pb.step(-1)
    assert pb.time_us < tl.makespan_us


def test_a_refused_value_is_said_beside_its_box_and_nothing_moves(qtbot, win):
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QWidget

    from tests.gui.test_typing import _type_into

    w = win("T4", 1_000_000, 256)
    c = w.controls
    w.resize(1024, 640)
    qtbot.wait(50)
    form = c.scroll.widget()
    controls = [x for x in form.findChildren(QWidget) if x.isVisibleTo(form) and x is not c.error]

    def places():
        return [x.mapTo(form, QPoint(0, 0)) for x in controls]

    before = places()
    _type_into(qtbot, c.threads, "2000")  # over the T4's 1,024
    assert c.error.isVisibleTo(c) and "over the limit of 1024" in c.error.text()
    assert places() == before  # nothing moved under the mouse
    box_top = c.threads.mapTo(form, QPoint(0, 0)).y()
    msg = c.error.geometry()
    assert msg.top() == box_top + c.threads.height() + 2 or msg.bottom() == box_top - 3
    _type_into(qtbot, c.threads, "abc")  # no number: refused, the last good value back
    assert c.error.isVisibleTo(c) and c.error.anchor is c.threads
    _type_into(qtbot, c.threads, "512")  # valid again: it goes
    assert not c.error.isVisibleTo(c) and places() == before


def _laid_out(qtbot, w, width, height):
    from PySide6.QtWidgets import QApplication

    w.resize(width, height)
    w.show()
    qtbot.waitExposed(w)
    w.apply_default_dock_sizes()
    for _ in range(3):
        QApplication.processEvents()


def test_at_1024x640_every_tab_fits_and_at_1366x768_no_label_is_cut(qtbot, win):
    from PySide6.QtWidgets import QTabBar

    w = win("H200", 1_000_000, 256)
    _laid_out(qtbot, w, 1024, 640)
    bars = [b for b in w.findChildren(QTabBar) if b.parent() is w and b.isVisible()]  # docks' tabs
    assert bars
    for bar in bars:  # every tab whole inside its bar: no scroll arrows to find the rest
        assert all(bar.rect().contains(bar.tabRect(i)) for i in range(bar.count())), \
            [bar.tabText(i) for i in range(bar.count())]
    w.model.update(kernel="matmul_tiled")  # a kernel: the widest values beside the labels
    _laid_out(qtbot, w, 1366, 768)
    table = w.geometry_view.table
    fm = table.fontMetrics()
    for r in range(table.rowCount()):
        label = table.item(r, 0).text()
        lines = table.rowHeight(r) // fm.lineSpacing()
        assert fm.horizontalAdvance(label) <= lines * (table.columnWidth(0) - 8), label
    w.model.update(kernel="custom", elements=1_000_000, threads_per_block=256)


@pytest.mark.slow
def test_the_slips(make_window, qtbot):
    """Compute-bound is not offered without tiles to time; back to custom, a matmul's size n is
    not kept as elements; the title names the app once; one unit spelling, µs."""
    from pathlib import Path

    from gui.models.launch import LaunchInputs

    w = _kernel_window(make_window)
    w.user_kernels.compile_jobs.jobs = KernelJobs(compile=partial(fake.fixed, 128, 0),
                                                  compile_many=fake.no_sweep)
    combo = w.controls.cost
    compute = combo.model().item(combo.findData("compute"))
    assert w.model.state.work is None and not compute.isEnabled()
    w.options.set(cost="compute")  # e.g. from old settings: answered, not left failing
    w.model.update(elements=2_000_000)
    assert w.options.cost != "compute"
    w.model.select_kernel("matmul_tiled")
    assert w.model.inputs.elements == 4096 and compute.isEnabled() and w.options.cost == "compute"
    w.model.select_kernel("custom")
    assert w.model.inputs.elements == LaunchInputs().elements and not compute.isEnabled()
    assert w.options.cost != "compute"
    assert "WarpScope" not in w.windowTitle()  # Qt adds the app's display name, WarpScope
    data = Path(__file__).parents[1] / "data"
    assert w.open_trace(str(data / "trace_h200.json"), wait=True)
    import re

    said = [*w.traces.comparison.lines, w.statusBar().currentMessage()]
    assert not [t for t in said if re.search(r"\d us\b", t)] and "µs" in said[-1]
    w.traces.close()
