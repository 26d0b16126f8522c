"""How blocks really reach SMs: the dispatch model fitted to traces recorded on the GPU.

The textbook schedule (sim/schedule/scheduler.py, the "ideal" mode) starts a block the moment a block slot
frees. Block traces recorded on an H200 (tests/data/h200_spin_fit, docs/DISPATCH.md) agree while
the resident warps wait (on DRAM, or asleep), but not while they busy-issue instructions: then an
SM takes new blocks only while few of its warps are busy, and the rest come later. Per SM:

1. burst: a block waiting for the SM starts at once while fewer than `burst_warps` warps are busy
   on it;
2. trickle: beyond that, one more block (small blocks: more, up to `trickle_cap_warps`) gets in
   after a log-normal wait, with a probability and median that depend on the warps per block
   (the table `trickle`); an SM whose draw fails waits for the next exit to try again;
3. ticks: each SM is visited once per `tick_us`, first at `tick_first_us` plus up to
   `tick_first_spread_us` (uniform over the SMs). At a visit, an SM
   on which nothing started or ended since the previous visit takes every block waiting for it;
   a busy one takes a single block (with probability `tick_single_p`);
4. exits free warps: the burst rule applies again at once;
5. registers (only where the launch's registers per thread are known): when the SM's blocks at
   full occupancy hold at least `regfile_fraction` of the register file, the fill changes
   (fitted on `trace --hold-regs` traces). Limited by registers
   with warp and block slots to spare, busy warps hold nothing back (rules 1-3 off); with the
   warp slots or the block slots (`max_blocks_per_sm`) full too, a visit lets in one block even on a quiet SM, while fewer than
   `regfile_full_cap_warps` warps are busy. Either way each block starts
   `regfile_gap_warp_us` x warps per block x exp(busy warps / `regfile_gap_warps`) after the
   SM's previous start or exit: the fuller the SM, the slower the next block.

The launch's first blocks reach an SM one warp per `fill_warp_us`; later an SM starts at most one
block per `sm_interval_us`. Warps that sleep or wait on memory hold nothing back: rules 1-3 do
not apply, only the pacing. The numbers live in sim/schedule/dispatch_profile.py (per GPU, as data).

The engine: the SMs do not influence each other except through the grid's queue, and a block's
start depends only on blocks handed to its SM before it. So every SM is simulated as if the queue
never ran dry, all SMs in lockstep with numpy (one step = each SM's next event), and the grid's
blocks are then the first `n_blocks` hand-outs in time (ties in the placement's order). A
150,000-block grid takes well under a second.
"""

from __future__ import annotations

import math

import numpy as np

from sim.rules.devices import GpuSpec
from sim.schedule.dispatch_profile import BUSY_WAITS, WAITS, DispatchParams
from sim.inputs.errors import UserError

INF = math.inf
MAX_BLOCKS = 2**21  # as sim.schedule.scheduler: beyond that use bigger blocks


def _group_starts(rows: np.ndarray) -> np.ndarray:
    """For rows sorted ascending: the index of the first element of each element's run."""
    first = np.ones(rows.size, dtype=bool)
    first[1:] = rows[1:] != rows[:-1]
    return np.maximum.accumulate(np.where(first, np.arange(rows.size), 0))


def _noise(ids: np.ndarray, seed: int) -> np.ndarray:
    from sim.schedule.scheduler import _unit_noise  # one hash for every seeded per-block variation

    return _unit_noise(ids, seed)


def dispatch_schedule(gpu: GpuSpec, n_blocks: int, blocks_per_sm: int, warps_per_block: int,
                      duration_us: float, params: DispatchParams, wait: str = "spin",
                      slot_order: np.ndarray | None = None, seed: int = 0, jitter: float = 0.0,
                      regs_per_thread: int = 0):
    """Place and start every block of the grid. `slot_order`: global slot ids
    (sm * blocks_per_sm + k) in the order the placement prefers them (default breadth first over
    SM 0, 1, ...). `jitter`: +- fraction of seeded variation of each block's duration.
    `regs_per_thread`: the compiled kernel's (0: unknown, the register rules stay off).
    Returns (block_sm, block_slot, start_us, end_us) in grid order."""
    if wait not in WAITS:
        raise UserError(f"what the warps do must be one of {', '.join(WAITS)}, got {wait!r}")
    if not 1 <= n_blocks <= MAX_BLOCKS:
        raise UserError(f"the grid needs 1..{MAX_BLOCKS:,} blocks, got {n_blocks:,}")
    if blocks_per_sm < 1 or warps_per_block < 1:
        raise UserError("a schedule needs at least one block per SM and one warp per block")
    if not (duration_us > 0 and math.isfinite(duration_us)):
        raise UserError(f"block duration must be a positive number, got {duration_us}")
    S, K, w = gpu.sm_count, int(blocks_per_sm), int(warps_per_block)
    if slot_order is None:
        slot_order = (np.arange(S)[None, :] * K + np.arange(K)[:, None]).ravel()
    slot_order = np.asarray(slot_order, dtype=np.int64)
    rank = np.empty(S * K, dtype=np.int64)
    rank[slot_order] = np.arange(S * K)
    # column j of SM s holds that SM's j-th preferred slot: a stable sort by waiting time then
    # keeps the placement's order among blocks handed out at the same moment
    col_slot = np.argsort(rank.reshape(S, K), axis=1, kind="stable")
    fill = register_fill(gpu, K, w, regs_per_thread, params) if wait in BUSY_WAITS else "waits"
    sim = _Lockstep(S, K, w, float(duration_us), params, fill, seed, jitter, n_blocks)
    sim.run()
    return sim.select(n_blocks, rank, col_slot)


def register_fill(gpu: GpuSpec, blocks_per_sm: int, warps_per_block: int, regs_per_thread: int,
                  params: DispatchParams) -> str:
    """How an SM of busy warps fills (rule 5): "busy" (rules 1-4), "registers" (the register file
    limits the blocks, the warp slots are not full: blocks start as if the warps waited, each
    refill late) or "full" (register file and the warp or block slots full: one block at a time
    beyond the burst, each refill late)."""
    from sim.rules.occupancy import occupancy

    if regs_per_thread <= 0 or params.regfile_fraction > 1:
        return "busy"
    occ = occupancy(gpu, warps_per_block * gpu.warp_size, int(regs_per_thread))
    held = blocks_per_sm * occ.regs_allocated_per_block / gpu.regs_per_sm
    if held < params.regfile_fraction:
        return "busy"
    # a slot limit binding too (all warp slots, or all block slots: 1-warp blocks at 64 registers)
    slots_full = (blocks_per_sm * warps_per_block >= gpu.max_warps_per_sm
                  or blocks_per_sm >= gpu.max_blocks_per_sm)
    return "full" if slots_full else "registers"


class _Lockstep:
    """Every SM's blocks, as if the grid never ran out, stepped one event per SM at a time."""

    def __init__(self, S, K, w, d, p: DispatchParams, fill, seed, jitter, n_blocks):
        self.S, self.K, self.w, self.d, self.p = S, K, w, d, p
        self.jitter, self.seed = jitter, seed
        self.interval = p.sm_interval_us  # after the launch's first blocks
        self.rng = np.random.default_rng(seed)
        self.quiet_all = fill != "full"  # a quiet SM takes every waiting block at a visit
        self.slow = fill in ("full", "registers") and p.regfile_gap_warp_us > 0
        if fill in ("busy", "full"):
            self.B = p.burst_warps
            self.single_cap = p.tick_single_cap_warps if fill == "busy" else p.regfile_full_cap_warps
            self.C = max(p.trickle_cap_warps, p.burst_warps + w)  # one block beyond the burst
            self.trickle_p, self.trickle_us = p.trickle_for(w)
            self.next_tick = p.tick_first_us + p.tick_first_spread_us * self.rng.random(S)
        else:
            self.B, self.C, self.single_cap = INF, INF, INF
            self.trickle_p, self.trickle_us = 0.0, 1.0
            self.next_tick = np.full(S, INF)
        self.M = max(8, math.ceil(n_blocks / S * 1.3)) + 2 * K
        self.rec_assign = np.full((S, self.M), INF)
        self.rec_start = np.full((S, self.M), INF)
        self.rec_col = np.zeros((S, self.M), dtype=np.int32)
        self.rec_assign[:, :K] = 0.0
        self.rec_col[:, :K] = np.arange(K)
        self.count = np.full(S, K)
        self.run_end = np.full((S, K), INF)  # INF: the slot's block is waiting
        self.since = np.zeros((S, K))  # when the slot's block began waiting
        self.slot_rec = np.tile(np.arange(K), (S, 1))
        # the waiting blocks' slots, oldest first: a ring of K per SM (exits append in time order)
        self.queue = np.tile(np.arange(K), (S, 1))
        self.head = np.zeros(S, dtype=np.int64)
        self.busy = np.zeros(S)
        self.nrun = np.zeros(S, dtype=np.int64)
        self.nwait = np.full(S, K, dtype=np.int64)
        self.trickle_at = np.full(S, INF)
        self.blocked = np.zeros(S, dtype=bool)
        self.now = np.zeros(S)
        self.last_start = np.full(S, -INF)
        self.last_activity = np.zeros(S)
        self.n_blocks = n_blocks

    # -- starting blocks -------------------------------------------------------------------------
    def _start(self, n: np.ndarray, activity: np.ndarray) -> None:
        """Start the n[s] longest-waiting blocks of each SM s, paced."""
        rows = np.flatnonzero(n > 0)
        if rows.size == 0:
            return
        k = n[rows]
        rr = np.repeat(rows, k)
        g0 = _group_starts(rr)
        nth = np.arange(rr.size) - g0
        cc = self.queue[rr, (self.head[rr] + nth) % self.K]
        self.head[rows] += k
        idx = self.slot_rec[rr, cc]
        p = self.p
        gap = np.where(idx < self.K, p.fill_warp_us * self.w, self.interval)  # first: launch
        csum = np.cumsum(gap)
        t = np.maximum(self.now[rr], self.last_start[rr] + gap[g0]) + (csum - csum[g0])
        if self.slow:  # rule 5: each block waits longer the more warps are busy
            each = p.regfile_gap_warp_us * self.w * np.exp((self.busy[rr] + self.w * nth)
                                                           / p.regfile_gap_warps)
            upto = np.cumsum(each)
            since = np.maximum(self.now[rr], self.last_start[rr])
            t = np.maximum(t, since + upto - upto[g0] + each[g0])
        self.last_start[rows] = t[np.cumsum(k) - 1]
        dur = self.d
        if self.jitter:
            dur = self.d * (1.0 + self.jitter * _noise(rr * (1 << 24) + idx, self.seed))
        self.run_end[rr, cc] = t + dur
        self.rec_start[rr, idx] = t
        self.busy[rows] += self.w * k
        self.nrun[rows] += k
        self.nwait[rows] -= k
        act = rows[activity[rows]]
        self.last_activity[act] = self.now[act]

    def _draw_trickles(self, active: np.ndarray) -> None:
        draw = (active & (self.nwait > 0) & (self.busy >= self.B) & (self.busy < self.C)
                & (self.trickle_at == INF) & ~self.blocked)
        if not draw.any():
            return
        u = self.rng.random(self.S)
        z = self.rng.standard_normal(self.S)
        ok = draw & (u < self.trickle_p)
        self.trickle_at[ok] = self.now[ok] + self.trickle_us * np.exp(self.p.trickle_spread * z[ok])
        self.blocked[draw & ~ok] = True

    def _burst(self, busy, free):
        need = np.ceil((self.B - busy) / self.w)  # an empty SM takes one block at least (B >= 1)
        return np.clip(need, 0, free).astype(np.int64) if self.B < INF else free

    # -- the loop --------------------------------------------------------------------------------
    def _record_exits(self, E: np.ndarray, t: np.ndarray) -> None:
        er, ec = np.nonzero(E)
        self.run_end[er, ec] = INF
        self.since[er, ec] = t[er]
        nth = np.arange(er.size) - _group_starts(er)
        self.queue[er, (self.head[er] + self.nwait[er] + nth) % self.K] = ec
        if self.count.max() + self.K > self.M:  # the grid lasts longer on some SM: grow
            extra = self.M
            self.rec_assign = np.concatenate([self.rec_assign, np.full((self.S, extra), INF)], 1)
            self.rec_start = np.concatenate([self.rec_start, np.full((self.S, extra), INF)], 1)
            self.rec_col = np.concatenate([self.rec_col, np.zeros((self.S, extra), np.int32)], 1)
            self.M += extra
        idx = self.count[er] + np.arange(er.size) - _group_starts(er)
        self.rec_assign[er, idx] = t[er]
        self.rec_col[er, idx] = ec
        self.slot_rec[er, ec] = idx

    def run(self) -> None:
        S, p = self.S, self.p
        everyone = np.ones(S, dtype=bool)
        self._start(self._burst(self.busy, self.nwait), everyone)
        self._draw_trickles(everyone)
        horizon, steps = INF, 0
        while True:
            stale = self.next_tick < self.now
            if stale.any():  # ticks that passed while nothing waited
                self.next_tick[stale] += p.tick_us * (np.floor((self.now[stale] - self.next_tick[stale])
                                                               / p.tick_us) + 1)
            t_tick = np.where(self.nwait > 0, self.next_tick, INF)
            t = np.minimum(np.minimum(self.run_end.min(axis=1), self.trickle_at), t_tick)
            active = t <= horizon
            if horizon < INF:  # past the last block the grid needs: finish what was handed out
                oldest = self.since[np.arange(S), self.queue[np.arange(S), self.head % self.K]]
                active |= (self.nwait > 0) & (oldest <= horizon)
            active &= t < INF
            if not active.any():
                break
            t = np.where(active, t, self.now)
            self.now = t
            E = (self.run_end == t[:, None]) & active[:, None]
            ended = E.sum(axis=1)
            if ended.any():
                hit = ended > 0
                self.busy -= self.w * ended
                self.nrun -= ended
                self.blocked[hit] = False
                self.last_activity[hit] = t[hit]
                self._record_exits(E, t)
                self.nwait += ended
                self.count += ended
            # the three ways blocks start: a visit, a trickle, the burst (after exits only: without
            # them every SM is as full as the burst allows since its last step)
            at_tick = active & (t == t_tick)
            single = self.rng.random(S) < p.tick_single_p  # drawn every step: repeatable runs
            n = np.zeros(S, dtype=np.int64)
            if at_tick.any():
                self.next_tick[at_tick] += p.tick_us
                quiet = (self.last_activity <= t - p.tick_us + 1e-9) & self.quiet_all
                single &= self.busy < self.single_cap
                n = np.where(at_tick, np.where(quiet, self.nwait, np.minimum(self.nwait, single)), 0)
            n1 = n
            at_trickle = active & (t == self.trickle_at)
            if at_trickle.any():
                self.trickle_at[at_trickle] = INF
                n2 = (at_trickle & (self.busy + self.w * n1 < self.C)
                      & (self.nwait > n1)).astype(np.int64)
                n = n1 + n2
            if ended.any():
                n3 = np.where(active, self._burst(self.busy + self.w * n,
                                                  self.nwait - n), 0)
                self._start(n + n3, (n - n1 + n3) > 0)
            else:
                self._start(n, (n - n1) > 0)
            self._draw_trickles(active)
            steps += 1
            if steps % 16 == 0 and self.count.sum() >= self.n_blocks:
                handed = self.rec_assign[self.rec_assign < INF]
                horizon = float(np.partition(handed, self.n_blocks - 1)[self.n_blocks - 1])
                if p.handout_window_us > 0:
                    horizon = (math.floor(horizon / p.handout_window_us) + 1) * p.handout_window_us

    def select(self, n_blocks: int, rank: np.ndarray, col_slot: np.ndarray):
        """The grid: the first n_blocks hand-outs in time, ties in the placement's order."""
        sm, j = np.nonzero(self.rec_assign < INF)
        col = self.rec_col[sm, j]
        slot = col_slot[sm, col]
        assign = self.rec_assign[sm, j]
        q = self.p.handout_window_us
        if q > 0:  # slots freed within one window are served one block per SM per round
            window = np.floor(assign / q)
            by_sm = np.lexsort((assign, window, sm))  # nonzero() is sorted by sm already
            run = np.empty(sm.size, dtype=np.int64)
            key = sm[by_sm] * (1 << 40) + window[by_sm].astype(np.int64)
            run[by_sm] = np.arange(sm.size) - _group_starts(key)
            order = np.lexsort((rank[sm * self.K + slot], run, window))[:n_blocks]
        else:
            order = np.lexsort((rank[sm * self.K + slot], assign))[:n_blocks]
        sm, j, slot = sm[order], j[order], slot[order]
        start = self.rec_start[sm, j]
        if not np.isfinite(start).all():
            raise RuntimeError("dispatch model: a block of the grid never started")
        dur = self.d
        if self.jitter:
            dur = self.d * (1.0 + self.jitter * _noise(sm * (1 << 24) + j, self.seed))
        return sm, slot, start, start + dur
