"""One SM's warps over time (sim/schedule/warps.py): consistent with the loaded model it is drawn from."""

import numpy as np
import pytest

from sim.rules.devices import preset
from sim.model.latency import BlockTrip, predict_loaded
from sim.schedule.warps import EMPTY, ISSUING, MEMORY, READY, STATES, sm_activity

H200 = preset("H200")


def activity(blocks, threads, per_thread=1, window_ns=None):
    trip = BlockTrip(threads, per_thread)
    p = predict_loaded(H200, blocks, trip, ceiling_gbps=4129)
    return sm_activity(H200, p, trip, window_ns=window_ns), p


@pytest.mark.parametrize("blocks,threads,per_thread", [(1, 256, 1), (8, 256, 1), (2, 256, 4),
                                                       (16, 128, 1), (1, 1024, 1)])
def test_every_used_slot_is_accounted_for_over_the_window(blocks, threads, per_thread):
    a, _ = activity(blocks, threads, per_thread)
    assert a.used_slots == blocks * threads // 32 and set(a.state) <= set(STATES)
    for slot in range(a.used_slots):
        mine = a.slot == slot
        covered = (a.end_ns[mine] - a.begin_ns[mine]).sum()
        assert covered == pytest.approx(a.window_ns, rel=1e-9), slot
    assert not np.any(a.slot >= a.used_slots)  # slots the launch cannot use stay empty
    assert sum(a.share(s) for s in STATES) == pytest.approx(1.0)


def test_issue_busy_is_the_issuing_time_of_each_scheduler():
    a, _ = activity(8, 256)
    for s in range(a.schedulers):
        mine = (a.slot % a.schedulers == s) & (a.state == ISSUING)
        assert (a.end_ns[mine] - a.begin_ns[mine]).sum() / a.window_ns == pytest.approx(
            a.issue_busy[s], rel=1e-6)
    assert a.issue_busy.max() < 0.2  # a memory-bound kernel leaves its schedulers idle


def test_warps_mostly_wait_on_memory_and_blocks_turn_over_at_the_models_rate():
    a, p = activity(4, 256)
    assert a.share(MEMORY) > 0.5 and a.share(ISSUING) < 0.05
    # each slot starts a block once per trip of the model: count the empty-slot waits per slot 0
    starts = np.sort(a.begin_ns[(a.slot == 0) & (a.state == EMPTY)])
    gaps = np.diff(starts)
    assert gaps.size >= 1 and gaps == pytest.approx(np.full(gaps.size, p.cycle_ns), rel=0.05)


def test_ready_warps_appear_only_when_a_scheduler_has_several_at_once():
    one_per_scheduler, _ = activity(1, 128)  # 4 warps on 4 schedulers: never wait to issue
    assert one_per_scheduler.share(READY) == 0
    crowded, _ = activity(1, 1024)  # 32 warps, 8 per scheduler, arriving together
    assert crowded.share(READY) > 0


def test_bytes_in_flight_peak_at_every_warp_waiting():
    a, p = activity(8, 256)
    times, in_flight = a.memory_bytes
    assert in_flight.max() <= p.bytes_in_flight_per_sm and in_flight.min() >= 0
