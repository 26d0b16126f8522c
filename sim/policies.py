"""The scheduler's swappable policies by name: cost models, placements and schedules.

Every front end (the `simulate` and `compare` commands, the window's menus, saved settings, files)
names a policy by its stable id and shows its title from here; older spellings still resolve:

    cost models: "uniform", "memory" (also "memory-bound"), "compute" (also "compute-bound")
    placements:  "sm-order" (also "sm", "SM order"), "tpc-spread" (also "tpc", "TPC/GPC spread"),
                 "recorded" (only beside a recorded trace: the SM order the hardware used)
    schedules:   "calibrated" (the GPU's dispatch model, sim/dispatch.py), "ideal" (the textbook:
                 a block starts the moment a slot frees)

`schedule_launch` runs one launch with policies given by id, so the command line and the window
simulate exactly the same thing; `run_schedule` is its core for a grid already worked out.
"""

from __future__ import annotations

import math

import numpy as np
from dataclasses import dataclass, replace

from sim.devices import GpuSpec
from sim.dispatch import dispatch_schedule
from sim.dispatch_profile import WAITS, DispatchProfile, profile_for
from sim.errors import UserError
from sim.occupancy import Occupancy
from sim.matmul_work import BlockWork
from sim.scheduler import (Placement, Simulation, SmOrderPlacement,
                           TpcSpreadPlacement, UniformCost, simulate)
from sim.throughput import ComputeBoundCost, LaunchWork
from sim.launch_model import BYTES_PER_ELEMENT_ADD, Launch, TripCost


@dataclass(frozen=True, slots=True)
class Policy:
    id: str  # stable: settings, files and the command line use it
    title: str  # what menus and tables show
    help: str
    aliases: tuple[str, ...] = ()


COST_MODELS: dict[str, Policy] = {p.id: p for p in (
    Policy("uniform", "uniform", "every block takes the same time (--duration-us)"),
    Policy("memory", "memory-bound",
           "the launch model's memory-bound blocks (sim.launch_model): each SM's resident blocks "
           "queue at its dispatcher and its share of the bandwidth between DRAM round trips; "
           "constants per GPU from resources/physics", ("memory-bound",)),
    Policy("compute", "compute-bound",
           "a block's FLOPs at its SM's share of the tensor rate plus its DRAM traffic at its "
           "share of the bandwidth; a persistent program runs its tiles in turn (sim.throughput, "
           "fitted on the H200's matmul sawtooth)", ("compute-bound",)),
)}

PLACEMENTS: dict[str, Policy] = {p.id: p for p in (
    Policy("sm-order", "SM order", "SM 0, 1, 2, ... then round again", ("sm", "SM order")),
    Policy("tpc-spread", "TPC/GPC spread",
           "the two SMs of a TPC together, TPCs spread over GPCs, as recorded on an H200",
           ("tpc", "TPC/GPC spread")),
    Policy("recorded", "recorded order", "the SMs a recorded trace's blocks ran on, in grid order",
           ("recorded order",)),
)}

SIMULATED_PLACEMENTS = ("sm-order", "tpc-spread")  # "recorded" needs a trace

SCHEDULES: dict[str, Policy] = {p.id: p for p in (
    Policy("calibrated", "calibrated",
           "the GPU's dispatch model, measured on the GPU (sim/dispatch.py): busy warps slow the "
           "arrival of new blocks on their SM"),
    Policy("ideal", "ideal (textbook)", "a block starts the moment a block slot frees",
           ("textbook",)),
)}

WAIT_TITLES = {"spin": "busy-spin", "sleep": "sleep", "memory": "wait on memory"}


def _resolve(registry: dict[str, Policy], what: str, text, allowed=None) -> str:
    key = str(text).strip()
    for policy in registry.values():
        if key == policy.id or key in policy.aliases or key.lower() == policy.id:
            if allowed is None or policy.id in allowed:
                return policy.id
    names = ", ".join(allowed or registry)
    raise UserError(f"unknown {what} {text!r}; known: {names}")


def cost_model_id(text) -> str:
    """'memory-bound' -> 'memory'; UserError for an unknown name."""
    return _resolve(COST_MODELS, "cost model", text)


def placement_id(text, allowed=None) -> str:
    """'sm' -> 'sm-order', 'TPC/GPC spread' -> 'tpc-spread'; UserError for an unknown name."""
    return _resolve(PLACEMENTS, "placement", text, allowed)


def schedule_id(text) -> str:
    """'textbook' -> 'ideal'; UserError for an unknown name."""
    return _resolve(SCHEDULES, "schedule", text)


def wait_id(text) -> str:
    key = str(text).strip().lower()
    if key not in WAITS:
        raise UserError(f"unknown wait {text!r}; known: {', '.join(WAITS)}")
    return key


@dataclass(frozen=True, slots=True)
class CostParams:
    """The cost models' knobs; the defaults are the `simulate` command's."""

    duration_us: float = 10.0  # uniform: every block
    jitter: float = 0.0  # uniform: +- fraction of seeded variation per block
    bytes_per_element: float = BYTES_PER_ELEMENT_ADD  # memory: vector add of float32
    overhead_us: float = 0.0  # memory: fixed time per block on top of the launch model's
    latency_us: float = 0.0  # memory: no block is shorter than this (0: the model's own time)
    # memory: an SM starts one block this often (None: the schedule's: the dispatch profile's
    # when calibrated, none in the textbook)
    sm_dispatch_us: float | None = None
    work: BlockWork | LaunchWork | None = None  # compute: what each block does (sim.throughput)
    dtype: str = "float16"  # compute: which tensor rate
    loop_trips: int = 1  # memory: DRAM round trips a block makes in a row (a grid-stride loop)
    ceiling_gbps: float | None = None  # memory: a measured copy ceiling (default: the GPU's)
    wait: str = "spin"  # uniform: what the warps do while resident (holds blocks back or not)
    seed: int = 0  # the calibrated schedule's random draws

    def check(self) -> None:
        wait_id(self.wait)
        for label, value in (("--duration-us", self.duration_us), ("--overhead-us", self.overhead_us),
                             ("--bytes-per-element", self.bytes_per_element),
                             ("--latency-us", self.latency_us),
                             ("--sm-dispatch-us", 0.0 if self.sm_dispatch_us is None else self.sm_dispatch_us)):
            if not value >= 0:
                raise UserError(f"{label} cannot be negative, got {value}")
            if value == math.inf:
                raise UserError(f"{label} must be a finite number, got {value}")
        if not 0 <= self.jitter < 1:
            raise UserError(f"--jitter is a fraction in [0, 1), got {self.jitter}")


def make_placement(pid: str, recorded: Placement | None = None) -> Placement:
    pid = placement_id(pid)
    if pid == "recorded":
        if recorded is None:
            raise UserError("the 'recorded' placement needs a recorded trace")
        return recorded
    return SmOrderPlacement() if pid == "sm-order" else TpcSpreadPlacement()


def _make_cost(cid: str, gpu: GpuSpec, elements: int, elements_per_block: int, n_blocks: int,
               params: CostParams, first_block: int = 0):
    if cost_model_id(cid) == "uniform":
        return UniformCost(params.duration_us, params.jitter, params.seed)
    if cost_model_id(cid) == "compute":
        if params.work is None:
            raise UserError("the compute-bound model needs a kernel that says what each block "
                            "computes (a matmul kernel); use the memory-bound or uniform model")
        work = params.work.build() if hasattr(params.work, "build") else params.work
        if work.n_blocks != n_blocks + first_block:
            raise UserError(f"the work describes {work.n_blocks:,} blocks, the grid has "
                            f"{n_blocks + first_block:,}")
        return ComputeBoundCost.for_gpu(gpu, work, params.dtype, first_block=first_block)
    # the launch model's block cost for the whole grid (its bytes per block, its loop trips)
    grid = n_blocks + first_block
    total = elements + first_block * elements_per_block
    trips = params.loop_trips or 1
    launch = Launch(grid, 0, 1, total * params.bytes_per_element, total, trips)
    return TripCost.for_gpu(gpu, launch, params.ceiling_gbps, extra_us=params.overhead_us,
                            min_us=params.latency_us)


def run_schedule(gpu: GpuSpec, n_blocks: int, blocks_per_sm: int, warps_per_block: int, cost,
                 placement: Placement, *, schedule: str = "calibrated", wait: str = "spin",
                 profile: DispatchProfile | None = None, sm_interval_us: float | None = None,
                 seed: int = 0) -> Simulation:
    """One grid under a schedule. Calibrated: blocks of equal time go through the dispatch model
    (what the warps do decides whether busy warps hold new blocks back); memory-bound blocks, whose
    time depends on their neighbours, through the block scheduler at the profile's per-SM start
    interval. Ideal: the textbook block scheduler. `sm_interval_us` overrides the interval."""
    schedule = schedule_id(schedule)
    if schedule == "ideal" or not isinstance(cost, UniformCost) or cost.duration_us <= 0:
        if schedule == "ideal":
            interval = sm_interval_us or 0.0
        else:
            interval = sm_interval_us if sm_interval_us is not None else \
                (profile or profile_for(gpu.name)).params.sm_interval_us
        return simulate(gpu, n_blocks, blocks_per_sm, cost, placement,
                        sm_dispatch_interval_us=interval)
    params = (profile or profile_for(gpu.name)).params
    if sm_interval_us is not None:
        params = replace(params, sm_interval_us=sm_interval_us)
    order = placement.slot_order(gpu, blocks_per_sm)
    sm, slot, start, end = dispatch_schedule(gpu, int(n_blocks), blocks_per_sm, warps_per_block,
                                             cost.duration_us, params, wait, order, seed,
                                             cost.jitter)
    return Simulation(gpu=gpu, blocks_per_sm=blocks_per_sm, n_blocks=int(n_blocks), block_sm=sm,
                      block_slot=slot, block_start_us=start, block_end_us=end,
                      makespan_us=float(end.max()), placement=getattr(placement, "id", "custom"),
                      cost=cost.id)


def plan_blocks(n_blocks: int, blocks_per_wave: int, cap: int | None) -> tuple[int, int]:
    """(blocks to simulate, identical full waves left out before them) for at most `cap` blocks:
    every full wave of a big grid is the same, so only the last ones and the tail are run."""
    if cap is None or n_blocks <= cap or blocks_per_wave <= 0 or n_blocks // blocks_per_wave <= 1:
        return n_blocks, 0
    skip = min(math.ceil((n_blocks - cap) / blocks_per_wave), n_blocks // blocks_per_wave - 1)
    return n_blocks - skip * blocks_per_wave, max(0, skip)


def schedule_launch(gpu: GpuSpec, occ: Occupancy, grid_blocks: int, *, elements: int | None = None,
                    elements_per_block: int | None = None, cost: str = "memory",
                    placement: str = "tpc-spread", params: CostParams = CostParams(),
                    max_blocks: int | None = None, schedule: str = "calibrated",
                    profile: DispatchProfile | None = None) -> Simulation:
    """Simulate a launch of `grid_blocks` blocks whose blocks each cover `elements_per_block` of
    `elements` (default: one element per thread), under `schedule` ("calibrated": the GPU's
    dispatch profile, default the one profile_for finds; "ideal": the textbook). With
    `max_blocks`, a bigger grid's leading full waves (alike: in the dispatch model, nearly) are
    left out and counted in `skipped_waves`."""
    if not occ.can_launch:
        raise UserError(f"nothing to schedule: {occ.reason}")
    params.check()
    per_block = int(elements_per_block or occ.threads_per_block)
    elements = int(elements if elements is not None else grid_blocks * per_block)
    n_sim, skipped = plan_blocks(int(grid_blocks), occ.blocks_per_sm * gpu.sm_count, max_blocks)
    first = int(grid_blocks) - n_sim
    model = _make_cost(cost, gpu, max(1, elements - first * per_block), per_block, n_sim, params,
                       first)
    if isinstance(model, UniformCost) and not model.duration_us * (1 + model.jitter) < 1e12:
        raise UserError("block durations this long overflow the simulation's clock; use smaller values")
    # compute-bound tiles keep the textbook's starts (as fitted); the memory-bound cost's MVA
    # holds each SM's dispatcher already
    interval = (params.sm_dispatch_us or 0.0) if isinstance(model, (ComputeBoundCost, TripCost)) \
        else params.sm_dispatch_us
    with np.errstate(over="ignore", invalid="ignore"):  # huge durations: reported just below
        sim = run_schedule(gpu, n_sim, occ.blocks_per_sm, occ.warps_per_block, model,
                           make_placement(placement), schedule=schedule, wait=params.wait,
                           profile=profile, sm_interval_us=interval, seed=params.seed)
    if not sim.makespan_us < math.inf:
        raise UserError("block durations this long overflow the simulation's clock; use smaller values")
    return replace(sim, skipped_waves=skipped, first_block=first)
