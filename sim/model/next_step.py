"""The next step: the smallest change to a launch that gains a resident block per SM or removes
a tail wave, lever by lever, with what the model predicts it does to the time.

Levers: registers per thread (down from the compiled count), shared memory per block (down, in
the allocation unit), threads per block (either way, whole warps), elements per thread (up, for a
kernel with a fixed tile) and the grid (down to whole waves, for a kernel whose blocks loop). For
each, the change is the smallest one that reaches the goal by the occupancy rules
(sim.rules.occupancy, which match the driver); its time comes from sim.model.what_if.predict_outcome, like the
launch's own. Like AMD's occupancy tool, every lever gets its line, not just the binding one.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.rules.devices import GpuSpec
from sim.rules.occupancy import occupancy
from sim.model.what_if import Outcome, WhatIf, predict_outcome

LEVERS = ("registers", "shared memory", "threads per block", "elements per thread", "grid size")
MAX_ELEMENTS_PER_THREAD = 64
# A change under 2% is none a user could measure: of 24 before/after pairs measured three times
# on the H200, three changed direction between repeats, moving 2.5 to 15 points
# (benchmarks/RESULTS.md). Scoring the next step against measurements counts a change under it
# as no change.
NO_CLEAR_CHANGE = 0.02


def direction(change: float, band: float = NO_CLEAR_CHANGE) -> int:
    """-1 faster, +1 slower, 0 within the band (no change one could measure)."""
    return 0 if abs(change) <= band else (1 if change > 0 else -1)


def noise_note(change: float) -> str:
    """What a time's relative change is worth saying beside it: nothing, or that it is too small
    to tell from noise (said the same in the next steps and in a run diff)."""
    return "" if direction(change) else \
        f"; under {NO_CLEAR_CHANGE:.0%}, too small to tell from a timing's run-to-run noise"


@dataclass(frozen=True, slots=True)
class Step:
    lever: str
    before: Outcome
    after: Outcome
    setting: dict  # what to set: {"regs": 32} / {"smem": ...} / {"block": ...} / ...
    change: str  # "40 -> 32 registers per thread"
    gains: str  # "2 blocks per SM instead of 1" / "2 waves instead of 3"

    @property
    def saved_us(self) -> float | None:
        if self.before.time_us is None or self.after.time_us is None:
            return None
        return self.before.time_us - self.after.time_us

    @property
    def time_change(self) -> float | None:
        """Predicted relative change of the time (negative: faster)."""
        if self.saved_us is None or not self.before.time_us:
            return None
        return -self.saved_us / self.before.time_us

    @property
    def measurable(self) -> bool:
        """Whether a timing could tell the change from run-to-run noise (outside the band)."""
        return self.time_change is not None and direction(self.time_change) != 0

    def effect(self) -> str:
        if self.before.time_us is None or self.after.time_us is None:
            return "no time predicted (no DRAM latency on record for this GPU)"
        return (f"predicted {self.after.time_us:,.1f} us instead of {self.before.time_us:,.1f} us "
                f"({self.time_change:+.1%}{noise_note(self.time_change)})")

    def line(self) -> str:
        return f"{self.lever}: {self.change} gives {self.gains}; {self.effect()}"


def _shape(gpu: GpuSpec, w: WhatIf) -> tuple[int, int]:
    """(blocks per SM, waves) by the occupancy rules alone: cheap, so every candidate is tried."""
    blocks = occupancy(gpu, w.threads_per_block, w.regs_per_thread, w.smem_per_block).blocks_per_sm
    return blocks, (-(-w.grid // (blocks * gpu.sm_count)) if blocks else 0)


def _gains(before: tuple[int, int], after: tuple[int, int]) -> str | None:
    """What `after` gains over `before` ((blocks per SM, waves)), or None."""
    (b0, w0), (b1, w1) = before, after
    if b1 == 0:
        return None
    parts = []
    if b1 > b0:
        parts.append(f"{b1} blocks per SM instead of {b0}")
    if w0 > 1 and w1 < w0:
        parts.append(f"{w1} wave{'s' if w1 != 1 else ''} instead of {w0}")
    return " and ".join(parts) or None


def next_steps(gpu: GpuSpec, launch: WhatIf, ceiling_gbps: float | None = None) -> list[Step]:
    """The smallest gaining change of each lever that has one, biggest predicted saving first
    (`ceiling_gbps`: the bandwidth ceiling the surface's own prediction uses)."""
    before = predict_outcome(gpu, launch, ceiling_gbps)
    if not before.occupancy.can_launch:
        return []
    found = [Step(lever, before, predict_outcome(gpu, tried, ceiling_gbps), setting, change, gains)
             for lever, setting, change, gains, tried in smallest_changes(gpu, launch)]
    return sorted(found, key=lambda s: -(s.saved_us or 0.0))


def smallest_changes(gpu: GpuSpec, launch: WhatIf, levers=LEVERS) -> list[tuple]:
    """(lever, setting, change, gains, changed launch) of each of `levers` that has a gaining
    change, by the occupancy rules alone (no time predicted)."""
    found, now = [], _shape(gpu, launch)
    for lever, candidates in _candidates(gpu, launch):
        if lever not in levers:
            continue
        for setting, change, tried in candidates:
            gains = _gains(now, _shape(gpu, tried))
            if gains is not None:
                found.append((lever, setting, change, gains, tried))
                break
    return found


def _candidates(gpu: GpuSpec, w: WhatIf):
    """Per lever, its changes in order of size (smallest first), made as they are asked for."""
    regs = (({"regs": r}, f"{w.regs_per_thread} -> {r} registers per thread",
             w.but(regs_per_thread=r)) for r in range(w.regs_per_thread - 1, -1, -1))
    step = gpu.smem_alloc_unit_bytes
    smem = (({"smem": s}, f"{w.smem_per_block:,} -> {s:,} B of shared memory per block",
             w.but(smem_per_block=s))
            for s in range(w.smem_per_block - (w.smem_per_block % step or step), -1, -step))
    warp = gpu.warp_size
    sizes = range(warp, gpu.max_threads_per_block + 1, warp)
    threads = sorted((t for t in sizes if t != w.threads_per_block),
                     key=lambda t: (abs(t - w.threads_per_block), t))
    by_threads = (({"block": t}, f"{w.threads_per_block} -> {t} threads per block",
                   w.but(threads_per_block=t)) for t in threads)
    out = [("registers", regs), ("shared memory", smem), ("threads per block", by_threads)]
    if w.elements_per_thread is not None:
        out.append(("elements per thread", (
            ({"elements_per_thread": e}, f"{w.elements_per_thread} -> {e} elements per thread",
             w.but(elements_per_thread=e))
            for e in range(w.elements_per_thread + 1, MAX_ELEMENTS_PER_THREAD + 1))))
    else:
        per_wave = _shape(gpu, w)[0] * gpu.sm_count
        whole = (w.grid // per_wave) * per_wave if per_wave else 0
        grids = [g for g in (whole,) if 0 < g < w.grid]
        out.append(("grid size", [({"grid": g}, f"{w.grid:,} -> {g:,} blocks (whole waves)",
                                   w.but(grid_blocks=g)) for g in grids]))
    return out
