"""Each verdict appears when its condition holds and stays away when it does not."""

import pytest

from sim.advice import BandwidthOutlook, findings
from sim.devices import preset
from sim.geometry import launch_geometry
from sim.occupancy import occupancy


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
    assert "16.0 KiB in flight" in f.detail and f.impact == pytest.approx(1 - 2800 / 4300)
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
