"""One comparison of a recorded trace with its prediction, for every kind of trace.

A recorded trace (kernels/tracing/trace.py, a matmul trace, or another tool's timeline such as
Triton Proton's, sim/traces/proton_trace.py) says how the hardware really ran a grid. `compare_trace`
takes from it only what describes the launch, reads off its meta which model predicts it, asks
that model (`predict`, the one place compare asks for a prediction) and scores recorded against
predicted with sim/traces/schedule_metrics.py: makespan, the median SM's peak residency and the
residency error. The command line (`main.py compare`) and the window (gui/models/trace.py) both
show what it returns, so they give the same comparison.

- WarpScope's trace kernels (spin, sleep, memory wait), CUDA probes and other tools' traces:
  every block takes the median recorded block, through the GPU's dispatch model (mode
  "calibrated") or the textbook ("ideal");
- a real memory-bound kernel (`trace --kernel add`: its meta has the elements and the block): the
  memory-bound model, each block's time set by the blocks sharing the DRAM with it;
- a tiled matmul (tiled, persistent, stream-K): the compute-bound model, tile by tile.
Nothing of the recorded schedule feeds the prediction, unless the recorded SM order is asked for
(placement "recorded").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import ClassVar

import numpy as np

from sim.rules.devices import GpuSpec
from sim.model.chain import resolved_chain
from sim.schedule.dispatch_profile import DispatchProfile
from sim.inputs.errors import UserError
from sim.rules.geometry import BYTES_PER_ELEMENT_ADD
from sim.rules.occupancy import occupancy
from sim.schedule.scheduler import Simulation, UniformCost, _breadth_first
from sim.traces.schedule_metrics import ScheduleScore, peak_per_sm, score
from sim.schedule.timeline import Timeline, timeline_of_trace
from sim.traces.trace import Trace

# What the warps of a trace do, when its meta does not say.
UNSAID_WAIT_NOTE = ("the trace does not say what its warps do: taken as the Triton trace "
                    "kernel's busy spin (every trace recorded before 2026-12-01 is one)")
CUDA_PROBE_NOTE = ("CUDA C probe: on the H200 its spinning warps did not hold new blocks back "
                   "(family F of tests/data/h200_spin_fit), so it is simulated like waiting warps")


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
    wait: str  # sim.schedule.dispatch_profile.WAITS
    regs_per_thread: int
    smem_per_block_bytes: int
    notes: tuple[str, ...] = ()

    @property
    def warps_per_block(self) -> int:
        return -(-self.threads_per_block // self.gpu.warp_size)


class OccupancyUnsaid(UserError):
    """The trace names neither its block's resources nor the blocks per SM it expected."""


RECORDED_PEAK_NOTE = ("the trace does not say how many blocks fit on an SM: taken as the most any "
                      "SM held in the recording ({n}), so this residency is read, not predicted; "
                      "--blocks-per-sm sets it")


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def launch_of_trace(trace: Trace, gpu: GpuSpec, blocks_per_sm: int | None = None) -> TraceLaunch:
    """The launch a trace recorded; UserError (one line) where the trace cannot say."""
    if len(trace.block) == 0:
        raise UserError("the trace holds no blocks")
    meta = trace.meta
    config = meta.get("config") if isinstance(meta.get("config"), dict) else {}
    threads = _int(meta.get("threads_per_block"))
    warps = _int(meta.get("num_warps")) or _int(config.get("num_warps"))  # a matmul's in config
    if threads is None and warps:
        threads = warps * gpu.warp_size
    regs = _int(meta.get("regs_per_thread")) or _int(meta.get("regs")) or 0
    smem = _int(meta.get("smem_per_block_bytes")) or _int(meta.get("smem")) or 0
    if blocks_per_sm is not None and not 1 <= blocks_per_sm <= gpu.max_blocks_per_sm:
        raise UserError(f"--blocks-per-sm must be 1..{gpu.max_blocks_per_sm} on {gpu.name}, "
                        f"got {blocks_per_sm}")
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
        raise OccupancyUnsaid("the trace does not say how many blocks fit on an SM; pass --blocks-per-sm")
    if threads is None:  # warps unknown: the most that fit beside each other
        threads = gpu.max_threads_per_sm // per_sm
    notes = [n[:300] for n in meta.get("notes", ()) if isinstance(n, str)][:8] \
        if isinstance(meta.get("notes"), list) else []
    kernel = meta.get("kernel")
    if kernel == "cuda-probe":
        wait = "sleep"
        notes.append(CUDA_PROBE_NOTE)
    elif meta.get("wait") in ("spin", "sleep", "memory"):
        wait = meta["wait"]
    elif "wait" not in meta and kernel in (None, "spin-trace"):
        wait = "spin"
        notes.append(UNSAID_WAIT_NOTE)
    else:  # None, or no trace kernel at all: a real kernel (add, matmul, Proton's) waits on memory
        wait = "memory"
    duration = float(np.median(trace.end_us - trace.start_us))
    if not duration > 0:
        raise UserError("the trace's median block takes no time")
    return TraceLaunch(gpu, len(trace.block), threads, int(per_sm), duration, wait, regs, smem,
                       tuple(notes))


def simulate_launch(launch: TraceLaunch, mode: str = "calibrated",
                    profile: DispatchProfile | None = None, placement="tpc-spread",
                    seed: int = 0) -> Simulation:
    """The launch's schedule under `mode`, with every block taking the recorded median (what
    `predict` runs for a trace of equal blocks; sim.traces.calibrate fits the dispatch model on it)."""
    from sim.schedule.policies import make_placement, run_schedule

    place = placement if not isinstance(placement, str) else make_placement(placement)
    return run_schedule(launch.gpu, launch.blocks, launch.blocks_per_sm, launch.warps_per_block,
                        UniformCost(launch.duration_us), place, schedule=mode, wait=launch.wait,
                        profile=profile, seed=seed, regs_per_thread=launch.regs_per_thread)


# ---- the one place compare asks for a prediction ---------------------------------------------

# `trace --kernel add|copy|square|softmax`: real memory-bound kernels (a `trace --kernel-file`
# trace names its file instead)
REAL_KERNEL_TRACES = ("add-trace", "copy-trace", "square-trace", "softmax-trace")

MODEL_TITLES = {"uniform": "every block the median recorded block",
                "memory": "the memory-bound model", "compute": "the compute-bound model"}


@dataclass(frozen=True)
class Request:
    """One launch as a trace describes it, and how to predict it."""
    model: str  # "uniform", "memory" or "compute" (MODEL_TITLES)
    launch: TraceLaunch
    mode: str  # sim.schedule.policies.SCHEDULES
    placement: object  # a sim.schedule.policies placement id, or a Placement (the recorded order)
    profile: DispatchProfile | None
    seed: int = 0
    elements: int | None = None  # memory: the kernel's elements and each block's share
    elements_per_block: int | None = None
    bytes_moved: float = 0.0  # memory: one call's DRAM traffic (the trace's meta, else an add's)
    chain: tuple = ()  # memory: the kernel's declared chain, meta "chain" as (key, value) pairs
    matmul: object = None  # compute: sim.traces.matmul_trace.RecordedMatmul
    resources: tuple[int, int] | None = None  # compute: compiled (registers, shared memory)
    dtype: str = "float16"


@dataclass(frozen=True)
class Predicted:
    timeline: Timeline  # in the recorded trace's rows: blocks (a matmul: tiles and units)
    blocks_per_sm: int
    placement: str
    time_us: float | None = None  # the whole launch, where the model says (launch overhead in)
    answer: object = None  # the model's own record (a matmul: sim.model.throughput.MatmulPrediction)


def predict_schedule(req: Request) -> Predicted:
    """The launch model's schedule for `req`: sim.model.launch_model's memory mode for a real kernel,
    the compute mode (sim.model.throughput.predict_matmul) for a matmul, equal blocks through the
    GPU's dispatch model for the rest. Asked here and nowhere else in compare."""
    launch = req.launch
    if req.model == "compute":
        from sim.model.throughput import predict_matmul

        pred = predict_matmul(req.matmul, req.matmul.dims, launch.gpu, None, dtype=req.dtype,
                              resources=req.resources, placement=req.placement)
        return Predicted(pred.item_timeline(), pred.blocks_per_sm, pred.simulation.placement,
                         pred.time_us, pred)
    if req.model == "memory":
        from sim.model.chain import declared_chain
        from sim.model.launch_model import Launch, predict_launch

        if not isinstance(req.placement, str):
            raise UserError("the 'recorded' placement is for traces of equal blocks and matmuls; "
                            "a memory-bound kernel's blocks are predicted from its launch")
        trips = max(1, math.ceil(req.elements / (launch.blocks * req.elements_per_block)),
                    int(dict(req.chain).get("trips", 1)))  # a declared tile's steps per sweep
        model = predict_launch(launch.gpu, Launch(launch.blocks, launch.threads_per_block,
                                                  launch.blocks_per_sm, req.bytes_moved,
                                                  req.elements, trips, **declared_chain(dict(req.chain)),
                                                  regs_per_thread=launch.regs_per_thread),
                               "memory", placement=req.placement, max_waves=None)
        return Predicted(model.timeline, launch.blocks_per_sm, model.simulation.placement,
                         model.whole_launch_us, model)
    sim = simulate_launch(launch, req.mode, req.profile, req.placement, req.seed)
    return Predicted(sim.timeline, launch.blocks_per_sm, sim.placement)


# ---- what a trace is, and the comparison ----------------------------------------------------

def on_gpu_clock(trace: Trace, gpu: GpuSpec) -> tuple[Trace, str | None]:
    """A trace whose block lengths are SM clock cycles (Proton writes them as if at 1 GHz) in
    microseconds at `gpu`'s clock; other traces as they are."""
    assumed = trace.meta.get("cycles_at_mhz")
    if not isinstance(assumed, (int, float)) or not assumed > 0 or not gpu.clock_mhz:
        return trace, None
    scale = float(assumed) / float(gpu.clock_mhz)
    end = trace.start_us + (trace.end_us - trace.start_us) * scale
    return (replace(trace, end_us=end),
            f"block lengths are SM cycles (the file assumes {assumed:g} MHz): converted at "
            f"{gpu.name}'s {gpu.clock_mhz:,} MHz clock; block starts are %globaltimer times")


def request_of_trace(trace: Trace, gpu: GpuSpec, blocks_per_sm: int | None = None, *,
                     mode: str = "calibrated", placement="tpc-spread",
                     profile: DispatchProfile | None = None, seed: int = 0) -> Request:
    """What the trace's own meta says the launch was, and which model predicts it."""
    from sim.traces.matmul_trace import dtype, is_matmul_trace, program_sms, recorded_matmul, resources

    launch = launch_of_trace(trace, gpu, blocks_per_sm)
    common = dict(launch=launch, mode=mode, profile=profile, seed=seed)
    recorded = placement == "recorded"
    if is_matmul_trace(trace):
        place = RecordedPlacement(tuple(program_sms(trace))) if recorded else placement
        return Request("compute", placement=place, matmul=recorded_matmul(trace),
                       resources=resources(trace), dtype=dtype(trace), **common)
    place = placement_from_trace(trace) if recorded else placement
    meta = trace.meta
    elements, per_block = _int(meta.get("elements")), _int(meta.get("block_size"))
    real = meta.get("kernel") in REAL_KERNEL_TRACES or isinstance(meta.get("kernel_file"), str)
    if real and elements and not per_block and launch.blocks:  # a kernel file's grid rule
        per_block = math.ceil(elements / launch.blocks)
    if real and elements and per_block:
        moved = meta.get("bytes_moved")
        moved = float(moved) if isinstance(moved, (int, float)) and moved > 0 \
            else elements * BYTES_PER_ELEMENT_ADD
        chain = resolved_chain(meta.get("chain") if isinstance(meta.get("chain"), dict) else {},
                               meta.get("block_params"), per_block)
        return Request("memory", placement=place, elements=elements, elements_per_block=per_block,
                       bytes_moved=moved, chain=tuple(sorted(chain.items())), **common)
    return Request("uniform", placement=place, **common)


@dataclass(frozen=True)
class Comparison:
    """A recorded schedule beside its prediction, scored: what `compare` prints (`as_dict` is its
    --json) and what the window's Timeline shows."""
    trace_gpu: str  # as the trace names it
    gpu: str  # the preset it was predicted on
    kernel: str  # what the trace's meta calls its kernel ("spin-trace", "add-trace", "proton", ...)
    model: str  # MODEL_TITLES
    blocks: int  # rows compared: blocks (a matmul: tiles and stream-K units)
    block_duration_us: float  # the median recorded row
    predicted_blocks_per_sm: int
    recorded_max_blocks_per_sm: int  # most blocks any SM held at once
    recorded_median_peak_blocks_per_sm: float  # typical SM's peak
    recorded_makespan_us: float
    simulated_makespan_us: float
    recorded_mean_resident: float  # blocks resident on the GPU, time-averaged
    simulated_mean_resident: float
    recorded_sms_used: int
    dispatch_interval_us: float  # how fast the recorded first wave filled (description only)
    same_sm_first_wave: float | None  # first-wave blocks predicted on the hardware's SM
    same_sm_fraction: float | None  # all blocks likewise (None for a matmul's tiles)
    simulated_median_peak_blocks_per_sm: float
    simulated_max_blocks_per_sm: int
    residency_error: float  # mean |recorded - simulated resident| / mean recorded
    makespan_error: float  # simulated / recorded - 1
    mode: str  # "calibrated" (the GPU's dispatch model) or "ideal" (the textbook)
    wait: str  # what the warps do, as simulated
    placement: str
    profile: str  # the schedule's source
    predicted_launch_us: float | None  # the whole launch, where the model says
    notes: tuple[str, ...] = ()
    # Nsight Compute's pair: theoretical_occupancy, recorded_ and simulated_achieved_occupancy,
    # waves_per_sm (sim.schedule.achieved)
    occupancy: dict = field(default_factory=dict)
    details: tuple[str, ...] = ()  # what a kind of trace adds (a matmul: its tiles)
    recorded: Timeline | None = field(default=None, repr=False, compare=False)
    simulated: Timeline | None = field(default=None, repr=False, compare=False)

    @property
    def score(self) -> ScheduleScore:
        return ScheduleScore(self.recorded_makespan_us, self.simulated_makespan_us,
                             self.recorded_median_peak_blocks_per_sm,
                             self.simulated_median_peak_blocks_per_sm, self.residency_error)

    def as_dict(self) -> dict:
        """Every number and word of the comparison (not the schedules): `compare --json`."""
        out = {f.name: getattr(self, f.name) for f in fields(self)
               if f.name not in ("recorded", "simulated")}
        return {k: list(v) if isinstance(v, tuple) else v for k, v in out.items()}

    def lines(self) -> list[str]:
        what = {"spin": "busy-spin", "sleep": "wait (sleep)", "memory": "wait (memory)"}[self.wait]
        rows = "tiles and units" if self.model == "compute" else "blocks"
        same = (f"; same SM as the hardware: {self.same_sm_first_wave:.0%} of the first wave, "
                f"{self.same_sm_fraction:.0%} of all blocks" if self.same_sm_fraction is not None
                else "")
        return [
            f"{self.blocks:,} {rows} of ~{self.block_duration_us:.1f} us, warps that {what}; "
            f"predicted by {MODEL_TITLES[self.model]}",
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
            f"SMs used: {self.recorded_sms_used} ({self.placement}){same}",
            *([f"achieved occupancy: recorded {o['recorded_achieved_occupancy']:.0%}, simulated "
               f"{o['simulated_achieved_occupancy']:.0%}, of theoretical {o['theoretical_occupancy']:.0%}; "
               f"{o['waves_per_sm']:,.2f} waves per SM"] if (o := self.occupancy) else []),
            *self.details,
        ]


def compare_trace(trace: Trace, gpu: GpuSpec | None = None, blocks_per_sm: int | None = None, *,
                  mode: str = "calibrated", profile: DispatchProfile | None = None,
                  placement="tpc-spread", seed: int = 0) -> Comparison:
    """Predict the recorded launch (never its schedule) and score the prediction. `gpu`: default
    the preset the trace names; `placement`: a sim.schedule.policies id ("recorded": the hardware's SM
    order, read off the trace)."""
    from sim.rules.devices import preset_for_device_name
    from sim.schedule.dispatch_profile import profile_for
    from sim.schedule.policies import schedule_id

    if len(trace.block) == 0:
        raise UserError("the trace holds no blocks")
    gpu = gpu or preset_for_device_name(trace.gpu, _int(trace.meta.get("sm_count")))
    if gpu is None:
        raise UserError(f"the trace names {trace.gpu!r}, which is no GPU preset; pass --gpu")
    mode = schedule_id(mode)
    trace, clock_note = on_gpu_clock(trace, gpu)
    profile = profile or profile_for(gpu.name)
    ask = dict(mode=mode, placement=placement, profile=profile, seed=seed)
    try:
        req = request_of_trace(trace, gpu, blocks_per_sm, **ask)
    except OccupancyUnsaid:  # another tool's file, or a damaged meta: what the hardware held
        peak = max(1, min(int(trace.max_resident_per_sm().max()), gpu.max_blocks_per_sm))
        req = request_of_trace(trace, gpu, peak, **ask)
        req = replace(req, launch=replace(req.launch, notes=req.launch.notes + (
            RECORDED_PEAK_NOTE.format(n=peak),)))
    got = predict_schedule(req)
    sim = got.timeline
    recorded = timeline_of_trace(trace, got.blocks_per_sm, gpu.sm_count)
    s = score(recorded.block_sm, recorded.start_us, recorded.end_us, sim.block_sm, sim.start_us,
              sim.end_us)
    rec_peaks = peak_per_sm(recorded.block_sm, recorded.start_us, recorded.end_us)
    sim_peaks = peak_per_sm(sim.block_sm, sim.start_us, sim.end_us)
    slots = gpu.sm_count * got.blocks_per_sm
    same = recorded.block_sm == sim.block_sm if req.model != "compute" else None
    details = ()
    if req.model == "compute":
        from sim.traces.matmul_trace import details as matmul_details

        details = matmul_details(trace, got.answer)
    schedule = ("the compute-bound model's: textbook starts, as fitted" if req.model == "compute"
                else profile.label if mode == "calibrated" else "the textbook: no dispatch model")
    return Comparison(
        trace_gpu=trace.gpu, gpu=gpu.name, kernel=str(trace.meta.get("kernel", "?"))[:80],
        model=req.model, blocks=len(trace.block),
        block_duration_us=float(np.median(recorded.end_us - recorded.start_us)),
        predicted_blocks_per_sm=got.blocks_per_sm,
        recorded_max_blocks_per_sm=int(rec_peaks.max()),
        recorded_median_peak_blocks_per_sm=s.recorded_median_peak,
        recorded_makespan_us=s.recorded_makespan_us, simulated_makespan_us=s.simulated_makespan_us,
        recorded_mean_resident=recorded.mean_resident(), simulated_mean_resident=sim.mean_resident(),
        recorded_sms_used=int(rec_peaks.size),
        dispatch_interval_us=fill_interval_of_trace(trace, slots),
        same_sm_first_wave=None if same is None else float(np.mean(same[:slots])),
        same_sm_fraction=None if same is None else float(np.mean(same)),
        simulated_median_peak_blocks_per_sm=s.simulated_median_peak,
        simulated_max_blocks_per_sm=int(sim_peaks.max()), residency_error=s.residency_error,
        makespan_error=s.makespan_error, mode=mode, wait=req.launch.wait,
        placement=got.placement, profile=schedule, predicted_launch_us=got.time_us,
        notes=req.launch.notes + ((clock_note,) if clock_note else ()), details=details,
        occupancy=_occupancy_pair(req.launch, got.blocks_per_sm, recorded, sim),
        recorded=recorded, simulated=sim)


def _occupancy_pair(launch: TraceLaunch, blocks_per_sm: int, recorded: Timeline, sim: Timeline) -> dict:
    from sim.schedule.achieved import of_timeline

    gpu, warps = launch.gpu, launch.warps_per_block
    theoretical = min(1.0, blocks_per_sm * warps / gpu.max_warps_per_sm)
    rec, simulated = (of_timeline(tl, warps, gpu.max_warps_per_sm, theoretical, blocks_per_sm)
                      for tl in (recorded, sim))
    return {"theoretical_occupancy": round(theoretical, 4),
            "recorded_achieved_occupancy": round(rec.achieved, 4),
            "simulated_achieved_occupancy": round(simulated.achieved, 4),
            "waves_per_sm": round(rec.waves_per_sm, 4)}
