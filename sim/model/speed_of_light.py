"""The speed-of-light card of one launch: the fastest it could be on this GPU, the launch model's
whole-launch time beside it, a measured time where there is one, and the gap in named parts.

The bound is whichever of three floors binds (the largest):
- "DRAM bandwidth": the launch's bytes at the GPU's achievable copy bandwidth (the prediction's
  ceiling: resources/physics copy_fraction of the rated peak);
- "tensor FLOPs": its FLOPs at the datasheet dense tensor rate of its inputs' dtype (a matmul:
  sim.model.throughput.tensor_tflops);
- "launch overhead": start event to first block plus the drain after the last (resources/physics),
  which no launch avoids.
(No FP32 non-tensor rate is on record for the presets, so a launch's FLOPs bind only through the
tensor rate.)

The gap (predicted whole launch - bound) is split by the model's own schedule
(sim.model.launch_model parts and sim.schedule.timeline). The work (bytes or FLOPs at the bound's
rate) is credited to the schedule's fill, full waves and tail in proportion to how much of each
block's life falls in them (a block moves its share evenly over its life; the identical full waves
the model counts without simulating count whole); each phase's part is its length less its credit:
- launch overhead: the whole overhead, where the work binds;
- work: where the overhead binds, the work itself at the bound's rate (it cannot overlap it);
- fill: until every block slot got its first block and the first loads came back;
- latency not hidden / dispatch: the full waves below the bound's rate, named by what the memory
  model says holds the steady state back (sim.model.memory_cost.TripCost.bound: the port's DRAM
  round trips, or the SMs' block dispatchers);
- tail: the last partial wave, the grid used up;
- other: the full waves below the bound's rate where no memory model names why (compute-bound
  tiles, uniform what-if blocks).
They add up, with the bound, to the whole-launch time exactly: the full waves' part is what is
left once the others are taken.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # launch_model's summary reads this module
    from sim.model.launch_model import LaunchPrediction

PART_TITLES = {"launch_overhead": "launch overhead", "work": "the work at the bound's rate",
               "fill": "fill", "latency_not_hidden": "latency not hidden", "dispatch": "dispatch",
               "tail": "tail", "other": "steady state below the bound"}
STEADY_PART = {"latency": "latency_not_hidden", "bandwidth": "latency_not_hidden",
               "block dispatch": "dispatch"}  # the memory model's bound -> the full waves' part


@dataclass(frozen=True)
class SpeedOfLight:
    bound: str  # "DRAM bandwidth", "tensor FLOPs" or "launch overhead"
    bound_us: float
    time_us: float  # the predicted whole launch
    parts: dict  # PART_TITLES key -> µs; with bound_us they add up to time_us
    floors: dict  # every floor's µs, the binding one included
    bytes_moved: float
    ceiling_gbps: float  # the achievable copy bandwidth the DRAM floor uses
    flops: float = 0.0
    tensor_tflops: float = 0.0  # the dense rate the FLOPs floor uses (0: none)
    measured_us: float | None = None

    @property
    def percent(self) -> float:
        """The bound as a share of the predicted whole launch (100: at the speed of light)."""
        return 100.0 * self.bound_us / self.time_us if self.time_us > 0 else 0.0

    @property
    def measured_percent(self) -> float | None:
        return None if not self.measured_us else 100.0 * self.bound_us / self.measured_us

    def with_measured(self, measured_us: float | None) -> SpeedOfLight:
        from dataclasses import replace

        return replace(self, measured_us=None if measured_us is None else float(measured_us))

    def to_dict(self) -> dict:
        out = {"bound": self.bound, "bound_us": self.bound_us, "time_us": self.time_us,
               "percent": round(self.percent, 2), "parts": dict(self.parts),
               "floors_us": dict(self.floors), "ceiling_gbps": self.ceiling_gbps}
        if self.tensor_tflops:
            out["tensor_tflops"] = self.tensor_tflops
        if self.measured_us is not None:
            out["measured_us"] = self.measured_us
            out["measured_percent"] = round(self.measured_percent, 2)
        return out

    def floor_text(self) -> str:
        if self.bound == "DRAM bandwidth":
            return f"{self.bytes_moved:,.0f} B at the {self.ceiling_gbps:,.0f} GB/s ceiling"
        if self.bound == "tensor FLOPs":
            return f"{self.flops:,.0f} FLOPs at the {self.tensor_tflops:,.0f} TFLOP/s dense tensor rate"
        return "start event to first block, plus the drain"

    def parts_text(self, unit=None) -> str:
        """"launch overhead 4.10 + fill 0.61 + ...": the non-zero parts, biggest first."""
        fmt = unit or (lambda v: f"{v:,.2f} µs")
        shown = sorted(((k, v) for k, v in self.parts.items() if abs(v) >= 5e-4),
                       key=lambda kv: -abs(kv[1]))
        return " + ".join(f"{self.part_title(k)} {fmt(v)}" for k, v in shown) or "nothing"

    def part_title(self, key: str) -> str:
        if key == "work":  # where the overhead binds: the floor that binds the work itself
            return ("the FLOPs at the tensor rate" if self.floors["tensor FLOPs"] > self.floors["DRAM bandwidth"]
                    else "the bytes at the ceiling")
        return PART_TITLES[key]

    def rows(self) -> list[tuple[str, str, str]]:
        """The card as rows of the CLI's prediction table (name, value, note)."""
        def us(v: float) -> str:
            return f"{v:,.2f} us"
        return [("Speed of light", us(self.bound_us), f"{self.bound}: {self.floor_text()}"),
                ("  whole launch", f"{self.percent:.0f}%", f"of the speed of light; the gap, "
                 f"{us(self.time_us - self.bound_us)}: " + self.parts_text(us))]

    def line(self) -> str:
        """One line for a text surface."""
        text = (f"Speed of light: {self.bound} {self.bound_us:,.2f} µs ({self.floor_text()}); "
                f"predicted {self.time_us:,.2f} µs, {self.percent:.0f}% of the speed of light")
        if self.measured_us:
            text += f"; measured {self.measured_us:,.2f} µs ({self.measured_percent:.0f}%)"
        return text


def speed_of_light(p: LaunchPrediction, measured_us: float | None = None) -> SpeedOfLight:
    """The card of prediction `p` (its FLOPs at its `tensor_tflops`, the dense rate of a
    compute-bound launch's dtype; 0: they set no floor); `measured_us`: a timing of it."""
    tensor_tflops = p.tensor_tflops
    floors = {"DRAM bandwidth": p.bytes_moved / (p.ceiling_gbps * 1e3) if p.ceiling_gbps else 0.0,
              "tensor FLOPs": p.flops / (tensor_tflops * 1e6) if tensor_tflops and p.flops else 0.0,
              "launch overhead": p.launch_overhead_us}
    bound = max(floors, key=floors.get)
    work_us = max(floors["DRAM bandwidth"], floors["tensor FLOPs"])
    parts = dict.fromkeys(PART_TITLES, 0.0)
    if bound == "launch overhead":
        parts["work"] = work_us
    else:
        parts["launch_overhead"] = p.launch_overhead_us
    whole, bound_us = p.whole_launch_us, floors[bound]
    steady = STEADY_PART.get(p.bound, "other") if p.mode == "memory" else "other"
    parts.update(_phase_parts(p, work_us, whole - bound_us - sum(parts.values()), steady))
    return SpeedOfLight(bound, bound_us, whole, parts, floors, p.bytes_moved, p.ceiling_gbps,
                        p.flops, float(tensor_tflops or 0.0),
                        None if measured_us is None else float(measured_us))


def _phase_parts(p: LaunchPrediction, work_us: float, gap_us: float, steady: str) -> dict:
    """The schedule's share `gap_us` of the gap, split over fill, the full waves (part `steady`)
    and tail: each phase's length less the work credited to it (`_phase_credits`). A phase
    credited with more than its length (its blocks moved their share faster than evenly) counts
    none, and the others share the gap in proportion to theirs; a schedule faster than the bound
    (a fitted efficiency above the datasheet's) puts its negative gap in "other"."""
    if gap_us <= 0:
        return {"other": gap_us}
    fill_credit, tail_credit = _phase_credits(p, work_us)
    raw = {"fill": p.fill_us - fill_credit, "tail": p.tail_us - tail_credit}
    raw[steady] = p.makespan_us - work_us - raw["fill"] - raw["tail"]
    positive = {k: max(v, 0.0) for k, v in raw.items()}
    total = sum(positive.values())
    out = {k: gap_us * v / total for k, v in positive.items()} if total > 0 else {steady: gap_us}
    # the last of them is what is left, so the parts add up to the gap exactly
    last = max(out, key=out.get)
    out[last] = gap_us - sum(v for k, v in out.items() if k != last)
    return out


def _phase_credits(p: LaunchPrediction, work_us: float) -> tuple[float, float]:
    """The work's µs at the bound's rate that fall in the schedule's fill and in its tail: each
    block's 1/grid share spread evenly over its life, the skipped full waves' blocks none."""
    tl = p.timeline
    if work_us <= 0 or not tl.n_blocks:
        return 0.0, 0.0
    fill_end = tl.whole_grid_us - p.full_waves_us - p.tail_us  # the fill inside the schedule
    start, end = tl.start_us, tl.end_us
    life = np.maximum(end - start, 1e-12)

    def share(lo: float, hi: float) -> float:
        overlap = np.clip(np.minimum(end, hi) - np.maximum(start, lo), 0.0, None)
        return float(np.sum(overlap / life))

    per_block = work_us / tl.grid_blocks
    return per_block * share(0.0, fill_end), per_block * share(tl.tail_start_us, tl.makespan_us)

