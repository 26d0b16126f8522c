"""Sliders and boxes drive the model; occupancy, geometry, sweeps and the SM view follow (the
views mounted alone: gui.panels.Stage; the last test is about the window's dock sizes)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim.rules.devices import preset, presets
from sim.rules.occupancy import occupancy

from tests.gui.conftest import wait_sim
from tests.tiers import every_preset


def test_geometry_panel_shows_article_table(mount):
    geo = mount("L40S", 1_000_000, 256).geometry_view
    assert geo.value("blocks") == "3,907"
    assert geo.value("warps") == "31,256"
    assert geo.value("idle_last") == "192"
    assert geo.value("slots_gpu").startswith("6,816")
    assert geo.value("waves_best") == "4.6"
    assert geo.value("last_wave") == "499 of 852"


def test_threads_slider_moves_everything(qtbot, mount):
    w = mount("H200", 1_000_000, 256)
    w.controls.threads_slider.setValue(512)
    assert w.model.inputs.threads_per_block == 512
    occ = occupancy(preset("H200"), 512)
    assert w.geometry_view.value("blocks") == f"{math.ceil(1_000_000 / 512):,}"
    assert w.geometry_view.value("wpb") == "16"
    assert w.geometry_view.value("bps") == str(occ.blocks_per_sm)
    assert w.occupancy_view.marker("threads") == (512, occ.active_warps_per_sm)
    run = wait_sim(qtbot, w)  # the SM view follows once the (debounced, threaded) run lands
    assert run.occ.threads_per_block == 512 and run.timeline.grid_blocks == math.ceil(1_000_000 / 512)
    w.playback.set_time(run.makespan_us * 0.25)  # inside the first, full wave
    res = w.sm_view.frame.resident
    assert res.shape == (132, occ.blocks_per_sm)
    assert (res >= 0).all() and len(np.unique(res)) == res.size


def test_snapping_slider_and_odd_typed_sizes(mount):
    w = mount("L40S", 1000, 256)
    c = w.controls
    c.threads_slider.setValue(250)  # snap on: the slider rounds to whole warps
    assert w.model.inputs.threads_per_block % 32 == 0
    c.threads.setValue(250)  # a typed size is taken as typed, snap or not: idle lanes show
    assert w.model.inputs.threads_per_block == 250 and c.snap.isChecked()
    assert w.geometry_view.value("idle_lanes") == "6"
    assert w.geometry_view.lanes.lanes() == [32] * 7 + [26]
    assert w.geometry_view.value("idle_last") == str(4 * 250 - 1000)


def test_registers_change_the_limiter(mount):
    w = mount("H200", 1_000_000, 256)
    assert w.occupancy_view.limiter_values()["registers"] is None
    w.controls.regs.setValue(128)
    occ = w.model.state.occ
    assert occ.limited_by == ("registers",)
    assert occ.blocks_per_sm == occupancy(preset("H200"), 256, 128).blocks_per_sm
    assert w.occupancy_view.limiter_values()["registers"] == occ.blocks_per_sm
    assert w.occupancy_view.marker("registers") == (128, occ.active_warps_per_sm)
    assert "registers" in w.occupancy_view.summary.text()


def test_shared_memory_sweep_follows(mount):
    w = mount("H200", 1_000_000, 128)
    w.controls.smem.setValue(48 * 1024)
    occ = w.model.state.occ
    assert "shared memory" in occ.limited_by
    xs, ys = w.occupancy_view.sweep_data("smem")
    assert len(xs) == len(ys) > 10
    assert w.occupancy_view.marker("smem") == (pytest.approx(48.0), occ.active_warps_per_sm)
    i = len(xs) // 2
    assert ys[i] == occupancy(preset("H200"), 128, 0, int(xs[i])).active_warps_per_sm


def test_elements_slider_is_log_scale(mount):
    w = mount("H200", 1_000_000, 256)
    w.controls.elements_slider.setValue(200)  # 2^20
    assert w.model.inputs.elements == 2**20
    w.controls.elements_slider.setValue(310)  # 2^31, the maximum
    assert w.model.inputs.elements == 2**31
    assert w.geometry_view.value("blocks") == f"{2**31 // 256:,}"


def test_gpu_selector_lists_presets_and_switches(qtbot, mount):
    w = mount("L40S")
    assert [w.controls.gpu.itemText(i) for i in range(w.controls.gpu.count())] == presets()
    w.controls.gpu.setCurrentText("T4")
    assert w.model.state.spec.sm_count == 40
    assert wait_sim(qtbot, w).spec.sm_count == 40


def test_sm_view_capacity_over_time(mount):
    """At every moment no SM holds more blocks than the occupancy allows, and the
    retired/running/queued counts add up to the grid."""
    w = mount("T4", 100_000, 256, regs=64)
    run, occ = w.simulation.run, w.model.state.occ
    for f in np.linspace(0, 1, 23):
        w.playback.set_time(f * run.makespan_us)
        frame = w.sm_view.frame
        assert ((frame.resident >= 0).sum(axis=1) <= occ.blocks_per_sm).all()
        assert frame.retired + frame.running + frame.queued == run.timeline.grid_blocks


def test_sm_view_hover_describes_slot(qtbot, mount):
    w = mount("T4", 100_000, 256)
    w.show()
    qtbot.waitExposed(w)
    w.playback.set_time(w.simulation.run.makespan_us * 0.3)
    lay, area = w.sm_view._layout, w.sm_view._grid_rect()
    r = lay.tile_rect(0)
    from PySide6.QtCore import QPoint

    text = w.sm_view.describe_at(QPoint(area.left() + r.left() + 1, area.top() + r.top() + lay.label + 1))
    assert text.startswith("SM 0, warp slot 0")


@pytest.mark.parametrize("gpu", every_preset())
def test_every_preset_renders(mount, gpu):
    """Scenario smoke table: every preset simulates, lays out and draws a frame."""
    w = mount(gpu, 3_000_000, 256)
    run = w.simulation.run
    assert run.spec.sm_count == preset(gpu).sm_count
    w.playback.set_time(run.makespan_us / 2)
    img = w.sm_view.grab().toImage()
    assert not img.isNull() and img.width() > 100


@pytest.mark.parametrize("gpu", ["H200", "L40S", "T4", "RTX 5090"])
def test_carveout_entries_select_their_step(mount, gpu):
    """Each carveout entry must make the driver pick exactly that shared-memory size, and the
    note must say when the driver takes more than asked."""
    w = mount(gpu, 1_000_000, 128, smem=20_000)
    combo, spec = w.controls.carveout, preset(gpu)
    for i in range(1, combo.count()):
        kib = spec.smem_carveout_steps_kib[i - 1]
        combo.setCurrentIndex(i)
        occ = w.model.state.occ
        if kib * 1024 >= occ.smem_allocated_per_block_bytes:
            assert occ.smem_per_sm_config_bytes == kib * 1024, (combo.itemText(i), occ)
            assert "more than" not in w.controls.carveout_note.text()
        else:
            assert occ.carveout_raised
            assert f"more than the {kib} KiB asked for" in w.controls.carveout_note.text()


def test_carveout_kept_across_gpus_is_shown_as_used(mount):
    """A percentage picked on one GPU that is none of the next GPU's steps must not read
    'driver default' while the model still uses it; picking the default must then work."""
    w = mount("H200", 1_000_000, 256, smem=20_000)
    combo = w.controls.carveout
    combo.setCurrentIndex(combo.findData(3))  # H200's 8 KiB step: the driver raises it
    assert "uses 32 KiB" in w.controls.carveout_note.text()
    w.controls.gpu.setCurrentText("T4")
    assert w.model.inputs.carveout_percent == 3
    assert combo.currentData() == 3 and "3%" in combo.currentText()
    assert "32 KiB" in w.controls.carveout_note.text()  # what the driver picks on the T4
    combo.setCurrentIndex(0)
    assert w.model.inputs.carveout_percent is None


def test_small_occupancy_charts_axis_labels_fit(qtbot, win):
    """'shared memory per block (KiB)' was cut off at 'per block (K' in the default layout."""
    from PySide6.QtWidgets import QApplication

    w = win("H200")
    w.resize(1600, 1000)
    w.show()
    qtbot.waitExposed(w)
    w.apply_default_dock_sizes()
    QApplication.processEvents()
    for plot in (w.occupancy_view.smem_plot, w.occupancy_view.regs_plot):
        axis = plot.getPlotItem().getAxis("bottom")
        assert axis.label.boundingRect().width() <= axis.width() + 1, axis.label.toPlainText()
