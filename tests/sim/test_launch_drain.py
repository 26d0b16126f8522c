"""The launch model's drain (sim.model.drain): after the last block starts, no SM's block ends
later than that SM's bytes still to move allow; and the next step it predicts against pairs
measured on the H200 (tests/data/h200_next_step_pairs_heldout)."""

import numpy as np
import pytest

from sim.model.launch_model import Launch, TripCost, predict_launch
from sim.rules.devices import preset
from importlib import import_module

N = 2**26  # the size of most measured next-step pairs


def add_launch(threads, per_sm, elements_per_block):
    return Launch(N // elements_per_block, threads, per_sm, 12.0 * N, N)


def test_a_late_big_block_ends_with_its_sms_bytes_not_its_full_life():
    """add_triton BLOCK_SIZE 4096 num_warps 4 (48 KB blocks, 9 per SM, 13.8 waves): a block that
    starts last no longer waits behind neighbours that are not refilled: after the last start the
    launch runs for less than a block's life at a full SM (with block times fixed at their start
    it ran longer than that life)."""
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
    """kernels/fitting/launch_fit.py: its next-step scoring and the pairs it reads."""
    return import_module("kernels.fitting.launch_fit")


@pytest.mark.slow
def test_next_step_directions_and_magnitudes_on_measured_pairs():
    """Every measured pair (each launch before and after one change, interleaved in the same
    rounds): the predicted change within 10% of the measured one on at least 90% of the pairs,
    its direction right (2% dead band) on at least 65%. Measured again, a third of the pairs
    changed by less than one launch varies between rounds, so the direction bar cannot be all."""
    fit = _fit_launch()
    rows = [r for p in fit.NEXT_STEP_RUNS for r in fit.next_step_scores(p)]
    assert len(rows) >= 60
    assert np.mean([r["magnitude_ok"] for r in rows]) >= 0.90
    assert np.mean([r["direction_ok"] for r in rows]) >= 0.65


def test_a_fixed_tile_is_one_trip_whatever_its_threads():
    """add_numba takes 4 elements a thread in one trip: going from 64 to 512 threads changes
    little (measured +0.7%); read as a grid-stride loop of 4 dependent trips it was +14%."""
    fit = _fit_launch()
    rows = fit.next_step_scores(fit.NEXT_STEP_RUNS[1])
    numba = next(r for r in rows if r["pair"].startswith("add_numba threads"))
    assert abs(numba["predicted"] - numba["measured"]) < 0.02
