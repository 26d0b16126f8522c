"""One timeline for every schedule: residency, waves, the tail and each moment, simulated or
recorded."""

import numpy as np
import pytest

from sim.rules.devices import preset
from sim.rules.occupancy import occupancy
from sim.schedule.scheduler import SmOrderPlacement, TpcSpreadPlacement, UniformCost, simulate
from sim.schedule.timeline import Timeline, pack_lanes, timeline_of_trace
from sim.traces.trace import Trace


def _timeline(rows, sm_count, lanes, capacity=None):
    """rows: (sm, lane, start, end) per block, in grid order."""
    sm, lane, start, end = (np.asarray(c) for c in zip(*rows))
    return Timeline(sm_count, lanes, sm.astype(int), lane.astype(int), start.astype(float),
                    end.astype(float), capacity=capacity or sm_count * lanes)


def test_the_articles_launch_has_a_20_percent_tail():
    gpu = preset("L40S")
    tl = simulate(gpu, 3_907, occupancy(gpu, 256), UniformCost(10.0)).timeline
    # four full waves of 852 blocks, then 499: the fifth wave is the tail
    assert tl.steady_blocks == 852 and tl.tail_start_us == 40.0
    assert tl.tail_fraction == pytest.approx(0.2) and tl.tail_us == pytest.approx(10.0)
    assert tl.waves == 5 and tl.wave_starts_us.tolist() == [0.0, 10.0, 20.0, 30.0, 40.0]
    assert [tl.wave_at(t) for t in (0.0, 9.9, 10.0, 45.0)] == [1, 1, 2, 5]


def test_the_tail_is_measured_against_what_the_launch_sustains():
    """Two SMs of four block slots each, but the hardware only ever fills two of them: three waves
    of 4, 4 and 1 blocks. Against 'full residency' (8) everything would be tail; against the
    steady residency (4) only the thin last wave is."""
    rows = [(sm, lane, 10.0 * w, 10.0 * (w + 1)) for w in range(2) for sm in range(2) for lane in range(2)]
    rows.append((0, 0, 20.0, 30.0))
    tl = _timeline(rows, sm_count=2, lanes=4)
    assert tl.capacity == 8 and tl.steady_blocks == 4
    assert tl.tail_start_us == 20.0 and tl.tail_fraction == pytest.approx(1 / 3)


def test_a_full_wave_has_no_tail_and_less_than_a_wave_is_all_tail():
    gpu = preset("H200")
    occ = occupancy(gpu, 256)  # 8 per SM: 1,056 slots
    assert simulate(gpu, 1056, occ).timeline.tail_fraction == 0.0
    assert simulate(gpu, 2 * 1056, occ).timeline.tail_fraction == 0.0
    assert simulate(gpu, 100, occ).timeline.tail_fraction == 1.0


def test_jittered_blocks_tail_starts_after_the_last_start():
    gpu = preset("T4")
    tl = simulate(gpu, 1_000, occupancy(gpu, 256), UniformCost(10.0, 0.3, seed=2)).timeline
    assert tl.steady_blocks == tl.capacity  # slots refill at once while blocks wait
    assert tl.last_dispatch_us <= tl.tail_start_us < tl.makespan_us
    times, counts = tl.residency
    assert (counts[times >= tl.tail_start_us] < tl.capacity).all()


def test_a_recorded_copy_of_a_schedule_has_the_same_numbers():
    gpu = preset("H200")
    sim = simulate(gpu, 3 * 132 * 4 + 17, 4, UniformCost(20.0), TpcSpreadPlacement())
    order = np.random.default_rng(0).permutation(sim.n_blocks)  # files need not be in grid order
    trace = Trace("recorded", gpu.name, order, sim.block_sm[order], np.full(sim.n_blocks, -1),
                  sim.block_start_us[order] + 7.0, sim.block_end_us[order] + 7.0)
    recorded, simulated = timeline_of_trace(trace, 4, gpu.sm_count), sim.timeline
    assert recorded.lanes == 4 and recorded.capacity == simulated.capacity
    assert recorded.tail_fraction == pytest.approx(simulated.tail_fraction)
    assert recorded.waves == simulated.waves
    assert np.array_equal(recorded.wave, simulated.wave)
    for t in (0.0, 25.0, 61.0):
        assert np.array_equal(recorded.resident_per_sm(t), simulated.resident_per_sm(t))


def test_pack_lanes_reuses_a_lane_once_it_is_free():
    sm = np.array([0, 0, 0, 1])
    start = np.array([0.0, 1.0, 5.0, 0.0])
    end = np.array([5.0, 3.0, 6.0, 1.0])
    assert pack_lanes(sm, start, end).tolist() == [0, 1, 0, 0]


def test_every_frame_accounts_for_the_whole_grid():
    gpu = preset("T4")
    occ = occupancy(gpu, 256, 64)
    sim = simulate(gpu, 700, occ, UniformCost(10.0, 0.2))
    tl = sim.timeline
    for t in np.linspace(0, tl.makespan_us, 17):
        f = tl.frame(t)
        assert f.retired + f.running + f.queued == 700
        assert ((f.resident >= 0).sum(axis=1) <= occ.blocks_per_sm).all()
        assert f.in_tail == (tl.tail_start_us <= t < tl.makespan_us and f.queued == 0)
    end = tl.frame(tl.makespan_us)
    assert (end.retired, end.running, end.queued) == (700, 0, 0)


def test_skipped_waves_count_in_the_grid_and_the_wave_number():
    gpu = preset("T4")
    occ = occupancy(gpu, 256)  # 4 per SM, 160 slots
    sim = simulate(gpu, 200, occ, UniformCost(1.0))
    from dataclasses import replace

    tl = replace(sim, skipped_waves=10, first_block=1600).timeline
    assert tl.grid_blocks == 1800 and tl.frame(0.5).retired == 1600 and tl.frame(0.5).queued == 40
    assert tl.wave_at(0.5) == 11 and tl.wave_at(1.5) == 12


def test_raster_never_drops_a_busy_lane_when_it_has_fewer_rows():
    """100 tail blocks on 100 SMs were drawn as ~5 clusters: each output row must show every lane
    it stands for."""
    rows = [(sm, 7, 0.0, 1.0) for sm in range(100)]  # one block in the last lane of SMs 0..99
    tl = _timeline(rows, sm_count=132, lanes=8)
    full = tl.raster(50)
    assert full.shape == (132 * 8, 50) and (full >= 0).any(axis=1).sum() == 100
    small = tl.raster(50, max_rows=132)  # one row per SM
    assert small.shape == (132, 50)
    assert (small[:100] >= 0).all() and (small[100:] < 0).all()
    tiny = tl.raster(50, max_rows=40)  # 27 lanes per row: 30 rows hold the 100 SMs' lanes
    busy_lanes = np.zeros(132 * 8, bool)
    busy_lanes[np.arange(100) * 8 + 7] = True
    group = -(-132 * 8 // 40)
    expected = np.pad(busy_lanes, (0, (-busy_lanes.size) % group)).reshape(-1, group).any(axis=1)
    assert np.array_equal((tiny >= 0).all(axis=1), expected)


def test_raster_paints_each_block_over_its_time():
    tl = _timeline([(0, 0, 0.0, 5.0), (0, 0, 5.0, 10.0), (1, 1, 2.0, 4.0)], sm_count=2, lanes=2)
    img = tl.raster(10)
    assert img[0].tolist() == [0] * 5 + [1] * 5
    assert img[3].tolist() == [-1, -1, 2, 2, -1, -1, -1, -1, -1, -1]
    assert (img[1] == -1).all() and (img[2] == -1).all()


def test_event_times_and_placement_orders_reach_the_timeline():
    gpu = preset("H200")
    tl = simulate(gpu, 4, occupancy(gpu, 256), UniformCost(3.0), SmOrderPlacement()).timeline
    assert tl.event_times_us.tolist() == [0.0, 3.0]
    assert tl.resident_per_sm(1.0)[:5].tolist() == [1, 1, 1, 1, 0]


@pytest.mark.slow
def test_whole_launch_time_counts_the_waves_left_out():
    """A big grid simulated in part: its whole time is the part plus the skipped full waves. In the
    textbook the waves are identical; in the calibrated schedule of busy warps SMs keep some slots
    empty and the visits make the waves differ a little, so a wave is the time a wave's worth of
    blocks takes to start."""
    from sim.rules.devices import preset
    from sim.rules.occupancy import occupancy
    from sim.model.launch_model import Launch, predict_launch

    gpu = preset("H200")
    occ = occupancy(gpu, 256)
    # memory-bound blocks straggle (sim.model.launch_model, block_time_spread): their waves differ too
    for cost, schedule, rel in (("uniform", "ideal", 0.01), ("memory", "ideal", 0.03),
                                ("memory", "calibrated", 0.03), ("uniform", "calibrated", 0.03)):
        launch = Launch(2**16, 256, occ.blocks_per_sm, 12.0 * 2**24, 2**24)
        whole = predict_launch(gpu, launch, cost, placement="sm-order", schedule=schedule,
                               max_waves=None).simulation
        part = predict_launch(gpu, launch, cost, placement="sm-order", schedule=schedule,
                              max_waves=4).simulation
        assert whole.timeline.skipped_waves == 0 and part.timeline.skipped_waves > 50
        assert whole.timeline.whole_grid_us == whole.timeline.makespan_us
        assert part.timeline.makespan_us < 0.2 * whole.timeline.makespan_us
        assert part.timeline.whole_grid_us == pytest.approx(whole.timeline.makespan_us, rel=rel)


def test_waves_far_below_one_keep_their_digits():
    from sim.rules.devices import preset
    from sim.rules.geometry import geometry_facts, launch_geometry
    from sim.rules.occupancy import occupancy

    gpu = preset("B200")
    geo = launch_geometry(gpu, 40 * 256, 256, occupancy(gpu, 256))
    facts = {f.key: f.value for f in geometry_facts(gpu, geo)}
    assert facts["waves_best"] == "0.034"  # 320 warps / (148 x 64) slots, not "0.0"


def test_pack_lanes_gives_each_block_the_lowest_lane_free_at_its_start():
    """Against the definition, block by block in start order: the lowest lane of its SM whose
    last block ended by the start (ends and starts on a coarse grid, so ties are common)."""
    rng = np.random.default_rng(7)
    sm = rng.integers(0, 5, 2000)
    start = np.round(rng.random(2000) * 50, 1)
    end = start + np.round(rng.random(2000) * 4, 1)
    lane = pack_lanes(sm, start, end)
    last_end: dict[tuple[int, int], float] = {}
    for i in np.lexsort((start, sm)):
        s = int(sm[i])
        k = next(k for k in range(len(sm)) if last_end.get((s, k), -1.0) <= start[i] + 1e-9)
        assert lane[i] == k
        last_end[(s, k)] = end[i]
