"""One SM's warp schedulers over a few microseconds: which resident warp issues, which waits on
memory, which is ready but not picked. The picture behind latency hiding.

The times come from the loaded latency model (`sim.model.latency.predict_loaded`): how long a block
waits for the dispatcher, how long its loads take under this load, the overhead of its trip. What
is added here is the order of issue: the SM's warps are spread over its schedulers (warp i on
scheduler i mod 4, as the hardware numbers them), and each scheduler issues one instruction per
cycle, greedy-then-oldest: the oldest ready warp issues its run of independent instructions, then
the next. The instruction counts are illustrative (a few for the index, one per load, one add and
one store per element); they are tiny beside a DRAM round trip, which is the point: in a
memory-bound kernel the schedulers are nearly always idle and the warps nearly always wait.

The resident blocks start evenly spread over one trip (the steady state of a long launch), so the
window shows a launch in its middle, not its start.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from sim.rules.devices import GpuSpec
from sim.model.latency import BlockTrip, LoadedPrediction

EMPTY, STARTING, ISSUING, MEMORY, READY = range(5)
STATES = {EMPTY: "empty: waiting for the dispatcher to start a block",
          STARTING: "block starting or retiring (no instruction of its own)",
          ISSUING: "issuing",
          MEMORY: "waiting on memory",
          READY: "ready, its scheduler busy with another warp"}
INDEX_INSTRUCTIONS = 6  # global index and bounds check before the first load
SCHEDULERS = 4  # warp schedulers per SM on every architecture WarpScope knows (Volta on)


@dataclass(frozen=True)
class WarpActivity:
    """Per warp slot, (start, end, state) segments; slot s is on scheduler s % schedulers."""

    slots: int  # warp slots of the SM (max warps per SM)
    used_slots: int  # the slots this launch's resident blocks fill
    schedulers: int
    start_ns: float
    window_ns: float
    slot: np.ndarray  # per segment
    begin_ns: np.ndarray
    end_ns: np.ndarray
    state: np.ndarray  # EMPTY .. READY
    issue_busy: np.ndarray  # per scheduler: share of the window's cycles it issues
    memory_bytes: tuple[np.ndarray, np.ndarray]  # (times, bytes of loads in flight on this SM)
    prediction: LoadedPrediction

    def share(self, state: int) -> float:
        """Share of the used slots' time spent in `state` over the window."""
        keep = self.slot < self.used_slots
        total = self.used_slots * self.window_ns
        mask = keep & (self.state == state)
        return float((self.end_ns[mask] - self.begin_ns[mask]).sum() / total) if total else 0.0


def sm_activity(gpu: GpuSpec, p: LoadedPrediction, trip: BlockTrip, *,
                window_ns: float | None = None) -> WarpActivity:
    """What one SM's warps do over `window_ns` (default: three block trips, at least 2 us) of a
    launch in its steady state, for the prediction `p` of `trip`."""
    warps_per_block = math.ceil(trip.threads / gpu.warp_size)
    blocks = p.blocks_per_sm
    window = float(window_ns or max(2000.0, 3 * p.cycle_ns))
    ns_per_cycle = 1e3 / gpu.clock_mhz
    loads = max(1, round(trip.load_bytes_in_flight_per_thread / 4))  # 4-byte loads per round trip
    first_run = (INDEX_INSTRUCTIONS + loads) * ns_per_cycle
    next_run = loads * ns_per_cycle
    last_run = (2 * math.ceil(trip.elements_per_thread) + 1) * ns_per_cycle  # add, store, exit
    wait = p.latency_ns + p.memory_ns / trip.round_trips
    setup = max(0.0, p.overhead_ns - first_run - last_run) / 2  # before the loads, after the store
    start = p.cycle_ns  # one trip in: every slot has run once
    horizon = start + window

    segs: list[tuple[int, float, float, int]] = []
    busy = np.zeros(SCHEDULERS)
    heap: list = []  # (ready time, seq, slot, phase index) of warps wanting their scheduler
    seq = 0
    free = np.zeros(SCHEDULERS)  # when each scheduler can issue next
    pending = {}  # block -> warps still running this trip
    retiring = {}  # slot -> index in segs of its warp's wait for the rest of its block
    phases = ["first"] + ["next"] * (trip.round_trips - 1) + ["last"]

    def begin_trip(block: int, t: float) -> None:
        nonlocal seq
        base = block * warps_per_block
        t_start = t + p.dispatch_ns
        for w in range(warps_per_block):
            segs.append((base + w, t, t_start, EMPTY))
            segs.append((base + w, t_start, t_start + setup, STARTING))
            heapq.heappush(heap, (t_start + setup, seq, base + w, 0))
            seq += 1
        pending[block] = warps_per_block

    for b in range(blocks):  # spread over one trip: the steady state
        begin_trip(b, b * p.cycle_ns / blocks - p.cycle_ns)
    while heap:
        ready, _, slot, phase = heapq.heappop(heap)
        if ready > horizon:
            break
        s = slot % SCHEDULERS
        run = {"first": first_run, "next": next_run, "last": last_run}[phases[phase]]
        begin = max(ready, free[s])
        if begin > ready:
            segs.append((slot, ready, begin, READY))
        end = begin + run
        segs.append((slot, begin, end, ISSUING))
        free[s] = end
        busy[s] += _overlap(begin, end, start, horizon)
        if phase + 1 < len(phases):
            segs.append((slot, end, end + wait, MEMORY))
            heapq.heappush(heap, (end + wait, seq, slot, phase + 1))
            seq += 1
            continue
        block = slot // warps_per_block
        pending[block] -= 1
        retiring[slot] = len(segs)
        segs.append((slot, end, end, STARTING))  # waits for its block's other warps (below)
        if pending[block] == 0:
            base = block * warps_per_block
            for w in range(base, base + warps_per_block):  # retire together; the slot then waits
                i = retiring.pop(w)
                segs[i] = (w, segs[i][1], end + setup, STARTING)
            begin_trip(block, end + setup)

    arr = np.array([sg for sg in segs if sg[2] > start and sg[1] < horizon and sg[2] > sg[1]],
                   dtype=float).reshape(-1, 4)
    begin_ns = np.clip(arr[:, 1], start, horizon) - start
    end_ns = np.clip(arr[:, 2], start, horizon) - start
    mem = arr[:, 3] == MEMORY
    per_warp = gpu.warp_size * trip.load_bytes_in_flight_per_thread
    times, counts = _step_count(begin_ns[mem], end_ns[mem])
    return WarpActivity(gpu.max_warps_per_sm, blocks * warps_per_block, SCHEDULERS, start, window,
                        arr[:, 0].astype(int), begin_ns, end_ns, arr[:, 3].astype(int),
                        busy / window, (times, counts * per_warp), p)


def _overlap(a: float, b: float, lo: float, hi: float) -> float:
    return max(0.0, min(b, hi) - max(a, lo))


def _step_count(begins: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How many intervals are open from each event time on (a step function)."""
    times = np.r_[begins, ends]
    delta = np.r_[np.ones(begins.size), -np.ones(ends.size)]
    order = np.argsort(times, kind="stable")
    return times[order], np.cumsum(delta[order])
