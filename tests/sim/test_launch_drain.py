"""The launch model's drain (sim.model.drain): after the last block starts, no SM's block ends
later than that SM's bytes still to move allow (benchmarks/NOTES-fit.md, fourth pass)."""

import numpy as np
import pytest

from sim.model.launch_model import Launch, TripCost, predict_launch
from sim.rules.devices import preset
from tests.bench_scripts import bench_script

N = 2**26  # the next-step pairs' size (benchmarks/run_i, run_l)


def add_launch(threads, per_sm, elements_per_block):
    return Launch(N // elements_per_block, threads, per_sm, 12.0 * N, N)


def test_a_late_big_block_ends_with_its_sms_bytes_not_its_full_life():
    """add_triton BLOCK_SIZE 4096 num_warps 4 (48 KB blocks, 9 per SM, 13.8 waves): a block that
    starts last no longer waits behind neighbours that are not refilled. Measured 2026-12-02 in
    this checkout: after the last start the launch ran 14.4 us with block times fixed at their
    start, 11.4 us with the drain; its block life at a full SM is 14 us."""
    gpu = preset("H200")
    launch = add_launch(128, 9, 4096)
    p = predict_launch(gpu, launch, "memory")
    tl = p.timeline
    after_last_start = tl.makespan_us - tl.last_dispatch_us
    life = TripCost.for_gpu(gpu, launch).life_us(132 * 9)
    assert after_last_start < 0.9 * life
    # no SM's last block outlasts its bytes at the SM's share plus a trip (+ the slot's hold)
    assert after_last_start < 9 * 49152 / (4180 / 132) / 1e3 + 1.0


def test_the_next_steps_block_size_pairs_change_by_less_than_the_dead_band():
    """Measured on the H200 (runs I and L): BLOCK_SIZE 1024 -> 4096 at 4 warps +1.2% / +1.5%,
    num_warps 16 -> 4 at BLOCK_SIZE 4096 +0.4% / +0.6%: both within the 2% dead band. Fixed block
    times predicted +2.1% and +2.7% (the two direction misses); the drain takes both under 2%."""
    gpu = preset("H200")
    t1024, t4096_16, t4096_4 = (predict_launch(gpu, add_launch(*a), "memory").whole_launch_us
                                for a in ((128, 16, 1024), (512, 4, 4096), (128, 9, 4096)))
    assert abs(t4096_4 / t1024 - 1) < 0.02
    assert abs(t4096_4 / t4096_16 - 1) < 0.02


@pytest.mark.parametrize("grid", [100, 1056])
def test_one_wave_keeps_the_start_time_bound(grid):
    """A grid of one wave or less has all its bytes ahead at the last start: the drain changes no
    end by more than the SM's own count (ceil vs its share) allows."""
    gpu = preset("H200")
    launch = Launch(grid, 256, 8, grid * 12288.0, grid * 1024)
    p = predict_launch(gpu, launch, "memory", max_waves=None)
    cost = TripCost.for_gpu(gpu, launch)
    assert p.simulation.makespan_us <= cost.slowest_us(grid) / (1 - 0.3 / 1.3) + 1e-9
    assert p.simulation.makespan_us > 0.8 * cost.slowest_us(grid)


def test_the_drain_moves_ends_only_earlier():
    from sim.model.drain import drain
    from sim.schedule.policies import make_placement, run_schedule

    gpu = preset("H200")
    launch = add_launch(128, 9, 4096)
    cost = TripCost.for_gpu(gpu, launch)
    sim = run_schedule(gpu, 6 * 132 * 9 + 500, 9, 4, cost, make_placement("tpc-spread"), schedule="ideal")
    drained = drain(sim, cost)
    assert np.all(drained.block_end_us <= sim.block_end_us)
    assert np.all(drained.block_end_us > drained.block_start_us)
    last = sim.block_start_us.max()
    before = sim.block_end_us <= last
    assert np.array_equal(drained.block_end_us[before], sim.block_end_us[before])
    assert drained.makespan_us < sim.makespan_us


def _fit_launch():
    """benchmarks/fit_launch.py as a module (its next-step scoring and the runs it reads)."""
    return bench_script("fit_launch")


def test_next_step_directions_on_runs_i_l_and_s():
    """Issue 21's measured next-step pairs of runs I, L and S (TEST), re-predicted: direction
    right on 13 of 13, 13 of 13 and 11 of 12. Until 2026-12-03 the pairs ending at a
    three-round tile (BLOCK_SIZE 4096 at 4 warps in I and L, 2048 at 4 warps in S;
    sim.model.load_rounds) predicted +2.2..+5.1% where the H200 measured -1.0..+1.5%: the
    drain charged every round's trip in full. A staggered SM's later rounds now wait out their
    trips while its other blocks stream (sim.model.drain); that rule was made after seeing
    these misses, so these three runs no longer test it. Run T's 12 pairs, recorded after it,
    did (benchmarks/RESULTS.md, run T): 7 of 12 directions, as without it. Still missed here:
    S's BLOCK_SIZE 512 -> 2048 at 4 warps, +3.0% predicted, +0.2% measured. Since the faster SMs'
    DRAM share (eighth session, benchmarks/NOTES-dispatch.md) two more at the 2% band's edge:
    I's BLOCK_SIZE 1024 -> 4096 at 4 warps (+2.1% predicted, +1.2% measured; +1.9% before) and
    S's num_warps 8 -> 4 at BLOCK_SIZE 2048 (+2.0%, -1.0%)."""
    fit = _fit_launch()
    runs = [fit.next_step_scores(p) for p in fit.NEXT_STEP_RUNS[:3]]
    assert [(len(r), sum(x["direction_ok"] for x in r)) for r in runs] == [(13, 12), (13, 13), (12, 10)]
    assert [x["pair"] for x in runs[2] if not x["direction_ok"]] == [
        "add_triton num_warps {'BLOCK_SIZE': 2048, 'num_warps': 8} -> {'BLOCK_SIZE': 2048, 'num_warps': 4}",
        "add_triton BLOCK_SIZE {'BLOCK_SIZE': 512, 'num_warps': 4} -> {'BLOCK_SIZE': 2048, 'num_warps': 4}"]
    held_out = fit.next_step_scores(fit.NEXT_STEP_RUNS[3])  # run T: what the rule had not seen
    assert (len(held_out), sum(x["direction_ok"] for x in held_out),
            sum(x["magnitude_ok"] for x in held_out)) == (12, 7, 12)
    rows = runs[1]
    numba = next(r for r in rows if r["pair"].startswith("add_numba threads"))
    assert abs(numba["predicted"]) < 0.02  # measured +0.7%; +14% as a loop of 4 trips


def test_run_u_tells_the_model_s_next_step_misses_from_the_measurements_noise():
    """Run U measured runs T's and S's held-out pairs twice more (15 rounds each, 2026-12-03):
    a pair the model misses in all three runs is the model's error; one whose measured direction
    changes from run to run is the measurement's (benchmarks/RESULTS.md, run U). Re-predicted
    here with each run's own copy ceiling."""
    fit = _fit_launch()
    runs = {p.name: fit.next_step_scores(p) for p in fit.NEXT_STEP_RUNS[2:]}
    t = [runs[n] for n in ("next_step_t.json", "held-out-t_1.json", "held-out-t_2.json")]
    s = [runs[n] for n in ("next_step_s.json", "held-out-s_1.json", "held-out-s_2.json")]
    # [7, 7, 8, 11, 9, 9] before the faster SMs' DRAM share (eighth session): pairs at the 2%
    # band's edge moved both ways; the pairs missed in all three runs are the same four
    assert [sum(x["direction_ok"] for x in r) for r in t + s] == [7, 7, 7, 10, 10, 8]

    def always_missed(three):
        return [a["pair"] for a, b, c in zip(*three)
                if not (a["direction_ok"] or b["direction_ok"] or c["direction_ok"])]

    assert always_missed(t) == [
        "add_triton BLOCK_SIZE {'BLOCK_SIZE': 2048, 'num_warps': 4} -> {'BLOCK_SIZE': 512, 'num_warps': 4}",
        "add_triton num_warps {'BLOCK_SIZE': 1024, 'num_warps': 8} -> {'BLOCK_SIZE': 1024, 'num_warps': 2}",
        "square_triton BLOCK_SIZE {'BLOCK_SIZE': 2048, 'num_warps': 4} -> {'BLOCK_SIZE': 512, 'num_warps': 4}"]
    assert always_missed(s) == [
        "add_triton BLOCK_SIZE {'BLOCK_SIZE': 512, 'num_warps': 4} -> {'BLOCK_SIZE': 2048, 'num_warps': 4}"]
    # the shared-memory step of run T: -16.7% and -15.1% measured, -1.3% in one run between
    smem = [r[-1]["measured"] for r in t]
    assert max(smem) > -0.02 and sorted(smem)[1] < -0.15
