"""How close a simulated schedule is to a recorded one: the three numbers `compare` reports and
`calibrate` fits.

- makespan: first block start to last block end, each schedule from its own first start;
- median peak: over the SMs that ran a block, the median of the most blocks each held at once;
- residency error: the mean over the recorded makespan of |recorded - simulated resident blocks
  on the GPU|, divided by the mean recorded resident blocks (0 = the same curve; 1 = nothing in
  common).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.schedule.timeline import residency_steps


def peak_per_sm(sm: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Most blocks each SM that ran a block held at once (retirements first at equal times)."""
    sm = np.asarray(sm, dtype=np.int64)
    # to the femtosecond: a block that starts as the one before it ends, in a sum of floats, may
    # land a rounding error early and count as two at once
    times = np.round(np.concatenate([start, end]), 9)
    delta = np.concatenate([np.ones(len(start)), -np.ones(len(end))])
    who = np.concatenate([sm, sm])
    order = np.lexsort((delta, times, who))
    who, delta = who[order], delta[order]
    running = np.cumsum(delta)  # back to 0 after each SM's last event: one running count works
    first = np.ones(who.size, dtype=bool)
    first[1:] = who[1:] != who[:-1]
    return np.maximum.reduceat(running, np.flatnonzero(first)).astype(int)


def median_peak(sm, start, end) -> float:
    return float(np.median(peak_per_sm(sm, start, end)))


def residency_error(rec_start, rec_end, sim_start, sim_end) -> float:
    """Mean |recorded - simulated| resident blocks over the recorded makespan / mean recorded."""
    return Recorded.of(None, rec_start, rec_end).residency_error(sim_start, sim_end)


def _residency_error(span, t1, c1, sim_start, sim_end) -> float:
    s0 = float(np.min(sim_start))
    t2, c2 = residency_steps(np.asarray(sim_start) - s0, np.asarray(sim_end) - s0)
    cuts = np.unique(np.concatenate([t1, t2, [0.0, span]]))
    cuts = cuts[(cuts >= 0) & (cuts <= span)]
    width = np.diff(cuts)
    at = cuts[:-1]
    a = _step_at(t1, c1, at)
    b = _step_at(t2, c2, at)
    total = float((a * width).sum())
    return float((np.abs(a - b) * width).sum() / total) if total > 0 else 0.0


def _step_at(times, counts, at):
    i = np.searchsorted(times, at, side="right") - 1
    return np.where(i >= 0, counts[np.clip(i, 0, None)], 0)


@dataclass(frozen=True, slots=True)
class ScheduleScore:
    recorded_makespan_us: float
    simulated_makespan_us: float
    recorded_median_peak: float
    simulated_median_peak: float
    residency_error: float

    @property
    def makespan_error(self) -> float:
        """simulated / recorded - 1."""
        return self.simulated_makespan_us / self.recorded_makespan_us - 1.0

    @property
    def peak_error(self) -> float:
        return self.simulated_median_peak - self.recorded_median_peak

    def within(self, makespan=0.10, peak=1.0, residency=0.15) -> bool:
        """The issue's bar: makespan within 10%, median peak within 1 block, residency <= 0.15."""
        return (abs(self.makespan_error) <= makespan and abs(self.peak_error) <= peak
                and self.residency_error <= residency)


@dataclass(frozen=True)
class Recorded:
    """What the scores need of a recorded schedule, worked out once (a fit scores it often)."""
    makespan_us: float
    median_peak: float
    steps: tuple  # residency step function from the first start: (times, counts)

    @classmethod
    def of(cls, sm, start, end) -> "Recorded":
        start, end = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
        r0 = float(start.min())
        return cls(float(end.max() - r0), median_peak(sm, start, end) if sm is not None else 0.0,
                   residency_steps(start - r0, end - r0))

    def residency_error(self, sim_start, sim_end) -> float:
        return _residency_error(self.makespan_us, *self.steps, sim_start, sim_end)

    def score(self, sim_sm, sim_start, sim_end) -> ScheduleScore:
        return ScheduleScore(
            recorded_makespan_us=self.makespan_us,
            simulated_makespan_us=float(np.max(sim_end) - np.min(sim_start)),
            recorded_median_peak=self.median_peak,
            simulated_median_peak=median_peak(sim_sm, sim_start, sim_end),
            residency_error=self.residency_error(sim_start, sim_end))


def score(rec_sm, rec_start, rec_end, sim_sm, sim_start, sim_end) -> ScheduleScore:
    return Recorded.of(rec_sm, rec_start, rec_end).score(sim_sm, sim_start, sim_end)
