"""Recorded vs predicted schedules: compare predicts from the launch alone, and a trace made by a
schedule compares as identical to that schedule's own prediction."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from sim.traces.compare import (CUDA_PROBE_NOTE, UNSAID_WAIT_NOTE, RecordedPlacement, compare_trace,
                         launch_of_trace, placement_from_trace)
from sim.rules.devices import preset, preset_for_device_name
from sim.schedule.dispatch import dispatch_schedule
from sim.schedule.dispatch_profile import builtin_profile
from sim.inputs.errors import UserError
from sim.schedule.scheduler import SmOrderPlacement, TpcSpreadPlacement, UniformCost, simulate
from sim.traces.trace import Trace, load_trace, save_trace

DATA = Path(__file__).parents[1] / "data"


def _recorded(gpu, sm, start, end, **meta):
    n = len(sm)
    return Trace("recorded", gpu.name, np.arange(n), np.asarray(sm), np.full(n, -1),
                 np.asarray(start) + 5.0, np.asarray(end) + 5.0,
                 meta={"num_warps": 4, "threads_per_block": 128, "regs_per_thread": 0, **meta})


def test_a_trace_of_the_textbook_compares_as_identical_in_ideal_mode():
    gpu = preset("H200")
    sim = simulate(gpu, 3 * 132 * 16, 16, UniformCost(200.0), TpcSpreadPlacement())
    trace = _recorded(gpu, sim.block_sm, sim.block_start_us, sim.block_end_us, wait="sleep")
    comparison = compare_trace(trace, gpu, mode="ideal")
    assert comparison.same_sm_fraction == 1.0 and comparison.residency_error == 0.0
    assert comparison.simulated_makespan_us == pytest.approx(comparison.recorded_makespan_us)
    assert comparison.predicted_blocks_per_sm == 16 == comparison.simulated_median_peak_blocks_per_sm
    # The wrong placement policy is caught.
    wrong = compare_trace(trace, gpu, mode="ideal", placement=SmOrderPlacement())
    assert wrong.same_sm_fraction < 0.2


def test_a_trace_of_the_dispatch_model_compares_as_identical_in_calibrated_mode():
    gpu, params = preset("H200"), builtin_profile().params
    order = TpcSpreadPlacement().slot_order(gpu, 16)
    sm, _, start, end = dispatch_schedule(gpu, 2 * 132 * 16, 16, 4, 50.0, params, "spin", order, 3)
    trace = _recorded(gpu, sm, start, end, wait="spin")
    comparison = compare_trace(trace, gpu, seed=3)
    assert comparison.residency_error == pytest.approx(0.0, abs=1e-9)
    assert comparison.makespan_error == pytest.approx(0.0, abs=1e-9)
    assert comparison.same_sm_fraction == 1.0


def test_the_prediction_reads_the_launch_not_the_schedule():
    """Shuffling where and when the recorded blocks ran (keeping each block's duration) leaves the
    prediction exactly as it was: compare fits nothing to the trace it judges."""
    gpu = preset("H200")
    trace = load_trace(DATA / "trace_h200.json")
    rng = np.random.default_rng(1)
    shift = rng.uniform(0, 300, trace.block.size)
    moved = replace(trace, sm=rng.permutation(trace.sm), start_us=trace.start_us + shift,
                    end_us=trace.end_us + shift)
    a = compare_trace(trace, gpu)
    b = compare_trace(moved, gpu)
    assert np.array_equal(a.simulated.start_us, b.simulated.start_us)
    assert a.simulated_makespan_us == b.simulated_makespan_us
    assert a.recorded_makespan_us != b.recorded_makespan_us


def test_the_h200_trace_is_predicted_by_the_calibrated_schedule():
    """tests/data/trace_h200.json: 2,112 blocks of 8 warps spinning 200 us, recorded on the H200
    on 2026-11-29 with `python3 main.py trace --grid 2112 --warps 8 --spin-us 200` (no 'wait' in
    its meta: the Triton busy spin). It was never used to fit the dispatch model."""
    trace = load_trace(DATA / "trace_h200.json")
    gpu = preset_for_device_name(trace.gpu, 132)
    assert launch_of_trace(trace, gpu).notes == (UNSAID_WAIT_NOTE,)
    calibrated = compare_trace(trace, gpu)
    ideal = compare_trace(trace, gpu, mode="ideal")
    assert calibrated.wait == "spin" and calibrated.predicted_blocks_per_sm == 8
    assert abs(calibrated.makespan_error) <= 0.10 and calibrated.residency_error <= 0.15
    assert abs(calibrated.simulated_median_peak_blocks_per_sm
               - calibrated.recorded_median_peak_blocks_per_sm) <= 1
    # the textbook fills every slot at once and misses by far more
    assert ideal.residency_error > 2 * calibrated.residency_error
    assert ideal.makespan_error < -0.10


def test_blocks_per_sm_come_from_the_registers_and_shared_memory():
    gpu = preset("H200")
    t = _recorded(gpu, [0, 1], [0.0, 0.0], [1.0, 1.0], wait="sleep", threads_per_block=256,
                  num_warps=8, regs_per_thread=128)  # 128 regs x 256 threads: 2 blocks per SM
    assert launch_of_trace(t, gpu).blocks_per_sm == 2
    t = replace(t, meta={**t.meta, "regs_per_thread": 0, "smem_per_block_bytes": 100_000})
    assert launch_of_trace(t, gpu).blocks_per_sm == 2  # 228 KiB per SM
    assert launch_of_trace(t, gpu, blocks_per_sm=5).blocks_per_sm == 5  # the caller knows better


def test_what_the_warps_do():
    gpu = preset("H200")
    base = _recorded(gpu, [0], [0.0], [1.0])
    assert launch_of_trace(base, gpu).wait == "spin"  # no 'wait': the Triton busy spin
    for meta, wait in (({"wait": "sleep"}, "sleep"), ({"wait": "memory"}, "memory"),
                       ({"wait": None, "kernel": "add-trace"}, "memory"),
                       ({"wait": "spin-all", "kernel": "cuda-probe"}, "sleep")):
        launch = launch_of_trace(replace(base, meta={**base.meta, **meta}), gpu)
        assert launch.wait == wait
    assert launch.notes == (CUDA_PROBE_NOTE,)
    with pytest.raises(UserError, match="pass --blocks-per-sm"):
        launch_of_trace(replace(base, meta={"predicted": {"blocks_per_sm": "eight"}}), gpu)


def test_placement_is_learned_from_first_blocks():
    gpu = preset("T4")
    sim = simulate(gpu, 80, 2, UniformCost(1.0), TpcSpreadPlacement())
    learned = placement_from_trace(_recorded(gpu, sim.block_sm, sim.block_start_us, sim.block_end_us))
    assert list(learned.sm_sequence[:40]) == TpcSpreadPlacement().sm_order(gpu)
    order = RecordedPlacement((3, 1, 3)).slot_order(gpu, 2)
    assert order[:3].tolist() == [6, 2, 7] and sorted(order.tolist()) == list(range(80))


def test_trace_file_round_trip(tmp_path):
    gpu = preset("H200")
    sim = simulate(gpu, 500, 8)
    path = tmp_path / "t.json"
    save_trace(path, source="simulated", gpu=gpu.name, records=sim.trace_records(), meta={"x": 1})
    trace = load_trace(path)
    assert (trace.sm == sim.block_sm).all() and trace.meta == {"x": 1}
    assert np.allclose(trace.end_us, sim.block_end_us, atol=1e-3)
    assert not list(tmp_path.glob(".tmp-*"))  # nothing half-written left behind
    assert path.stat().st_mode & 0o044  # an ordinary file others may read, not mkstemp's 0600


@pytest.mark.parametrize("name,sms,expected", [
    ("NVIDIA H200", 132, "H200"), ("NVIDIA A100-SXM4-80GB", 108, "A100 80GB"),
    ("NVIDIA H100 80GB HBM3", 132, "H100 SXM"), ("NVIDIA H100 PCIe", 114, "H100 PCIe"),
    ("Tesla T4", 40, "T4"), ("NVIDIA GeForce GTX 1080", 20, None),
])
def test_driver_names_map_to_presets(name, sms, expected):
    spec = preset_for_device_name(name, sms)
    assert (spec.name if spec else None) == expected


def _raw_trace(tmp_path, blocks, meta=None, raw=None):
    import json

    path = tmp_path / "t.json"
    path.write_text(raw if raw is not None else json.dumps(
        {"format": "warpscope-trace/1", "source": "recorded", "gpu": "NVIDIA H200",
         "meta": meta or {}, "blocks": blocks}))
    return path


@pytest.mark.parametrize("blocks,raw,words", [
    ([[0, -1, -1, 0.0, 1.0]], None, "row 0: sm must be an SM in 0..1023, got -1"),
    ([[0, 10**7, -1, 0.0, 1.0]], None, "an SM in 0..1023"),  # was a 33 GiB raster
    ([[0, 0, -1, 5.0, 1.0]], None, "row 0 ends before it starts"),
    ([[0, 0, -1, float("nan"), 1.0]], None, "NaN is not a number JSON allows"),
    ([[0, 0, -1, 1.0, 1.0]], None, "no block takes any time"),
    ([[0, 0, -1], [1, 2]], None, "must be 5 numbers"),
    (None, "[1, 2, 3]", "not a WarpScope trace"),  # was AttributeError
    (None, "\xff\xfe", "not a text file"),
])
def test_damaged_trace_files_are_one_line_errors(tmp_path, blocks, raw, words):
    path = _raw_trace(tmp_path, blocks, raw=raw)
    if raw == "\xff\xfe":
        path.write_bytes(b"\xff\xfe")  # not UTF-8: was an uncaught UnicodeDecodeError
    with pytest.raises(UserError, match=words):
        load_trace(path)

