"""The drain: memory-bound blocks end sooner once nothing refills the GPU.

The block scheduler (sim.schedule.scheduler) fixes a block's time when it starts, from the blocks
live at that moment (sim.model.memory_cost.TripCost). While blocks still wait, every freed slot
is refilled at once (the memory-bound schedule is "ideal"), so each SM keeps its full count and
the time fixed at the start is right: a block shares its SM's memory port with a full set of
neighbours all its life. After the last block starts nothing refills, and a block that started
late no longer waits behind neighbours that are not there. What an SM still has to do is the
bytes its live blocks have not moved yet (each block's share of its life still ahead): they go
through its port at the rate the TripCost's MVA gives its live blocks (the port's share of the
DRAM, or what their latency allows), then one round trip per trip left (a later load round's trip hidden behind the port's time
where the SM's blocks are staggered). `drain` ends no block
of the SM later than that; blocks due sooner keep their ends (the DRAM's service order stays).
The SM's share of the DRAM stays what it was at the last start, and is the even one on every
SM (an H200 SM that moves bytes faster, TripCost.sm_weights, ends its blocks first and leaves its
share to the others: at their own shares to the end, one-wave launches ran 8 points long);
the H200's traces drain no faster as SMs go idle (a model that sped the drain up fitted worse). A
block waiting on latency rather than on the port gains little: no SM ends before its least
advanced block would alone. In a grid of one wave or less every block
still has all its bytes ahead at the last start, and the bound is about the start-time one
(`TripCost.slowest_us`, on the SM's own count).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np


def drain(sim, cost):
    """`sim` (a sim.schedule.scheduler.Simulation under `cost`, a TripCost) with the ends after
    its last start bounded by each SM's bytes still to move (see the module docstring)."""
    start, end = sim.block_start_us, sim.block_end_us
    t = float(start.max())
    live = np.flatnonzero(end > t)
    if not live.size:
        return sim
    sms = sim.gpu.sm_count
    sm = sim.block_sm[live]
    ahead = (end[live] - t) / np.maximum(end[live] - start[live], 1e-12)  # share of its life left
    count = np.bincount(sm, minlength=sms)
    busy = int(np.count_nonzero(count))
    per_ns, _ = cost.levels(int(count.max()), busy)  # block trips per ns on an SM of k live blocks
    rate = np.where(count > 0, per_ns[np.maximum(count, 1) - 1], 1.0) * cost.bytes_per_trip
    bytes_left = np.bincount(sm, ahead, minlength=sms) * cost.bytes_per_trip * cost.trips
    trips_left = np.zeros(sms)
    np.maximum.at(trips_left, sm, np.ceil(ahead * cost.trips - 1e-9))
    # a block's later load rounds wait out their round trips while the SM's other blocks, started
    # at other times, still stream: hidden in the share of the SM's blocks that are staggered
    # (none in a one-wave grid, whose blocks all wait together)
    nearest, furthest = np.ones(sms), np.zeros(sms)
    np.minimum.at(nearest, sm, ahead)
    np.maximum.at(furthest, sm, ahead)
    stagger = np.where(furthest > 0, 1.0 - nearest / np.maximum(furthest, 1e-12), 0.0)
    port_ns = bytes_left / rate / np.maximum(trips_left, 1)  # the port's time on each trip left
    # of each loop trip's rounds the first waits in full, each later one only past the port's time
    hidden = trips_left * (cost.rounds - 1) / cost.rounds * np.minimum(cost.delay_ns, port_ns)
    latency = trips_left * cost.delay_ns - stagger * hidden
    bound = (cost.dispatch_ns + latency + bytes_left / rate) / 1e3 + cost.extra_us
    # the bound is on the end stamp; the slot frees `hold` of a trip later (TripCost.stamped_ends)
    cap = bound / (1.0 - cost.hold / (1.0 + cost.hold) / cost.trips)
    cap = np.maximum(cap, furthest * cost.life_us(busy))
    ends = np.maximum(np.minimum(end[live], t + cap[sm]), start[live] + cost.min_us)
    if np.array_equal(ends, end[live]):
        return sim
    new_end = end.copy()
    new_end[live] = ends
    return replace(sim, block_end_us=new_end, makespan_us=float(new_end.max()))
