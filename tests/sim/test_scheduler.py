"""The block scheduler: capacity is never exceeded, every block runs once, waves are exact."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sim.rules.devices import preset, presets
from sim.inputs.errors import UserError
from sim.rules.occupancy import occupancy
from sim.model.launch_model import Launch, TripCost
from sim.schedule.scheduler import (BlockScheduler, SmOrderPlacement, TpcSpreadPlacement,
                           UniformCost, _unit_noise, simulate)


def _check_invariants(sim, blocks_per_sm):
    n = sim.n_blocks
    # Every block ran exactly once, for a positive time, on a real SM and slot.
    assert sim.block_sm.shape == (n,) and (sim.block_end_us > sim.block_start_us).all()
    assert ((0 <= sim.block_sm) & (sim.block_sm < sim.gpu.sm_count)).all()
    assert ((0 <= sim.block_slot) & (sim.block_slot < blocks_per_sm)).all()
    # No slot ever holds two blocks at once: per slot, each block starts after the previous ended.
    slot = sim.block_sm * blocks_per_sm + sim.block_slot
    order = np.lexsort((sim.block_start_us, slot))
    same = slot[order][1:] == slot[order][:-1]
    assert (sim.block_start_us[order][1:][same] >= sim.block_end_us[order][:-1][same] - 1e-9).all()
    # So no SM holds more blocks than the occupancy allows, at any event time.
    times, counts = sim.residency_steps()
    assert counts.max() <= sim.gpu.sm_count * blocks_per_sm and counts[-1] == 0
    for t in np.unique(sim.block_start_us)[:50]:
        assert (sim.resident_per_sm([t]) <= blocks_per_sm).all()


@settings(max_examples=60, deadline=None)
@given(gpu=st.sampled_from(presets()), threads=st.sampled_from([32, 64, 128, 250, 256, 512, 1024]),
       regs=st.integers(0, 128), n_blocks=st.integers(1, 20_000),
       placement=st.sampled_from([SmOrderPlacement(), TpcSpreadPlacement()]))
def test_uniform_waves_are_exact(gpu, threads, regs, n_blocks, placement):
    spec = preset(gpu)
    occ = occupancy(spec, threads, regs)
    assume(occ.can_launch)
    sim = simulate(spec, n_blocks, occ, UniformCost(10.0), placement)
    per_wave = spec.sm_count * occ.blocks_per_sm
    assert sim.waves == math.ceil(n_blocks / per_wave)
    assert sim.makespan_us == pytest.approx(10.0 * sim.waves)
    _check_invariants(sim, occ.blocks_per_sm)
    # Each wave is full except perhaps the last.
    counts = np.bincount(sim.block_wave)
    assert (counts[:-1] == per_wave).all()


@settings(max_examples=25, deadline=None)
@given(n_blocks=st.integers(1, 5_000), jitter=st.floats(0.05, 0.9), seed=st.integers(0, 9))
def test_jittered_blocks_keep_the_invariants(n_blocks, jitter, seed):
    spec = preset("T4")
    occ = occupancy(spec, 256)
    sim = simulate(spec, n_blocks, occ, UniformCost(10.0, jitter, seed))
    _check_invariants(sim, occ.blocks_per_sm)
    # Blocks start in grid order: the queue is first come, first served.
    assert (np.diff(sim.block_start_us) >= 0).all()


@given(st.lists(st.integers(-2**40, 2**62), min_size=0, max_size=40),
       st.integers(0, 2**64))
def test_the_noise_of_a_few_ids_is_the_vectorised_hashs(ids, seed):
    """A few ids take the Python-int path (the scheduler's per-step case), many the numpy one:
    the same bits either way, one id or several at a time."""
    a = np.array(ids, dtype=np.int64)
    few = _unit_noise(a, seed)
    one_by_one = [_unit_noise(a[i:i + 1], seed)[0] for i in range(a.size)]
    many = _unit_noise(np.tile(a, 20), seed)[:a.size]  # past the small-array cut
    assert few.dtype == many.dtype == np.float64 and few.shape == a.shape
    assert few.tobytes() == many.tobytes() == np.array(one_by_one, dtype=float).tobytes()
    assert ((-1.0 <= few) & (few < 1.0)).all()


def test_tail_of_the_article_launch():
    gpu = preset("L40S")
    sim = simulate(gpu, 3_907, occupancy(gpu, 256), UniformCost(10.0))
    # 4 full waves of 852 blocks, then 499: the last 10 us of 50 run below full residency.
    assert sim.waves == 5 and sim.tail_fraction == pytest.approx(0.2)
    resident = sim.resident_at(45.0)
    assert (resident >= 0).sum() == 3_907 - 4 * 852
    assert (sim.resident_at(5.0) >= 0).sum() == 852


def test_full_grid_has_no_tail_and_small_grid_is_all_tail():
    gpu = preset("H200")
    occ = occupancy(gpu, 256)  # 8 per SM -> 1056 slots
    assert simulate(gpu, 2 * 1056, occ).tail_fraction == 0.0
    assert simulate(gpu, 100, occ).tail_fraction == 1.0


def test_memory_bound_full_gpu_streams_near_its_ceiling():
    """The launch model's block cost: 2^26 four-per-thread adds (bandwidth-bound) move their
    bytes at close to the ceiling; a fixed extra time per block costs that much per wave."""
    gpu = preset("H200")
    elements, threads = 2**26, 256
    occ = occupancy(gpu, threads)
    launch = Launch(elements // 1024, threads, occ.blocks_per_sm, 12.0 * elements, elements)
    # blocks that do not straggle (tests/sim/test_launch_fit.py), every SM at an even share of the
    # DRAM (the faster SMs' share: tests/sim/test_dram_share.py), so every SM runs as many waves
    equal = dict(spread=0.0, hold=0.0, sm_weights=())
    cost = TripCost.for_gpu(gpu, launch, 4000.0, **equal)
    sim = simulate(gpu, launch.grid_blocks, occ, cost)
    ideal_us = elements * 12 / (4000.0 * 1e3)
    assert ideal_us < sim.makespan_us < 1.1 * ideal_us
    slow = simulate(gpu, launch.grid_blocks, occ, TripCost.for_gpu(gpu, launch, 4000.0, extra_us=2.0, **equal))
    assert slow.makespan_us == pytest.approx(sim.makespan_us + 2.0 * slow.waves, rel=0.02)


def test_a_memory_bound_block_is_faster_when_fewer_share_the_dram():
    """A block's time follows the blocks resident GPU-wide as it starts,
    so tail blocks (fewer sharing the DRAM) run shorter than blocks of a full GPU."""
    gpu = preset("H200")
    launch = Launch(3907, 256, 8, 12.0 * 1_000_000, 1_000_000)
    cost = TripCost.for_gpu(gpu, launch, spread=0.0, hold=0.0)  # the mean, without stragglers
    full, thin = cost.durations(np.arange(1), 1056)[0], cost.durations(np.arange(1), 132)[0]
    assert thin < 0.8 * full
    sim = simulate(gpu, 3907, 8, cost)
    took = sim.block_end_us - sim.block_start_us
    first, last = took[:1056], took[-100:]
    assert last.mean() < first.mean()  # the last wave's 739 blocks share the DRAM less


class _ArraysOnly:
    """A cost without `one_duration`: the scheduler asks it for arrays at every step."""

    def __init__(self, cost):
        self.cost = cost

    def durations(self, block_ids, resident_blocks, sms=None):
        return self.cost.durations(block_ids, resident_blocks, sms)


@pytest.mark.parametrize("make", [
    lambda gpu: UniformCost(7.0, 0.3, seed=5),
    lambda gpu: TripCost.for_gpu(gpu, Launch(20_000, 256, 8, 12.0 * 2**24, 2**24)),
    lambda gpu: TripCost.for_gpu(gpu, Launch(300_000, 128, 16, 12.0 * 2**26, 2**26)),
])
def test_steps_of_a_few_blocks_give_the_numbers_the_arrays_give(make):
    """Most steps place one to a few blocks, in Python's floats; the same schedule as numpy's
    arrays, bit for bit (the uneven SMs' shares, two blocks of one SM in a step, the dispatch
    spacing and the straggle included)."""
    gpu = preset("H200")
    runs = []
    for cost in (make(gpu), _ArraysOnly(make(gpu))):
        s = BlockScheduler(gpu, 6_000, 8, cost, TpcSpreadPlacement(), dispatch_interval_us=0.001,
                           sm_dispatch_interval_us=0.05)
        s.run()
        runs.append((s.block_slot, s.block_start_us, s.block_end_us))
    for fast, arrays in zip(*runs):
        assert np.array_equal(fast, arrays)


def test_placement_orders():
    gpu = preset("H200")
    assert SmOrderPlacement().slot_order(gpu, 2)[:3].tolist() == [0, 2, 4]  # SM 0, 1, 2 (slot 0)
    order = TpcSpreadPlacement().sm_order(gpu)
    assert sorted(order) == list(range(gpu.sm_count))
    assert order[:2] == [0, 1]  # a TPC's two SMs together
    assert order[2] != 2  # then the next GPC, not the neighbouring TPC
    sim = simulate(gpu, 4, occupancy(gpu, 256), placement=TpcSpreadPlacement())
    assert sim.block_sm.tolist() == order[:4]


def test_engine_steps_like_simpy():
    gpu = preset("T4")
    engine = BlockScheduler(gpu, 9, 1, UniformCost(5.0), SmOrderPlacement())
    assert engine.peek() == 0.0
    assert engine.step() == 9  # 40 SMs x 1 slot: all 9 placed at t=0
    assert engine.peek() == 5.0
    engine.run()
    assert engine.done and engine.now == 5.0


def test_run_until_stops_the_clock_there():
    """SimPy's contract: events at or after `until` wait, and the clock reads `until` afterwards
    (run(until=2.0) used to return with now=5.0 and done=True)."""
    gpu = preset("T4")  # 40 SMs x 1 slot
    engine = BlockScheduler(gpu, 9, 1, UniformCost(5.0), SmOrderPlacement())
    engine.run(until=2.0)
    assert engine.now == 2.0 and not engine.done and engine.next_block == 9
    engine.run()
    assert engine.done and engine.now == 5.0

    engine = BlockScheduler(gpu, 100, 1, UniformCost(5.0), SmOrderPlacement())
    engine.run(until=5.0)  # the blocks that free slots at 5.0 are not retired yet
    assert (engine.now, engine.next_block) == (5.0, 40)
    engine.run(until=12.0)  # waves at 5 and 10 placed; the last ends at 15
    assert (engine.now, engine.next_block, engine.done) == (12.0, 100, False)
    with pytest.raises(ValueError):
        engine.run(until=1.0)
    engine.run(until=20.0)
    assert engine.done and engine.now == 20.0
    assert engine.block_end_us.max() == 15.0


def test_policies_are_protocols():
    from sim.schedule.scheduler import CostModel, Placement

    for cost in (UniformCost(), TripCost(132, 1.0, 1, 1.0, 1.0, 1.0)):
        assert isinstance(cost, CostModel)
    for placement in (SmOrderPlacement(), TpcSpreadPlacement()):
        assert isinstance(placement, Placement)

    class EveryOtherSm:  # any object with slot_order is a placement
        def slot_order(self, gpu, slots_per_sm):
            return np.r_[np.arange(0, gpu.sm_count * slots_per_sm, 2),
                         np.arange(1, gpu.sm_count * slots_per_sm, 2)]

    sim = simulate(preset("T4"), 3, 1, UniformCost(1.0), EveryOtherSm())
    assert sim.block_sm.tolist() == [0, 2, 4] and sim.placement == "EveryOtherSm"


def test_refuses_what_it_cannot_simulate():
    gpu = preset("H200")
    with pytest.raises(UserError):
        simulate(gpu, 0, occupancy(gpu, 256))
    with pytest.raises(UserError):
        simulate(gpu, 10, occupancy(gpu, 256, 0, 300_000))
    with pytest.raises(UserError, match="more than the simulator"):
        simulate(gpu, 2**22, occupancy(gpu, 256))


def test_an_sm_starts_one_block_per_dispatch_interval():
    gpu = preset("T4")
    sim = simulate(gpu, 2_000, 16, UniformCost(1.0), sm_dispatch_interval_us=0.25)
    _check_invariants(sim, 16)
    for sm in range(gpu.sm_count):
        starts = np.sort(sim.block_start_us[sim.block_sm == sm])
        assert (np.diff(starts) >= 0.25 - 1e-9).all()
    # 16 slots and 1 us blocks would allow 16 blocks/us per SM; one start per 0.25 us allows 4, so
    # dispatch is the limit: the 50th block of each SM starts at 49 x 0.25 us and runs 1 us.
    assert sim.makespan_us == pytest.approx(49 * 0.25 + 1.0)


def test_latency_floor_of_the_memory_bound_cost():
    """No block is shorter than `min_us` (simulate --latency-us), and none shorter than one
    DRAM round trip anyway."""
    cost = TripCost(132, bytes_per_trip=1_000.0, trips=1, ceiling_gbps=1_000.0, delay_ns=500.0,
                    dispatch_ns=80.0, min_us=0.9)
    assert cost.durations(np.arange(4), resident_blocks=1).tolist() == [0.9] * 4
    free = TripCost(132, 1_000.0, 1, 1_000.0, 500.0, 80.0)
    assert free.durations(np.arange(1), resident_blocks=1)[0] > 0.5
