"""How many blocks of a launch fit on one SM: the CUDA driver's rules, limiter by limiter.

This follows cuda_occupancy.h (the header the driver's occupancy API is built on): warps are
allocated whole; registers go to warps in units of `reg_alloc_unit`, per sub-partition of the
register file; shared memory is the block's bytes plus the driver's per-block reserve, rounded up
to `smem_alloc_unit_bytes`, against the SM's shared-memory carveout. It is checked case by case
against cuOccupancyMaxActiveBlocksPerMultiprocessor on a real H200 (tests/data/).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim.rules.devices import GpuSpec

LIMITERS = ("warps", "blocks", "registers", "shared memory")


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, b: int) -> int:
    return _ceil_div(a, b) * b


@dataclass(frozen=True, slots=True)
class Occupancy:
    threads_per_block: int
    regs_per_thread: int
    smem_per_block_bytes: int
    carveout_percent: int | None
    warps_per_block: int
    blocks_per_sm: int
    active_warps_per_sm: int
    max_warps_per_sm: int
    occupancy: float  # active warps / max warps, 0..1
    limits: dict = field(hash=False)  # limiter -> blocks per SM it allows (None: no constraint)
    limited_by: tuple[str, ...]  # every limiter that binds (ties all reported)
    reason: str  # why nothing fits, or "" when the launch can run
    regs_allocated_per_block: int
    smem_allocated_per_block_bytes: int
    smem_per_sm_config_bytes: int  # the shared-memory carveout the driver would pick
    smem_per_sm_preferred_bytes: int = 0  # the carveout step the preference asks for

    @property
    def carveout_raised(self) -> bool:
        """The driver took a bigger carveout than the preference, because one block needs it."""
        return self.carveout_percent is not None and \
            self.smem_per_sm_config_bytes > self.smem_per_sm_preferred_bytes

    @property
    def can_launch(self) -> bool:
        return self.blocks_per_sm > 0

    def explain(self) -> str:
        if not self.can_launch:
            return f"cannot launch: {self.reason}"
        names = " and ".join(self.limited_by)
        return (f"{self.blocks_per_sm} blocks/SM = {self.active_warps_per_sm}/{self.max_warps_per_sm}"
                f" warps ({self.occupancy:.0%}), limited by {names}")


def _check_inputs(gpu: GpuSpec, threads: int, regs: int, smem: int, carveout) -> None:
    for label, value in (("threads per block", threads), ("registers per thread", regs),
                         ("shared memory per block", smem)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{label} must be a whole number, got {value!r}")
    if threads <= 0:
        raise ValueError(f"threads per block must be at least 1, got {threads}")
    if regs < 0:
        raise ValueError(f"registers per thread cannot be negative, got {regs}")
    if smem < 0:
        raise ValueError(f"shared memory per block cannot be negative, got {smem} bytes")
    if carveout is not None and not 0 <= carveout <= 100:
        raise ValueError(f"carveout is a percentage 0..100 (or None for the default), got {carveout}")


def carveout_bytes(gpu: GpuSpec, requested_bytes: int) -> int | None:
    """Smallest carveout step that holds `requested_bytes` (None if no step is that large)."""
    for kib in gpu.smem_carveout_steps_kib:
        if requested_bytes <= kib * 1024:
            return kib * 1024
    return None


def registers_per_warp(gpu: GpuSpec, regs: int) -> int:
    """A warp's registers: one per thread per register, in whole allocation units."""
    return _round_up(regs * gpu.warp_size, gpu.reg_alloc_unit)


def register_warps_per_sm(gpu: GpuSpec, regs_per_warp: int) -> int:
    """Warps the register file holds: each sub-partition holds whole warps of its own."""
    per_sub_partition = gpu.regs_per_sm // gpu.reg_alloc_sub_partitions
    return (per_sub_partition // regs_per_warp) * gpu.reg_alloc_sub_partitions


def registers_checked_per_block(gpu: GpuSpec, regs_per_warp: int, warps: int) -> int:
    """Registers a block is checked for: the hardware assumes every sub-partition gets the same
    number of warps, so the warps round up to a multiple of the sub-partitions."""
    return regs_per_warp * _round_up(warps, gpu.reg_alloc_sub_partitions)


def smem_block_limit_bytes(gpu: GpuSpec, smem: int) -> int:
    """The most a block may allocate: kernels needing more than the default per-block limit opt
    in; the limit then includes the reserve."""
    return (gpu.smem_per_block_optin_bytes if smem > gpu.smem_per_block_bytes
            else gpu.smem_per_block_bytes) + gpu.smem_reserved_per_block_bytes


def chosen_carveout_bytes(gpu: GpuSpec, preferred: int, allocated: int) -> int | None:
    """The carveout the driver configures: a preference too small for one block is overridden
    by the smallest step that fits (None: no step does)."""
    return preferred if preferred >= allocated else carveout_bytes(gpu, allocated)


def smem_allocated_bytes(gpu: GpuSpec, smem: int) -> int:
    """A block's shared memory as allocated: its bytes plus the driver's reserve, in units."""
    return _round_up(smem + gpu.smem_reserved_per_block_bytes, gpu.smem_alloc_unit_bytes)


def preferred_carveout_bytes(gpu: GpuSpec, carveout) -> int:
    """The carveout step a preference (percent, None: the default maximum) asks for."""
    asked = gpu.smem_per_sm_bytes if carveout is None else carveout * gpu.smem_per_sm_bytes // 100
    step = carveout_bytes(gpu, asked)
    return gpu.smem_per_sm_bytes if step is None else step  # above the largest step: the largest


def _warps_limit(gpu: GpuSpec, threads: int, warps: int) -> tuple[int, str]:
    if threads > gpu.max_threads_per_block:
        return 0, f"{threads} threads per block is over the limit of {gpu.max_threads_per_block}"
    return gpu.max_warps_per_sm // warps, ""


def _registers_limit(gpu: GpuSpec, regs: int, warps: int) -> tuple[int | None, int, str]:
    """(blocks allowed, registers allocated per block, reason if none)."""
    if regs > gpu.max_regs_per_thread:
        return 0, 0, f"{regs} registers per thread is over the limit of {gpu.max_regs_per_thread}"
    regs_per_warp = registers_per_warp(gpu, regs)
    per_block = regs_per_warp * warps
    assumed = registers_checked_per_block(gpu, regs_per_warp, warps)
    if max(per_block, assumed) > gpu.regs_per_block:
        return 0, per_block, (f"{warps} warps x {regs_per_warp} registers per warp need "
                              f"{assumed:,} registers, more than the {gpu.regs_per_block:,} a block may have")
    if regs_per_warp == 0:
        return None, 0, ""
    return register_warps_per_sm(gpu, regs_per_warp) // warps, per_block, ""


def _smem_limit(gpu: GpuSpec, smem: int, carveout) -> tuple[int | None, int, int, int, str]:
    """(blocks allowed, bytes allocated per block, carveout bytes, preferred carveout bytes,
    reason if none)."""
    allocated = smem_allocated_bytes(gpu, smem)
    if allocated > smem_block_limit_bytes(gpu, smem):
        return 0, allocated, 0, 0, (f"{smem:,} B of shared memory per block is over the opt-in limit "
                                 f"of {gpu.smem_per_block_optin_bytes:,} B")
    preferred = preferred_carveout_bytes(gpu, carveout)
    config = chosen_carveout_bytes(gpu, preferred, allocated)
    if config is None:
        return 0, allocated, 0, preferred, f"{allocated:,} B per block does not fit any shared-memory carveout"
    if allocated == 0:
        return None, 0, config, preferred, ""
    return config // allocated, allocated, config, preferred, ""


def occupancy(gpu: GpuSpec, threads_per_block: int, regs_per_thread: int = 0,
              smem_per_block: int = 0, carveout_percent: int | None = None) -> Occupancy:
    """Blocks of this launch resident per SM, the warps they bring, and what limits them.

    `smem_per_block` is static plus dynamic shared memory in bytes. `carveout_percent` is the
    kernel's preferred shared-memory carveout (cudaFuncAttributePreferredSharedMemoryCarveout);
    None means the driver's default (maximum shared memory).
    """
    _check_inputs(gpu, threads_per_block, regs_per_thread, smem_per_block, carveout_percent)
    warps = _ceil_div(threads_per_block, gpu.warp_size)
    by_warps, why_warps = _warps_limit(gpu, threads_per_block, warps)
    by_regs, regs_alloc, why_regs = _registers_limit(gpu, regs_per_thread, warps)
    by_smem, smem_alloc, smem_config, smem_preferred, why_smem = _smem_limit(gpu, smem_per_block,
                                                                             carveout_percent)
    limits = {"warps": by_warps, "blocks": gpu.max_blocks_per_sm, "registers": by_regs,
              "shared memory": by_smem}
    binding = [v for v in limits.values() if v is not None]
    blocks = min(binding)
    limited_by = tuple(name for name, v in limits.items() if v == blocks)
    reason = "; ".join(r for r in (why_warps, why_regs, why_smem) if r)
    if blocks == 0 and not reason:
        reason = "one block needs more of an SM than it has"  # e.g. regs fit per block, not per SM
    active = blocks * warps
    return Occupancy(
        threads_per_block=threads_per_block, regs_per_thread=regs_per_thread,
        smem_per_block_bytes=smem_per_block, carveout_percent=carveout_percent,
        warps_per_block=warps, blocks_per_sm=blocks, active_warps_per_sm=active,
        max_warps_per_sm=gpu.max_warps_per_sm, occupancy=active / gpu.max_warps_per_sm,
        limits=limits, limited_by=limited_by, reason=reason,
        regs_allocated_per_block=regs_alloc, smem_allocated_per_block_bytes=smem_alloc,
        smem_per_sm_config_bytes=smem_config, smem_per_sm_preferred_bytes=smem_preferred,
    )


# The three charts of the CUDA Occupancy Calculator: active warps per SM as one input varies.

def sweep_threads(gpu: GpuSpec, regs_per_thread: int = 0, smem_per_block: int = 0,
                  carveout_percent: int | None = None, step: int = 32):
    xs = np.arange(step, gpu.max_threads_per_block + 1, step)
    ys = [occupancy(gpu, int(x), regs_per_thread, smem_per_block, carveout_percent).active_warps_per_sm
          for x in xs]
    return xs, np.asarray(ys)


def sweep_registers(gpu: GpuSpec, threads_per_block: int, smem_per_block: int = 0,
                    carveout_percent: int | None = None):
    xs = np.arange(0, gpu.max_regs_per_thread + 1)
    ys = [occupancy(gpu, threads_per_block, int(x), smem_per_block, carveout_percent).active_warps_per_sm
          for x in xs]
    return xs, np.asarray(ys)


def sweep_smem(gpu: GpuSpec, threads_per_block: int, regs_per_thread: int = 0,
               carveout_percent: int | None = None, points: int = 256):
    xs = np.unique(np.linspace(0, gpu.smem_per_block_optin_bytes, points).astype(int)
                   // gpu.smem_alloc_unit_bytes * gpu.smem_alloc_unit_bytes)
    ys = [occupancy(gpu, threads_per_block, regs_per_thread, int(x), carveout_percent).active_warps_per_sm
          for x in xs]
    return xs, np.asarray(ys)


def limiter_rows(occ: Occupancy) -> list[tuple[str, str, str]]:
    """(limiter, the blocks per SM it allows, "<- binds" where it binds), in LIMITERS' order."""
    rows = []
    for name in LIMITERS:
        limit = occ.limits[name]
        rows.append((name, "no limit" if limit is None else f"{limit} blocks/SM",
                     "<- binds" if name in occ.limited_by else ""))
    return rows
