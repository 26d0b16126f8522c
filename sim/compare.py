"""Predict a recorded trace's schedule from its launch alone, and say how close the prediction is.

A recorded trace (kernels/trace.py: every block's %smid and %globaltimer on a real GPU) says how
the hardware really ran a grid. `compare_trace` takes from it only what describes the launch — the
GPU, the grid, the warps per block, the block duration (the median recorded block), the registers
and shared memory (hence the blocks per SM) and what the warps do while resident — simulates that
launch with the GPU's dispatch model (or the textbook, mode "ideal"), and reports recorded against
simulated: makespan, the median SM's peak residency and the residency error
(sim/schedule_metrics.py). Nothing of the recorded schedule feeds the prediction, unless the
recorded SM order is asked for explicitly (placement "recorded").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from sim.devices import GpuSpec
from sim.dispatch_profile import DispatchProfile
from sim.errors import UserError
from sim.occupancy import occupancy
from sim.scheduler import Simulation, UniformCost, _breadth_first
from sim.schedule_metrics import peak_per_sm, score
from sim.timeline import timeline_of_trace
from sim.trace import Trace

# What the warps of a trace do, when its meta does not say (issue 9).
UNSAID_WAIT_NOTE = ("the trace does not say what its warps do: taken as the Triton trace "
                    "kernel's busy spin (every trace recorded before 2026-12-01 is one)")
CUDA_PROBE_NOTE = ("CUDA C probe: on the H200 its spinning warps did not hold new blocks back "
                   "(family F of tests/data/dispatch_h200), so it is simulated like waiting warps")


@dataclass(frozen=True, slots=True)
class RecordedPlacement:
    """Replay the SMs a real GPU gave its first blocks to, in block order (only on request:
    it is read off the recording, so it is no prediction).

    `sm_sequence[i]` is the SM that ran block i; the k-th time an SM appears it gets its slot k.
    Slots the recording never filled come last, breadth-first."""
    id: ClassVar[str] = "recorded"
    sm_sequence: tuple[int, ...]

    def slot_order(self, gpu: GpuSpec, slots_per_sm: int) -> np.ndarray:
        used = np.zeros(gpu.sm_count, dtype=int)
        order = []
        for sm in self.sm_sequence:
            if 0 <= sm < gpu.sm_count and used[sm] < slots_per_sm:
                order.append(sm * slots_per_sm + used[sm])
                used[sm] += 1
        taken = set(order)
        rest = [s for s in _breadth_first(list(range(gpu.sm_count)), slots_per_sm)
                if s not in taken]
        return np.asarray(order + rest, dtype=np.int64)


def placement_from_trace(trace: Trace) -> RecordedPlacement:
    """The SM of every block in block order: blocks are dispatched in grid order."""
    return RecordedPlacement(tuple(int(s) for s in trace.sm[np.argsort(trace.block)]))


def fill_interval_of_trace(trace: Trace, slots: int) -> float:
    """How fast the recorded first wave filled: the first `slots` block starts spread over their
    count (a description of the recording, not an input of the prediction)."""
    first = np.sort(trace.start_us)[:max(min(slots, len(trace.start_us)), 1)]
    return float((first[-1] - first[0]) / max(len(first) - 1, 1))


@dataclass(frozen=True, slots=True)
class TraceLaunch:
    """What `compare` takes from a trace: the launch, not its schedule."""
    gpu: GpuSpec
    blocks: int
    threads_per_block: int
    blocks_per_sm: int
    duration_us: float  # median recorded block: the kernel's block time
    wait: str  # sim.dispatch_profile.WAITS
    regs_per_thread: int
    smem_per_block_bytes: int
    notes: tuple[str, ...] = ()

    @property
    def warps_per_block(self) -> int:
        return -(-self.threads_per_block // self.gpu.warp_size)


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def launch_of_trace(trace: Trace, gpu: GpuSpec, blocks_per_sm: int | None = None) -> TraceLaunch:
    """The launch a trace recorded; UserError (one line) where the trace cannot say."""
    if len(trace.block) == 0:
        raise UserError("the trace holds no blocks")
    meta = trace.meta
    threads = _int(meta.get("threads_per_block"))
    if threads is None and _int(meta.get("num_warps")):
        threads = meta["num_warps"] * gpu.warp_size
    regs = _int(meta.get("regs_per_thread")) or 0
    smem = _int(meta.get("smem_per_block_bytes")) or 0
    per_sm = blocks_per_sm
    if per_sm is None and threads is not None:
        try:
            per_sm = occupancy(gpu, threads, regs, smem).blocks_per_sm or None
        except ValueError:
            per_sm = None
    if per_sm is None:
        predicted = meta.get("predicted")
        per_sm = _int(predicted.get("blocks_per_sm")) if isinstance(predicted, dict) else None
    if per_sm is None or not 1 <= per_sm <= gpu.max_blocks_per_sm:
        raise UserError("the trace does not say how many blocks fit on an SM; pass --blocks-per-sm")
    if threads is None:  # warps unknown: the most that fit beside each other
        threads = gpu.max_threads_per_sm // per_sm
    notes = []
    if "wait" not in meta:
        wait = "spin"
        notes.append(UNSAID_WAIT_NOTE)
    elif meta.get("kernel") == "cuda-probe":
        wait = "sleep"
        notes.append(CUDA_PROBE_NOTE)
    elif meta["wait"] in ("spin", "sleep", "memory"):
        wait = meta["wait"]
    else:  # None: a real kernel (the stamped add) waits on memory
        wait = "memory"
    duration = float(np.median(trace.end_us - trace.start_us))
    if not duration > 0:
        raise UserError("the trace's median block takes no time")
    return TraceLaunch(gpu, len(trace.block), threads, int(per_sm), duration, wait, regs, smem,
                       tuple(notes))


@dataclass(frozen=True, slots=True)
class TraceComparison:
    blocks: int
    block_duration_us: float  # median recorded duration, used for every simulated block
    predicted_blocks_per_sm: int
    recorded_max_blocks_per_sm: int  # most blocks any SM held at once
    recorded_median_peak_blocks_per_sm: float  # typical SM's peak
    recorded_makespan_us: float
    simulated_makespan_us: float
    recorded_mean_resident: float  # blocks resident on the GPU, time-averaged
    simulated_mean_resident: float
    recorded_sms_used: int
    dispatch_interval_us: float  # how fast the recorded first wave filled (description only)
    same_sm_first_wave: float  # first-wave blocks the simulation put on the hardware's SM
    same_sm_fraction: float  # all blocks likewise
    simulated_median_peak_blocks_per_sm: float
    simulated_max_blocks_per_sm: int
    residency_error: float  # mean |recorded - simulated resident| / mean recorded
    makespan_error: float  # simulated / recorded - 1
    mode: str  # "calibrated" (the GPU's dispatch model) or "ideal" (the textbook)
    wait: str  # what the warps do, as simulated
    placement: str
    profile: str  # the dispatch profile's label

    def lines(self) -> list[str]:
        return [
            f"{self.blocks:,} blocks of ~{self.block_duration_us:.1f} us, warps that "
            f"{'busy-spin' if self.wait == 'spin' else 'wait (' + self.wait + ')'}",
            f"makespan: recorded {self.recorded_makespan_us:,.1f} us, simulated "
            f"{self.simulated_makespan_us:,.1f} us ({self.makespan_error:+.1%})",
            f"peak blocks per SM (median SM): recorded {self.recorded_median_peak_blocks_per_sm:g}, "
            f"simulated {self.simulated_median_peak_blocks_per_sm:g} (occupancy allows "
            f"{self.predicted_blocks_per_sm}; most on any SM: recorded "
            f"{self.recorded_max_blocks_per_sm}, simulated {self.simulated_max_blocks_per_sm})",
            f"residency error {self.residency_error:.3f} (mean resident blocks: recorded "
            f"{self.recorded_mean_resident:,.1f}, simulated {self.simulated_mean_resident:,.1f})",
            f"schedule: {self.mode} ({self.profile}); first wave filled at one block per "
            f"{self.dispatch_interval_us * 1e3:.0f} ns on the hardware",
            f"SMs used: {self.recorded_sms_used}; same SM as the hardware: "
            f"{self.same_sm_first_wave:.0%} of the first wave, {self.same_sm_fraction:.0%} of all "
            f"blocks ({self.placement})",
        ]


def simulate_launch(launch: TraceLaunch, mode: str = "calibrated",
                    profile: DispatchProfile | None = None, placement="tpc-spread",
                    seed: int = 0) -> Simulation:
    """The launch's schedule under `mode`, with every block taking the recorded median."""
    from sim.policies import make_placement, run_schedule

    place = placement if not isinstance(placement, str) else make_placement(placement)
    return run_schedule(launch.gpu, launch.blocks, launch.blocks_per_sm, launch.warps_per_block,
                        UniformCost(launch.duration_us), place, schedule=mode, wait=launch.wait,
                        profile=profile, seed=seed)


def compare_trace(trace: Trace, gpu: GpuSpec, blocks_per_sm: int | None = None, *,
                  mode: str = "calibrated", profile: DispatchProfile | None = None,
                  placement="tpc-spread", seed: int = 0) -> tuple[TraceComparison, Simulation]:
    """Simulate the recorded launch (never its schedule) and lay the two side by side.
    `placement`: a sim.policies id or a Placement (e.g. placement_from_trace(trace))."""
    from sim.dispatch_profile import profile_for

    launch = launch_of_trace(trace, gpu, blocks_per_sm)
    profile = profile or profile_for(gpu.name)
    result = simulate_launch(launch, mode, profile, placement, seed)
    order = np.argsort(trace.block)
    same = trace.sm[order] == result.block_sm
    slots = gpu.sm_count * launch.blocks_per_sm
    rec_peaks = peak_per_sm(trace.sm, trace.start_us, trace.end_us)
    sim_peaks = peak_per_sm(result.block_sm, result.block_start_us, result.block_end_us)
    s = score(trace.sm, trace.start_us, trace.end_us, result.block_sm, result.block_start_us,
              result.block_end_us)
    comparison = TraceComparison(
        blocks=launch.blocks, block_duration_us=launch.duration_us,
        predicted_blocks_per_sm=launch.blocks_per_sm,
        recorded_max_blocks_per_sm=int(rec_peaks.max()),
        recorded_median_peak_blocks_per_sm=s.recorded_median_peak,
        recorded_makespan_us=s.recorded_makespan_us, simulated_makespan_us=s.simulated_makespan_us,
        recorded_mean_resident=timeline_of_trace(trace, launch.blocks_per_sm).mean_resident(),
        simulated_mean_resident=result.timeline.mean_resident(),
        recorded_sms_used=int(rec_peaks.size),
        dispatch_interval_us=fill_interval_of_trace(trace, slots),
        same_sm_first_wave=float(np.mean(same[:slots])), same_sm_fraction=float(np.mean(same)),
        simulated_median_peak_blocks_per_sm=s.simulated_median_peak,
        simulated_max_blocks_per_sm=int(sim_peaks.max()), residency_error=s.residency_error,
        makespan_error=s.makespan_error, mode=mode, wait=launch.wait,
        placement=result.placement,
        profile=profile.label if mode == "calibrated" else "the textbook: no dispatch model")
    return comparison, result
