"""A launch's schedule over time: residency, waves, THE tail and the state at any moment.

A schedule says where and when each block ran: its SM, its lane on that SM (the block slot; a
recorded trace does not say, so lanes are packed here), its start and its end. Simulated
(`sim.schedule.scheduler`) and recorded (`sim.traces.trace`) schedules become the same `Timeline`, and every number
derived from one is computed here once: the SM view, the timeline panel, the playback bar, the
`simulate` command and the export all read it.

The tail
--------
The tail is the end of a launch during which the GPU holds fewer blocks than it held while the
grid still had blocks waiting, because the grid has run out of blocks to give it. It starts at the
first moment, at or after the last block's start, when the resident blocks fall below the
launch's *steady residency*, and lasts to the end.

The steady residency is the time-weighted median of the resident blocks from the launch's start
to the last block's start (while blocks were still waiting). It is what this launch, on this
hardware, actually sustains, not the occupancy's theoretical maximum: a dispatch model (or a real
GPU) in which SMs never fill every block slot would make "below full residency" call the whole
launch tail. A grid whose lanes each ran at most one block (one wave or less) never had a block
wait for a slot; its steady residency is the GPU's capacity, so a grid smaller than one wave is
all tail and a single, exactly full wave has none.

With uniform blocks this is the familiar partial last wave: the article's 3,907 blocks on an L40S
(852 per wave) run four full waves and a fifth of 499 blocks, and the fifth is the tail, 20% of
the run.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np


@dataclass(frozen=True, slots=True)
class Frame:
    """The launch at one moment: what the SM view draws."""

    time_us: float
    resident: np.ndarray = field(repr=False)  # (sm_count, lanes) block index, -1 = empty
    retired: int  # blocks of the whole grid that have finished
    running: int
    queued: int  # blocks of the whole grid not started yet
    wave: int  # 1-based wave of the grid running now (counting waves left out before)
    in_tail: bool


@dataclass(frozen=True)
class Timeline:
    sm_count: int
    lanes: int  # block slots per SM (a recorded trace: lanes packed from its blocks' times)
    block_sm: np.ndarray = field(repr=False)
    block_lane: np.ndarray = field(repr=False)
    start_us: np.ndarray = field(repr=False)  # from the launch's first block start
    end_us: np.ndarray = field(repr=False)
    capacity: int  # blocks the GPU may hold at once: SMs x blocks per SM by the occupancy
    skipped_waves: int = 0  # identical full waves before this schedule, not scheduled
    first_block: int = 0  # grid index of block 0 (the blocks of the skipped waves come first)

    # -- the step function of resident blocks -------------------------------------------------
    @property
    def n_blocks(self) -> int:
        return int(self.start_us.size)

    @property
    def grid_blocks(self) -> int:
        return self.first_block + self.n_blocks

    @cached_property
    def makespan_us(self) -> float:
        return float(self.end_us.max()) if self.n_blocks else 0.0

    @cached_property
    def residency(self) -> tuple[np.ndarray, np.ndarray]:
        """Resident blocks on the whole GPU as a step function: counts[i] holds from times[i]
        until times[i + 1]; the last count (0) from the makespan on."""
        return residency_steps(self.start_us, self.end_us)

    def mean_resident(self) -> float:
        times, counts = self.residency
        widths = np.diff(np.r_[times, self.makespan_us])
        span = self.makespan_us - float(self.start_us.min())
        return float((widths * counts).sum() / span) if span > 0 else float(counts.max())

    @cached_property
    def event_times_us(self) -> np.ndarray:
        """Every moment a block arrives or retires, with the start and the end."""
        return np.unique(np.r_[self.start_us, self.end_us, 0.0, self.makespan_us])

    # -- waves -------------------------------------------------------------------------------
    @cached_property
    def wave(self) -> np.ndarray:
        """Per block: how many blocks ran in its lane before it (0 = the first wave)."""
        lane = self.block_sm.astype(np.int64) * self.lanes + self.block_lane
        order = np.lexsort((self.start_us, lane))
        first = np.r_[True, lane[order][1:] != lane[order][:-1]]
        run_start = np.maximum.accumulate(np.where(first, np.arange(order.size), 0))
        wave = np.empty(order.size, dtype=np.int64)
        wave[order] = np.arange(order.size) - run_start
        return wave

    @property
    def waves(self) -> int:
        return int(self.wave.max()) + 1 if self.n_blocks else 0

    @property
    def waves_fractional(self) -> float:
        """The whole grid in waves of `capacity` blocks (sim.rules.geometry.waves_of)."""
        from sim.rules.geometry import waves_of

        return waves_of(self.grid_blocks, self.capacity)

    @property
    def waves_told(self) -> str:
        """The launch's waves as the views word them: the busiest slot's run of blocks (the
        waves left out before count too), which is the grid's waves rounded up where every SM
        moves bytes alike; where some SMs' slots ran more (an H200's faster SMs,
        sim.model.memory_cost), the grid's waves and that run."""
        rounds = self.waves + self.skipped_waves
        if self.waves <= math.ceil(self.n_blocks / max(self.capacity, 1) - 1e-9):
            return f"{rounds:,} wave{'s' if rounds != 1 else ''}"  # every slot ran its share
        told = f"{self.waves_fractional:,.1f} waves"
        # the waves left out are counted one block a slot each: no busiest slot to tell
        return told if self.skipped_waves else f"{told}, {rounds:,} on the busiest slot"

    @cached_property
    def wave_starts_us(self) -> np.ndarray:
        """When each wave's first block started."""
        first = np.full(self.waves, np.inf)
        np.minimum.at(first, self.wave, self.start_us)
        return first

    def wave_at(self, t_us: float) -> int:
        """1-based wave of the grid running at t (the waves left out before count too)."""
        k = int(np.searchsorted(self.wave_starts_us, t_us, side="right"))
        return max(1, k) + self.skipped_waves

    @cached_property
    def wave_us(self) -> float:
        """How long a full wave takes: the mean time for a wave's worth of blocks (`capacity`) to
        start, in the later half of the simulated part's full waves (the spacing of wave starts
        when every lane is refilled at once, as in the textbook; also right where SMs keep some
        slots empty, as busy warps make them on an H200: sim/schedule/dispatch.py)."""
        starts = self._sorted_starts
        if starts.size > self.capacity > 0:
            spans = starts[self.capacity:] - starts[:-self.capacity]
            # the steady half (past the launch), without spans that end in a partial last wave:
            # its blocks wait less at the dispatcher (sim.model.memory_cost.TripCost.dispatch_waits)
            full = starts.size - starts.size % self.capacity - self.capacity
            steady = spans[spans.size // 2:full] if full > spans.size // 2 else spans[spans.size // 2:]
            return float(np.mean(steady))
        return self.makespan_us

    @property
    def whole_grid_us(self) -> float:
        """The whole grid's blocks, first start to last end: the simulated part plus the
        identical full waves left out before it (`skipped_waves`), each as long as a full wave
        of the simulated part. A launch's whole time adds its launch overhead (sim.model.launch_model)."""
        return self.makespan_us + self.skipped_waves * self.wave_us

    # -- the tail (see the module docstring) -------------------------------------------------
    @property
    def last_dispatch_us(self) -> float:
        return float(self.start_us.max()) if self.n_blocks else 0.0

    @cached_property
    def steady_blocks(self) -> int:
        """Resident blocks the launch sustained while blocks were still waiting."""
        if self.waves <= 1:
            return int(self.capacity)
        times, counts = self.residency
        lo = np.maximum(times, float(self.start_us.min()))
        hi = np.minimum(np.r_[times[1:], self.makespan_us], self.last_dispatch_us)
        widths = np.clip(hi - lo, 0.0, None)
        if widths.sum() <= 0:
            return int(self.capacity)
        order = np.argsort(counts, kind="stable")
        cum = np.cumsum(widths[order])
        return int(counts[order][np.searchsorted(cum, cum[-1] / 2)])

    @cached_property
    def tail_start_us(self) -> float:
        times, counts = self.residency
        # After the last start nothing arrives, so residency only falls: the first drop below
        # the steady level is where the tail begins.
        after = (times >= self.last_dispatch_us) & (counts < self.steady_blocks)
        return float(times[after][0]) if after.any() else self.makespan_us

    @property
    def tail_us(self) -> float:
        return self.makespan_us - self.tail_start_us

    @property
    def tail_fraction(self) -> float:
        return self.tail_us / self.makespan_us if self.makespan_us > 0 else 0.0

    # -- any moment --------------------------------------------------------------------------
    @cached_property
    def _lane_index(self):
        """Blocks sorted by (lane, start) as one searchable key."""
        lane = self.block_sm.astype(np.int64) * self.lanes + self.block_lane
        order = np.lexsort((self.start_us, lane))
        span = self.makespan_us * 2.0 + 1.0
        return order, lane, lane[order] * span + self.start_us[order], span

    def resident_at(self, t_us: float) -> np.ndarray:
        """Block index in every (SM, lane) at time t; -1 where the lane is empty."""
        n_lanes = self.sm_count * self.lanes
        if self.n_blocks == 0:
            return np.full((self.sm_count, self.lanes), -1, dtype=np.int64)
        order, lane, keys, span = self._lane_index
        slots = np.arange(n_lanes)
        pos = np.searchsorted(keys, slots * span + t_us, side="right") - 1
        blocks = order[np.clip(pos, 0, None)]
        alive = ((pos >= 0) & (lane[blocks] == slots) & (self.start_us[blocks] <= t_us)
                 & (self.end_us[blocks] > t_us))
        return np.where(alive, blocks, -1).reshape(self.sm_count, self.lanes)

    def resident_per_sm(self, t_us: float) -> np.ndarray:
        return (self.resident_at(t_us) >= 0).sum(axis=1)

    @cached_property
    def _sorted_starts(self) -> np.ndarray:
        return np.sort(self.start_us)

    def frame(self, t_us: float) -> Frame:
        resident = self.resident_at(t_us)
        running = int((resident >= 0).sum())
        started = int(np.searchsorted(self._sorted_starts, t_us, side="right"))
        retired = started - running + self.first_block
        queued = self.grid_blocks - retired - running
        in_tail = self.tail_start_us <= t_us < self.makespan_us and queued == 0
        return Frame(float(t_us), resident, retired, running, queued, self.wave_at(t_us), in_tail)

    # -- pictures ----------------------------------------------------------------------------
    def raster(self, bins: int, max_rows: int | None = None) -> np.ndarray:
        """(rows, bins) image of block indices over time, -1 = empty; one row per lane, or, when
        there are more lanes than `max_rows`, one row per group of lanes holding the block with
        the highest index any of them holds (nothing is dropped: a busy lane marks its row)."""
        rows = self.sm_count * self.lanes
        img = np.full((rows, max(1, bins)), -1, dtype=np.int32)
        if self.makespan_us > 0 and self.n_blocks:
            _paint(img, self.block_sm.astype(np.int64) * self.lanes + self.block_lane,
                   self.start_us, self.end_us, self.makespan_us / img.shape[1])
        if max_rows is not None and 0 < max_rows < rows:
            group = -(-rows // max_rows)
            pad = (-rows) % group
            img = np.concatenate([img, np.full((pad, img.shape[1]), -1, np.int32)])
            img = img.reshape(-1, group, img.shape[1]).max(axis=1)
        return img

    def prepare(self) -> Timeline:
        """Work out now what every view reads (e.g. in a worker thread, so a GUI only draws)."""
        self.residency, self.wave, self.tail_start_us, self.event_times_us, self._lane_index  # noqa: B018
        return self

    def summary(self) -> dict:
        return {
            "blocks_scheduled": self.n_blocks,
            "waves": self.waves + self.skipped_waves,
            "makespan_us": round(self.makespan_us, 4),
            "whole_grid_us": round(self.whole_grid_us, 4),
            "steady_resident_blocks": self.steady_blocks,
            "tail_start_us": round(self.tail_start_us, 4),
            "tail_fraction": round(self.tail_fraction, 4),
        }


def residency_steps(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Resident blocks as a step function of time; at equal times retirements come first."""
    times = np.concatenate([starts, ends])
    delta = np.concatenate([np.ones_like(starts), -np.ones_like(ends)])
    order = np.lexsort((delta, times))
    t_sorted, counts = times[order], np.cumsum(delta[order])
    last = np.r_[t_sorted[1:] != t_sorted[:-1], True]  # the count after each instant
    return t_sorted[last], counts[last].astype(int)


def _paint(img: np.ndarray, row: np.ndarray, start: np.ndarray, end: np.ndarray, dt: float) -> None:
    """Write each block's index over the bins it covers (a later start wins a shared bin)."""
    bins = img.shape[1]
    b0 = np.clip(np.floor(start / dt).astype(np.int64), 0, bins - 1)
    b1 = np.maximum(np.clip(np.ceil(end / dt).astype(np.int64), 1, bins), b0 + 1)
    order = np.argsort(start, kind="stable")
    lengths, b0, row = (b1 - b0)[order], b0[order], row[order]
    ids = order.astype(np.int32)
    offsets = np.repeat(np.cumsum(lengths) - lengths, lengths)
    pos = np.arange(int(lengths.sum()), dtype=np.int64) - offsets + np.repeat(row * bins + b0, lengths)
    img.reshape(-1)[pos] = np.repeat(ids, lengths)


def pack_lanes(sm: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Hardware traces do not say which block slot a block used: give each block the first lane of
    its SM that is free when it starts."""
    lane = np.zeros(len(sm), dtype=np.int64)
    busy: dict[int, list[tuple[float, int]]] = {}  # per SM, (end, lane) of its busy lanes
    free: dict[int, list[int]] = {}  # per SM, its free lanes: the lowest is taken first
    order = np.lexsort((start, sm))
    # Python floats and ints, not numpy scalars: a trace has up to millions of blocks. An SM's
    # blocks come in start order, so a lane free at one start stays free until it is taken.
    for i, s, t0, t1 in zip(order.tolist(), np.asarray(sm)[order].tolist(),
                            np.asarray(start, dtype=float)[order].tolist(),
                            np.asarray(end, dtype=float)[order].tolist()):
        ends, idle = busy.setdefault(s, []), free.setdefault(s, [])
        while ends and ends[0][0] <= t0 + 1e-9:
            heapq.heappush(idle, heapq.heappop(ends)[1])
        k = heapq.heappop(idle) if idle else len(ends) + len(idle)
        heapq.heappush(ends, (t1, k))
        lane[i] = k
    return lane


def timeline_of_trace(trace, blocks_per_sm: int, sm_count: int | None = None) -> Timeline:
    """A recorded trace (sim.traces.trace.Trace) as a Timeline, in grid order, times from its first start."""
    order = np.argsort(trace.block, kind="stable")
    sm = np.asarray(trace.sm)[order]
    start = np.asarray(trace.start_us, dtype=float)[order]
    end = np.asarray(trace.end_us, dtype=float)[order]
    start, end = start - start.min(), end - start.min()
    lane = pack_lanes(sm, start, end)
    sms = int(max(sm_count or 0, sm.max() + 1))
    lanes = int(max(lane.max() + 1, blocks_per_sm))
    return Timeline(sms, lanes, sm, lane, start, end, capacity=sms * int(blocks_per_sm))
