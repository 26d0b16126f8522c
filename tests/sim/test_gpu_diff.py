"""The same launch on two GPUs: each difference is named when it exists, and only then."""

import numpy as np
import pytest

from sim.rules.devices import preset
from sim.model.gpu_diff import differences, launch_on


def diff(g1, g2, elements, threads, regs=0, smem=0, **kw):
    a = launch_on(preset(g1), elements, threads, regs, smem, **kw)
    b = launch_on(preset(g2), elements, threads, regs, smem, **kw)
    return a, b, {d.key: d.text for d in differences(a, b)}


def test_blocks_per_sm_differ():
    # 32 registers x 256 threads: the T4's 32 warp slots hold 4 blocks, the H200's 64 hold 8
    # (where registers run out at the same 64K on both)
    _, _, found = diff("T4", "H200", 2**24, 256, regs=32)
    assert found["occupancy"] == ("The T4 is warp-limited at 4 blocks/SM (100% theoretical); the "
                                  "H200 fits 8 (warp and register-limited, 100%).")


def test_same_blocks_different_share_of_the_sm():
    a, b, found = diff("T4", "H200", 2**24, 256, regs=72)
    assert a.occ.blocks_per_sm == b.occ.blocks_per_sm == 3
    assert found["occupancy"] == ("Both are register-limited at 3 blocks/SM (24 warps): 75% of the "
                                  "T4's 32 warp slots, 38% of the H200's 64 (theoretical).")


def test_identical_sides_have_nothing_to_say():
    assert diff("H200", "H200", 2**26, 256)[2] == {}


def test_waves_and_predicted_time():
    a, b, found = diff("T4", "H200", 2**24, 256, regs=72)
    assert "546.13 waves of 120 on the T4 (40 SMs x 3)" in found["waves"]
    assert "165.49 waves of 396 on the H200" in found["waves"]
    ratio = a.time_us / b.time_us
    assert ratio > 2 and f"the H200 is {ratio:,.1f}x faster" in found["time"]
    assert b.time_us == pytest.approx(2**24 * 12 / b.prediction.bandwidth_gbps / 1e3)


def test_tail_named_only_where_it_idles_a_share_worth_a_verdict():
    # 2,114 blocks: 2 blocks into a third wave on an H100 (1,056 per wave): a third of the time idle
    _, _, found = diff("A100 80GB", "H100 SXM", 2114 * 256, 256)
    assert found["tail"].startswith("The last wave holds 2 of 1,056 blocks on the H100 SXM")
    # many waves: the last one's emptiness is spread thin on both
    assert "tail" not in diff("T4", "H200", 2**24, 256, regs=72)[2]


def test_a_launch_that_fits_one_gpu_only():
    # 100 KiB of shared memory per block: fine on an H200 (227 KiB), not on a T4 (64 KiB)
    _, _, found = diff("T4", "H200", 2**20, 256, smem=100 * 1024)
    assert list(found) == ["launch"] and found["launch"].startswith("The launch does not fit the T4")


def test_first_wave_is_dealt_round_the_sms():
    a = launch_on(preset("B200"), 40 * 256, 256)
    per_sm = a.first_wave_blocks_per_sm()
    assert per_sm.sum() == 40 and per_sm.max() == 1 and np.count_nonzero(per_sm) == 40
    full = launch_on(preset("H200"), 2**26, 256).first_wave_blocks_per_sm()
    assert full.size == 132 and np.all(full == 8)
