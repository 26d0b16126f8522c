"""The occupancy arithmetic, step by step in the launch's own numbers, as the CUDA Occupancy
Calculator shows it.

Each limiter's working is computed with the same functions sim.rules.occupancy answers with
(registers_per_warp, register_warps_per_sm, smem_allocated_bytes, the carveout choice, ...), so a
step shown is a step taken: the working's last number per limiter is the blocks per SM that
limiter allows. Nsight Compute calls the same four numbers Block Limit Warps / SM / Registers /
Shared Mem (its Occupancy section).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from sim.rules.devices import GpuSpec
from sim.rules.occupancy import (Occupancy, carveout_bytes, chosen_carveout_bytes,
                                 preferred_carveout_bytes, register_warps_per_sm,
                                 registers_checked_per_block, registers_per_warp,
                                 smem_allocated_bytes, smem_block_limit_bytes)
from sim.traces.ncu_report import LIMIT_METRICS as NCU_NAMES  # ncu's name of each limiter


@dataclass(frozen=True, slots=True)
class LimiterWorking:
    limiter: str
    ncu_name: str
    steps: tuple[str, ...]  # the arithmetic, one step a line, ending in the blocks it allows
    blocks: int | None  # blocks per SM this limiter allows (None: no constraint)
    binds: bool = False


@dataclass(frozen=True, slots=True)
class Working:
    limiters: tuple[LimiterWorking, ...]
    blocks_per_sm: int  # the smallest limit: what the working concludes
    warps_per_block: int
    active_warps_per_sm: int
    max_warps_per_sm: int
    conclusion: str

    @property
    def occupancy(self) -> float:
        return self.active_warps_per_sm / self.max_warps_per_sm

    def lines(self) -> list[str]:
        out = []
        for lw in self.limiters:
            shown = "no limit" if lw.blocks is None else f"{lw.blocks} block{'s' * (lw.blocks != 1)}/SM"
            out.append(f"{lw.limiter} ({lw.ncu_name}): {shown}{'  <- binds' if lw.binds else ''}")
            out.extend(f"    {s}" for s in lw.steps)
        out.append(self.conclusion)
        return out

    def to_dict(self) -> dict:
        return {"limiters": [asdict(lw) for lw in self.limiters], "blocks_per_sm": self.blocks_per_sm,
                "active_warps_per_sm": self.active_warps_per_sm,
                "max_warps_per_sm": self.max_warps_per_sm, "conclusion": self.conclusion}


def _kib(nbytes: int) -> str:
    return f"{nbytes / 1024:g} KiB"


def _warps(n: int) -> str:
    return f"{n} warp{'s' * (n != 1)}"


def _blocks(n: int) -> str:
    return f"{n} block{'s' * (n != 1)}"


def warps_working(gpu: GpuSpec, threads: int) -> tuple[int, tuple[str, ...], int]:
    """(warps per block, steps, blocks allowed)."""
    warps = -(-threads // gpu.warp_size)
    steps = [f"{threads:,} threads / {gpu.warp_size} per warp, rounded up = {_warps(warps)} per block",
             f"warp slots per SM: {gpu.max_threads_per_sm:,} threads / {gpu.warp_size} = {gpu.max_warps_per_sm}"]
    if threads > gpu.max_threads_per_block:
        return warps, (*steps, f"{threads:,} threads per block is over the limit of "
                               f"{gpu.max_threads_per_block:,}: {_blocks(0)}"), 0
    blocks = gpu.max_warps_per_sm // warps
    return warps, (*steps, f"floor({gpu.max_warps_per_sm} / {warps}) = {_blocks(blocks)}"), blocks


def registers_working(gpu: GpuSpec, regs: int, warps: int) -> tuple[tuple[str, ...], int | None]:
    if regs > gpu.max_regs_per_thread:
        return (f"{regs} registers per thread is over the limit of {gpu.max_regs_per_thread}: "
                f"{_blocks(0)}",), 0
    per_warp = registers_per_warp(gpu, regs)
    raw = regs * gpu.warp_size
    steps = [f"{regs} registers/thread x {gpu.warp_size} threads = {raw:,} registers per warp",
             f"rounded up to the allocation unit of {gpu.reg_alloc_unit}: {per_warp:,} per warp",
             f"x {_warps(warps)} = {per_warp * warps:,} registers per block"]
    checked = registers_checked_per_block(gpu, per_warp, warps)
    if checked > gpu.regs_per_block:
        return (*steps, f"checked as {checked:,} (warps rounded up to {gpu.reg_alloc_sub_partitions} "
                        f"sub-partitions): over the {gpu.regs_per_block:,} a block may have: "
                        f"{_blocks(0)}"), 0
    if per_warp == 0:
        return (*steps, "no registers: no register limit"), None
    quarter = gpu.regs_per_sm // gpu.reg_alloc_sub_partitions
    on_sm = register_warps_per_sm(gpu, per_warp)
    blocks = on_sm // warps
    return (*steps,
            f"register file {gpu.regs_per_sm:,} / {gpu.reg_alloc_sub_partitions} sub-partitions = "
            f"{quarter:,} each; floor({quarter:,} / {per_warp:,}) = {on_sm // gpu.reg_alloc_sub_partitions} "
            f"warps each, x {gpu.reg_alloc_sub_partitions} = {on_sm} warps per SM",
            f"floor({on_sm} / {_warps(warps)} per block) = {_blocks(blocks)}"), blocks


def _carveout_steps(gpu: GpuSpec, carveout, allocated: int) -> tuple[list[str], int | None]:
    preferred = preferred_carveout_bytes(gpu, carveout)
    if carveout is None:
        asked = f"carveout: the default (the most shared memory) = {_kib(preferred)} step"
    else:
        want = carveout * gpu.smem_per_sm_bytes // 100
        step = carveout_bytes(gpu, want)
        asked = (f"carveout preference {carveout}% of {_kib(gpu.smem_per_sm_bytes)} = {want:,} B"
                 f" -> the {_kib(preferred)} step" + ("" if step is not None else " (above every step: the largest)"))
    config = chosen_carveout_bytes(gpu, preferred, allocated)
    steps = [asked]
    if config is None:
        steps.append(f"{allocated:,} B per block does not fit any carveout step: {_blocks(0)}")
    elif config != preferred:
        steps.append(f"too small for one block: the driver takes the smallest step that fits, "
                     f"{_kib(config)}")
    return steps, config


def smem_working(gpu: GpuSpec, smem: int, carveout) -> tuple[tuple[str, ...], int | None]:
    allocated = smem_allocated_bytes(gpu, smem)
    steps = [f"{smem:,} B + {gpu.smem_reserved_per_block_bytes:,} B driver reserve, rounded up to "
             f"{gpu.smem_alloc_unit_bytes} B = {allocated:,} B per block"]
    limit = smem_block_limit_bytes(gpu, smem)
    if allocated > limit:
        return (*steps, f"over the per-block limit of {limit:,} B (opt-in, with the reserve): "
                        f"{_blocks(0)}"), 0
    more, config = _carveout_steps(gpu, carveout, allocated)
    steps += more
    if config is None:
        return tuple(steps), 0
    if allocated == 0:
        return (*steps, "no shared memory: no shared-memory limit"), None
    blocks = config // allocated
    return (*steps, f"floor({config:,} / {allocated:,}) = {_blocks(blocks)}"), blocks


def working(gpu: GpuSpec, occ: Occupancy) -> Working:
    """The arithmetic behind `occ` (sim.rules.occupancy.occupancy for this gpu), limiter by limiter."""
    warps, warp_steps, by_warps = warps_working(gpu, occ.threads_per_block)
    reg_steps, by_regs = registers_working(gpu, occ.regs_per_thread, warps)
    smem_steps, by_smem = smem_working(gpu, occ.smem_per_block_bytes, occ.carveout_percent)
    found = {"warps": (warp_steps, by_warps),
             "blocks": ((f"the SM holds at most {gpu.max_blocks_per_sm} blocks",), gpu.max_blocks_per_sm),
             "registers": (reg_steps, by_regs), "shared memory": (smem_steps, by_smem)}
    for name, limit in occ.limits.items():  # a limiter the rules add later: its answer, unworked
        found.setdefault(name, ((), limit))
    blocks = min(v for _, v in found.values() if v is not None)
    rows = tuple(LimiterWorking(name, NCU_NAMES.get(name, f"Block Limit {name}"), steps, limit,
                                limit == blocks)
                 for name, (steps, limit) in found.items())
    active = blocks * warps
    shown = ", ".join("-" if v is None else str(v) for _, v in found.values())
    conclusion = (f"min({shown}) = {_blocks(blocks)}/SM; {blocks} x {_warps(warps)} = {active} of "
                  f"{gpu.max_warps_per_sm} warp slots = {active / gpu.max_warps_per_sm:.1%} theoretical occupancy")
    return Working(rows, blocks, warps, active, gpu.max_warps_per_sm, conclusion)


def block_limit_rows(work: Working) -> list[tuple[str, str]]:
    """Nsight Compute's block-limit table: (its name, the blocks)."""
    return [(lw.ncu_name, "-" if lw.blocks is None else str(lw.blocks)) for lw in work.limiters]
