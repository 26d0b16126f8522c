"""The next step of the window's launch (sim.model.next_step) and what "try it" sets on the launch
model: the inputs a step changes, when the launch's own inputs hold that lever; and, for
matmul_auto, the choice it made. No Qt."""

from __future__ import annotations

from functools import lru_cache

from gui.models.launch import LaunchState
from sim.model.next_step import Step, next_steps
from sim.model.what_if import from_geometry

STEPS_KEPT = 64  # launches whose next steps are remembered (a slider dragged there and back)


def steps_for(state: LaunchState, ceiling_gbps: float | None = None) -> list[Step]:
    """The next steps of a memory-bound launch, at the ceiling the window's own prediction uses;
    none for a matrix product (matmul_auto chooses its tile) or a launch that cannot run.
    Each step is a whole-launch prediction: a launch seen before is not predicted again."""
    if not state.ok or state.geometry is None or state.geometry.sizes:
        return []
    return list(_steps(state.spec, from_geometry(state.occ, state.geometry, state.bytes_moved),
                       ceiling_gbps))


@lru_cache(maxsize=STEPS_KEPT)
def _steps(spec, launch, ceiling_gbps) -> tuple[Step, ...]:
    """next_steps of a frozen (GpuSpec, WhatIf, ceiling): the whole of what it depends on."""
    return tuple(next_steps(spec, launch, ceiling_gbps))


def try_changes(step: Step, state: LaunchState) -> dict | None:
    """LaunchModel.update(**changes) that makes `step`; None where the window has no input for
    it (a kernel's own grid rule, the tile of a kernel whose BLOCK_SIZE is not set)."""
    kind, value = next(iter(step.setting.items()))
    if kind == "regs":
        return {"regs_per_thread": value}
    if kind == "smem":
        return {"smem_per_block": value}
    if kind == "block":  # a Triton kernel's num_warps follows: threads // 32
        return {"threads_per_block": value}
    if kind == "elements_per_thread" and state.inputs.block_size is not None:
        return {"block_size": value * state.inputs.threads_per_block}
    return None


def auto_choice(state: LaunchState):
    """matmul_auto's choice for the launch's sizes (kernels.declare.registry.matmul_choice, the one its
    grid rule asked: cached, not redone); None for another kernel; a one-line str if it failed."""
    if state.inputs.kernel != "matmul_auto" or state.geometry is None or not state.geometry.sizes:
        return None
    from kernels.declare.registry import matmul_choice

    try:
        return matmul_choice(dict(state.geometry.sizes), state.spec)
    except ValueError as exc:  # UserError: no candidate for these sizes on this GPU
        return str(exc)
