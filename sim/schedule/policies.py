"""The scheduler's swappable policies by name: cost models, placements and schedules.

Every front end (the `simulate` and `compare` commands, the window's menus, saved settings, files)
names a policy by its stable id and shows its title from here; older spellings still resolve:

    cost models: "uniform", "memory" (also "memory-bound"), "compute" (also "compute-bound")
    placements:  "sm-order" (also "sm", "SM order"), "tpc-spread" (also "tpc", "TPC/GPC spread"),
                 "recorded" (only beside a recorded trace: the SM order the hardware used)
    schedules:   "calibrated" (the GPU's dispatch model, sim/schedule/dispatch.py), "ideal" (the textbook:
                 a block starts the moment a slot frees)

`run_schedule` runs a grid already worked out under a schedule; the launch model
(sim.model.launch_model.predict_launch) is what the command line and the window both call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from sim.rules.devices import GpuSpec
from sim.schedule.dispatch import dispatch_schedule
from sim.schedule.dispatch_profile import WAITS, DispatchProfile, profile_for
from sim.inputs.errors import UserError
from sim.schedule.scheduler import (Placement, Simulation, SmOrderPlacement, TpcSpreadPlacement,
                           UniformCost, simulate)


@dataclass(frozen=True, slots=True)
class Policy:
    id: str  # stable: settings, files and the command line use it
    title: str  # what menus and tables show
    help: str
    aliases: tuple[str, ...] = ()


COST_MODELS: dict[str, Policy] = {p.id: p for p in (
    Policy("uniform", "uniform", "every block takes the same time (--duration-us)"),
    Policy("memory", "memory-bound",
           "the launch model's memory-bound blocks (sim.model.launch_model): each SM's resident blocks "
           "queue at its dispatcher and its share of the bandwidth between DRAM round trips; "
           "constants per GPU from resources/physics", ("memory-bound",)),
    Policy("compute", "compute-bound",
           "a block's FLOPs at its SM's share of the tensor rate plus its DRAM traffic at its "
           "share of the bandwidth; a persistent program runs its tiles in turn (sim.model.throughput, "
           "fitted per GPU, resources/fits)", ("compute-bound",)),
)}

PLACEMENTS: dict[str, Policy] = {p.id: p for p in (
    Policy("sm-order", "SM order", "SM 0, 1, 2, ... then round again", ("sm", "SM order")),
    Policy("tpc-spread", "TPC/GPC spread",
           "the two SMs of a TPC together, TPCs spread over GPCs, as recorded traces show",
           ("tpc", "TPC/GPC spread")),
    Policy("recorded", "recorded order", "the SMs a recorded trace's blocks ran on, in grid order",
           ("recorded order",)),
)}

SIMULATED_PLACEMENTS = ("sm-order", "tpc-spread")  # "recorded" needs a trace

SCHEDULES: dict[str, Policy] = {p.id: p for p in (
    Policy("calibrated", "calibrated",
           "the GPU's dispatch model, measured on the GPU (sim/schedule/dispatch.py): busy warps slow the "
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


def make_placement(pid: str, recorded: Placement | None = None) -> Placement:
    pid = placement_id(pid)
    if pid == "recorded":
        if recorded is None:
            raise UserError("the 'recorded' placement needs a recorded trace")
        return recorded
    return SmOrderPlacement() if pid == "sm-order" else TpcSpreadPlacement()


def run_schedule(gpu: GpuSpec, n_blocks: int, blocks_per_sm: int, warps_per_block: int, cost,
                 placement: Placement, *, schedule: str = "calibrated", wait: str = "spin",
                 profile: DispatchProfile | None = None, sm_interval_us: float | None = None,
                 seed: int = 0, regs_per_thread: int = 0, cluster_size: int = 1) -> Simulation:
    """One grid under a schedule. Calibrated: blocks of equal time go through the dispatch model
    (what the warps do decides whether busy warps hold new blocks back); memory-bound blocks, whose
    time depends on their neighbours, through the block scheduler at the profile's per-SM start
    interval for its blocks' warps. Ideal: the textbook block scheduler. `sm_interval_us` overrides
    the interval (the same for every block size).
    `regs_per_thread`: the compiled kernel's, for the dispatch model's register rule (0: unknown).
    `cluster_size` > 1: the block scheduler places whole clusters on one GPC (the dispatch model,
    fitted to single blocks, is not used for them)."""
    schedule = schedule_id(schedule)
    if cluster_size > 1 or schedule == "ideal" or not isinstance(cost, UniformCost) or cost.duration_us <= 0:
        if schedule == "ideal":
            interval = sm_interval_us or 0.0
        else:
            interval = sm_interval_us if sm_interval_us is not None else \
                (profile or profile_for(gpu.name)).params.sm_interval_us
        return simulate(gpu, n_blocks, blocks_per_sm, cost, placement,
                        sm_dispatch_interval_us=interval, cluster_size=cluster_size)
    params = (profile or profile_for(gpu.name)).params
    if sm_interval_us is not None:
        params = replace(params, sm_interval_us=sm_interval_us)
    order = placement.slot_order(gpu, blocks_per_sm)
    sm, slot, start, end = dispatch_schedule(gpu, int(n_blocks), blocks_per_sm, warps_per_block,
                                             cost.duration_us, params, wait, order, seed,
                                             cost.jitter, regs_per_thread)
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
