"""Achieved occupancy and waves per SM, as Nsight Compute defines them, for a simulated schedule
or a recorded one.

- Achieved occupancy (ncu: sm__warps_active.avg.pct_of_peak_sustained_active): the warps resident
  on an SM, summed over the time that SM was active (held at least one block), over all SMs,
  divided by the most warps an SM holds times that active time. Every block of a launch has the
  same warps, so the warps' time is the blocks' time times the warps per block.
- Theoretical occupancy: what the limits allow (sim.rules.occupancy).
- Waves per SM (ncu: launch__waves_per_multiprocessor): grid blocks / (SMs x theoretical blocks
  per SM), sim.rules.geometry.waves_of.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.rules.geometry import waves_of


def busy_times(sm, start, end) -> tuple[float, float]:
    """(the blocks' summed time, the SMs' summed active time): each SM's active time is the
    length of the union of its blocks' intervals."""
    sm = np.asarray(sm, dtype=np.int64)
    start, end = np.asarray(start, dtype=np.float64), np.asarray(end, dtype=np.float64)
    if sm.size == 0:
        return 0.0, 0.0
    order = np.lexsort((start, sm))
    sm, start, end = sm[order], start[order], end[order]
    # Times as exact integer ranks, each SM's lifted above the one before: one running maximum
    # of the ends then never carries over from one SM to the next.
    ranks = np.unique(np.r_[start, end], return_inverse=True)[1]
    lift = (sm - sm.min()) * np.int64(ranks.max() + 1)
    s_rank, reach = ranks[:start.size] + lift, np.maximum.accumulate(ranks[start.size:] + lift)
    new = np.r_[True, s_rank[1:] > reach[:-1]]  # a gap before this block: a new busy stretch
    first = np.flatnonzero(new)
    active = float((np.maximum.reduceat(end, first) - start[first]).sum())
    return float((end - start).sum()), active


def achieved_occupancy(sm, start, end, warps_per_block: int, max_warps_per_sm: int) -> float:
    """Time-averaged resident warps over each SM's active time / the SM's warp slots (0..1)."""
    blocks_time, active = busy_times(sm, start, end)
    return warps_per_block * blocks_time / (max_warps_per_sm * active) if active > 0 else 0.0


@dataclass(frozen=True, slots=True)
class Achieved:
    achieved: float  # 0..1 of the SM's warp slots
    theoretical: float  # 0..1: what the limits allow
    waves_per_sm: float
    over: str  # what it was measured over: "the simulated schedule", "the recorded trace"

    def text(self) -> str:
        return f"achieved {self.achieved:.0%} of theoretical {self.theoretical:.0%}"

    def long_text(self) -> str:
        return f"{self.text()} over {self.over}; {self.waves_per_sm:,.2f} waves per SM"

    def to_dict(self) -> dict:
        return {"achieved_occupancy": round(self.achieved, 4),
                "theoretical_occupancy": round(self.theoretical, 4),
                "waves_per_sm": round(self.waves_per_sm, 4), "over": self.over}


def of_timeline(tl, warps_per_block: int, max_warps_per_sm: int, theoretical: float,
                blocks_per_sm: int, over: str = "the simulated schedule") -> Achieved:
    """Achieved occupancy of a sim.schedule.timeline.Timeline. Identical full waves left out of
    the schedule (`skipped_waves`) count as its first simulated wave, each as long as a wave."""
    blocks_time, active = busy_times(tl.block_sm, tl.start_us, tl.end_us)
    if tl.skipped_waves:
        first = tl.wave == 0
        blocks_time += tl.skipped_waves * float((tl.end_us[first] - tl.start_us[first]).sum())
        active += tl.skipped_waves * tl.wave_us * np.unique(tl.block_sm[first]).size
    achieved = warps_per_block * blocks_time / (max_warps_per_sm * active) if active > 0 else 0.0
    return Achieved(achieved, theoretical, waves_of(tl.grid_blocks, tl.sm_count * blocks_per_sm), over)


def of_simulation(sim, occ) -> Achieved:
    """A sim.schedule.scheduler.Simulation of the launch whose occupancy is `occ`."""
    return of_timeline(sim.timeline, occ.warps_per_block, occ.max_warps_per_sm, occ.occupancy,
                       occ.blocks_per_sm)


def ncu_rows(work, achieved: Achieved | None) -> list[tuple[str, str, str]]:
    """Nsight Compute's Occupancy section in its own words: the block limits (a
    sim.rules.occupancy_working.Working), theoretical and, for a schedule, achieved occupancy."""
    from sim.rules.occupancy_working import block_limit_rows

    rows = [(name, value, "blocks per SM") for name, value in block_limit_rows(work)]
    rows += [("Theoretical Active Warps per SM", f"{work.active_warps_per_sm}", ""),
             ("Theoretical Occupancy", f"{work.occupancy:.1%}", "")]
    if achieved is not None:
        rows += [("Achieved Active Warps Per SM", f"{achieved.achieved * work.max_warps_per_sm:.1f}", ""),
                 ("Achieved Occupancy", f"{achieved.achieved:.1%}", f"over {achieved.over}"),
                 ("Waves Per SM", f"{achieved.waves_per_sm:,.2f}", "grid / (SMs x blocks per SM)")]
    return rows
