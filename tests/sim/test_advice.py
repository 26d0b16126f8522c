"""Each verdict appears when its condition holds and stays away when it does not."""

import pytest

from sim.model.advice import BandwidthOutlook, findings
from sim.rules.devices import preset
from sim.rules.geometry import launch_geometry
from sim.rules.occupancy import occupancy


def verdicts(gpu_name, elements, threads, regs=0, smem=0, bandwidth=None):
    gpu = preset(gpu_name)
    occ = occupancy(gpu, threads, regs, smem)
    geo = launch_geometry(gpu, elements, threads, occ)
    return {f.key: f for f in findings(gpu, occ, geo, bandwidth)}


def test_grid_below_one_wave_on_a_b200():
    """The issue's case: 40 blocks on a 148-SM B200 showed '100% occupancy' and no warning."""
    found = verdicts("B200", 40 * 256, 256)
    f = found["below-one-wave"]
    assert "only 40 of 148 SMs" in f.detail and "1,184 blocks" in f.detail  # 148 x 8
    assert f.impact == pytest.approx(1 - 40 / 1184)
    assert "below-one-wave" not in verdicts("B200", 1184 * 256, 256)


def test_tail_appears_for_a_badly_quantized_grid_only():
    gpu = preset("H200")  # 8 blocks/SM at 256 threads: 1,056 blocks per wave
    just_over = verdicts("H200", 1057 * 256, 256)["tail"]
    assert just_over.impact == pytest.approx((1 - 1 / 1056) / 2)
    assert "1 full wave, 1 block runs while" in just_over.detail
    assert "tail" not in verdicts("H200", 2 * 1056 * 256, 256)  # whole waves
    assert "tail" not in verdicts("H200", int(3.95 * 1056) * 256, 256)  # 1% idle: not worth it
    assert gpu.sm_count == 132


def test_idle_lanes_from_a_block_that_is_not_whole_warps():
    f = verdicts("H200", 10**6, 250)["idle-lanes"]
    assert f.title.startswith("6 idle lanes") and "256" in f.action
    assert "idle-lanes" not in verdicts("H200", 10**6, 256)


def test_register_limit_names_the_value_that_lifts_it():
    gpu = preset("T4")
    f = verdicts("T4", 10**7, 256, regs=72)["registers"]
    before = occupancy(gpu, 256, 72).blocks_per_sm
    lifted = int(f.detail.split("at most ")[1].split(" registers")[0])
    assert occupancy(gpu, 256, lifted).blocks_per_sm == before + 1
    assert occupancy(gpu, 256, lifted + 1).blocks_per_sm == before  # the largest such value
    assert "registers" not in verdicts("T4", 10**7, 256, regs=32)


def test_shared_memory_limit_names_the_value_that_lifts_it():
    gpu = preset("H200")
    f = verdicts("H200", 10**7, 256, smem=100 * 1024)["shared-memory"]
    lifted = int(f.detail.split("at most ")[1].split(" B")[0].replace(",", ""))
    assert occupancy(gpu, 256, 0, lifted).blocks_per_sm == occupancy(gpu, 256, 0, 100 * 1024).blocks_per_sm + 1
    assert "shared-memory" not in verdicts("H200", 10**7, 256, smem=4096)


def test_too_few_bytes_in_flight():
    starved = BandwidthOutlook(predicted_gbps=2800, ceiling_gbps=4300, bytes_in_flight_per_sm=16384,
                               bytes_needed_per_sm=26000)
    f = verdicts("H200", 2**26, 256, bandwidth=starved)["bytes-in-flight"]
    assert "16.0 KiB of loads in flight" in f.detail and f.impact == pytest.approx(1 - 2800 / 4300)
    fed = BandwidthOutlook(4200, 4300, 65536, 26000)
    assert "bytes-in-flight" not in verdicts("H200", 2**26, 256, bandwidth=fed)


def test_a_launch_that_cannot_run_says_only_that():
    gpu = preset("H200")
    occ = occupancy(gpu, 1024, 255)  # 255 regs x 1024 threads > 64K registers per block
    found = findings(gpu, occ, launch_geometry(gpu, 10**6, 1024, occ))
    assert [f.key for f in found] == ["cannot-launch"]


def test_biggest_waste_first_and_a_clean_launch_has_none():
    keys = list(verdicts("H200", 100 * 250, 250))
    assert keys[0] == "below-one-wave" and "idle-lanes" in keys
    assert verdicts("H200", 2 * 1056 * 256, 256) == {}


# -- verdicts from the loaded latency model (sim.model.latency via launch_findings) ---------------------
from sim.model.advice import bandwidth_outlook, launch_findings  # noqa: E402
from sim.model.latency import predict_loaded  # noqa: E402
from sim.model.launch_model import achievable_gbps, block_trip_of  # noqa: E402


def launch_verdicts(gpu_name, elements, threads, elements_per_block=None, bytes_moved=None,
                    ceiling=None):
    gpu = preset(gpu_name)
    occ = occupancy(gpu, threads)
    blocks = None if elements_per_block is None else -(-elements // elements_per_block)
    geo = launch_geometry(gpu, elements, threads, occ, blocks=blocks,
                          elements_per_block=elements_per_block)
    found = launch_findings(gpu, occ, geo, bytes_moved=bytes_moved, ceiling_gbps=ceiling)
    trip, _ = block_trip_of(geo, bytes_moved)
    return {f.key: f for f in found}, predict_loaded(gpu, occ.blocks_per_sm, trip,
                                                     grid_blocks=geo.blocks,
                                                     ceiling_gbps=ceiling or achievable_gbps(gpu))


def test_the_naive_add_is_latency_bound_and_the_fast_one_is_not():
    """The article's one-element-per-thread add: 16 KiB of loads per SM at best, too few for a
    ~560 ns loaded round trip; four elements per thread carry four times as much."""
    naive, p = launch_verdicts("H200", 2**26, 256, ceiling=4129)
    f = naive["bytes-in-flight"]
    assert p.bound == "latency" and f.impact == pytest.approx(1 - p.steady_gbps / 4129)
    assert "16.0 KiB when every resident warp waits" in f.detail
    assert f"{p.average_bytes_in_flight_per_sm / 1024:.1f} KiB of loads" in f.detail
    assert p.average_bytes_in_flight_per_sm < p.bytes_needed_at_loaded_latency_per_sm
    fast, q = launch_verdicts("H200", 2**26, 256, elements_per_block=1024, ceiling=4129)
    assert "bytes-in-flight" not in fast and q.bound == "bandwidth"


def test_block_dispatch_verdict_for_one_warp_blocks_only():
    tiny, p = launch_verdicts("H200", 2**26, 32)
    f = tiny["block-dispatch"]
    assert p.bound == "block dispatch" and f"busy {p.dispatcher_busy:.0%}" in f.detail
    assert "78 ns" in f.detail  # the H200 dispatch profile's per-SM start interval
    assert "block-dispatch" not in launch_verdicts("H200", 2**26, 256)[0]


def test_no_latency_verdict_for_a_grid_below_one_wave():
    """40 blocks on a B200: the grid is the cause; 'keep more warps resident' would mislead."""
    found, p = launch_verdicts("B200", 40 * 256, 256)
    assert p.bound == "latency" and p.steady_gbps < 0.1 * p.ceiling_gbps
    assert "below-one-wave" in found and "bytes-in-flight" not in found
    assert "theoretical" in found["below-one-wave"].detail


def test_outlook_carries_the_prediction_and_its_basis():
    _, p = launch_verdicts("H200", 2**26, 256)
    b = bandwidth_outlook(p, "assumed: the article's add")
    assert (b.predicted_gbps, b.bound, b.peak_bytes_in_flight_per_sm) == (p.steady_gbps, p.bound, 16384)
    assert b.round_trip_ns == pytest.approx(p.latency_ns + p.memory_ns)
    found = findings(preset("H200"), occupancy(preset("H200"), 256),
                     launch_geometry(preset("H200"), 2**26, 256), b)
    assert "Traffic: assumed: the article's add." in {f.key: f for f in found}["bytes-in-flight"].detail


def test_register_verdict_says_theoretical():
    assert "theoretical" in verdicts("T4", 10**7, 256, regs=72)["registers"].title


def test_a_compute_bound_launch_gets_no_bytes_in_flight_advice():
    """A matmul's time is its tiles' FLOPs: the launch that is latency-bound as a stream (the naive
    add's geometry) gets no "more loads in flight" finding once it is said to be compute-bound, and
    `explain` says nothing about loads for matmul_auto's pick."""
    gpu = preset("H200")
    occ = occupancy(gpu, 256)
    geo = launch_geometry(gpu, 2**26, 256, occ)
    as_stream = {f.key for f in launch_findings(gpu, occ, geo, ceiling_gbps=4129)}
    as_compute = {f.key for f in launch_findings(gpu, occ, geo, ceiling_gbps=4129, memory_bound=False)}
    assert "bytes-in-flight" in as_stream and "bytes-in-flight" not in as_compute
    assert as_compute == as_stream - {"bytes-in-flight", "block-dispatch"}
