"""THE launch model: what one launch does on one GPU, and how long a device-event timing says it took.

`predict_launch(gpu, launch, mode)` runs the grid through the block scheduler (sim.schedule.scheduler) with
one of three block costs and returns a `LaunchPrediction`: the schedule, the whole-launch time and
its parts, the bandwidth (bytes moved / whole-launch time) or FLOP/s, what bounds it and the tail
share (sim.schedule.timeline). Every surface (`explain`, `simulate`, bench's predicted column, the window's
verdicts, curves, timeline and latency view, Two GPUs, the exports) reads it.

Modes (block costs):
- "memory": each block's time from the loaded model (`TripCost`): on each SM the resident blocks
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

import functools
import math
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

from sim.rules.devices import GpuSpec
from sim.inputs.errors import UserError
from sim.rules.geometry import BYTES_PER_ELEMENT_ADD, LaunchGeometry
from sim.model.chain import declared_chain
from sim.model.drain import drain
from sim.model.latency import BUSY, DEFAULT_LOADS, mva_levels, trip_costs_for
from sim.rules.occupancy import Occupancy
from sim.rules.physics import GpuPhysics, physics_for
from sim.schedule.dispatch_profile import warp_pacing_us
from sim.schedule.scheduler import Simulation, _unit_noise

MODES = ("memory", "compute", "uniform")
TICK_US = 0.02  # the memory-bound schedule's clock when block times are spread
SQRT3 = math.sqrt(3.0)  # uniform noise on [-1, 1) has standard deviation 1/sqrt(3)
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
    regs_per_thread: int = 0  # uniform mode: the dispatch model's register rule (0: unknown)
    work: object = field(default=None, repr=False, compare=False)  # compute: sim.model.matmul_work.BlockWork

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
    fitted: tuple = field(default=(), repr=False)  # compute: (name, Constant) of the kernel's fitted terms

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

    def summary(self) -> dict:
        """The JSON both `explain --json` and `simulate --json` print."""
        out = {"mode": self.mode, "whole_launch_us": round(self.whole_launch_us, 4),
               "parts_us": {k: round(v, 4) for k, v in self.parts().items()},
               "bytes_moved": self.bytes_moved, "bound": self.bound, "waves": self.waves,
               "tail_fraction": round(self.tail_fraction, 4), "sources": self.sources}
        if self.bytes_moved:
            out["bandwidth_gbps"] = round(self.bandwidth_gbps, 3)
            out["ceiling_gbps"] = round(self.ceiling_gbps, 1)
        if self.flops:
            out["tflops"] = round(self.tflops, 2)
        return out


# ---- the memory-bound block cost ------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class TripCost:
    """A block's time from the loaded model: each SM a closed network whose customers are its
    resident blocks (the live GPU-wide count when the block starts, spread over the SMs); a trip
    passes the SM's dispatcher (once per block), a delay (the trip overhead for the kernel's input
    arrays, sim.model.latency.TripCosts, + the DRAM round trip) and
    the SM's memory port, which moves the trip's bytes at the active SMs' share of the ceiling.
    A block makes `trips` such trips in a row."""

    id: ClassVar[str] = "memory"
    sm_count: int
    bytes_per_trip: float
    trips: int
    ceiling_gbps: float
    delay_ns: float  # trip overhead + DRAM latency
    dispatch_ns: float  # an SM starts at most one block this often
    extra_us: float = 0.0  # a fixed time per block on top (the `simulate --overhead-us` knob)
    min_us: float = 0.0  # no block is shorter (the `simulate --latency-us` knob)
    spread: float = 0.0  # coefficient of variation of the stamped block times (DRAM service order)
    hold: float = 0.0  # a block holds its slot this share of its stamped time past its end stamp

    @classmethod
    def for_gpu(cls, gpu: GpuSpec, launch: Launch, ceiling_gbps: float | None = None,
                physics: GpuPhysics | None = None, **knobs) -> "TripCost":
        ph = physics or physics_for(gpu)
        if launch.grid_blocks < 1 or launch.bytes_moved <= 0 or launch.loop_trips < 1:
            raise UserError("a memory-bound prediction needs at least one block and some bytes "
                            "to move (a block must take at least 0.001 us)")
        ceiling = float(ceiling_gbps or achievable_gbps(gpu, ph))
        costs = trip_costs_for(gpu, ph)  # the overhead for the launch's loads, as predict_loaded's
        return cls(gpu.sm_count, launch.bytes_moved / launch.grid_blocks / launch.loop_trips,
                   int(launch.loop_trips), ceiling,
                   costs.overhead_ns(launch.loads) + ph.value("dram_latency_ns")  # latency.dram_latency_ns
                   + chain_ns(gpu, launch, ph) / launch.loop_trips,  # think time, spread over the trips
                   costs.dispatch_ns,
                   **{"spread": ph.value("block_time_spread"), "hold": ph.value("slot_hold_fraction"),
                      **knobs})

    @property
    def first_trip_ns(self) -> float:
        return self.dispatch_ns + self.delay_ns

    def _solve(self, resident_blocks: int):
        """The MVA for `resident_blocks` live GPU-wide, spread evenly over the SMs."""
        sms = min(self.sm_count, max(int(resident_blocks), 1))
        per_sm = math.ceil(max(int(resident_blocks), 1) / sms)
        per_ns, residence = (a[per_sm - 1] for a in _solved(self, per_sm, sms))
        return per_ns, residence, self._demands(sms)

    def _demands(self, sms: int) -> tuple[float, float]:
        port_ns = self.bytes_per_trip / (self.ceiling_gbps / sms)  # GB/s = bytes per ns
        return self.dispatch_ns / self.trips, port_ns  # a looping block is dispatched once

    def life_us(self, resident_blocks: int) -> float:
        """A block's whole life in its slot while `resident_blocks` are live GPU-wide."""
        _, residence, _ = self._solve(resident_blocks)
        return max(self.trips * (self.delay_ns + float(residence.sum())) / 1e3 + self.extra_us,
                   self.min_us)

    def levels(self, per_sm: int, sms: int) -> tuple[np.ndarray, np.ndarray]:
        """The MVA of one SM holding k = 1..`per_sm` blocks (index k - 1) while `sms` SMs share
        the DRAM: block trips per ns and residences (what the drain, sim.model.drain, reads)."""
        return _solved(self, int(per_sm), int(sms))

    def durations(self, block_ids: np.ndarray, resident_blocks: int) -> np.ndarray:
        # the MVA's time is the block's whole life in its slot; `stamped_ends` says where in it
        # thread 0's end stamp falls
        # the spread is each trip's: a block that loops over `trips` averages it down
        base = self.life_us(resident_blocks)
        # the straggle is the DRAM's service order, so it cannot outlast the SM's own bytes: the
        # last of an SM's resident blocks (FIFO at its port) stamps its end once all their trips
        # are through, its slot free `hold` of a trip later (`stamped_ends`). The spread narrows
        # to fit under that (symmetric: the mean, hence the throughput, stays the MVA's)
        life = self.slowest_us(resident_blocks) / (1.0 - self.hold / (1.0 + self.hold) / self.trips)
        half = min(self.spread / math.sqrt(self.trips) * SQRT3, max(0.0, life / base - 1.0))
        held = base * (1.0 + half * _unit_noise(block_ids, 0))
        # on a 20 ns clock: spread blocks retire in batches, one scheduler step per tick, not per block
        return np.maximum(np.round(held / TICK_US), 1.0) * TICK_US if self.spread else held

    def slowest_us(self, resident_blocks: int) -> float:
        """The latest a block of a full SM can end: its dispatch, then each trip's delay and the
        bytes of all the SM's resident blocks through the port at its share."""
        sms = min(self.sm_count, max(int(resident_blocks), 1))
        per_sm = math.ceil(max(int(resident_blocks), 1) / sms)
        port_ns = self.bytes_per_trip / (self.ceiling_gbps / sms)
        return (self.dispatch_ns + self.trips * (self.delay_ns + per_sm * port_ns)) / 1e3 + self.extra_us

    def dispatch_waits(self, sim) -> np.ndarray:
        """How long after its slot frees each block is dispatched (thread 0 stamps its start
        then): a block refilling a slot waits first at the SM's dispatcher (the MVA's residence
        there, at the live count when the slot freed), and the slot is empty meanwhile. Only
        where the dispatcher is the SM's bottleneck (it serves a block slower than the port
        moves one): where the port is, the blocks queue at the port, resident, and the hold
        describes their stamps (benchmarks/NOTES-fit.md, fifth pass). The first block of each
        slot is dispatched at once (an H200 SM starts its first 8-16 blocks within ~64 ns:
        benchmarks/NOTES-dispatch.md) and queues at the port instead. Asked before the drain:
        the wait is over before the port's share changes."""
        start, end = sim.block_start_us, sim.block_end_us
        dispatch_ns, port_ns = self._demands(sim.gpu.sm_count)
        if dispatch_ns <= port_ns:
            return np.zeros_like(start)
        live = np.searchsorted(np.sort(start), start, side="right") - \
            np.searchsorted(np.sort(end), start, side="right")
        counts, index = np.unique(np.maximum(live, 1), return_inverse=True)
        # the wait's share of the MVA's life; a block's drawn spread stretches all of its life alike
        share = np.array([self.trips * float(self._solve(int(c))[1][0]) / 1e3 / self.life_us(int(c))
                          for c in counts])
        return np.where(sim.timeline.wave == 0, 0.0, share[index] * (end - start))

    def stamped_ends(self, start_us: np.ndarray, slot_end_us: np.ndarray) -> np.ndarray:
        """Where thread 0 stamps each block's end: the slot is released `hold` of one trip's time
        later (a looping block's other warps lag by its last trip, not by the whole loop)."""
        return slot_end_us - (slot_end_us - start_us) / self.trips * self.hold / (1.0 + self.hold)

    def bound(self, resident_blocks: int) -> str:
        """"bandwidth" (the port is nearly always busy), "block dispatch" (the dispatcher is),
        else "latency"."""
        per_ns, _, (dispatch_ns, port_ns) = self._solve(resident_blocks)
        if per_ns * port_ns >= BUSY:
            return "bandwidth"
        return "block dispatch" if per_ns * dispatch_ns >= BUSY else "latency"


@functools.lru_cache(maxsize=4096)
def _solved(cost: TripCost, per_sm: int, sms: int):
    """TripCost's MVA on one SM at every population up to `per_sm`, `sms` SMs sharing the DRAM,
    once per (cost, per_sm, sms): a long grid and the drain ask for the same few."""
    return mva_levels(per_sm, cost.delay_ns, cost._demands(sms))


CHAIN_CONSTANTS = ("l2_latency_ns", "l2_gbps", "reduction_step_ns")


def chain_ns(gpu: GpuSpec, launch: Launch, physics: GpuPhysics | None = None) -> float:
    """A block's dependent work besides its DRAM trips, in ns: each sweep after the first
    re-reads the block's bytes from the L2 (its latency once per loop trip, then the bytes at this SM's share of the
    L2's bandwidth; where the resident blocks' rows outgrow the L2, a DRAM round trip instead),
    and each block-wide reduction is ceil(log2(threads)) dependent shuffle/barrier steps of
    `reduction_step_ns`. In the network it is think time: the block holds its slot, the port
    serves the SM's other blocks meanwhile. 0 for a one-sweep kernel with no reduction."""
    if launch.passes <= 1 and launch.reductions <= 0:
        return 0.0
    ph = physics or physics_for(gpu)
    per_block = launch.bytes_moved / max(launch.grid_blocks, 1)
    resident = min(launch.grid_blocks, gpu.sm_count * launch.blocks_per_sm)
    steps = launch.loop_trips  # a sweep walks the block's share in these dependent steps
    if resident * per_block <= gpu.l2_bytes:
        sweep = steps * ph.value("l2_latency_ns") + per_block / (ph.value("l2_gbps") / gpu.sm_count)
    else:
        sweep = steps * ph.value("dram_latency_ns") + per_block / (achievable_gbps(gpu, ph) / gpu.sm_count)
    steps = math.ceil(math.log2(max(launch.threads_per_block, 2)))
    return (max(launch.passes, 1) - 1) * sweep + max(launch.reductions, 0) * steps * \
        ph.value("reduction_step_ns")


def first_wave_ramp(sim, per_block_ns: float):
    """The first wave does not start at one instant: the GPU hands out its first blocks one
    after another, `per_block_ns` apart GPU-wide, in block order. Each slot's whole chain of
    blocks starts that much later (a slot refills when its block ends)."""
    if per_block_ns <= 0:
        return sim
    wave = sim.timeline.wave
    lane = sim.block_sm.astype(np.int64) * sim.blocks_per_sm + sim.block_slot
    first = np.flatnonzero(wave == 0)
    rank = np.empty(first.size)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    offset = np.zeros(int(lane.max()) + 1)
    offset[lane[first]] = rank * per_block_ns / 1e3
    shift = offset[lane]
    ends = sim.block_end_us + shift
    return replace(sim, block_start_us=sim.block_start_us + shift, block_end_us=ends,
                   makespan_us=float(ends.max()))


def achievable_gbps(gpu: GpuSpec, physics: GpuPhysics | None = None) -> float:
    """The bandwidth a full GPU reaches: the copy fraction of the rated peak."""
    return gpu.peak_dram_gbps * (physics or physics_for(gpu)).value("copy_fraction")


# ---- the prediction ----------------------------------------------------------------------------------

def predict_launch(gpu: GpuSpec, launch: Launch, mode: str = "memory", *,
                   ceiling_gbps: float | None = None, placement: str = "tpc-spread",
                   schedule: str = "calibrated", seed: int = 0, max_waves: int | None = MAX_WAVES,
                   cost=None, sm_interval_us: float | None = None) -> LaunchPrediction:
    """The launch on `gpu` under `mode` (see the module docstring). `ceiling_gbps`: a measured
    copy ceiling (default the GPU's achievable bandwidth); `cost`: a block cost already made
    (the `simulate` knobs); `schedule` "ideal" drops the dispatch model and `sm_interval_us`
    overrides its per-SM start interval (uniform mode); `max_waves` None simulates every block."""
    from sim.schedule.policies import make_placement, plan_blocks, run_schedule
    from sim.schedule.scheduler import UniformCost

    if mode not in MODES:
        raise UserError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
    ph = physics_for(gpu)
    slots = gpu.sm_count * launch.blocks_per_sm
    cap = None if max_waves is None else max_waves * slots
    n_sim, skipped = plan_blocks(launch.grid_blocks, slots, cap)
    first = launch.grid_blocks - n_sim
    order = make_placement(placement) if isinstance(placement, str) else placement
    if mode == "memory":
        cost = cost or TripCost.for_gpu(gpu, launch, ceiling_gbps, ph)
        sim = run_schedule(gpu, n_sim, launch.blocks_per_sm, launch.warps_per_block, cost, order,
                           schedule="ideal",  # the MVA holds the dispatcher: only many warps' pacing
                           sm_interval_us=warp_pacing_us(gpu.name, launch.warps_per_block))
        if isinstance(cost, TripCost):
            sim = first_wave_ramp(sim, ph.value("first_wave_block_ns"))
            wait = cost.dispatch_waits(sim)
            sim = drain(sim, cost)  # past the last start the blocks share what the others free
            # thread 0's stamps inside each slot's life; a block dispatched late in the drain
            # still makes its trips' round trips after its dispatch
            starts = sim.block_start_us + wait
            slot_ends = np.maximum(sim.block_end_us, starts + cost.trips * cost.delay_ns / 1e3)
            ends = cost.stamped_ends(starts, slot_ends)
            sim = replace(sim, block_start_us=starts, block_end_us=ends, makespan_us=float(ends.max()))
    elif mode == "compute":
        from sim.model.throughput import ComputeBoundCost
        if launch.work is None:
            raise UserError("the compute-bound model needs a kernel that says what each block "
                            "computes (a matmul kernel); use the memory-bound or uniform model")
        cost = cost or ComputeBoundCost.for_gpu(gpu, launch.work, first_block=first)
        sim = run_schedule(gpu, n_sim, launch.blocks_per_sm, launch.warps_per_block, cost, order,
                           schedule="ideal")  # tiles keep the textbook's starts (as fitted)
    else:
        cost = cost or UniformCost(launch.duration_us, seed=seed)
        sim = run_schedule(gpu, n_sim, launch.blocks_per_sm, launch.warps_per_block, cost, order,
                           schedule=schedule, wait=launch.wait, seed=seed,
                           sm_interval_us=sm_interval_us, regs_per_thread=launch.regs_per_thread)
    sim = replace(sim, skipped_waves=skipped, first_block=first)
    return _assemble(gpu, launch, mode, sim, cost, ph)


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
    return LaunchPrediction(gpu.name, mode, sim, ph.value("launch_overhead_us"), fill, full, tail,
                            float(launch.bytes_moved), float(launch.flops), bound, ceiling,
                            {**{n: ph.constant(n).label for n in names},
                             **{n: c.label for n, c in fitted}}, fitted)


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
