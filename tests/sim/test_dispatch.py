"""The dispatch model's engine (sim/schedule/dispatch.py) against independent truths: the textbook block
scheduler where the model has nothing to hold back, its own rules in cases small enough to work
out by hand, and the recorded H200 traces it was built from."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from sim.rules.devices import preset
from sim.schedule.dispatch import dispatch_schedule
from sim.schedule.dispatch_profile import builtin_profile
from sim.inputs.errors import UserError
from sim.schedule.scheduler import SmOrderPlacement, TpcSpreadPlacement, UniformCost, simulate
from sim.traces.schedule_metrics import peak_per_sm
from sim.traces.trace_bundle import load_bundle

H200 = preset("H200")
DATA = Path(__file__).parents[1] / "data" / "h200_spin_fit"
NO_PACING = replace(builtin_profile().params, fill_warp_us=0.0, sm_interval_us=0.0,
                    handout_window_us=0.0)


@pytest.mark.parametrize("blocks,per_sm,duration", [(100, 4, 3.0), (132 * 16 * 3 + 77, 16, 10.0),
                                                    (5000, 2, 1.5)])
@pytest.mark.parametrize("placement", [SmOrderPlacement(), TpcSpreadPlacement()])
def test_waiting_warps_without_pacing_are_the_textbook(blocks, per_sm, duration, placement):
    """Warps that sleep hold nothing back: with no pacing the model must be the block scheduler,
    block for block (same SM, slot, start and end): the per-SM simulation and the merge into
    the grid's order lose nothing."""
    ideal = simulate(H200, blocks, per_sm, UniformCost(duration), placement)
    sm, slot, start, end = dispatch_schedule(H200, blocks, per_sm, 4, duration, NO_PACING, "sleep",
                                             placement.slot_order(H200, per_sm))
    assert np.array_equal(sm, ideal.block_sm) and np.array_equal(slot, ideal.block_slot)
    assert np.allclose(start, ideal.block_start_us) and np.allclose(end, ideal.block_end_us)


def test_busy_warps_start_a_burst_then_wait_for_exits():
    """Rule 1 alone (no trickle, no ticks): 4-warp blocks start while fewer than 28 warps are busy
    (7 blocks), the rest of a 16-slot SM only when blocks end."""
    params = replace(NO_PACING, trickle={4: (0.0, 1.0)}, tick_first_us=1e4, tick_first_spread_us=0)
    sm, _, start, end = dispatch_schedule(H200, 132 * 16, 16, 4, 50.0, params, "spin")
    at_once = np.bincount(sm[start == 0.0], minlength=132)
    assert (at_once == 7).all()
    assert sorted(set(start.round(6).tolist())) == [0.0, 50.0, 100.0]  # 7, then 7, then 2
    assert peak_per_sm(sm, start, end).max() == 7


def test_a_quiet_sm_takes_every_waiting_block_at_a_tick():
    """Rule 3: nothing starts or ends between two visits, so the second visit fills the SM."""
    params = replace(NO_PACING, trickle={4: (0.0, 1.0)}, tick_us=10.0, tick_first_us=4.0,
                     tick_first_spread_us=0.0, tick_single_p=0.0)
    sm, _, start, _ = dispatch_schedule(H200, 132 * 16, 16, 4, 100.0, params, "spin")
    # first visit at 4 us: the burst at 0 was activity since the previous one; at 14 us: quiet
    assert sorted(set(start.round(6).tolist())) == [0.0, 14.0]
    assert (np.bincount(sm[start == 14.0], minlength=132) == 9).all()


def test_blocks_wider_than_the_burst_start_one_at_a_time():
    """Rule 1 counts warps: a 32-warp block already passes the 28-warp burst, so an SM starts one
    and its second waits for the first to end (no trickle, no visits here)."""
    params = replace(NO_PACING, trickle={32: (0.0, 1.0)}, tick_first_us=1e4)
    sm, _, start, _ = dispatch_schedule(H200, 264, 2, 32, 20.0, params, "spin")
    assert (np.bincount(sm[start == 0.0], minlength=132) == 1).all()
    assert sorted(set(start.round(6).tolist())) == [0.0, 20.0]


def test_seeded_and_repeatable():
    p = builtin_profile().params
    a = dispatch_schedule(H200, 4646, 16, 4, 20.0, p, "spin", seed=1)
    b = dispatch_schedule(H200, 4646, 16, 4, 20.0, p, "spin", seed=1)
    c = dispatch_schedule(H200, 4646, 16, 4, 20.0, p, "spin", seed=2)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[2], c[2])


def test_jitter_varies_durations_within_bounds():
    sm, _, start, end = dispatch_schedule(H200, 3000, 8, 8, 10.0, builtin_profile().params,
                                          "sleep", jitter=0.2)
    d = end - start
    assert d.min() >= 8.0 and d.max() <= 12.0 and d.std() > 0.5
    assert len(set(zip(sm.tolist(), start.round(6).tolist()))) == 3000  # no two on one slot


@pytest.mark.parametrize("args,words", [
    ((0, 4, 4, 1.0), "1..2,097,152 blocks"), ((10, 0, 4, 1.0), "one block per SM"),
    ((10, 4, 4, 0.0), "positive"), ((10, 4, 4, float("nan")), "positive"),
])
def test_nonsense_is_one_line(args, words):
    with pytest.raises(UserError, match=words):
        dispatch_schedule(H200, *args, builtin_profile().params)
    with pytest.raises(UserError, match="spin, sleep, memory"):
        dispatch_schedule(H200, 10, 4, 4, 1.0, builtin_profile().params, "dance")


def test_what_the_h200_showed_about_the_first_burst():
    """The recorded bursts (family A, 100 us blocks, one wave): each SM starts ~28 warps' worth
    at once, whatever the warps per block; the model's burst rule gives the same counts."""
    traces = load_bundle(DATA)
    params = builtin_profile().params
    for warps, per_sm in ((1, 32), (2, 32), (4, 16), (8, 8), (16, 4)):
        t = traces[f"A-spin-w{warps}-100us-1w"]
        rel = t.start_us - t.start_us.min()
        recorded = np.median(np.bincount(t.sm[rel < 0.6], minlength=132))
        sm, _, start, _ = dispatch_schedule(H200, len(t.block), per_sm, warps, 100.0, params, "spin")
        simulated = np.median(np.bincount(sm[start < 0.6], minlength=132))
        assert abs(simulated - recorded) <= 1, warps
