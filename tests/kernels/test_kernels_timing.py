"""The harness's arithmetic: quantiles, GB/s, percentages, flush size, bytes moved."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernels.bodies.reference import bytes_moved
from kernels.measure.timing import (
    FLUSH_MIN_BYTES,
    bandwidth_gbps,
    flush_bytes_for,
    percent_of,
    quantile,
    summarize,
)


def test_quantile_hand_computed():
    # 5 values: positions q*(n-1) = 0.8, 2.0, 3.2 for q = 0.2, 0.5, 0.8
    v = [10.0, 50.0, 20.0, 40.0, 30.0]  # sorted: 10 20 30 40 50
    assert quantile(v, 0.2) == pytest.approx(10 + 0.8 * 10)  # 18
    assert quantile(v, 0.5) == 30.0
    assert quantile(v, 0.8) == pytest.approx(40 + 0.2 * 10)  # 42
    assert quantile(v, 0.0) == 10.0 and quantile(v, 1.0) == 50.0
    assert summarize([4.0, 1.0, 3.0, 2.0]) == (2.5, pytest.approx(1.6), pytest.approx(3.4))


def test_quantile_single_value_and_errors():
    assert quantile([7.0], 0.2) == 7.0
    with pytest.raises(ValueError):
        quantile([], 0.5)
    with pytest.raises(ValueError):
        quantile([1.0], 1.5)


@given(st.lists(st.floats(0.001, 1e3), min_size=1, max_size=60), st.floats(0, 1))
def test_quantile_matches_numpy_linear(values, q):
    assert quantile(values, q) == pytest.approx(float(np.quantile(values, q)), rel=1e-12)


def test_bandwidth_hand_computed():
    # vector add of 2^20 float32: 3 arrays x 4 MiB = 12,582,912 bytes in 0.01 ms
    assert bytes_moved(3, 1 << 20, 4) == 12_582_912
    assert bandwidth_gbps(12_582_912, 0.01) == pytest.approx(1258.2912)
    # the article's L40S row: 1,048,576 elements, 0.0205 ms -> 614 GB/s
    assert bandwidth_gbps(bytes_moved(3, 1_048_576), 0.0205) == pytest.approx(613.8, abs=0.1)
    with pytest.raises(ValueError):
        bandwidth_gbps(100, 0.0)


def test_bytes_moved_rejects_nonsense():
    with pytest.raises(ValueError):
        bytes_moved(3, -1)
    with pytest.raises(ValueError):
        bytes_moved(3, 10, 0)


def test_percent_and_flush_size():
    assert percent_of(4300.0, 4237.0) == pytest.approx(101.487, abs=1e-3)
    assert percent_of(None, 1.0) is None and percent_of(1.0, None) is None
    assert FLUSH_MIN_BYTES == 256 * 2**20
    assert flush_bytes_for(62_914_560) == 256 * 2**20  # H200: 60 MiB L2, do_bench's buffer wins
    assert flush_bytes_for(200 * 2**20) == 400 * 2**20  # a bigger L2: twice its size
    assert flush_bytes_for(None) == 256 * 2**20


def test_a_measurement_orders_its_percentiles_and_inverts_them_for_bandwidth(monkeypatch):
    """measure() with known run times: p20 < median < p80 in ms, and the 20th percentile of
    bandwidth comes from the slow (80th percentile) time."""
    from kernels.measure import harness
    from kernels.declare.registry import get_kernel

    times = [5.0, 1.0, 3.0]  # sorted 1, 3, 5: p20 = 1.8, median 3, p80 = 4.2 (linear)
    monkeypatch.setattr(harness, "time_host", lambda *a, **k: list(times))
    monkeypatch.setattr(harness, "time_gpu", lambda *a, **k: list(times))
    m = harness.measure(get_kernel("add_torch"), 1000, check=False)
    assert (m.p20_ms, m.median_ms, m.p80_ms) == (pytest.approx(1.8), 3.0, pytest.approx(4.2))
    assert m.bytes_moved == 12_000
    assert m.bandwidth_gbps == pytest.approx(bandwidth_gbps(12_000, 3.0))
    assert m.bandwidth_p20_gbps == pytest.approx(bandwidth_gbps(12_000, 4.2))
    assert m.bandwidth_p80_gbps == pytest.approx(bandwidth_gbps(12_000, 1.8))
    assert m.bandwidth_p20_gbps < m.bandwidth_gbps < m.bandwidth_p80_gbps


def test_timing_modes_are_named_and_described():
    from kernels.measure.timing import AHEAD, gpu_method, time_gpu

    assert AHEAD == ("flush", "flush_only", "spin", "none")
    with pytest.raises(ValueError, match="ahead"):
        time_gpu(lambda: None, ahead="bogus")
    assert "L2 evicted" in gpu_method("flush", 100, 256 * 2**20)
    assert "do_bench" in gpu_method("flush_only", 100, 256 * 2**20)
    assert "NO L2 flush" in gpu_method("spin", 100, 0)
    assert "launch gap" in gpu_method("none", 100, 0)
