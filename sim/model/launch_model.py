"""THE launch model: what one launch does on one GPU, and how long a device-event timing says it took.

`predict_launch(gpu, launch, mode)` runs the grid through the block scheduler (sim.schedule.scheduler) with
one of three block costs and returns a `LaunchPrediction`: the schedule, the whole-launch time and
its parts, the bandwidth (bytes moved / whole-launch time) or FLOP/s, what bounds it and the tail
share (sim.schedule.timeline). Every surface (`explain`, `simulate`, bench's predicted column, the window's
verdicts, curves, timeline and latency view, Two GPUs, the exports) reads it.

Modes (block costs):
- "memory": each block's time from the loaded model (`TripCost`, sim.model.memory_cost): on each SM the resident blocks
  are customers of a closed queueing network (the SM's block dispatcher, a delay of trip overhead
  + DRAM round trip, the SM's memory port at its share of the achievable bandwidth), solved by
  mean value analysis for the blocks resident GPU-wide when the block starts (the live count: a
  full GPU queues more, the thin tail less). The port cannot start before the first trip's loads
  come back: a launch takes at least that fill plus its busiest SM's bytes.
- "compute": a block's FLOPs and bytes (sim.model.throughput.ComputeBoundCost, the matmul sawtooth).
- "uniform": every block the same given time, placed by the GPU's calibrated dispatch model
  (sim.schedule.dispatch: what spin-trace kernels do).

Whole launch = launch overhead + the schedule's makespan (its identical full waves counted, not
simulated). Parts: `launch_overhead_us` (start event to first block plus the drain after the
last, measured together), `fill_us` (until every block slot got its first block), `full_waves_us`
and `tail_us` (sim.schedule.timeline's tail); they add up to the whole. Per-GPU constants (launch overhead,
DRAM latency, achievable bandwidth, trip overhead, dispatch) come from resources/physics/
(sim/rules/physics.py), each with its provenance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from sim.rules.devices import GpuSpec
from sim.inputs.errors import UserError
from sim.rules.geometry import BYTES_PER_ELEMENT_ADD, LaunchGeometry
from sim.model.chain import declared_chain
from sim.model.drain import drain
from sim.model.latency import DEFAULT_LOADS
from sim.model.memory_cost import CHAIN_CONSTANTS, TripCost, achievable_gbps, first_wave_ramp
from sim.rules.occupancy import Occupancy
from sim.rules.physics import GpuPhysics, physics_for
from sim.schedule.dispatch_profile import dram_share_for
from sim.schedule.scheduler import Simulation

MODES = ("memory", "compute", "uniform")
MAX_WAVES = 6  # a longer grid: the leading full waves (all alike) are counted, not simulated


@dataclass(frozen=True, slots=True)
class Launch:
    """What the model needs of a launch (`launch_of` makes one from a geometry)."""

    grid_blocks: int
    threads_per_block: int
    blocks_per_sm: int  # resident per SM: the occupancy (or forced)
    bytes_moved: float = 0.0  # one call's DRAM traffic
    elements: int = 0
    loop_trips: int = 1  # DRAM round trips one block makes in a row (grid-stride: its loop)
    passes: int = 1  # dependent sweeps a block makes over its data (layernorm: 3; `chain_ns`)
    reductions: int = 0  # block-wide reductions between / after them (softmax: max and sum)
    loads: int = DEFAULT_LOADS  # input arrays each thread loads (sim.model.latency.DEFAULT_LOADS)
    flops: float = 0.0
    duration_us: float = 10.0  # uniform mode: every block
    wait: str = "spin"  # uniform mode: what the warps do while resident
    regs_per_thread: int = 0  # compiled (0: unknown): the dispatch model's register rule (uniform),
    #                           the loads a thread keeps in flight (memory, sim.model.load_rounds)
    work: object = field(default=None, repr=False, compare=False)  # compute: sim.model.matmul_work.BlockWork
    cluster_size: int = 1  # blocks per thread-block cluster, placed together on one GPC

    @property
    def warps_per_block(self) -> int:
        return -(-self.threads_per_block // 32)


def bytes_of(geo: LaunchGeometry, bytes_moved: float | None) -> tuple[float, str]:
    """A launch's DRAM traffic and what it rests on: the kernel's declared bytes, else the
    article's vector add."""
    if bytes_moved:
        return float(bytes_moved), f"the kernel's declared traffic, {bytes_moved / geo.elements:.3g} B per element"
    return geo.elements * BYTES_PER_ELEMENT_ADD, \
        f"assumed: a stream like the article's vector add, {BYTES_PER_ELEMENT_ADD:g} B per element"


def loop_trips_of(geo: LaunchGeometry) -> int:
    """A fixed tile issues every load up front (1 trip); a grid-stride block loops."""
    if geo.elements_per_block:
        return 1
    return max(1, math.ceil(geo.elements / (geo.blocks * geo.threads_per_block)))


def block_trip_of(geo: LaunchGeometry, bytes_moved: float | None = None,
                  loads: int = DEFAULT_LOADS):
    """(sim.model.latency.BlockTrip, what the traffic rests on): one block's trip as the latency view
    and the verdicts describe it: the same bytes, loop trips and loads `launch_of` gives the model."""
    from sim.model.latency import BlockTrip

    nbytes, basis = bytes_of(geo, bytes_moved)
    per_element, trips = nbytes / geo.elements, loop_trips_of(geo)
    if geo.elements_per_block:
        return BlockTrip(geo.threads_per_block, geo.elements_per_block / geo.threads_per_block,
                         per_element, loads=int(loads)), basis
    per_thread = geo.elements / (geo.blocks * geo.threads_per_block)
    return BlockTrip(geo.threads_per_block, per_thread, per_element, round_trips=trips,
                     loads=int(loads)), basis


def launch_of(occ: Occupancy, geo: LaunchGeometry, *, bytes_moved: float | None = None,
              blocks_per_sm: int | None = None, chain: dict | None = None, **extra) -> Launch:
    """The model's view of a launch the geometry and occupancy describe; `chain`: the kernel's
    declared chain (sim.model.chain: passes, reductions, its compiled loads per element, which
    outrank `loads`, and its tile's steps per sweep, `trips`, from resolved_chain)."""
    if not occ.can_launch:
        raise UserError(f"no prediction: {occ.reason}")
    nbytes, _ = bytes_of(geo, bytes_moved)
    extra.setdefault("regs_per_thread", int(occ.regs_per_thread))
    extra.setdefault("cluster_size", int(geo.cluster_size))
    if chain is not None:
        extra.update(declared_chain(chain))
    launch = Launch(geo.blocks, geo.threads_per_block, int(blocks_per_sm or occ.blocks_per_sm),
                    nbytes, geo.elements, loop_trips_of(geo), **extra)
    trips = int((chain or {}).get("trips", 1))
    return replace(launch, loop_trips=trips) if trips > launch.loop_trips else launch


@dataclass(frozen=True)
class LaunchPrediction:
    gpu: str
    mode: str
    simulation: Simulation = field(repr=False)
    launch_overhead_us: float  # start event to first block, plus the drain after the last
    fill_us: float  # until every block slot got its first block (memory: and its first loads came back)
    full_waves_us: float
    tail_us: float  # sim.schedule.timeline's tail
    bytes_moved: float
    flops: float
    bound: str  # "bandwidth", "latency", "block dispatch", "compute" or "block time"
    ceiling_gbps: float  # what a full GPU reaches (achievable bandwidth)
    sources: dict = field(default_factory=dict, repr=False)  # constant -> its provenance label
    # (name, Constant) read besides the GPU's constants: a matmul's fitted terms; the faster SMs'
    # DRAM share where a memory-bound launch's SMs' shares differ
    fitted: tuple = field(default=(), repr=False)
    # memory-bound: ((stage, makespan after it, us), ...), the queueing model's own first
    stages: tuple = field(default=(), repr=False)
    tensor_tflops: float = 0.0  # compute: the datasheet dense rate of its inputs' dtype (speed of light)

    @property
    def timeline(self):
        return self.simulation.timeline

    @property
    def makespan_us(self) -> float:
        """First block start to last block end, over the whole grid."""
        return self.fill_us + self.full_waves_us + self.tail_us

    @property
    def whole_launch_us(self) -> float:
        return self.launch_overhead_us + self.makespan_us

    @property
    def bandwidth_gbps(self) -> float:
        """Bytes moved / whole-launch time: what a device-event timing reports."""
        return self.bytes_moved / (self.whole_launch_us * 1e3)

    @property
    def tflops(self) -> float:
        return self.flops / self.whole_launch_us / 1e6

    @property
    def tail_fraction(self) -> float:
        return self.timeline.tail_fraction

    @property
    def waves(self) -> int:
        return self.simulation.waves

    def parts(self) -> dict:
        return {"launch_overhead_us": self.launch_overhead_us, "fill_us": self.fill_us,
                "full_waves_us": self.full_waves_us, "tail_us": self.tail_us}

    def stage_shares(self) -> dict:
        """What each memory-bound stage changed in the makespan (us), the queueing model's
        makespan first: they add up to the simulated blocks' makespan."""
        out, before = {}, 0.0
        for name, after in self.stages:
            out[name] = after - before
            before = after
        return out

    def summary(self) -> dict:
        """The JSON both `explain --json` and `simulate --json` print."""
        out = {"mode": self.mode, "whole_launch_us": round(self.whole_launch_us, 4),
               "parts_us": {k: round(v, 4) for k, v in self.parts().items()},
               "bytes_moved": self.bytes_moved, "bound": self.bound, "waves": self.waves,
               "tail_fraction": round(self.tail_fraction, 4), "sources": self.sources}
        if self.stages:
            out["stages_us"] = {k: round(v, 4) for k, v in self.stage_shares().items()}
        if self.bytes_moved:
            out["bandwidth_gbps"] = round(self.bandwidth_gbps, 3)
            out["ceiling_gbps"] = round(self.ceiling_gbps, 1)
        if self.flops:
            out["tflops"] = round(self.tflops, 2)
        out["speed_of_light"] = self.speed_of_light().to_dict()
        return out

    def speed_of_light(self):
        """The bound this launch could reach and what its gap is made of (sim.model.speed_of_light)."""
        from sim.model.speed_of_light import speed_of_light

        return speed_of_light(self)


# ---- the memory-bound stages ------------------------------------------------------------------------
# The memory-bound schedule is the queueing model's (each block's life the MVA's at its live count,
# run through the block scheduler); these stages then act on it, in this order. Each is one small
# function of the schedule; a prediction keeps the makespan after each (LaunchPrediction.stages).

@dataclass(frozen=True)
class StageInput:
    cost: TripCost
    physics: GpuPhysics
    waves_left_out: bool  # identical leading waves were counted, not simulated


def _first_wave_ramp(sim, s: StageInput, carry: dict):
    """The GPU hands out the first wave's blocks one after another, not at one instant."""
    return first_wave_ramp(sim, s.physics.value("first_wave_block_ns"))


def _dispatcher_head_start(sim, s: StageInput, carry: dict):
    """An SM starts its first blocks at once: where the dispatcher binds, the first wave skips
    its queue (only where the simulated blocks begin with the grid's first wave)."""
    return sim if s.waves_left_out else s.cost.first_wave_head_start(sim)


def _dispatcher_queue(sim, s: StageInput, carry: dict):
    """A refill waits at the SM's dispatcher before thread 0 stamps its start (applied at the
    stamps: the drain sees the slot's life)."""
    carry["wait"] = s.cost.dispatch_waits(sim)
    return sim


def _drain(sim, s: StageInput, carry: dict):
    """Past the last start, the blocks still running share what the others free."""
    return drain(sim, s.cost)


def _stamps(sim, s: StageInput, carry: dict):
    """Thread 0's stamps inside each slot's life; a block dispatched late in the drain still
    makes its trips' round trips after its dispatch."""
    cost = s.cost
    starts = sim.block_start_us + carry.get("wait", 0.0)
    slot_ends = np.maximum(sim.block_end_us, starts + cost.trips * cost.delay_ns / 1e3)
    ends = cost.stamped_ends(starts, slot_ends)
    return replace(sim, block_start_us=starts, block_end_us=ends, makespan_us=float(ends.max()))


MEMORY_STAGES = (("first-wave ramp", _first_wave_ramp),
                 ("dispatcher head start", _dispatcher_head_start),
                 ("dispatcher queue", _dispatcher_queue),
                 ("drain", _drain),
                 ("stamps", _stamps))


def run_stages(sim, s: StageInput, skip: tuple = ()):
    """(the schedule after MEMORY_STAGES but `skip`, ((stage, makespan after it, us), ...)), the
    queueing model's own makespan first."""
    unknown = set(skip) - {name for name, _ in MEMORY_STAGES}
    if unknown:
        raise UserError(f"no memory-bound stage {sorted(unknown)[0]!r}; the stages: "
                        + ", ".join(name for name, _ in MEMORY_STAGES))
    carry, after = {}, [("queueing model", float(sim.makespan_us))]
    for name, stage in MEMORY_STAGES:
        if name not in skip:
            sim = stage(sim, s, carry)
        after.append((name, float(sim.makespan_us)))
    return sim, tuple(after)


# ---- the prediction ----------------------------------------------------------------------------------

def predict_launch(gpu: GpuSpec, launch: Launch, mode: str = "memory", *,
                   ceiling_gbps: float | None = None, placement: str = "tpc-spread",
                   schedule: str = "calibrated", seed: int = 0, max_waves: int | None = MAX_WAVES,
                   cost=None, sm_interval_us: float | None = None,
                   skip_stages: tuple = ()) -> LaunchPrediction:
    """The launch on `gpu` under `mode` (see the module docstring). `ceiling_gbps`: a measured
    copy ceiling (default the GPU's achievable bandwidth); `cost`: a block cost already made
    (the `simulate` knobs); `schedule` "ideal" drops the dispatch model and `sm_interval_us`
    overrides its per-SM start interval (uniform mode); `max_waves` None simulates every block;
    `skip_stages` leaves named MEMORY_STAGES out (what each buys: benchmarks/RESULTS.md)."""
    from sim.schedule.policies import make_placement, plan_blocks, run_schedule
    from sim.schedule.scheduler import UniformCost

    if mode not in MODES:
        raise UserError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
    ph = physics_for(gpu)
    slots = gpu.sm_count * launch.blocks_per_sm
    if launch.cluster_size > 1:  # a wave is whole clusters, GPC by GPC
        from sim.rules.clusters import cluster_occupancy

        slots = cluster_occupancy(gpu, launch.blocks_per_sm, launch.cluster_size).blocks_resident
    cap = None if max_waves is None else max_waves * slots
    n_sim, skipped = plan_blocks(launch.grid_blocks, slots, cap)
    first = launch.grid_blocks - n_sim
    order = make_placement(placement) if isinstance(placement, str) else placement
    stages = ()
    if mode == "memory":
        cost = cost or TripCost.for_gpu(gpu, launch, ceiling_gbps, ph)
        sim = run_schedule(gpu, n_sim, launch.blocks_per_sm, launch.warps_per_block, cost, order,
                           schedule="ideal", cluster_size=launch.cluster_size)  # the MVA paces
        if isinstance(cost, TripCost):
            sim, stages = run_stages(sim, StageInput(cost, ph, bool(skipped)), skip_stages)
    elif mode == "compute":
        from sim.model.throughput import ComputeBoundCost
        if launch.work is None:
            raise UserError("the compute-bound model needs a kernel that says what each block "
                            "computes (a matmul kernel); use the memory-bound or uniform model")
        cost = cost or ComputeBoundCost.for_gpu(gpu, launch.work, first_block=first)
        sim = run_schedule(gpu, n_sim, launch.blocks_per_sm, launch.warps_per_block, cost, order,
                           schedule="ideal", cluster_size=launch.cluster_size)  # tiles: as fitted
    else:
        cost = cost or UniformCost(launch.duration_us, seed=seed)
        sim = run_schedule(gpu, n_sim, launch.blocks_per_sm, launch.warps_per_block, cost, order,
                           schedule=schedule, wait=launch.wait, seed=seed,
                           sm_interval_us=sm_interval_us, regs_per_thread=launch.regs_per_thread,
                           cluster_size=launch.cluster_size)
    sim = replace(sim, skipped_waves=skipped, first_block=first)
    return replace(_assemble(gpu, launch, mode, sim, cost, ph), stages=stages)


def _assemble(gpu: GpuSpec, launch: Launch, mode: str, sim: Simulation, cost,
              ph: GpuPhysics) -> LaunchPrediction:
    tl = sim.timeline
    makespan = tl.whole_grid_us
    ceiling = getattr(cost, "ceiling_gbps", 0.0) or achievable_gbps(gpu, ph)
    extra = 0.0  # the fill's floor beyond the schedule (memory-bound): part of the fill
    if isinstance(cost, TripCost):
        # the busiest SM's port cannot start before the first trip's loads come back
        sms = min(gpu.sm_count, launch.grid_blocks)
        busiest = math.ceil(launch.grid_blocks / sms) * launch.bytes_moved / launch.grid_blocks
        extra = max(0.0, (cost.first_trip_ns + busiest / (ceiling / sms)) / 1e3 - makespan)
        bound = cost.bound(min(launch.grid_blocks, gpu.sm_count * launch.blocks_per_sm))
    else:
        bound = "compute" if mode == "compute" else "block time"
    first_wave = tl.wave == 0
    fill = float(tl.start_us[first_wave].max()) if first_wave.any() and not tl.skipped_waves else 0.0
    if isinstance(cost, TripCost):  # no byte moves before the first trip's loads come back
        fill = max(fill, cost.first_trip_ns / 1e3)
    fill = min(fill, tl.tail_start_us)
    tail = tl.tail_us
    full = max(0.0, makespan - fill - tail)
    fill += extra
    names = ("launch_overhead_us", "dram_latency_ns", "copy_fraction", "trip_overhead_ns", "trip_load_ns",
             "first_wave_block_ns") \
        if mode == "memory" else ("launch_overhead_us",)
    if mode == "memory" and (launch.passes > 1 or launch.reductions > 0):
        names += CHAIN_CONSTANTS
    fitted = cost.work.terms.fitted if mode == "compute" else ()  # a matmul's tile fit
    if isinstance(cost, TripCost) and cost.sm_weights and \
            cost.shares_differ(min(launch.grid_blocks, gpu.sm_count * launch.blocks_per_sm)):
        fitted = (("dram_share", dram_share_for(gpu).as_constant()),)  # its SMs' shares differ
    return LaunchPrediction(gpu.name, mode, sim, ph.value("launch_overhead_us"), fill, full, tail,
                            float(launch.bytes_moved), float(launch.flops), bound, ceiling,
                            {**{n: ph.constant(n).label for n in names},
                             **{n: c.label for n, c in fitted}}, fitted,
                            tensor_tflops=_tensor_rate(gpu, cost) if mode == "compute" else 0.0)


def _tensor_rate(gpu: GpuSpec, cost) -> float:
    """The datasheet dense tensor rate of a compute-bound cost's dtype (the one it was timed at)."""
    from sim.model.throughput import tensor_tflops

    return tensor_tflops(gpu, cost.work.terms.dtype)


def predict_measured(gpu: GpuSpec | None, m, trips: int = 1,
                     ceiling_gbps: float | None = None) -> LaunchPrediction | None:
    """The memory-bound prediction of a bench measurement (kernels.measure.timing.Measurement)
    whose file records its grid and occupancy, at the run's copy ceiling; None where it cannot
    say (a CPU timing, a torch peer's own grid, no GPU)."""
    if gpu is None or not m.is_gpu_timing or not (getattr(m, "grid_blocks", None)
                                                   and getattr(m, "blocks_per_sm", None)):
        return None
    try:
        launch = Launch(m.grid_blocks, m.threads_per_block or 256, m.blocks_per_sm, m.bytes_moved,
                        m.elements, trips)
        return predict_launch(gpu, launch, "memory", ceiling_gbps=ceiling_gbps)
    except (ValueError, UserError):
        return None


def stream_whole_us(gpu: GpuSpec, predictions) -> float:
    """Launches queued back to back on one stream (torch eager runs one kernel per op), timed by
    one event pair: the front end has each next grid ready while the one before runs, so past
    the first launch's overhead every later launch adds its makespan and the grid-to-grid gap
    (`launch_gap_us`), not a whole overhead."""
    preds = list(predictions)
    if not preds:
        raise UserError("a stream needs at least one launch")
    rest = preds[1:]
    gap = physics_for(gpu).value("launch_gap_us") if rest else 0.0
    return preds[0].whole_launch_us + sum(p.makespan_us + gap for p in rest)


def default_mode(declaration) -> str:
    """The mode a kernel is predicted in: "compute" for a tiled matrix product (its blocks' FLOPs
    and tiles, sim.model.throughput), else "memory". The one rule `explain`, `simulate` and the window
    share."""
    from sim.model.throughput import is_tiled_matmul

    return "compute" if declaration is not None and is_tiled_matmul(declaration) else "memory"


def predict_geometry(gpu: GpuSpec, occ: Occupancy, geo: LaunchGeometry, *,
                     bytes_moved: float | None = None, mode: str | None = None, work=None,
                     ceiling_gbps: float | None = None, loads: int = DEFAULT_LOADS,
                     chain: dict | None = None, **kw) -> LaunchPrediction:
    """`predict_launch` for a launch the occupancy and geometry describe (the surfaces' path).
    `work`: the kernel's sim.model.throughput.LaunchWork (or a BlockWork); `mode` None: default_mode
    of its kernel; `loads`: the input arrays the kernel declares; `chain`: its declared passes and
    reductions (`declared_chain`; None: its kernel's, where `work` names one)."""
    if mode is None:
        mode = default_mode(getattr(work, "kernel", None))
    if chain is None and getattr(work, "kernel", None) is not None:
        chain = declared_chain(work.kernel)
    extra: dict = {}
    if mode == "compute":
        if work is None:
            raise UserError("the compute-bound model needs a kernel that says what each block "
                            "computes (a matmul kernel); use the memory-bound or uniform model")
        from sim.model.matmul_choice import runs_on

        if runs_on(getattr(work, "kernel", None), gpu):  # a TMA matmul before Hopper
            raise UserError(f"{work.kernel.name} cannot run on {gpu.name}: {runs_on(work.kernel, gpu)}")
        built = work.build() if hasattr(work, "build") else work
        extra.update(work=built, flops=float(np.sum(built.flops)))
    launch = launch_of(occ, geo, bytes_moved=bytes_moved, loads=int(loads), chain=chain, **extra)
    return predict_launch(gpu, launch, mode, ceiling_gbps=ceiling_gbps, **kw)
