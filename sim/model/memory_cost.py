"""The memory-bound block cost of the launch model (sim.model.launch_model's "memory" mode).

`TripCost`: a block's time from the loaded model, each SM a closed queueing network of its resident
blocks (the dispatcher, a delay of trip overhead + DRAM round trip, the SM's memory port at its
share of the achievable bandwidth), solved by mean value analysis (sim.model.latency.mva_levels);
a block makes its loop's trips, each in as many dependent rounds as its registers allow
(sim.model.load_rounds). `chain_ns`: a kernel's declared dependent work besides its DRAM trips.
Where the GPU's data says some SMs move bytes faster (resources/physics "dram_share"), their
blocks run at their own share of the DRAM. `first_wave_ramp`: the first wave's blocks handed out
one after another; `TripCost.first_wave_head_start`: where the SM's dispatcher binds, the first
wave does not queue at it. `achievable_gbps`: what a full GPU streams.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

from sim.inputs.errors import UserError
from sim.model.latency import BUSY, mva_levels, trip_costs_for
from sim.model.load_rounds import inputs_of_traffic, load_rounds, values_per_thread
from sim.rules.devices import GpuSpec
from sim.rules.physics import GpuPhysics, physics_for
from sim.schedule.dispatch_profile import dram_share_for
from sim.schedule.scheduler import _one_noise, _unit_noise

SQRT3 = math.sqrt(3.0)  # uniform noise on [-1, 1) has standard deviation 1/sqrt(3)
TICK_US = 0.02  # the memory-bound schedule's clock when block times are spread


@dataclass(frozen=True, slots=True)
class TripCost:
    """A block's time from the loaded model: each SM a closed network whose customers are its
    resident blocks (the live GPU-wide count when the block starts, spread over the SMs); a trip
    passes the SM's dispatcher (once per block), a delay (the trip overhead for the kernel's input
    arrays, sim.model.latency.TripCosts, + the DRAM round trip) and
    the SM's memory port, which moves the trip's bytes at the active SMs' share of the ceiling
    (times the SM's `sm_weights`, where a bandwidth-bound launch has its SMs' shares differ).
    A block makes `trips` such trips in a row."""

    id: ClassVar[str] = "memory"
    sm_count: int
    bytes_per_trip: float
    trips: int
    ceiling_gbps: float
    delay_ns: float  # trip overhead + DRAM latency
    dispatch_ns: float  # an SM starts at most one block this often
    extra_us: float = 0.0  # a fixed time per block on top (the `simulate --overhead-us` knob)
    min_us: float = 0.0  # no block is shorter (the `simulate --latency-us` knob)
    spread: float = 0.0  # coefficient of variation of the stamped block times (DRAM service order)
    hold: float = 0.0  # a block holds its slot this share of its stamped time past its end stamp
    rounds: int = 1  # dependent load rounds per loop trip, each one of the `trips`
    # each SM's share of the DRAM relative to an even one (sim.rules.physics.DramShare.weights;
    # empty: even); not part of the cost's identity, so the solved MVAs of one weight are shared
    sm_weights: tuple = field(default=(), compare=False, repr=False)
    share_above: float = 0.0  # bytes in flight per SM past which the shares differ

    @classmethod
    def for_gpu(cls, gpu: GpuSpec, launch, ceiling_gbps: float | None = None,
                physics: GpuPhysics | None = None, **knobs) -> "TripCost":
        ph = physics or physics_for(gpu)
        if launch.grid_blocks < 1 or launch.bytes_moved <= 0 or launch.loop_trips < 1:
            raise UserError("a memory-bound prediction needs at least one block and some bytes "
                            "to move (a block must take at least 0.001 us)")
        ceiling = float(ceiling_gbps or achievable_gbps(gpu, ph))
        costs = trip_costs_for(gpu, ph)  # the overhead for the launch's loads, as predict_loaded's
        rounds = rounds_of(launch, ph)
        share = dram_share_for(gpu)  # the user's calibration of this chip, else its preset's
        trips = launch.loop_trips * rounds  # each loop trip in its dependent rounds
        return cls(gpu.sm_count, launch.bytes_moved / launch.grid_blocks / trips, int(trips), ceiling,
                   costs.overhead_ns(launch.loads) + ph.value("dram_latency_ns")  # latency.dram_latency_ns
                   + chain_ns(gpu, launch, ph) / trips,  # think time, spread over the trips
                   costs.dispatch_ns,
                   **{"spread": ph.value("block_time_spread"), "hold": slot_hold(launch, ph),
                      "rounds": int(rounds), "sm_weights": share.weights(gpu.sm_count) if share else (),
                      "share_above": share.above_bytes if share else 0.0, **knobs})

    @property
    def first_trip_ns(self) -> float:
        return self.dispatch_ns + self.delay_ns

    def _solve(self, resident_blocks: int):
        """The MVA for `resident_blocks` live GPU-wide, spread evenly over the SMs."""
        sms = min(self.sm_count, max(int(resident_blocks), 1))
        per_sm = math.ceil(max(int(resident_blocks), 1) / sms)
        per_ns, residence = (a[per_sm - 1] for a in _solved(self, per_sm, sms))
        return per_ns, residence, self._demands(sms)

    def _demands(self, sms: int) -> tuple[float, float]:
        port_ns = self.bytes_per_trip / (self.ceiling_gbps / sms)  # GB/s = bytes per ns
        return self.dispatch_ns / self.trips, port_ns  # a looping block is dispatched once

    def life_us(self, resident_blocks: int) -> float:
        """A block's whole life in its slot while `resident_blocks` are live GPU-wide."""
        _, residence, _ = self._solve(resident_blocks)
        return max(self.trips * (self.delay_ns + float(residence.sum())) / 1e3 + self.extra_us,
                   self.min_us)

    def levels(self, per_sm: int, sms: int) -> tuple[np.ndarray, np.ndarray]:
        """The MVA of one SM holding k = 1..`per_sm` blocks (index k - 1) while `sms` SMs share
        the DRAM: block trips per ns and residences (what the drain, sim.model.drain, reads)."""
        return _solved(self, int(per_sm), int(sms))

    def durations(self, block_ids: np.ndarray, resident_blocks: int,
                  sms: np.ndarray | None = None) -> np.ndarray:
        # the MVA's time is the block's whole life in its slot; `stamped_ends` says where in it
        # thread 0's end stamp falls
        # the spread is each trip's: a block that loops over `trips` averages it down
        if self.sm_weights and sms is not None and self.shares_differ(int(resident_blocks)):
            # each SM's blocks at its share of the DRAM
            base, half = (a[sms] for a in _lives_per_sm(self, int(resident_blocks), self.sm_weights))
        else:
            base, half = _life_and_spread(self, int(resident_blocks))
        held = base * (1.0 + half * _unit_noise(block_ids, 0))
        # on a 20 ns clock: spread blocks retire in batches, one scheduler step per tick, not per block
        return np.maximum(np.round(held / TICK_US), 1.0) * TICK_US if self.spread else held

    def one_duration(self, block_id: int, resident_blocks: int, sm: int) -> float:
        """`durations` of one block, in Python's floats (the scheduler's most common step)."""
        if self.sm_weights and self.shares_differ(resident_blocks):
            base, half = (float(a[sm]) for a in _lives_per_sm(self, resident_blocks, self.sm_weights))
        else:
            base, half = _life_and_spread(self, resident_blocks)
        held = base * (1.0 + half * _one_noise(block_id, 0))
        return max(round(held / TICK_US), 1.0) * TICK_US if self.spread else held

    def shares_differ(self, resident_blocks: int) -> bool:
        """The SMs' shares differ only where an SM has more bytes in flight than `share_above`
        (its resident blocks' trip each): below it the H200 runs the same count on every SM."""
        per_sm = math.ceil(max(resident_blocks, 1) / self.sm_count)
        return per_sm * self.bytes_per_trip > self.share_above

    def slowest_us(self, resident_blocks: int) -> float:
        """The latest a block of a full SM can end: its dispatch, then each trip's delay and the
        bytes of all the SM's resident blocks through the port at its share; or, where the
        dispatcher is the slower server, each trip's delay after the SM's blocks were dispatched
        one by one (without it the dispatcher-bound blocks had no spread and ran in lockstep)."""
        sms = min(self.sm_count, max(int(resident_blocks), 1))
        per_sm = math.ceil(max(int(resident_blocks), 1) / sms)
        port_ns = self.bytes_per_trip / (self.ceiling_gbps / sms)
        # the SM's busiest server: its port (every block's bytes) or, for blocks the dispatcher
        # serves slower than the port moves them, its dispatcher (every block started in turn)
        queued_ns = max(self.dispatch_ns + self.trips * per_sm * port_ns, per_sm * self.dispatch_ns)
        return (self.trips * self.delay_ns + queued_ns) / 1e3 + self.extra_us

    def dispatch_waits(self, sim) -> np.ndarray:
        """How long after its slot frees each block is dispatched (thread 0 stamps its start
        then): a block refilling a slot waits first at the SM's dispatcher (the MVA's residence
        there, at the live count when the slot freed), and the slot is empty meanwhile. Only
        where the dispatcher is the SM's bottleneck (it serves a block slower than the port
        moves one): where the port is, the blocks queue at the port, resident, and the hold
        describes their stamps. The first block of each slot is dispatched at once (an H200 SM
        starts its first 8-16 blocks within ~64 ns) and queues at the port instead. Asked before the drain:
        the wait is over before the port's share changes."""
        start, end = sim.block_start_us, sim.block_end_us
        dispatch_ns, port_ns = self._demands(sim.gpu.sm_count)
        if dispatch_ns <= port_ns:
            return np.zeros_like(start)
        live = _live_at(start, end, start)
        return np.where(sim.timeline.wave == 0, 0.0, self._dispatch_share(live) * (end - start))

    def _dispatch_share(self, live: np.ndarray) -> np.ndarray:
        """Per block, the share of the MVA's life spent queueing at the dispatcher, at its live
        count; a block's drawn spread stretches all of its life alike."""
        counts, index = np.unique(np.maximum(live, 1), return_inverse=True)
        share = np.array([self.trips * float(self._solve(int(c))[1][0]) / 1e3 / self.life_us(int(c))
                          for c in counts])
        return share[index]

    def first_wave_head_start(self, sim):
        """`sim` with the grid's first wave let off the dispatcher's queue: an SM starts its first
        blocks at once (`dispatch_waits`), so where the dispatcher is the SM's bottleneck those
        blocks live the MVA's life less its queueing there, and each slot's chain of blocks
        starts that much sooner (recorded one-warp copies: the first wave ended ~1 us early
        and its slots refilled one by one, where the model held the whole GPU full for the
        dispatcher's queue, then emptied it at once). Call it only where `sim` begins with
        the grid's first wave (no identical waves skipped before it)."""
        start, end = sim.block_start_us, sim.block_end_us
        dispatch_ns, port_ns = self._demands(sim.gpu.sm_count)
        if dispatch_ns <= port_ns:
            return sim
        wave = sim.timeline.wave
        first = np.flatnonzero(wave == 0)
        cut = self._dispatch_share(_live_at(start, end, start[first])) * (end[first] - start[first])
        lane = _lanes(sim)
        shift = np.zeros(int(lane.max()) + 1)
        shift[lane[first]] = cut
        later = np.ones(start.size, bool)
        later[first] = False
        new_start = start - np.where(later, shift[lane], 0.0)
        new_end = end - shift[lane]
        return replace(sim, block_start_us=new_start, block_end_us=new_end,
                       makespan_us=float(new_end.max()))

    def stamped_ends(self, start_us: np.ndarray, slot_end_us: np.ndarray) -> np.ndarray:
        """Where thread 0 stamps each block's end: the slot is released `hold` of one trip's time
        later (a looping block's other warps lag by its last trip, not by the whole loop)."""
        return slot_end_us - (slot_end_us - start_us) / self.trips * self.hold / (1.0 + self.hold)

    def bound(self, resident_blocks: int) -> str:
        """"bandwidth" (the port is nearly always busy), "block dispatch" (the dispatcher is),
        else "latency"."""
        per_ns, _, (dispatch_ns, port_ns) = self._solve(resident_blocks)
        if per_ns * port_ns >= BUSY:
            return "bandwidth"
        return "block dispatch" if per_ns * dispatch_ns >= BUSY else "latency"


HOLD_AT_WARPS = 4  # slot_hold_fraction is the hold of a 4-warp block (the fitted adds')


def warp_lag(warps: int) -> float:
    """How far the block's last warp ends after a random one of its w warps, in units of the
    window they end in (uniform ends: E[max] - E[one] = (w - 1) / (2 (w + 1))), relative to a
    4-warp block's."""
    def lag(w):
        return (w - 1) / (w + 1)
    return lag(max(int(warps), 1)) / lag(HOLD_AT_WARPS)


def slot_hold(launch, physics: GpuPhysics) -> float:
    """The share of a trip a block keeps its slot past thread 0's end stamp: its other warps end
    later (`warp_lag`: none for one warp, more for many), unless they leave together after a
    block-wide reduction's barrier (`barrier_hold_share` of it)."""
    hold = physics.value("slot_hold_fraction") * warp_lag(launch.warps_per_block)
    return hold * physics.value("barrier_hold_share") if launch.reductions > 0 else hold


def rounds_of(launch, physics: GpuPhysics) -> int:
    """Dependent rounds each of the launch's loop trips takes (sim.model.load_rounds): 1 unless
    its compiled registers cannot hold one trip's loaded values."""
    if not launch.elements:
        return 1
    inputs = inputs_of_traffic(launch.bytes_moved / launch.elements)  # values loaded per element
    values = values_per_thread(launch.elements, launch.grid_blocks, launch.threads_per_block,
                               launch.loop_trips, inputs)
    return load_rounds(int(launch.regs_per_thread), values, physics)


@functools.lru_cache(maxsize=4096)
def _life_and_spread(cost: TripCost, resident_blocks: int) -> tuple[float, float]:
    """A block's mean life at `resident_blocks` live, and the half-width of its spread (asked at
    every scheduler step, for a few hundred distinct counts a launch)."""
    base = cost.life_us(resident_blocks)
    # the straggle is the DRAM's service order, so it cannot outlast the SM's own bytes: the
    # last of an SM's resident blocks (FIFO at its port) stamps its end once all their trips
    # are through, its slot free `hold` of a trip later (`stamped_ends`). The spread narrows
    # to fit under that (symmetric: the mean, hence the throughput, stays the MVA's)
    life = cost.slowest_us(resident_blocks) / (1.0 - cost.hold / (1.0 + cost.hold) / cost.trips)
    return base, min(cost.spread / math.sqrt(cost.trips) * SQRT3, max(0.0, life / base - 1.0))


@functools.lru_cache(maxsize=4096)
def _lives_per_sm(cost: TripCost, resident_blocks: int, sm_weights: tuple):
    """Per SM, `_life_and_spread` at its share of the DRAM (asked at every scheduler step: the
    SMs' few distinct shares are solved once per live count). `sm_weights` is the cost's."""
    weight = np.asarray(sm_weights)
    scale = _conserving_scale(cost, resident_blocks, sm_weights)
    base, half = np.empty(weight.size), np.empty(weight.size)
    for w in np.unique(weight):
        on = weight == w
        base[on], half[on] = _life_and_spread(_weighted(cost, float(w) * scale), resident_blocks)
    return base, half


@functools.lru_cache(maxsize=4096)
def _conserving_scale(cost: TripCost, resident_blocks: int, sm_weights: tuple) -> float:
    """The DRAM gives what one SM cannot use to the others: the shares are scaled so that the SMs
    together move what they would at even shares. A launch the port does not bound then runs alike
    on every SM (its blocks' times hardly depend on the share); a bandwidth-bound one keeps the
    shares as they are (scale 1). `sm_weights` is the cost's (a key of the cache: the cost's
    identity leaves them out)."""
    weights, counts = np.unique(np.asarray(sm_weights), return_counts=True)
    even = len(sm_weights) / _life_and_spread(cost, resident_blocks)[0]

    def moved(scale):
        return sum(n / _life_and_spread(_weighted(cost, float(w) * scale), resident_blocks)[0]
                   for w, n in zip(weights, counts))

    lo, hi = 1.0, float(1.0 / weights.min())  # at `hi` no SM's share is below an even one
    if moved(hi) <= even:
        return hi
    for _ in range(12):  # `moved` rises with the scale; 12 halvings: within 0.02% of the scale
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if moved(mid) < even else (lo, mid)
    return 0.5 * (lo + hi)


@functools.lru_cache(maxsize=256)
def _weighted(cost: TripCost, weight: float) -> TripCost:
    """The cost on an SM whose share of the DRAM is `weight` times an even one."""
    return replace(cost, ceiling_gbps=cost.ceiling_gbps * weight, sm_weights=())


@functools.lru_cache(maxsize=4096)
def _solved(cost: TripCost, per_sm: int, sms: int):
    """TripCost's MVA on one SM at every population up to `per_sm`, `sms` SMs sharing the DRAM,
    once per (cost, per_sm, sms): a long grid and the drain ask for the same few."""
    return mva_levels(per_sm, cost.delay_ns, cost._demands(sms))


CHAIN_CONSTANTS = ("l2_latency_ns", "l2_gbps", "reduction_step_ns")


def chain_ns(gpu: GpuSpec, launch, physics: GpuPhysics | None = None) -> float:
    """A block's dependent work besides its DRAM trips, in ns: each sweep after the first
    re-reads the block's bytes from the L2 (its latency once per loop trip, then the bytes at this SM's share of the
    L2's bandwidth; where the resident blocks' rows outgrow the L2, a DRAM round trip instead),
    and each block-wide reduction is ceil(log2(threads)) dependent shuffle/barrier steps of
    `reduction_step_ns`. In the network it is think time: the block holds its slot, the port
    serves the SM's other blocks meanwhile. 0 for a one-sweep kernel with no reduction."""
    if launch.passes <= 1 and launch.reductions <= 0:
        return 0.0
    ph = physics or physics_for(gpu)
    per_block = launch.bytes_moved / max(launch.grid_blocks, 1)
    resident = min(launch.grid_blocks, gpu.sm_count * launch.blocks_per_sm)
    steps = launch.loop_trips  # a sweep walks the block's share in these dependent steps
    if resident * per_block <= gpu.l2_bytes:
        sweep = steps * ph.value("l2_latency_ns") + per_block / (ph.value("l2_gbps") / gpu.sm_count)
    else:
        sweep = steps * ph.value("dram_latency_ns") + per_block / (achievable_gbps(gpu, ph) / gpu.sm_count)
    steps = math.ceil(math.log2(max(launch.threads_per_block, 2)))
    return (max(launch.passes, 1) - 1) * sweep + max(launch.reductions, 0) * steps * \
        ph.value("reduction_step_ns")


def first_wave_ramp(sim, per_block_ns: float):
    """The first wave does not start at one instant: the GPU hands out its first blocks one
    after another, `per_block_ns` apart GPU-wide, in block order. Each slot's whole chain of
    blocks starts that much later (a slot refills when its block ends)."""
    if per_block_ns <= 0:
        return sim
    wave = sim.timeline.wave
    lane = _lanes(sim)
    first = np.flatnonzero(wave == 0)
    rank = np.empty(first.size)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    offset = np.zeros(int(lane.max()) + 1)
    offset[lane[first]] = rank * per_block_ns / 1e3
    shift = offset[lane]
    ends = sim.block_end_us + shift
    return replace(sim, block_start_us=sim.block_start_us + shift, block_end_us=ends,
                   makespan_us=float(ends.max()))


def _lanes(sim) -> np.ndarray:
    """Per block, its slot GPU-wide (the chain of blocks it belongs to)."""
    return sim.block_sm.astype(np.int64) * sim.blocks_per_sm + sim.block_slot


def _live_at(start: np.ndarray, end: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Blocks live GPU-wide at each of `times` (started by it, not yet ended)."""
    return np.searchsorted(np.sort(start), times, side="right") - \
        np.searchsorted(np.sort(end), times, side="right")


def achievable_gbps(gpu: GpuSpec, physics: GpuPhysics | None = None) -> float:
    """The bandwidth a full GPU reaches: the copy fraction of the rated peak."""
    return gpu.peak_dram_gbps * (physics or physics_for(gpu)).value("copy_fraction")
