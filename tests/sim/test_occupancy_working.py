"""The occupancy working ends where the answer does, on every preset across the driver's cases.

tests/data/occupancy_h200.json holds the CUDA driver's own answers (cuOccupancyMaxActiveBlocksPerMultiprocessor
on a real H200) for 68k launches; on the H200 the working's conclusion must equal the driver, and on
every preset each limiter's last step must equal the blocks that limiter allows.
"""

import json
from pathlib import Path

import pytest

from sim.rules.devices import preset, presets
from sim.rules.occupancy import occupancy
from sim.rules.occupancy_working import block_limit_rows, working

CASES = json.loads((Path(__file__).parents[1] / "data" / "occupancy_h200.json").read_text())["cases"]


def _launches():
    return sorted({(t, r, s + d, None if c < 0 else c) for t, r, s, d, c, _ in CASES},
                  key=lambda k: (k[0], k[1], k[2], -1 if k[3] is None else k[3]))


@pytest.mark.slow
def test_the_working_concludes_the_drivers_answer_on_the_h200():
    gpu = preset("H200")
    wrong = []
    for threads, regs, static, dynamic, carveout, driver in CASES:
        occ = occupancy(gpu, threads, regs, static + dynamic, None if carveout < 0 else carveout)
        work = working(gpu, occ)
        if work.blocks_per_sm != max(driver, 0) or work.active_warps_per_sm != occ.active_warps_per_sm \
                or _disagreement(work, occ):
            wrong.append((threads, regs, static, dynamic, carveout, driver, work.blocks_per_sm))
    assert not wrong, f"{len(wrong)} cases differ, first: {wrong[:5]}"


def _disagreement(work, occ) -> bool:
    """Any limiter whose working ends elsewhere than its answer, or binds differently."""
    got = {lw.limiter: lw.blocks for lw in work.limiters}
    binds = {lw.limiter for lw in work.limiters if lw.binds}
    return got != occ.limits or work.blocks_per_sm != occ.blocks_per_sm or \
        (occ.can_launch and binds != set(occ.limited_by))


@pytest.mark.parametrize("name", [n for n in presets() if n != "H200"])
@pytest.mark.slow
def test_every_limiters_working_ends_at_its_answer(name):
    gpu = preset(name)
    wrong = []
    # Every fifth of the driver's launches (the same spread of block sizes, registers, shared
    # memory and carveouts) keeps the suite quick; the H200 takes every one, above.
    for threads, regs, smem, carveout in _launches()[::5]:
        occ = occupancy(gpu, threads, regs, smem, carveout)
        if _disagreement(working(gpu, occ), occ):
            wrong.append((threads, regs, smem, carveout, occ.limits))
    assert not wrong, f"{len(wrong)} cases differ on {name}, first: {wrong[:3]}"


def test_the_calculators_worked_example_in_the_users_numbers():
    """matmul_tiled on the H200: 214 registers and 147,456 B of shared memory, 256 threads.
    By hand: 214 x 32 = 6,848 -> 6,912 (units of 256); 16,384 per sub-partition holds 2 such warps,
    x 4 = 8 warps = 1 block of 8; 147,456 + 1,024 = 148,480 B into a 228 KiB carveout = 1 block."""
    gpu = preset("H200")
    work = working(gpu, occupancy(gpu, 256, 214, 147_456))
    regs = next(lw for lw in work.limiters if lw.limiter == "registers")
    smem = next(lw for lw in work.limiters if lw.limiter == "shared memory")
    text = " ".join(regs.steps)
    for number in ("6,848", "6,912", "55,296", "16,384", "8 warps per SM", "= 1 block"):
        assert number in text, number
    text = " ".join(smem.steps)
    for number in ("147,456 B", "1,024 B", "148,480", "228 KiB", "floor(233,472 / 148,480) = 1 block"):
        assert number in text, number
    assert work.blocks_per_sm == 1 and "12.5%" in work.conclusion
    assert dict(block_limit_rows(work)) == {"Block Limit Warps": "8", "Block Limit SM": "32",
                                           "Block Limit Registers": "1", "Block Limit Shared Mem": "1"}


def test_a_carveout_too_small_for_one_block_is_shown_raised():
    gpu = preset("H200")
    work = working(gpu, occupancy(gpu, 32, 0, 1024, carveout_percent=0))
    smem = next(lw for lw in work.limiters if lw.limiter == "shared memory")
    assert "smallest step that fits, 8 KiB" in " ".join(smem.steps) and smem.blocks == 4


@pytest.mark.parametrize("args, needle", [((2000,), "over the limit of 1,024"),
                                          ((256, 300), "over the limit of 255"),
                                          ((64, 0, 300_000), "per-block limit")])
def test_launches_that_cannot_run_say_which_step_fails(args, needle):
    gpu = preset("H200")
    work = working(gpu, occupancy(gpu, *args))
    assert work.blocks_per_sm == 0 and needle in "\n".join(work.lines())
