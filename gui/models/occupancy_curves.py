"""The CUDA Occupancy Calculator's three charts around the launch being looked at (threads,
registers, shared memory), from sim's sweeps; a Triton kernel's threads curve has one compiled
point per num_warps (gui/models/compiled.py's threads_curve)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gui.models.compiled import threads_curve
from sim.rules.occupancy import sweep_registers, sweep_smem, sweep_threads

if TYPE_CHECKING:
    from gui.models.launch import LaunchState


@dataclass(frozen=True)
class OccupancyCurves:
    """The CUDA Occupancy Calculator's three charts for a launch: active warps per SM as one input
    varies, the others fixed. Each is (x values, warps); the launch itself is the marker."""

    threads: tuple
    registers: tuple
    smem: tuple  # x in bytes
    threads_note: str = ""  # where the threads curve's registers come from, when compiled


def occupancy_curves(state: LaunchState, sweep: dict | None = None,
                     note: str = "") -> OccupancyCurves | None:
    """None when the inputs are nonsense (no occupancy to sweep around). `sweep`: num_warps ->
    compiled resources of a Triton kernel; its threads curve then has one point per num_warps,
    each with its own registers."""
    if state.occ is None:
        return None
    spec, i = state.spec, state.inputs
    co = i.carveout_percent
    try:
        threads = (tuple(threads_curve(spec, sweep, co)) if sweep
                   else sweep_threads(spec, i.regs_per_thread, i.smem_per_block, co))
        return OccupancyCurves(threads,
                               sweep_registers(spec, i.threads_per_block, i.smem_per_block, co),
                               sweep_smem(spec, i.threads_per_block, i.regs_per_thread, co),
                               note)
    except ValueError:
        return None
