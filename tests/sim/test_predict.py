"""The scheduler's bandwidth prediction against what the H200 measured.

Truth: benchmarks/gpu_blocks_h200.json (block-size sweep) and benchmarks/gpu_bench_h200.json (size
sweep), both measured on the lent H200 on 2026-11-29 with the commands in benchmarks/RESULTS.md.
The model's three constants were fitted to the naive add at 2^26 only; every other row is a check.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from sim.devices import preset
from sim.predict import predict_bandwidth

BENCH = Path(__file__).parents[2] / "benchmarks"


def _rows(name):
    data = json.loads((BENCH / name).read_text())
    return data["copy_ceiling_gbps"], [m for m in data["measurements"]
                                       if m.get("blocks_per_sm") and m["is_gpu_timing"]]


def _ratio(m, ceiling):
    p = predict_bandwidth(preset("H200"), m["grid_blocks"], m["blocks_per_sm"], m["bytes_moved"], ceiling)
    return p.bandwidth_gbps / m["bandwidth_gbps"], p


@pytest.mark.parametrize("kernel", ["add_numba_naive", "add_numba", "add_triton"])
def test_block_size_sweep_is_predicted(kernel):
    ceiling, rows = _rows("gpu_blocks_h200.json")
    ratios = [_ratio(m, ceiling)[0] for m in rows if m["kernel"] == kernel and m["elements"] >= 2**24]
    assert len(ratios) >= 16
    assert 0.93 < np.median(ratios) < 1.07
    assert all(0.8 < r < 1.25 for r in ratios), ratios


def test_what_bounds_each_launch():
    ceiling, rows = _rows("gpu_blocks_h200.json")
    bound = {(m["kernel"], m["block_size"]): _ratio(m, ceiling)[1].bound
             for m in rows if m["elements"] == 2**26}
    assert bound[("add_numba_naive", 32)] == "block dispatch"  # 2M blocks of one warp
    assert bound[("add_numba_naive", 256)] == "latency"  # one element per thread in flight
    assert bound[("add_numba", 256)] == "bandwidth"  # four elements per thread: DRAM-bound


def test_size_sweep_of_the_add_kernels():
    ceiling, rows = _rows("gpu_bench_h200.json")
    ratios = [_ratio(m, ceiling)[0] for m in rows
              if m["kernel"] in ("add_numba_naive", "add_numba", "add_triton", "add_triton_tutorial")]
    assert len(ratios) >= 16 and all(0.85 < r < 1.15 for r in ratios), ratios


def test_extrapolated_long_grid_matches_the_full_simulation():
    gpu = preset("H200")
    full = predict_bandwidth(gpu, 200_000, 8, 200_000 * 3072.0, 4180, max_waves=10_000)
    quick = predict_bandwidth(gpu, 200_000, 8, 200_000 * 3072.0, 4180)
    assert quick.simulated_blocks < full.simulated_blocks == 200_000
    assert quick.time_us == pytest.approx(full.time_us, rel=0.01)


@pytest.mark.parametrize("args", [(0, 8, 1.0), (10, 0, 1.0), (10, 8, 0.0)])
def test_nonsense_is_refused(args):
    with pytest.raises(ValueError):
        predict_bandwidth(preset("H200"), *args)
