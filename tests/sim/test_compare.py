"""Recorded vs simulated schedules: a trace made by the simulator itself must compare as identical."""

import numpy as np
import pytest

from sim.compare import RecordedPlacement, compare_trace, placement_from_trace
from sim.devices import preset, preset_for_device_name
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
    assert list(learned.sm_ids) == TpcSpreadPlacement().sm_order(gpu)
    assert sorted(RecordedPlacement((3, 1)).slot_order(gpu, 1).tolist()) == list(range(40))


def test_trace_file_round_trip(tmp_path):
    gpu = preset("H200")
    sim = simulate(gpu, 500, 8)
    path = tmp_path / "t.json"
    save_trace(path, source="simulated", gpu=gpu.name, records=sim.trace_records(), meta={"x": 1})
    trace = load_trace(path)
    assert (trace.sm == sim.block_sm).all() and trace.meta == {"x": 1}
    assert np.allclose(trace.end_us, sim.block_end_us, atol=1e-3)
    assert not list(tmp_path.glob(".tmp-*"))  # nothing half-written left behind


@pytest.mark.parametrize("name,sms,expected", [
    ("NVIDIA H200", 132, "H200"), ("NVIDIA A100-SXM4-80GB", 108, "A100 80GB"),
    ("NVIDIA H100 80GB HBM3", 132, "H100 SXM"), ("NVIDIA H100 PCIe", 114, "H100 PCIe"),
    ("Tesla T4", 40, "T4"), ("NVIDIA GeForce GTX 1080", 20, None),
])
def test_driver_names_map_to_presets(name, sms, expected):
    spec = preset_for_device_name(name, sms)
    assert (spec.name if spec else None) == expected
