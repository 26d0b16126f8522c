"""The slider launches the kernel: once the block size settles, the picked kernel is launched at
the new launch off the GUI thread, and a move before it runs cancels it. Here, without a GPU, the
path runs Triton's interpreter at a small size and says it is no GPU timing (the GPU path is the
same harness, kernels.measure.harness.measure, that `bench` uses)."""

from __future__ import annotations

import time

import pytest

from gui.adapter import TaskRunner
from gui.models.launch import LaunchInputs
from gui.models.slider_launch import CPU_ELEMENTS, NOT_GPU
from gui.panels import Stage
from gui.slider_launcher import SliderLauncher
from kernels.declare.registry import KERNELS
from kernels.launching.backends import available


@pytest.fixture
def stage(qtbot):
    st = Stage(("controls", "slider_launch"), LaunchInputs(gpu="H200", elements=1 << 20))
    qtbot.addWidget(st)
    st.model.set_kernels(KERNELS)
    runner = TaskRunner("slider launches", st)
    st.launcher = SliderLauncher(st.model, st.simulation, st.models.slider, runner, available,
                                 delay_ms=300, parent=st)
    yield st
    runner.shutdown()


def test_a_settled_slider_launches_the_kernel_on_the_cpu_path(qtbot, stage):
    model, view = stage.models.slider, stage.slider_launch_view
    assert "pick a live kernel" in model.status  # the custom launch has no kernel to run
    stage.model.update(kernel="add_triton", threads_per_block=128)
    stage.controls.threads_slider.setValue(256)  # the move the launch follows
    assert stage.launcher.debounce.pending() and not stage.launcher._jobs  # nothing until it settles
    qtbot.waitUntil(lambda: model.latest is not None, timeout=60_000)
    point = model.latest
    assert point.wanted.kernel == "add_triton" and point.wanted.threads_per_block == 256
    assert dict(point.wanted.block)["num_warps"] == 8
    assert not point.is_gpu_timing and point.elements_run == CPU_ELEMENTS and point.median_us > 0
    assert NOT_GPU in point.text() and NOT_GPU in view.status.text()
    assert len(view.points()[0]) == 0  # a CPU timing is listed, never drawn beside the GPU model


def test_a_move_cancels_a_waiting_launch_and_drops_a_running_ones_answer(qtbot, stage, monkeypatch):
    import gui.slider_launcher as sl

    model, launcher = stage.models.slider, stage.launcher
    stage.model.update(kernel="add_triton", threads_per_block=128)
    qtbot.waitUntil(lambda: model.latest is not None, timeout=60_000)
    launcher.runner.submit(lambda ctx: time.sleep(1.0), "something else first")
    stage.model.update(threads_per_block=64)
    waiting = launcher.fire()  # queued behind the other job
    stage.model.update(threads_per_block=512)  # the slider moves on: the waiting launch goes
    assert waiting not in launcher._jobs
    qtbot.waitUntil(lambda: model.latest.wanted.threads_per_block == 512, timeout=60_000)
    real = sl.measure_launch
    monkeypatch.setattr(sl, "measure_launch", lambda wanted, ctx: (time.sleep(0.8), real(wanted, ctx))[1])
    stage.model.update(threads_per_block=96)
    running = launcher.fire()
    qtbot.waitUntil(lambda: running in launcher._started, timeout=10_000)
    stage.model.update(threads_per_block=1024)  # it runs on, and its answer is dropped
    qtbot.waitUntil(lambda: model.latest.wanted.threads_per_block == 1024, timeout=60_000)
    assert {p.wanted.threads_per_block for p in model.points.values()} == {128, 512, 1024}


def test_without_a_kernel_host_it_says_why(qtbot):
    st = Stage(("slider_launch",), LaunchInputs(gpu="H200", elements=1 << 20))
    qtbot.addWidget(st)
    st.model.set_kernels(KERNELS)
    runner = TaskRunner("slider launches", st)
    launcher = SliderLauncher(st.model, st.simulation, st.models.slider, runner, lambda: None, parent=st)
    st.model.update(kernel="add_triton")
    assert launcher.fire() is None and "have not loaded" in st.models.slider.status
    runner.shutdown()


@pytest.mark.slow
def test_the_window_launches_through_its_kernel_host_and_the_verdicts_say_it(qtbot, make_window, tmp_path):
    from gui.live_kernels import KernelsInfo

    w = make_window("H200", 1 << 20, 128)
    assert "have not loaded" in w.models.slider.status or "pick a live kernel" in w.models.slider.status
    w.live_kernels.apply(KernelsInfo(available(), tuple(KERNELS), None, ""))  # as the host reports them
    w.model.update(kernel="add_triton")
    w.controls.threads_slider.setValue(256)
    qtbot.waitUntil(lambda: w.models.slider.latest is not None, timeout=120_000)
    assert w.models.slider.latest.wanted.threads_per_block == 256
    w.docks["verdicts"].raise_()
    w.teach.verdicts_view.redraws.flush()
    header = w.teach.verdicts_view.list.toPlainText()
    assert "Live launch:" in header and NOT_GPU in header
    item = w.slider_launch_view.export_items()[0]  # the export: every launch, beside its prediction
    assert item.rows[-1][3] == 256 and item.rows[-1][10] == 0 and item.rows[-1][9] != ""
    files = {f.name for f in w.export_all(tmp_path)}
    assert {"live_launches.png", "live_launches.csv"} <= files
    assert "Live launch" in (tmp_path / "summary.html").read_text()


def test_a_gpu_timing_of_this_launch_heads_the_speed_of_light_card(mount):
    """The slider's launch timed on a GPU is this launch's measured time in the Verdicts (the
    harness's numbers are injected here: no GPU)."""
    from gui.models.slider_launch import wanted_of
    from sim.inputs.units import fmt_us
    from tests.gui.conftest import drawn

    stage = mount("H200", 1 << 24, 256, views=("verdicts",))
    stage.model.set_kernels(KERNELS)
    stage.model.update(kernel="add_triton")
    view = stage.verdicts_view
    view.show_measured(stage.models.slider)
    state = stage.model.state
    wanted = wanted_of(state, stage.model.kernel("add_triton"))
    stage.models.slider.add(wanted, {"median_us": 55.0, "p20_us": 54.0, "p80_us": 56.5, "is_gpu_timing": True,
                                     "method": "CUDA events", "device": "NVIDIA H200",
                                     "elements_run": 1 << 24}, predicted_us=50.0)
    text = drawn(view).list.toPlainText()
    assert f"Measured: {fmt_us(55.0)} (live launch)" in text
    assert "Live launch:" in text and "predicted 50.0 µs (-9%)" in text
