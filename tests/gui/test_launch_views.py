"""Sliders drive the model; occupancy, geometry, sweeps and the SM view follow."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gui.model import LaunchInputs, LaunchModel, compute_state
from sim.devices import preset, presets
from sim.occupancy import occupancy

from .conftest import wait_sim


def test_article_example_numbers():
    st = compute_state(
        LaunchInputs(gpu="L40S", elements=1_000_000, threads_per_block=256), preset("L40S")
    )
    g = st.geometry
    assert (g.blocks, g.warps_in_grid, g.idle_threads_last_block) == (3907, 31256, 192)
    assert (g.warp_slots_per_sm, g.warp_slots_on_gpu) == (48, 6816)
    assert round(g.waves_at_best, 1) == 4.6


def test_geometry_panel_shows_article_table(make_window):
    win = make_window("L40S", 1_000_000, 256)
    geo = win.geometry_view
    assert geo.value("blocks") == "3,907"
    assert geo.value("warps") == "31,256"
    assert geo.value("idle_last") == "192"
    assert geo.value("slots_gpu").startswith("6,816")
    assert geo.value("waves_best") == "4.6"


def test_threads_slider_moves_everything(qtbot, make_window):
    win = make_window("H200", 1_000_000, 256)
    wait_sim(qtbot, win)
    c = win.controls
    c.threads_slider.setValue(512)
    assert win.model.inputs.threads_per_block == 512
    occ = occupancy(preset("H200"), 512)
    assert win.geometry_view.value("blocks") == f"{math.ceil(1_000_000 / 512):,}"
    assert win.geometry_view.value("wpb") == "16"
    assert win.geometry_view.value("bps") == str(occ.blocks_per_sm)
    # the threads sweep marks the new launch, at the occupancy's warps
    x, y = win.occupancy_view.marker("threads")
    assert (x, y) == (512, occ.active_warps_per_sm)
    # the SM view follows once the (debounced, threaded) simulation lands
    rec = wait_sim(qtbot, win)
    assert rec.occ.threads_per_block == 512
    assert rec.n_blocks == math.ceil(1_000_000 / 512)
    win.playback.set_time(rec.makespan_us * 0.25)  # inside the first, full wave
    res = win.sm_view._resident
    assert res.shape == (132, occ.blocks_per_sm)
    assert (res >= 0).all()  # every slot busy during a full wave
    assert len(np.unique(res)) == res.size  # each block in one slot only


def test_snapping_and_odd_block_sizes(qtbot, make_window):
    win = make_window("L40S", 1000, 256)
    c = win.controls
    c.threads_slider.setValue(250)  # snap on: rounds to a whole number of warps
    assert win.model.inputs.threads_per_block % 32 == 0
    c.snap.setChecked(False)
    c.threads.setValue(250)  # typed values are kept, to show idle lanes
    assert win.model.inputs.threads_per_block == 250
    assert win.geometry_view.value("idle_lanes") == "6"
    assert win.geometry_view.lanes.lanes() == [32] * 7 + [26]
    assert win.geometry_view.value("idle_last") == str(4 * 250 - 1000)


def test_registers_change_the_limiter(qtbot, make_window):
    win = make_window("H200", 1_000_000, 256)
    assert win.occupancy_view.limiter_values()["registers"] is None
    assert "warps" in win.model.state.occ.limited_by
    win.controls.regs.setValue(128)
    occ = win.model.state.occ
    assert occ.limited_by == ("registers",)
    assert occ.blocks_per_sm == occupancy(preset("H200"), 256, 128).blocks_per_sm
    assert win.occupancy_view.limiter_values()["registers"] == occ.blocks_per_sm
    assert win.occupancy_view.marker("registers") == (128, occ.active_warps_per_sm)
    # the summary names the limiter
    assert "registers" in win.occupancy_view.summary.text()


def test_shared_memory_sweep_follows(qtbot, make_window):
    win = make_window("H200", 1_000_000, 128)
    win.controls.smem.setValue(48 * 1024)
    occ = win.model.state.occ
    assert "shared memory" in occ.limited_by
    xs, ys = win.occupancy_view.sweep_data("smem")
    assert len(xs) == len(ys) > 10
    x, y = win.occupancy_view.marker("smem")
    assert x == pytest.approx(48.0)
    assert y == occ.active_warps_per_sm
    # the sweep's curve equals sim's answer at its points
    i = len(xs) // 2
    assert ys[i] == occupancy(preset("H200"), 128, 0, int(xs[i])).active_warps_per_sm


def test_elements_slider_is_log_scale(make_window):
    win = make_window("H200", 1_000_000, 256)
    win.controls.elements_slider.setValue(200)  # 2^20
    assert win.model.inputs.elements == 2**20
    win.controls.elements_slider.setValue(310)  # 2^31, the maximum
    assert win.model.inputs.elements == 2**31
    assert win.geometry_view.value("blocks") == f"{2**31 // 256:,}"


def test_gpu_selector_lists_presets_and_switches(qtbot, make_window):
    win = make_window("L40S")
    names = [win.controls.gpu.itemText(i) for i in range(win.controls.gpu.count())]
    assert names == presets()
    win.controls.gpu.setCurrentText("T4")
    assert win.model.state.spec.sm_count == 40
    rec = wait_sim(qtbot, win)
    assert rec.spec.sm_count == 40


def test_sm_view_capacity_over_time(qtbot, make_window):
    """At every moment no SM holds more blocks than the occupancy allows, and the
    retired/running/queued counts add up to the grid."""
    win = make_window("T4", 100_000, 256, regs=64)
    rec = wait_sim(qtbot, win)
    occ = win.model.state.occ
    for f in np.linspace(0, 1, 23):
        win.playback.set_time(f * rec.makespan_us)
        res = win.sm_view._resident
        assert ((res >= 0).sum(axis=1) <= occ.blocks_per_sm).all()
        done, running, queued, warps = win.sm_view._stats
        assert done + running + queued == rec.n_blocks
        assert warps == running * occ.warps_per_block


def test_sm_view_hover_describes_slot(qtbot, make_window):
    win = make_window("T4", 100_000, 256)
    wait_sim(qtbot, win)
    win.show()
    qtbot.waitExposed(win)
    rec = win.record
    win.playback.set_time(rec.makespan_us * 0.3)
    lay = win.sm_view._layout
    area = win.sm_view._grid_rect()
    r = lay.tile_rect(0)
    from PySide6.QtCore import QPoint

    text = win.sm_view.describe_at(
        QPoint(area.left() + r.left() + 1, area.top() + r.top() + lay.label + 1)
    )
    assert text.startswith("SM 0, warp slot 0")


@pytest.mark.parametrize("gpu", presets())
def test_every_preset_renders(qtbot, make_window, gpu):
    """Scenario smoke table: every preset simulates, lays out and draws a frame."""
    win = make_window(gpu, 3_000_000, 256)
    rec = win.simulate_now()
    spec = preset(gpu)
    assert rec.spec.sm_count == spec.sm_count
    win.playback.set_time(rec.makespan_us / 2)
    img = win.sm_view.grab().toImage()
    assert not img.isNull() and img.width() > 100


def test_model_rejects_nonsense_without_losing_state(qtbot):
    model = LaunchModel(LaunchInputs(gpu="H200"))
    before = model.state
    with qtbot.waitSignal(model.rejected) as blocker:
        assert not model.update(elements=0)
    assert "elements" in blocker.args[0]
    assert model.state == before
    with qtbot.waitSignal(model.rejected):
        assert not model.update(gpu="GTX 9999")
    with qtbot.waitSignal(model.rejected):
        assert not model.update(threads_per_block=-3)
    assert model.state == before


@pytest.mark.parametrize("gpu", ["H200", "L40S", "T4", "RTX 5090"])
def test_carveout_entries_select_their_step(make_window, gpu):
    """Each carveout entry must make the driver pick exactly that shared-memory size."""
    win = make_window(gpu, 1_000_000, 128, smem=1024)
    combo = win.controls.carveout
    spec = preset(gpu)
    for i in range(1, combo.count()):
        kib = spec.smem_carveout_steps_kib[i - 1]
        combo.setCurrentIndex(i)
        occ = win.model.state.occ
        need = occ.smem_allocated_per_block_bytes
        expected = kib * 1024 if kib * 1024 >= need else None
        if expected is not None:
            assert occ.smem_per_sm_config_bytes == expected, (combo.itemText(i), occ)


def test_carveout_kept_across_gpus_is_shown_as_used(make_window):
    """A percentage picked on one GPU that is none of the next GPU's steps must not read
    'driver default' while the model still uses it; picking the default must then work."""
    win = make_window("H200", 1_000_000, 256, smem=20_000)
    combo = win.controls.carveout
    combo.setCurrentIndex(combo.findData(3))  # H200's 8 KiB step
    win.controls.gpu.setCurrentText("T4")
    assert win.model.inputs.carveout_percent == 3
    assert combo.currentData() == 3 and "3%" in combo.currentText()
    assert "32 KiB" in combo.currentText()  # what the driver picks on the T4
    combo.setCurrentIndex(0)
    assert win.model.inputs.carveout_percent is None


def test_small_occupancy_charts_axis_labels_fit(qtbot, make_window):
    """'shared memory per block (KiB)' was cut off at 'per block (K' in the default layout."""
    from PySide6.QtWidgets import QApplication

    win = make_window("H200")
    win.resize(1600, 1000)
    win.show()
    qtbot.waitExposed(win)
    QApplication.processEvents()
    for plot in (win.occupancy_view.smem_plot, win.occupancy_view.regs_plot):
        axis = plot.getPlotItem().getAxis("bottom")
        assert axis.label.boundingRect().width() <= axis.width() + 1, axis.label.toPlainText()


def test_triton_note_counts_whole_warps(make_window):
    """A Triton program with 33 threads is 2 warps, not '1 warps'."""
    win = make_window("H200", 1_000_000, 128)
    win.model.update(elements_per_thread=8)
    assert "(4 warps)" in win.controls.ept_note.text()
    win.model.update(threads_per_block=33)
    assert "33 threads (2 warps)" in win.controls.ept_note.text()
