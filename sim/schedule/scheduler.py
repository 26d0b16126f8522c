"""A small deterministic discrete-event model of the block scheduler.

The grid's blocks wait in a queue. Each SM has `blocks_per_sm` block slots (from the occupancy).
Whenever slots are free, the next blocks of the grid are placed on them in the order a placement
policy prefers; each block runs for the time a cost model gives it, then retires and frees its
slot, until the queue is empty. Events are the times at which slots free up; all slots freed at the
same instant are refilled together, so a run costs one numpy step per distinct completion time
(about one per wave for uniform blocks), not one Python step per block.

Cost models and placements are any objects of the `CostModel` and `Placement` protocols;
`sim.schedule.policies` names the built-in ones by stable ids (the memory- and compute-bound costs are the
launch model's: sim.model.launch_model, sim.model.throughput). A cost is asked for each batch of blocks as
they start, with the blocks resident GPU-wide at that moment (the live count), so a block's time
may depend on how full the GPU is when it runs. What a schedule means over time (residency,
waves, the tail) is `sim.schedule.timeline`'s business.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from sim.rules.devices import GpuSpec
from sim.inputs.errors import UserError
from sim.rules.occupancy import Occupancy
from sim.schedule.timeline import Timeline

MAX_SIMULATED_BLOCKS = 2**21  # ~2M blocks: ~50 MB of trace; beyond that use bigger blocks


@runtime_checkable
class CostModel(Protocol):
    """How long blocks run: one duration per block id, given the blocks resident as they start
    (and the SM each starts on, for a cost whose SMs differ)."""

    def durations(self, block_ids: np.ndarray, resident_blocks: int,
                  sms: np.ndarray | None = None) -> np.ndarray: ...


@runtime_checkable
class Placement(Protocol):
    """Which free slot takes the next block: every global slot id (sm * slots_per_sm + k), most
    preferred first."""

    def slot_order(self, gpu: GpuSpec, slots_per_sm: int) -> np.ndarray: ...


# ---- cost models: how long a block runs -------------------------------------------------------

@dataclass(frozen=True, slots=True)
class UniformCost:
    """Every block takes the same time (optionally with seeded random jitter, +-jitter fraction)."""
    id: ClassVar[str] = "uniform"
    duration_us: float = 10.0
    jitter: float = 0.0
    seed: int = 0

    def durations(self, block_ids: np.ndarray, resident_blocks: int,
                  sms: np.ndarray | None = None) -> np.ndarray:
        base = np.full(block_ids.shape, self.duration_us, dtype=float)
        if self.jitter:
            # A hash of (seed, block id), so a block's duration does not depend on when it is placed.
            base *= 1.0 + self.jitter * _unit_noise(block_ids, self.seed)
        return base

    def one_duration(self, block_id: int, resident_blocks: int, sm: int) -> float:
        """`durations` of one block, in Python's floats (the scheduler's most common step)."""
        if self.jitter:
            return self.duration_us * (1.0 + self.jitter * _one_noise(block_id, self.seed))
        return self.duration_us


_GOLDEN = 0x9E3779B97F4A7C15
_MASK64 = 2**64 - 1
_SMALL = 16  # below this many ids Python's ints beat numpy's per-call overhead (~1 us vs ~13 us)


def _unit_noise(ids: np.ndarray, seed: int) -> np.ndarray:
    """Deterministic noise in [-1, 1) per id (splitmix64 finaliser). The scheduler asks for a few
    ids per step, hundreds of thousands of times a launch: those go through Python's ints, the
    same bits as numpy's uint64 arithmetic (tests/sim/test_scheduler.py compares the two)."""
    if ids.ndim == 1 and ids.size < _SMALL and ids.dtype.kind in "iu":
        return np.array([_one_noise(i, seed) for i in ids.tolist()], dtype=float)
    with np.errstate(over="ignore"):
        z = ids.astype(np.uint64) + np.uint64(seed * _GOLDEN % 2**64)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return (z >> np.uint64(11)).astype(float) / 2.0**52 - 1.0


def _one_noise(block_id: int, seed: int) -> float:
    z = (block_id + seed * _GOLDEN) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    z ^= z >> 31
    return (z >> 11) / 2.0**52 - 1.0


# ---- placement policies: which free slot takes the next block --------------------------------

def _breadth_first(sm_order: list[int], slots_per_sm: int) -> np.ndarray:
    """Global slot ids (sm * slots_per_sm + k): one block per SM in `sm_order`, then the next layer."""
    sms = np.asarray(sm_order)
    layers = np.arange(slots_per_sm)[:, None]
    return (sms[None, :] * slots_per_sm + layers).ravel()


@dataclass(frozen=True, slots=True)
class SmOrderPlacement:
    """SM 0, 1, 2, ... then round again: the textbook picture."""
    id: ClassVar[str] = "sm-order"

    def slot_order(self, gpu: GpuSpec, slots_per_sm: int) -> np.ndarray:
        return _breadth_first(list(range(gpu.sm_count)), slots_per_sm)


@dataclass(frozen=True, slots=True)
class TpcSpreadPlacement:
    """Consecutive blocks go to the two SMs of a TPC, TPCs taken round-robin across GPCs.

    This is the pattern recorded on the H200 with %smid (shared/reference/h200-facts.md). SM ids
    are numbered TPC by TPC inside each GPC.
    """
    id: ClassVar[str] = "tpc-spread"

    def sm_order(self, gpu: GpuSpec) -> list[int]:
        per_tpc = max(gpu.sms_per_tpc, 1)
        tpcs = [list(range(s, min(s + per_tpc, gpu.sm_count))) for s in range(0, gpu.sm_count, per_tpc)]
        gpcs = max(min(gpu.gpc_count, len(tpcs)), 1)
        per_gpc = np.array_split(np.arange(len(tpcs)), gpcs)  # contiguous TPCs per GPC
        order = []
        for r in range(max(len(g) for g in per_gpc)):
            for g in per_gpc:
                if r < len(g):
                    order.extend(tpcs[g[r]])
        return order

    def slot_order(self, gpu: GpuSpec, slots_per_sm: int) -> np.ndarray:
        return _breadth_first(self.sm_order(gpu), slots_per_sm)


# ---- the engine ------------------------------------------------------------------------------

class BlockScheduler:
    """Event engine in SimPy's shape: `peek()` gives the next event time, `step()` processes it,
    `run(until)` steps until the grid is done or the clock reaches `until`."""

    def __init__(self, gpu: GpuSpec, n_blocks: int, blocks_per_sm: int, cost: CostModel | None = None,
                 placement: Placement | None = None, dispatch_interval_us: float = 0.0,
                 sm_dispatch_interval_us: float = 0.0, cluster_size: int = 1):
        if isinstance(n_blocks, bool) or not isinstance(n_blocks, (int, np.integer)) or n_blocks < 1:
            raise UserError(f"the grid needs at least one block, got {n_blocks!r}")
        if n_blocks > MAX_SIMULATED_BLOCKS:
            raise UserError(f"{n_blocks:,} blocks is more than the simulator keeps "
                            f"({MAX_SIMULATED_BLOCKS:,}); use bigger blocks or fewer elements")
        if blocks_per_sm < 1:
            raise UserError("no block of this launch fits on an SM, so nothing can be scheduled")
        self.gpu, self.n_blocks, self.slots_per_sm = gpu, int(n_blocks), int(blocks_per_sm)
        self.cost = cost if cost is not None else UniformCost()
        self.placement = placement if placement is not None else SmOrderPlacement()
        self.dispatch_interval_us = float(dispatch_interval_us)  # GPU-wide gap between dispatches
        self.sm_dispatch_interval_us = float(sm_dispatch_interval_us)  # gap between starts on one SM
        self._sm_last_start = np.full(gpu.sm_count, -np.inf)
        n_slots = gpu.sm_count * self.slots_per_sm
        self._preference = self.placement.slot_order(gpu, self.slots_per_sm)
        rank = np.empty(n_slots, dtype=np.int64)  # each slot's place in the preference
        rank[self._preference] = np.arange(n_slots)
        self._rank_of = rank.tolist()
        self._slot_end = np.full(n_slots, -np.inf)  # when each slot frees up (-inf: never used)
        # the busy slots as a heap of (end, slot): a step pops what frees, not a scan of every slot
        # (a grid of ~150,000 blocks steps ~150,000 times); a slot that ends at its own start is
        # free at the next step without being an event
        self._ends_heap: list[tuple[float, int]] = []
        self._free_later: list[int] = []
        self.block_slot = np.full(self.n_blocks, -1, dtype=np.int64)  # global slot id
        self.block_start_us = np.zeros(self.n_blocks)
        self.block_end_us = np.zeros(self.n_blocks)
        self.next_block = 0
        self.now = 0.0  # the clock: the last event's time, or `until` after run(until)
        self._last_event = 0.0  # events up to this time are processed
        self._started = False
        self.cluster_size = int(cluster_size)
        self._gpc_of_slot = None if self.cluster_size == 1 else self._cluster_layout(n_slots)
        self._one = getattr(self.cost, "one_duration", None)

    def _cluster_layout(self, n_slots: int) -> np.ndarray:
        """Each slot's GPC, for placing a cluster's blocks together (sim/rules/clusters.py)."""
        from sim.rules.clusters import CLUSTER_BLOCKS_PER_SM, cluster_occupancy, gpc_layout

        if self.n_blocks % self.cluster_size:
            raise UserError(f"a grid of {self.n_blocks:,} blocks is not a whole number of clusters "
                            f"of {self.cluster_size}")
        if not cluster_occupancy(self.gpu, self.slots_per_sm, self.cluster_size).max_active_clusters:
            raise UserError(f"no GPC of the {self.gpu.name} holds a cluster of {self.cluster_size} "
                            f"blocks at {self.slots_per_sm} per SM")
        gpc_of_sm = np.empty(self.gpu.sm_count, dtype=np.int64)
        for g, sms in enumerate(gpc_layout(self.gpu)[0]):
            gpc_of_sm[list(sms)] = g
        slots = np.arange(n_slots)
        gpc = gpc_of_sm[slots // self.slots_per_sm]
        return np.where(slots % self.slots_per_sm < CLUSTER_BLOCKS_PER_SM, gpc, -1)  # -1: unused

    def _take(self, free: np.ndarray | list[int]) -> np.ndarray | list[int]:
        """The free slots the waiting blocks take, in order. With clusters, whole clusters only,
        each one's blocks in one GPC and on as many SMs (the SMs with the most free slots first,
        ties in the placement's order); slots left over wait for the next event, and an SM's
        slots past CLUSTER_BLOCKS_PER_SM are never used."""
        remaining = self.n_blocks - self.next_block
        if self._gpc_of_slot is None:
            return free[:min(len(free), remaining)]
        free = np.asarray(free, dtype=np.int64)
        c, by_gpc, out = self.cluster_size, {}, []
        for slot in free.tolist():
            g = int(self._gpc_of_slot[slot])
            if g >= 0:
                by_gpc.setdefault(g, {}).setdefault(slot // self.slots_per_sm, []).append(slot)
        for per_sm in by_gpc.values():
            while len(out) < remaining and len(per_sm) >= c:
                for sm in sorted(per_sm, key=lambda s: -len(per_sm[s]))[:c]:
                    out.append(per_sm[sm].pop(0))
                    if not per_sm[sm]:
                        del per_sm[sm]
        taken = set(out)
        self._free_later.extend(x for x in free.tolist() if x not in taken and self._gpc_of_slot[x] >= 0)
        return np.array(out, dtype=np.int64)

    @property
    def done(self) -> bool:
        return self.next_block >= self.n_blocks and self.peek() is None

    def peek(self) -> float | None:
        """Time of the next event: the start, or the next time a busy slot frees up."""
        if not self._started:
            return 0.0
        if self.next_block < self.n_blocks:  # every entry ends after the last event
            return self._ends_heap[0][0] if self._ends_heap else None
        busy = self._slot_end[self._slot_end > self._last_event]  # after a jump (`run`)
        return float(busy.min()) if busy.size else None

    def step(self) -> int:
        """Advance to the next event, retire what ends there, place waiting blocks. Returns how many
        blocks were placed."""
        t = self.peek()
        return 0 if t is None else self._step_at(t)

    def _step_at(self, t: float) -> int:
        self._started, self.now, self._last_event = True, t, t
        if self.next_block >= self.n_blocks:
            return 0
        slots = self._take(self._free_at(t))
        take = len(slots)
        if take < _SMALL and self._one is not None:
            return self._place_few(t, slots.tolist() if isinstance(slots, np.ndarray) else slots)
        slots = np.asarray(slots, dtype=np.int64)
        placed = slice(self.next_block, self.next_block + take)
        ids = np.arange(placed.start, placed.stop)
        starts = np.maximum(t, ids * self.dispatch_interval_us) if self.dispatch_interval_us \
            else np.full(take, t)
        if self.sm_dispatch_interval_us:
            starts = self._space_starts_per_sm(slots // self.slots_per_sm, starts)
        resident = len(self._ends_heap) + take  # the heap holds the slots busy past t
        ends = starts + self.cost.durations(ids, resident, slots // self.slots_per_sm)
        self.block_slot[placed], self.block_start_us[placed], self.block_end_us[placed] = \
            slots, starts, ends
        self._slot_end[slots] = ends
        for end, slot in zip(ends.tolist(), slots.tolist()):
            if end > t:
                heapq.heappush(self._ends_heap, (end, slot))
            else:
                self._free_later.append(slot)
        self.next_block += take
        return take

    def _place_few(self, t: float, slots: list[int]) -> int:
        """`_step_at` for the few blocks most steps place, in Python's floats: the same numbers
        without numpy's per-call overhead (tests/sim/test_scheduler.py compares the two). Every
        block of the step sees the same live count; an SM's k-th block of the step starts k
        dispatch gaps after its first."""
        first, resident, gap = self.next_block, len(self._ends_heap) + len(slots), self.sm_dispatch_interval_us
        placed: dict[int, tuple[float, int]] = {}  # per SM: its last start before this step, blocks so far
        for i, slot in enumerate(slots, first):
            sm = slot // self.slots_per_sm
            start = max(t, i * self.dispatch_interval_us) if self.dispatch_interval_us else t
            if gap:
                before, rank = placed.get(sm, (float(self._sm_last_start[sm]), 0))
                start = max(start, max(start, before + gap) + rank * gap)
                placed[sm] = (before, rank + 1)
                self._sm_last_start[sm] = max(self._sm_last_start[sm], start)
            end = start + self._one(i, resident, sm)
            self.block_slot[i], self.block_start_us[i], self.block_end_us[i] = slot, start, end
            self._slot_end[slot] = end
            if end > t:
                heapq.heappush(self._ends_heap, (end, slot))
            else:
                self._free_later.append(slot)
        self.next_block = first + len(slots)
        return len(slots)

    def _free_at(self, t: float) -> np.ndarray | list[int]:
        """The slots free at `t`, in the placement's order of preference."""
        if self.next_block == 0:  # nothing placed yet: every slot, in order
            return self._preference
        freed, self._free_later = self._free_later, []
        while self._ends_heap and self._ends_heap[0][0] <= t:
            freed.append(heapq.heappop(self._ends_heap)[1])
        if len(freed) > 1:
            freed.sort(key=self._rank_of.__getitem__)
        return freed

    def _space_starts_per_sm(self, sms: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """An SM starts one block per `sm_dispatch_interval_us`: the k-th block placed on an SM in
        this step starts k intervals after that SM's previous start (or at its earliest time)."""
        gap = self.sm_dispatch_interval_us
        if sms.size == 1:  # most steps place one block: the same rule without numpy's overhead
            sm = int(sms[0])
            start = max(float(starts[0]), self._sm_last_start[sm] + gap)
            self._sm_last_start[sm] = max(self._sm_last_start[sm], start)
            return np.array([start])
        order = np.argsort(sms, kind="stable")
        sorted_sms = sms[order]
        first = np.concatenate(([True], sorted_sms[1:] != sorted_sms[:-1]))
        group_start = np.maximum.accumulate(np.where(first, np.arange(sms.size), 0))
        rank = np.empty(sms.size, dtype=np.int64)
        rank[order] = np.arange(sms.size) - group_start
        base = np.maximum(starts, self._sm_last_start[sms] + gap)
        # Blocks of one SM in this step share that SM's base (equal within a step up to the GPU-wide
        # dispatch spacing, which is far smaller than the SM's): lay them out one gap apart.
        spaced = np.maximum(starts, base + rank * gap)
        np.maximum.at(self._sm_last_start, sms, spaced)
        return spaced

    def run(self, until: float | None = None) -> None:
        """Step until the grid is done, or, SimPy's contract, until the clock reaches `until`:
        events at or after `until` wait for the next run, and `now == until` afterwards."""
        if until is not None and until < self.now:
            raise ValueError(f"until ({until}) must not be before the current time ({self.now})")
        while (nxt := self.peek()) is not None and (until is None or nxt < until):
            if self._started and self.next_block >= self.n_blocks:
                # Nothing is left to place, only retirements, which change no block: jump them.
                ends = self._slot_end[self._slot_end > self._last_event]
                self._last_event = self.now = float(ends.max() if until is None else ends[ends < until].max())
                break
            self._step_at(nxt)  # what step() does, without asking peek() twice
        if until is not None:
            self.now = float(until)


@dataclass(frozen=True)
class Simulation:
    gpu: GpuSpec
    blocks_per_sm: int
    n_blocks: int
    block_sm: np.ndarray = field(repr=False)
    block_slot: np.ndarray = field(repr=False)  # slot within its SM, 0..blocks_per_sm-1
    block_start_us: np.ndarray = field(repr=False)
    block_end_us: np.ndarray = field(repr=False)
    makespan_us: float
    placement: str  # the policy's id (sim.schedule.policies names it)
    cost: str
    skipped_waves: int = 0  # identical full waves of the grid before these blocks, not simulated
    first_block: int = 0  # grid index of block 0
    cluster_size: int = 1  # blocks per cluster (each cluster's blocks on one GPC)

    @property
    def slots_per_sm(self) -> int:
        return self.blocks_per_sm

    @property
    def n_slots(self) -> int:
        """Blocks the GPU holds at once: SMs x blocks per SM, or whole clusters GPC by GPC."""
        if self.cluster_size > 1:
            from sim.rules.clusters import cluster_occupancy

            return cluster_occupancy(self.gpu, self.blocks_per_sm, self.cluster_size).blocks_resident
        return self.gpu.sm_count * self.blocks_per_sm

    @property
    def waves_fractional(self) -> float:
        return self.timeline.waves_fractional

    @cached_property
    def timeline(self) -> Timeline:
        """Residency, waves, the tail and every moment of this schedule (sim.schedule.timeline)."""
        return Timeline(self.gpu.sm_count, self.blocks_per_sm, self.block_sm, self.block_slot,
                        self.block_start_us, self.block_end_us, capacity=self.n_slots,
                        skipped_waves=self.skipped_waves, first_block=self.first_block)

    @property
    def block_wave(self) -> np.ndarray:
        return self.timeline.wave

    @property
    def waves(self) -> int:
        return self.timeline.waves + self.skipped_waves

    @property
    def tail_fraction(self) -> float:
        return self.timeline.tail_fraction

    def resident_at(self, t_us: float) -> np.ndarray:
        return self.timeline.resident_at(t_us)

    def residency_steps(self) -> tuple[np.ndarray, np.ndarray]:
        return self.timeline.residency

    def resident_per_sm(self, times_us) -> np.ndarray:
        """Blocks resident on each SM at each time: shape (len(times), sm_count)."""
        return np.stack([self.timeline.resident_per_sm(t) for t in np.atleast_1d(times_us)])

    def summary(self) -> dict:
        return {
            "gpu": self.gpu.name, "blocks": self.n_blocks + self.first_block,
            "blocks_per_sm": self.blocks_per_sm, "slots_on_gpu": self.n_slots,
            "waves_fractional": round(self.waves_fractional, 4), "placement": self.placement,
            "cost": self.cost, **self.timeline.summary(),
        }

    def trace_records(self):
        """(block, sm, slot, start_us, end_us) per block, in block order."""
        return list(zip(range(self.first_block, self.first_block + self.n_blocks),
                        self.block_sm.tolist(), self.block_slot.tolist(),
                        self.block_start_us.tolist(), self.block_end_us.tolist()))


def simulate(gpu: GpuSpec, n_blocks: int, occ: Occupancy | int, cost: CostModel | None = None,
             placement: Placement | None = None, dispatch_interval_us: float = 0.0,
             sm_dispatch_interval_us: float = 0.0, cluster_size: int = 1) -> Simulation:
    """Run the whole grid through the scheduler and return its trace and summary (with
    `cluster_size` > 1, each cluster's blocks start together on one GPC)."""
    blocks_per_sm = occ if isinstance(occ, (int, np.integer)) else occ.blocks_per_sm
    if blocks_per_sm < 1 and not isinstance(occ, (int, np.integer)):
        raise UserError(f"nothing to schedule: {occ.reason}")
    engine = BlockScheduler(gpu, n_blocks, blocks_per_sm, cost, placement, dispatch_interval_us,
                            sm_dispatch_interval_us, cluster_size)
    engine.run()
    slot = engine.block_slot
    return Simulation(
        gpu=gpu, blocks_per_sm=engine.slots_per_sm, n_blocks=engine.n_blocks,
        block_sm=slot // engine.slots_per_sm, block_slot=slot % engine.slots_per_sm,
        block_start_us=engine.block_start_us, block_end_us=engine.block_end_us,
        makespan_us=float(engine.block_end_us.max()),
        placement=getattr(engine.placement, "id", type(engine.placement).__name__),
        cost=getattr(engine.cost, "id", type(engine.cost).__name__), cluster_size=engine.cluster_size,
    )
