"""One launch timed six ways (kernels/measure/timing_methods.py): each record says what it measures, and
without a GPU none of them claims to be a GPU timing."""

import time

import pytest
from kernels_env import HAS_GPU

from kernels.measure.timing_methods import (
    METHOD_IDS,
    METHODS,
    method,
    time_kernel_methods,
    time_methods,
)
from sim.inputs.errors import UserError


def test_methods_are_unique_and_explain_themselves_in_one_sentence():
    assert len(set(METHOD_IDS)) == len(METHOD_IDS) == 6
    assert METHOD_IDS[0] == "events_flushed"  # the honest one first
    for m in METHODS:
        assert m.label and m.measures.endswith(".") and "\n" not in m.measures
        assert m.measures.count(". ") == 0, m.id  # one sentence
    assert {m.id for m in METHODS if not m.device_events} == {"host_launch_returned",
                                                              "host_synchronized"}
    with pytest.raises(UserError, match="unknown timing method"):
        method("wall_clock")


def test_without_a_gpu_event_methods_are_missing_and_host_ones_are_labelled():
    calls = []

    def launch():
        calls.append(1)
        time.sleep(0.002)

    recs = time_methods(launch, 3_000_000, on_gpu=False, kernel="k", elements=1000,
                        cpu_mode="interpreter")
    assert [r.method for r in recs] == list(METHOD_IDS)
    for r in recs:
        assert not r.is_gpu_timing and r.kernel == "k" and r.elements == 1000
        if method(r.method).device_events:
            assert r.median_us is None and r.bandwidth_gbps is None and r.reps == 0
            assert "need a CUDA GPU" in r.note and "interpreter" in r.note
        else:
            assert r.note.startswith("not a GPU timing") and r.reps == 3
            assert 2000 <= r.p20_us <= r.median_us <= r.p80_us
            # GB/s is bytes over the median, whatever that median measured
            assert r.bandwidth_gbps == pytest.approx(3_000_000 / (r.median_us * 1e-6) / 1e9)
    assert len(calls) == 6  # three runs for each host method, none for the others


def test_a_subset_in_the_order_asked_and_bad_arguments():
    recs = time_methods(lambda: None, 8, on_gpu=False,
                        methods=("host_synchronized", "events_flushed"))
    assert [r.method for r in recs] == ["host_synchronized", "events_flushed"]
    with pytest.raises(UserError):
        time_methods(lambda: None, 8, on_gpu=False, methods=("nope",))
    with pytest.raises(ValueError):
        time_methods(lambda: None, 8, on_gpu=False, reps=0)


@pytest.mark.skipif(HAS_GPU, reason="the CPU path")
def test_registry_kernel_on_the_cpu_path_is_capped_and_checked():
    from kernels.declare.registry import get_kernel

    cap = get_kernel("add_torch").cpu_max_elements
    recs = time_kernel_methods("add_torch", 4 * cap, reps=5)
    assert {r.elements for r in recs} == {cap}  # the size it really ran
    host = [r for r in recs if r.median_us is not None]
    assert len(host) == 2 and all("(cpu)" in r.note for r in host)
    with pytest.raises(UserError, match="not a kernel with a throughput"):
        time_kernel_methods("lanes_numba", 32)


@pytest.mark.gpu
def test_on_a_gpu_the_traps_show():
    from kernels.launching.device import detect_device

    gpu, _ = detect_device()
    recs = {r.method: r for r in time_kernel_methods("add_torch", 1 << 24, gpu=gpu, reps=20)}
    assert all(r.is_gpu_timing and r.median_us > 0 for r in recs.values())
    # the launch call returns long before the work of 200 MB is done
    assert recs["host_launch_returned"].median_us < recs["events_flushed"].median_us
    assert recs["host_synchronized"].median_us > recs["events_flushed"].median_us
