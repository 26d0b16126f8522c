"""Occupancy on the compute capabilities we cannot measure, against hand-worked cases from the
CUDA Programming Guide's limits and cuda_occupancy.h's rules, and properties that hold everywhere."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.rules.devices import preset, presets
from sim.rules.occupancy import LIMITERS, occupancy, sweep_registers, sweep_smem, sweep_threads


def test_article_l40s_numbers():
    occ = occupancy(preset("L40S"), 256)
    assert occ.max_warps_per_sm == 48
    assert (occ.blocks_per_sm, occ.active_warps_per_sm, occ.limited_by) == (6, 48, ("warps",))
    # The article's 50% example: a kernel whose resources allow only 24 of 48 warps.
    half = occupancy(preset("L40S"), 256, regs_per_thread=80)
    assert half.active_warps_per_sm == 24 and half.occupancy == 0.5 and half.limited_by == ("registers",)


# (gpu, threads, regs, smem bytes) -> (blocks per SM, limiters), each worked by hand:
HAND_WORKED = [
    # V100 (7.0): 64 warps, 32 blocks, smem unit 256, no reserve. 64 regs: 2048/warp ->
    # 16384/4 = 8 warps per quarter -> 32 warps -> 4 blocks of 8 warps.
    ("V100", 256, 64, 0, 4, ("registers",)),
    # 12 KiB + 0 reserve, 96 KiB per SM -> 8 blocks; warps allow 8 too.
    ("V100", 256, 0, 12 * 1024, 8, ("warps", "shared memory")),
    # T4 (7.5): 32 warps, 16 blocks; 64 threads = 2 warps -> 16 by warps and by blocks.
    ("T4", 64, 0, 0, 16, ("warps", "blocks")),
    # T4: 32 KiB/block of 64 KiB -> 2 blocks.
    ("T4", 128, 0, 32 * 1024, 2, ("shared memory",)),
    # A100 (8.0): 48 KiB + 1 KiB reserve = 50176 B; 164 KiB / 50176 = 3.
    ("A100 80GB", 128, 0, 48 * 1024, 3, ("shared memory",)),
    # A100, 255 regs: 8160 -> 8192/warp, 16384 per quarter -> 2 warps -> 8 warps/SM -> 1 block of 8.
    ("A100 40GB", 256, 255, 0, 1, ("registers",)),
    # RTX 3090 (8.6): 16 blocks max, 48 warps; 32-thread blocks -> 16 by blocks.
    ("RTX 3090", 32, 0, 0, 16, ("blocks",)),
    # RTX 4090 (8.9): 24 blocks max; 64-thread blocks -> 24 by warps and blocks.
    ("RTX 4090", 64, 0, 0, 24, ("warps", "blocks")),
    # H100 (9.0): 1024 threads, 33 regs: 1056 -> 1280/warp x 32 warps = 40960 <= 65536;
    # per quarter 16384 / 1280 = 12 warps -> 48 per SM -> 1 block.
    ("H100 SXM", 1024, 33, 0, 1, ("registers",)),
    # B200 (10.0): 227 KiB opt-in: exactly the maximum -> 1 block.
    ("B200", 128, 0, 232448, 1, ("shared memory",)),
    # RTX 5090 (12.0): 48 warps, 24 blocks; 99 KiB opt-in + 1 KiB = 100 KiB -> 1.
    ("RTX 5090", 128, 0, 101376, 1, ("shared memory",)),
    ("RTX 5090", 32, 0, 0, 24, ("blocks",)),
]


@pytest.mark.parametrize("gpu,threads,regs,smem,blocks,limiters", HAND_WORKED)
def test_hand_worked(gpu, threads, regs, smem, blocks, limiters):
    occ = occupancy(preset(gpu), threads, regs, smem)
    assert occ.blocks_per_sm == blocks
    assert occ.limited_by == limiters


@pytest.mark.parametrize("args,needle", [
    ((2000,), "1024"),
    ((256, 300), "255"),
    ((256, 0, 300_000), "opt-in"),
    ((1024, 65), "registers"),  # fits per thread, not per block
])
def test_launches_that_cannot_run(args, needle):
    occ = occupancy(preset("H200"), *args)
    assert occ.blocks_per_sm == 0 and not occ.can_launch and needle in occ.reason


@pytest.mark.parametrize("args", [(0,), (-32,), (256, -1), (256, 0, -1), (256, 0, 0, 101), (256.0,), (True,)])
def test_nonsense_raises_value_error(args):
    with pytest.raises(ValueError):
        occupancy(preset("H200"), *args)


def test_small_carveout_is_overridden_for_a_block_that_needs_more():
    # 0% preference, a block needing 1 KiB + 1 KiB reserve: the driver picks the 8 KiB step -> 4.
    assert occupancy(preset("H200"), 32, 0, 1024, carveout_percent=0).blocks_per_sm == 4


gpus = st.sampled_from(presets())


@settings(max_examples=300, deadline=None)
@given(gpu=gpus, threads=st.integers(1, 1024), regs=st.integers(0, 255),
       smem=st.integers(0, 240_000), carveout=st.one_of(st.none(), st.integers(0, 100)))
def test_never_exceeds_a_hardware_limit(gpu, threads, regs, smem, carveout):
    spec = preset(gpu)
    occ = occupancy(spec, threads, regs, smem, carveout)
    assert 0 <= occ.blocks_per_sm <= spec.max_blocks_per_sm
    assert occ.active_warps_per_sm <= spec.max_warps_per_sm
    assert 0.0 <= occ.occupancy <= 1.0
    assert occ.blocks_per_sm * occ.regs_allocated_per_block <= spec.regs_per_sm
    assert occ.blocks_per_sm * occ.smem_allocated_per_block_bytes <= spec.smem_per_sm_bytes
    assert set(occ.limits) == set(LIMITERS)
    if occ.can_launch:
        assert occ.limited_by and all(occ.limits[n] == occ.blocks_per_sm for n in occ.limited_by)


@settings(max_examples=300, deadline=None)
@given(gpu=gpus, threads=st.integers(1, 1024), regs=st.integers(0, 254), extra_regs=st.integers(1, 60),
       smem=st.integers(0, 200_000), extra_smem=st.integers(1, 60_000),
       carveout=st.one_of(st.none(), st.integers(0, 100)))
def test_more_registers_or_shared_memory_never_helps(gpu, threads, regs, extra_regs, smem, extra_smem, carveout):
    spec = preset(gpu)
    base = occupancy(spec, threads, regs, smem, carveout).blocks_per_sm
    assert occupancy(spec, threads, min(regs + extra_regs, 255), smem, carveout).blocks_per_sm <= base
    assert occupancy(spec, threads, regs, smem + extra_smem, carveout).blocks_per_sm <= base


def test_sweeps_mark_the_calculator_shapes():
    gpu = preset("H200")
    xs, warps = sweep_threads(gpu, regs_per_thread=32)
    assert xs[0] == 32 and xs[-1] == 1024 and warps.max() == 64
    xs, warps = sweep_registers(gpu, 256)
    assert warps[32] == 64 and warps[64] == 32 and warps[255] == 8
    assert all(a >= b for a, b in zip(warps, warps[1:]))
    xs, warps = sweep_smem(gpu, 256)
    assert warps[0] == 64 and warps[-1] == 8
    assert all(a >= b for a, b in zip(warps, warps[1:]))
