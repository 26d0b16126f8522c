"""The article's measurements on the CPU path: labelled, in order, correct."""

import pytest
from kernels_env import HAS_GPU

from kernels.measure.experiments import STEP_NAMES, count_kernels, launch_vs_finish, square_host_steps
from sim.inputs.errors import UserError


@pytest.mark.slow
def test_square_host_steps_are_the_five_in_order():
    r = square_host_steps(elements=2048, threads_per_block=128, reps=1)
    assert [s.name for s in r.steps] == list(STEP_NAMES) == [
        "allocate", "copy in", "launch", "copy out", "free"]
    assert r.correct
    assert [s.on_gpu for s in r.steps] == [False, False, True, False, False]
    t = 0.0
    for s in r.steps:  # a timeline: each step starts where the previous one ended
        assert s.start_ms == pytest.approx(t) and s.duration_ms >= 0
        t += s.duration_ms
    assert r.total_ms == pytest.approx(t)
    assert r.is_gpu_timing == HAS_GPU
    assert ("NOT a GPU timing" in r.method) == (not HAS_GPU)


@pytest.mark.skipif(HAS_GPU, reason="the CPU path's behaviour")
def test_launch_vs_finish_on_cpu_is_synchronous_and_labelled():
    r = launch_vs_finish("add_triton", elements=10_000, reps=2)
    assert not r.is_gpu_timing and "NOT a GPU timing" in r.method
    assert r.work_finished_us >= r.launch_returned_us > 0


@pytest.mark.skipif(HAS_GPU, reason="the CPU path's behaviour")
def test_count_kernels_needs_a_gpu():
    with pytest.raises(UserError, match="needs a GPU"):
        count_kernels()


@pytest.mark.gpu
def test_count_kernels_on_gpu():
    counts = {c.variant: c for c in count_kernels(elements=1_000_000)}
    assert counts["add_relu_torch_eager"].count == 2
    assert counts["add_relu_torch_compile"].count == 1
    assert counts["add_relu_triton"].count == 1 and counts["add_relu_numba"].count == 1


@pytest.mark.gpu
def test_launch_returns_before_the_work_finishes_on_gpu():
    r = launch_vs_finish("add_torch", elements=50_000_000)
    assert r.is_gpu_timing and r.work_finished_us > 2 * r.launch_returned_us
