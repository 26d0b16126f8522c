"""The same launch on two GPUs, and what differs, in words.

`launch_on(gpu, ...)` works out one side (occupancy, geometry, the launch model's prediction);
`differences(a, b)` names what differs between two sides, most telling first: whether it runs at
all, what limits occupancy, how many waves, how full the last one is, and the predicted time.
The window's two-GPU view and its export read these sentences; nothing else words them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim.model.advice import MIN_IMPACT
from sim.model.confidence import prediction_confidence
from sim.rules.devices import GpuSpec
from sim.inputs.errors import UserError
from sim.rules.geometry import LaunchGeometry, launch_geometry
from sim.model.latency import DEFAULT_LOADS
from sim.model.launch_model import LaunchPrediction, predict_geometry
from sim.rules.occupancy import Occupancy, occupancy

TIME_RATIO_WORTH_NAMING = 1.1  # predicted times closer than this are "about the same"


@dataclass(frozen=True)
class LaunchSide:
    gpu: GpuSpec
    occ: Occupancy
    geo: LaunchGeometry
    prediction: LaunchPrediction | None  # None: it cannot launch, or the GPU has no DRAM latency

    @property
    def label(self) -> str:
        return self.gpu.name

    @property
    def confidence(self):
        """sim.model.confidence.Confidence of the prediction (None without one)."""
        return None if self.prediction is None else prediction_confidence(self.gpu, self.prediction)

    @property
    def time_us(self) -> float | None:
        """Predicted time of the whole launch (as a device-event timing would report it)."""
        return None if self.prediction is None else self.prediction.whole_launch_us

    def first_wave_blocks_per_sm(self) -> np.ndarray:
        """Blocks each SM holds in the first wave: the grid dealt round the SMs, at most the
        occupancy's blocks per SM each (what the two-GPU view draws)."""
        per_sm, sms = self.occ.blocks_per_sm, self.gpu.sm_count
        first = min(self.geo.blocks, per_sm * sms)
        return np.minimum(first // sms + (np.arange(sms) < first % sms), per_sm)


@dataclass(frozen=True, slots=True)
class Difference:
    key: str  # "launch", "occupancy", "waves", "tail", "time"
    text: str


def launch_on(gpu: GpuSpec, elements: int, threads_per_block: int, regs_per_thread: int = 0,
              smem_per_block: int = 0, *, carveout_percent: int | None = None,
              grid_rule=None, bytes_moved: int | None = None,
              ceiling_gbps: float | None = None) -> LaunchSide:
    """One side. `grid_rule(gpu) -> (blocks, elements_per_block)` is the kernel's own grid (it
    may depend on the SM count); None: one element per thread."""
    occ = occupancy(gpu, threads_per_block, regs_per_thread, smem_per_block, carveout_percent)
    blocks, tile = grid_rule(gpu) if grid_rule is not None else (None, None)
    geo = launch_geometry(gpu, elements, threads_per_block, occ, blocks=blocks,
                          elements_per_block=tile)
    return side_of(gpu, occ, geo, bytes_moved=bytes_moved, ceiling_gbps=ceiling_gbps)


def side_of(gpu: GpuSpec, occ: Occupancy, geo: LaunchGeometry, *, bytes_moved: int | None = None,
            ceiling_gbps: float | None = None, work=None, loads: int = DEFAULT_LOADS,
            chain: dict | None = None) -> LaunchSide:
    """One side from an occupancy and geometry worked out elsewhere (the window's launch);
    `work` (the kernel's sim.model.throughput.LaunchWork) picks its mode (sim.model.launch_model.default_mode)."""
    prediction = None
    if occ.can_launch:
        try:
            prediction = predict_geometry(gpu, occ, geo, bytes_moved=bytes_moved,
                                          ceiling_gbps=ceiling_gbps, work=work, loads=loads,
                                          chain=chain)
        except UserError:  # more tiles than the simulator keeps: no predicted time
            prediction = None
    return LaunchSide(gpu, occ, geo, prediction)


def differences(a: LaunchSide, b: LaunchSide) -> list[Difference]:
    """What differs between the two sides, in plain sentences (empty: nothing worth saying)."""
    out: list[Difference] = []
    for x, y in ((a, b), (b, a)):
        if not x.occ.can_launch:
            other = "either" if not y.occ.can_launch else f"the {y.label}"
            out.append(Difference("launch", f"The launch does not fit the {x.label} ({x.occ.reason}); "
                                  f"it {'fits' if y.occ.can_launch else 'does not fit'} {other}."))
    if out:
        return out
    occ_text = _occupancy(a, b)
    if occ_text:
        out.append(Difference("occupancy", occ_text))
    out += [d for d in (_waves(a, b), _tail(a, b), _time(a, b)) if d is not None]
    return out


LIMITED = {"warps": "warp", "blocks": "block", "registers": "register",
           "shared memory": "shared-memory"}


def _limited(occ: Occupancy) -> str:
    return " and ".join(LIMITED.get(name, name) for name in occ.limited_by) + "-limited"


def _occupancy(a: LaunchSide, b: LaunchSide) -> str:
    oa, ob = a.occ, b.occ
    if oa.blocks_per_sm == ob.blocks_per_sm:
        if oa.occupancy == ob.occupancy:
            return ""
        how = (f"Both are {_limited(oa)}" if oa.limited_by == ob.limited_by
               else f"The {a.label} is {_limited(oa)}, the {b.label} {_limited(ob)}; both hold")
        return (f"{how} at {oa.blocks_per_sm} blocks/SM ({oa.active_warps_per_sm} warps): "
                f"{oa.occupancy:.0%} of the {a.label}'s {oa.max_warps_per_sm} warp slots, "
                f"{ob.occupancy:.0%} of the {b.label}'s {ob.max_warps_per_sm} (theoretical).")
    lo, hi = (a, b) if oa.blocks_per_sm < ob.blocks_per_sm else (b, a)
    return (f"The {lo.label} is {_limited(lo.occ)} at {lo.occ.blocks_per_sm} blocks/SM "
            f"({lo.occ.occupancy:.0%} theoretical); the {hi.label} fits {hi.occ.blocks_per_sm} "
            f"({_limited(hi.occ)}, {hi.occ.occupancy:.0%}).")


def _waves(a: LaunchSide, b: LaunchSide) -> Difference | None:
    def one(s: LaunchSide) -> str:
        g = s.geo
        if g.waves_at_occupancy < 1:
            return f"{g.waves_at_occupancy:.0%} of one wave of {g.blocks_per_wave:,} on the {s.label}"
        return (f"{g.waves_at_occupancy:,.2f} waves of {g.blocks_per_wave:,} on the {s.label} "
                f"({s.gpu.sm_count} SMs x {g.blocks_per_sm})")
    if (a.geo.blocks, a.geo.blocks_per_wave) == (b.geo.blocks, b.geo.blocks_per_wave):
        return None
    grid = (f"The grid of {a.geo.blocks:,} blocks is" if a.geo.blocks == b.geo.blocks
            else f"The grid ({a.geo.blocks:,} and {b.geo.blocks:,} blocks: the kernel's grid "
                 "rule depends on the GPU) is")
    return Difference("waves", f"{grid} {one(a)}; {one(b)}.")


def _tail(a: LaunchSide, b: LaunchSide) -> Difference | None:
    """Name the tail only where it idles a share of the run worth a verdict on one side."""
    def fill(s: LaunchSide) -> float | None:
        w = s.geo.waves_at_occupancy
        return None if w < 1 else (w - math.floor(w)) or 1.0
    def idle(s: LaunchSide, f: float) -> float:
        return (1 - f) / math.ceil(s.geo.waves_at_occupancy)
    fa, fb = fill(a), fill(b)
    if fa is None or fb is None or max(idle(a, fa), idle(b, fb)) < MIN_IMPACT:
        return None
    lo, flo, hi, fhi = (a, fa, b, fb) if idle(a, fa) > idle(b, fb) else (b, fb, a, fa)
    def last(s: LaunchSide) -> str:
        return f"{s.geo.blocks_in_last_wave:,} of {s.geo.blocks_per_wave:,} blocks on the {s.label}"
    return Difference("tail", f"The last wave holds {last(lo)}, so about {idle(lo, flo):.0%} of "
                      f"its slots' time idles in the tail; {last(hi)} ({idle(hi, fhi):.0%}).")


def _time(a: LaunchSide, b: LaunchSide) -> Difference | None:
    ta, tb = a.time_us, b.time_us
    if ta is None or tb is None:
        missing = a if ta is None else b
        return Difference("time", f"No predicted time for the {missing.label}: it has no DRAM "
                          "latency figure.")
    fast, slow = (a, b) if ta <= tb else (b, a)
    ratio = max(ta, tb) / min(ta, tb)
    def one(s: LaunchSide) -> str:
        p = s.prediction
        return (f"{_us(s.time_us)} on the {s.label} ({p.bandwidth_gbps:,.0f} GB/s, "
                f"{p.bound}-bound; {s.confidence.short})")
    if ratio < TIME_RATIO_WORTH_NAMING:
        if a.gpu == b.gpu:
            return None
        return Difference("time", f"About the same predicted time: {one(a)}; {one(b)}.")
    return Difference("time", f"Predicted {one(fast)} against {one(slow)}: the {fast.label} is "
                      f"{ratio:,.1f}x faster if the kernel is memory-bound.")


def _us(t: float) -> str:
    return f"{t / 1e3:,.2f} ms" if t >= 1e3 else f"{t:,.1f} µs"
