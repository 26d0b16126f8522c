"""The window with the real kernel registry: the menu lists the kernels whose grid we can show,
their grid is the launcher's, measured resources feed the launch, a detected GPU comes first."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gui.live_kernels import KernelsInfo
from tests.models.fakes import GPU, NO_GPU, fake_sweep


def _kernels():
    from kernels.declare.registry import KERNELS

    return tuple(KERNELS)


@pytest.mark.slow
def test_window_applies_kernels_info(make_window):
    win = make_window("H200", 1_000_000, 256)
    win.apply_kernels_info(KernelsInfo(NO_GPU, _kernels(), None, "no CUDA GPU"))
    assert "interpreter" in win.live_kernels.label.text()
    assert win.bandwidth.banner.isVisibleTo(win.bandwidth)
    names = [win.controls.kernel.itemData(i) for i in range(win.controls.kernel.count())]
    assert names[0] == "custom" and "add_triton" in names
    assert "trace_triton" not in names and "add_torch" not in names  # torch picks its own grid
    win.controls.kernel.setCurrentIndex(win.controls.kernel.findData("add_triton"))
    inp = win.model.inputs
    spec = next(k for k in _kernels() if k.name == "add_triton")
    assert inp.threads_per_block == 32 * spec.default_num_warps and inp.block_size == spec.default_block
    assert win.geometry_view.value("blocks") == f"{-(-1_000_000 // spec.default_block):,}"
    assert win.controls.block_size.isVisibleTo(win.controls) and "BLOCK_SIZE = 1,024" in win.controls.ept_note.text()
    win.controls.kernel.setCurrentIndex(win.controls.kernel.findData("add_numba_naive"))
    assert win.model.inputs.threads_per_block == 256 and win.model.inputs.block_size is None
    assert not win.controls.block_size.isVisibleTo(win.controls)


@pytest.mark.slow
def test_window_survives_kernels_failing_to_load(make_window):
    win = make_window("H200")
    win.apply_kernels_info(KernelsInfo(None, (), None, "", "ImportError: no torch"))
    assert "unavailable" in win.live_kernels.label.text()
    assert "no torch" in win.bandwidth.banner.text()


@pytest.mark.slow
def test_measured_resources_feed_the_launch(make_window):
    """Bench results carry each compiled kernel's registers and shared memory; selecting that
    kernel uses them (while its compiler is asked), so occupancy is the real kernel's."""
    win = make_window("H200", 1_000_000, 256)
    win.apply_kernels_info(KernelsInfo(GPU, _kernels(), None, ""))
    win.bench.set_result(fake_sweep()(["add_triton"], [2**20], [4096]))  # 24 registers in the fake
    win.controls.kernel.setCurrentIndex(win.controls.kernel.findData("add_triton"))
    assert win.model.inputs.regs_per_thread == 24
    assert "from bench results" in win.controls.resources.label.text()


@pytest.mark.slow
def test_detected_device_is_listed_first_and_chosen(make_window):
    """On a GPU machine the detected device heads the list and, with nothing saved, is shown."""
    from sim.rules.devices import preset

    win = make_window("H200")
    win.live_kernels.prefer_detected = True
    dev = replace(preset("H200"), name="NVIDIA H200", sm_count=132, detected=True)
    win.apply_kernels_info(KernelsInfo(GPU, _kernels(), dev, ""))
    assert win.controls.gpu.itemText(0) == "NVIDIA H200"
    assert win.model.inputs.gpu == "NVIDIA H200" and win.model.state.spec.detected
    assert "detected" in win.controls.gpu_note.text()
