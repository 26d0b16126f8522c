"""Recorded vs simulated schedules: a trace made by the simulator itself must compare as identical."""

from pathlib import Path

import numpy as np
import pytest

from sim.compare import RecordedPlacement, compare_trace, placement_from_trace
from sim.devices import preset, preset_for_device_name
from sim.errors import UserError
from sim.scheduler import SmOrderPlacement, TpcSpreadPlacement, UniformCost, simulate
from sim.trace import Trace, load_trace, save_trace


def _as_recorded(sim):
    return Trace("recorded", sim.gpu.name, np.arange(sim.n_blocks), sim.block_sm.copy(),
                 np.full(sim.n_blocks, -1), sim.block_start_us + 5.0, sim.block_end_us + 5.0)


def test_a_trace_of_the_model_compares_as_identical():
    gpu = preset("H200")
    sim = simulate(gpu, 3 * 132 * 4, 4, UniformCost(200.0), TpcSpreadPlacement())
    comparison, replay = compare_trace(_as_recorded(sim), gpu, 4)
    assert comparison.same_sm_fraction == 1.0
    assert comparison.recorded_makespan_us == pytest.approx(comparison.simulated_makespan_us)
    assert comparison.recorded_max_blocks_per_sm == 4 == comparison.predicted_blocks_per_sm
    assert comparison.recorded_mean_resident == pytest.approx(comparison.simulated_mean_resident)
    # The wrong placement policy is caught.
    wrong, _ = compare_trace(_as_recorded(sim), gpu, 4, SmOrderPlacement())
    assert wrong.same_sm_fraction < 0.2


def test_placement_is_learned_from_first_blocks():
    gpu = preset("T4")
    sim = simulate(gpu, 80, 2, UniformCost(1.0), TpcSpreadPlacement())
    learned = placement_from_trace(_as_recorded(sim))
    assert list(learned.sm_sequence[:40]) == TpcSpreadPlacement().sm_order(gpu)
    order = RecordedPlacement((3, 1, 3)).slot_order(gpu, 2)
    assert order[:3].tolist() == [6, 2, 7] and sorted(order.tolist()) == list(range(80))


def test_the_h200_trace_against_the_model():
    """tests/data/trace_h200.json: 2,112 blocks of 8 warps spinning 200 us, recorded on the H200
    with `python3 main.py trace --grid 2112 --warps 8 --spin-us 200` (benchmarks/RESULTS-kernels.md)."""
    trace = load_trace(Path(__file__).parents[1] / "data" / "trace_h200.json")
    gpu = preset_for_device_name(trace.gpu, 132)
    comparison, sim = compare_trace(trace, gpu, 8)
    # The occupancy model's 8 blocks per SM is exactly what every SM reached, never more.
    assert comparison.recorded_max_blocks_per_sm == 8 == comparison.recorded_median_peak_blocks_per_sm
    assert comparison.recorded_sms_used == 132
    # Replaying the recorded order puts the first wave exactly where the hardware did.
    assert comparison.same_sm_first_wave == 1.0
    # With the measured dispatch ramp, the simulated makespan is within 15% of the recorded one.
    assert 0.85 < comparison.simulated_makespan_us / comparison.recorded_makespan_us <= 1.0
    assert 0 < comparison.dispatch_interval_us < 0.1


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

