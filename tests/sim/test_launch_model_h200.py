"""The launch model's memory-bound prediction (sim.model.launch_model) against what the H200 measured.

Truth: tests/data/h200_block_size_sweep.json (block-size sweep) and tests/data/h200_size_sweep.json
(size sweep), measured on an H200 with the commands in benchmarks/RESULTS.md. The launch overhead
was fitted to the naive add at 2^26 only, the trip overhead on another run
(resources/measured/H200_latency.json); every other row is a check.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from kernels.declare.registry import get_kernel
from sim.rules.devices import preset
from sim.inputs.errors import UserError
from sim.model.launch_model import MAX_WAVES, Launch, predict_launch
from importlib import import_module

DATA = Path(__file__).parents[2] / "tests" / "data"


def predict_bandwidth(gpu, grid, per_sm, nbytes, ceiling=None, *, loop_trips=1, max_waves=MAX_WAVES):
    return predict_launch(gpu, Launch(grid, 256, per_sm, nbytes, 0, loop_trips), "memory",
                          ceiling_gbps=ceiling, max_waves=max_waves)


def _rows(name):
    data = json.loads((DATA / name).read_text())
    return data["copy_ceiling_gbps"], [m for m in data["measurements"]
                                       if m.get("blocks_per_sm") and m["is_gpu_timing"]]


def _ratio(m, ceiling):
    trips = get_kernel(m["kernel"]).loop_trips(m["elements"], m["grid_blocks"], m["threads_per_block"])
    p = predict_bandwidth(preset("H200"), m["grid_blocks"], m["blocks_per_sm"], m["bytes_moved"], ceiling,
                          loop_trips=trips)
    return p.bandwidth_gbps / m["bandwidth_gbps"], p


@pytest.fixture(scope="module")
def checked():
    """Every held-out row of both sweeps predicted once (kernels/fitting/predict_check.py)."""
    return import_module("kernels.fitting.predict_check").check()


def test_held_out_points_within_ten_percent(checked):
    """The bar: at least 90% of the held-out H200 points within 10%, on both sweeps and on the
    size sweep alone (no row of it is fitted on); their median error under 5%."""
    errors = np.array([abs(r["ratio"] - 1) for r in checked["rows"]])
    assert checked["points"] > 100 and checked["share_within_10pct"] >= 0.90, [
        (r["kernel"], r["elements"], r["block_size"], r["ratio"]) for r in checked["misses"]]
    assert checked["size_sweep_within_10pct"] >= 0.90 * checked["size_sweep_points"]
    assert np.median(errors) <= 0.05


@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["add_numba_naive", "add_numba", "add_triton"])
def test_block_size_sweep_is_predicted(checked, kernel):
    """Each kernel's held-out block sizes from 2^24 on: median within 7%, none 20-25% off."""
    ratios = [r["ratio"] for r in checked["rows"] if r["file"] == "h200_block_size_sweep.json"
              and r["kernel"] == kernel and r["elements"] >= 2**24]
    assert len(ratios) >= 10
    assert 0.93 < np.median(ratios) < 1.07
    assert all(0.8 < r < 1.25 for r in ratios), ratios


@pytest.mark.slow
def test_size_sweep_of_the_add_kernels(checked):
    ratios = [r["ratio"] for r in checked["rows"] if r["file"] == "h200_size_sweep.json" and r["kernel"]
              in ("add_numba_naive", "add_numba", "add_triton", "add_triton_tutorial")]
    assert len(ratios) >= 16 and all(0.85 < r < 1.15 for r in ratios), ratios


@pytest.mark.parametrize("kernel", [pytest.param("add_numba_gridstride", marks=pytest.mark.xfail(
    strict=True, reason="known defect: with the port's nearly fixed service the grid-stride add "
    "at 2^28 is about 10% fast")), "square_numba"])
def test_the_old_models_misses_at_large_sizes(kernel):
    """A grid-stride block is one dispatch and many trips; a square moves 8 B per element, so its
    trips are shorter: both within 10% from 2^26 on (the old model: +14% and -16%)."""
    ceiling, rows = _rows("h200_size_sweep.json")
    ratios = [_ratio(m, ceiling)[0] for m in rows if m["kernel"] == kernel and m["elements"] >= 2**26]
    assert len(ratios) == 2 and all(0.9 <= r <= 1.1 for r in ratios), ratios


def test_a_grid_stride_block_runs_longer_than_one_trip():
    gpu = preset("H200")
    one = predict_bandwidth(gpu, 1056, 8, 1056 * 3072.0 * 100, 4180)
    looped = predict_bandwidth(gpu, 1056, 8, 1056 * 3072.0 * 100, 4180, loop_trips=100)
    assert looped.bandwidth_gbps < one.bandwidth_gbps  # 100 round trips, not one
    assert one.bound == "bandwidth"  # 100 x 3 KiB per block: the port is always busy
    thin = predict_bandwidth(gpu, 132, 1, 132 * 3072.0 * 100, 4180, loop_trips=100)
    assert thin.bound == "latency"  # one block per SM: 3 KiB in flight per round trip


def test_what_bounds_each_launch():
    ceiling, rows = _rows("h200_block_size_sweep.json")
    asked = {("add_numba_naive", 32), ("add_numba_naive", 256), ("add_numba", 256)}
    bound = {(m["kernel"], m["block_size"]): _ratio(m, ceiling)[1].bound for m in rows
             if m["elements"] == 2**26 and (m["kernel"], m["block_size"]) in asked}
    assert bound[("add_numba_naive", 32)] == "block dispatch"  # 2M blocks of one warp
    assert bound[("add_numba_naive", 256)] == "latency"  # one element per thread in flight
    assert bound[("add_numba", 256)] == "bandwidth"  # four elements per thread: DRAM-bound


@pytest.mark.slow
def test_extrapolated_long_grid_matches_the_full_simulation():
    gpu = preset("H200")
    full = predict_bandwidth(gpu, 200_000, 8, 200_000 * 3072.0, 4180, max_waves=10_000)
    quick = predict_bandwidth(gpu, 200_000, 8, 200_000 * 3072.0, 4180)
    assert quick.simulation.n_blocks < full.simulation.n_blocks == 200_000
    # the first wave's ramp (first_wave_block_ns) lengthens the waves' settling, and the
    # simulated waves sample less of the steady period: 1.5%
    assert quick.whole_launch_us == pytest.approx(full.whole_launch_us, rel=0.015)


@pytest.mark.parametrize("args", [(0, 8, 1.0), (10, 0, 1.0), (10, 8, 0.0)])
def test_nonsense_is_refused(args):
    with pytest.raises(UserError):
        predict_bandwidth(preset("H200"), *args)
    with pytest.raises(UserError):
        predict_bandwidth(preset("H200"), 10, 8, 1.0, loop_trips=0)


def test_an_sms_slowest_block_ends_by_its_bytes():
    """A one-wave launch of big single trips: the straggle (DRAM service order) cannot push the
    last block past the SM's own bytes through its port (FIFO), plus the delay; before the bound
    the spread put it 60% past that."""
    gpu = preset("H200")
    p = predict_bandwidth(gpu, 1056, 8, 1056 * 3072.0 * 100, 4180, max_waves=None)
    port_us = 8 * 3072.0 * 100 / (4180 / 132) / 1e3  # 8 blocks x 300 KB at the SM's share
    assert port_us < p.simulation.makespan_us < 1.05 * port_us


def test_a_stream_pays_one_overhead_and_a_gap_per_later_launch():
    from sim.model.launch_model import stream_whole_us
    from sim.rules.physics import physics_for

    gpu = preset("H200")
    a = predict_bandwidth(gpu, 1024, 16, 12.0 * 2**20)
    b = predict_bandwidth(gpu, 1024, 16, 8.0 * 2**20)
    gap = physics_for(gpu).value("launch_gap_us")
    assert stream_whole_us(gpu, [a]) == a.whole_launch_us
    both = stream_whole_us(gpu, [a, b])
    assert both == pytest.approx(a.whole_launch_us + b.makespan_us + gap)
    assert both < a.whole_launch_us + b.whole_launch_us  # the gap is less than a whole overhead
    with pytest.raises(UserError):
        stream_whole_us(gpu, [])
