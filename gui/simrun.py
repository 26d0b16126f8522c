"""Run the `sim` block scheduler for the GUI and pre-compute what the views draw.

Pure numpy, no Qt: `run_simulation` runs in a worker thread and returns a frozen `SimRecord`.

Very large grids are not simulated block by block: every full wave of a uniform launch is the same,
so we simulate the *last* part of the grid (the final full waves plus the partial wave and the tail)
and say how many identical full waves before it were left out (`skipped_waves`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from sim.devices import GpuSpec
from sim.occupancy import Occupancy
from sim.predict import H200_FIT

MAX_SIM_BLOCKS = 150_000
TIMELINE_BINS = 900
COST_MODELS = ("uniform", "memory-bound")
PLACEMENTS = ("sm-order", "tpc-spread")


@dataclass(frozen=True, slots=True)
class SimRecord:
    """A finished simulation plus the arrays the views need. Treat arrays as read-only."""

    key: tuple
    spec: GpuSpec
    occ: Occupancy
    cost: str
    placement: str
    n_blocks: int  # blocks in the whole grid
    n_sim: int  # blocks actually simulated (the last n_sim of the grid)
    skipped_waves: int  # identical full waves before the simulated part
    first_block: int  # grid index of simulated block 0
    sim: object = field(repr=False)  # sim.scheduler.Simulation
    makespan_us: float = 0.0
    waves: float = 0.0
    tail_fraction: float = 0.0
    tail_start_us: float = 0.0
    wave_starts_us: tuple = ()
    event_times_us: np.ndarray = field(default=None, repr=False)
    res_times_us: np.ndarray = field(default=None, repr=False)
    res_warps: np.ndarray = field(default=None, repr=False)
    raster: np.ndarray = field(default=None, repr=False)  # (sm*slots, bins) block ids, -1 empty
    raster_dt_us: float = 0.0
    elapsed_s: float = 0.0

    @property
    def slots_per_sm(self) -> int:
        return int(self.sim.slots_per_sm)

    @property
    def full_warps(self) -> int:
        return self.spec.sm_count * self.occ.blocks_per_sm * self.occ.warps_per_block

    def resident_at(self, t_us: float) -> np.ndarray:
        return self.sim.resident_at(t_us)

    def summary(self) -> dict:
        return {
            "cost_model": self.cost,
            "placement": self.placement,
            "blocks_in_grid": self.n_blocks,
            "blocks_simulated": self.n_sim,
            "identical_full_waves_not_simulated": self.skipped_waves,
            "makespan_us_simulated_part": round(self.makespan_us, 4),
            "waves": round(self.waves, 4),
            "tail_fraction": round(self.tail_fraction, 4),
            "tail_start_us": round(self.tail_start_us, 4),
            "slots_per_sm": self.slots_per_sm,
        }


def make_cost(
    name: str, spec: GpuSpec, elements: int, threads_per_block: int, bytes_per_element: float = 12.0
):
    """The cost model by name. `elements` counts one element per thread (the simulated part)."""
    from sim import scheduler

    if name == "memory-bound":
        return scheduler.MemoryBoundCost.for_launch(
            spec, max(1, int(elements)), threads_per_block, bytes_per_element=bytes_per_element,
            latency_us=H200_FIT.latency_us,
        )
    return scheduler.UniformCost()


def make_placement(name: str):
    from sim import scheduler

    if name == "tpc-spread":
        return scheduler.TpcSpreadPlacement()
    return scheduler.SmOrderPlacement()


def plan_blocks(n_blocks: int, blocks_per_wave: int, cap: int = MAX_SIM_BLOCKS) -> tuple[int, int]:
    """(blocks to simulate, identical full waves left out before them)."""
    if n_blocks <= cap or blocks_per_wave <= 0:
        return n_blocks, 0
    skip = math.ceil((n_blocks - cap) / blocks_per_wave)
    skip = min(skip, n_blocks // blocks_per_wave - 1) if n_blocks // blocks_per_wave > 1 else 0
    skip = max(0, skip)
    return n_blocks - skip * blocks_per_wave, skip


def run_simulation(
    spec: GpuSpec,
    occ: Occupancy,
    n_blocks: int,
    *,
    cost: str = "uniform",
    placement: str = "sm-order",
    elements: int | None = None,
    bytes_per_element: float = 12.0,
    cap: int = MAX_SIM_BLOCKS,
    bins: int = TIMELINE_BINS,
    key: tuple = (),
) -> SimRecord:
    """Simulate the launch and pre-compute the timeline raster and residency curve."""
    import time

    from sim.scheduler import simulate

    t0 = time.perf_counter()
    if not occ.can_launch:
        raise ValueError(f"cannot launch: {occ.reason}")
    bpw = occ.blocks_per_sm * spec.sm_count
    n_sim, skipped = plan_blocks(int(n_blocks), bpw, cap)
    tpb = occ.threads_per_block
    if elements is None:
        elements = int(n_blocks) * tpb
    elements_sim = max(1, int(elements) - (int(n_blocks) - n_sim) * tpb)
    sim = simulate(
        spec,
        n_sim,
        occ,
        cost=make_cost(cost, spec, elements_sim, tpb, bytes_per_element),
        placement=make_placement(placement),
        # SMs start blocks one at a time (fitted with the memory model, sim/predict.py)
        sm_dispatch_interval_us=H200_FIT.sm_dispatch_interval_us if cost == "memory-bound" else 0.0,
    )
    start = np.asarray(sim.block_start_us, dtype=float)
    end = np.asarray(sim.block_end_us, dtype=float)
    makespan = float(sim.makespan_us)
    times, resident = sim.residency_steps()
    times = np.asarray(times, dtype=float)
    resident = np.asarray(resident)
    full_blocks = spec.sm_count * occ.blocks_per_sm
    res_warps = resident.astype(np.int64) * occ.warps_per_block
    # Tail: from the last moment the GPU was full to the end (the whole launch if never full).
    full_idx = np.nonzero(resident >= full_blocks)[0]
    if len(full_idx) == 0:
        tail_start = 0.0
    else:
        last = full_idx[-1]
        tail_start = float(times[last + 1]) if last + 1 < len(times) else makespan
    wave_of = np.asarray(sim.block_wave)
    first_start = np.full(int(wave_of.max()) + 1 if len(wave_of) else 1, np.inf)
    np.minimum.at(first_start, wave_of, start)
    wave_starts = tuple(float(x) for x in first_start[np.isfinite(first_start)])
    events = np.unique(np.concatenate([start, end, [0.0, makespan]]))
    raster, dt = timeline_raster(sim, spec.sm_count, int(sim.slots_per_sm), makespan, bins)
    return SimRecord(
        key=key,
        spec=spec,
        occ=occ,
        cost=cost,
        placement=placement,
        n_blocks=int(n_blocks),
        n_sim=n_sim,
        skipped_waves=skipped,
        first_block=int(n_blocks) - n_sim,
        sim=sim,
        makespan_us=makespan,
        waves=float(sim.waves_fractional) + skipped,
        tail_fraction=float(sim.tail_fraction),
        tail_start_us=tail_start,
        wave_starts_us=wave_starts,
        event_times_us=events,
        res_times_us=times,
        res_warps=res_warps,
        raster=raster,
        raster_dt_us=dt,
        elapsed_s=time.perf_counter() - t0,
    )


def timeline_raster(sim, sm_count: int, slots: int, makespan: float, bins: int):
    """(sm_count*slots, bins) int32 image of block ids over time (-1 = empty), and the bin width."""
    return raster_from_arrays(
        sim.block_sm,
        sim.block_slot,
        sim.block_start_us,
        sim.block_end_us,
        sm_count,
        slots,
        makespan,
        bins,
    )


def raster_from_arrays(
    block_sm,
    block_slot,
    block_start,
    block_end,
    sm_count: int,
    slots: int,
    makespan: float,
    bins: int,
):
    """The same raster from plain arrays (a recorded trace, once lanes are assigned)."""
    rows = sm_count * slots
    img = np.full((rows, bins), -1, dtype=np.int32)
    if makespan <= 0 or len(block_start) == 0:
        return img, 1.0
    dt = makespan / bins
    start = np.asarray(block_start, dtype=float)
    end = np.asarray(block_end, dtype=float)
    row = np.asarray(block_sm, dtype=np.int64) * slots + np.asarray(block_slot, dtype=np.int64)
    b0 = np.clip(np.floor(start / dt).astype(np.int64), 0, bins - 1)
    b1 = np.clip(np.ceil(end / dt).astype(np.int64), 1, bins)
    b1 = np.maximum(b1, b0 + 1)
    lengths = b1 - b0
    ids = np.arange(len(start), dtype=np.int32)
    # Later blocks win a shared bin; order by start so that holds.
    order = np.argsort(start, kind="stable")
    lengths, b0, row, ids = lengths[order], b0[order], row[order], ids[order]
    total = int(lengths.sum())
    offsets = np.repeat(np.cumsum(lengths) - lengths, lengths)
    pos = np.arange(total, dtype=np.int64) - offsets + np.repeat(row * bins + b0, lengths)
    img.reshape(-1)[pos] = np.repeat(ids, lengths)
    return img, dt


def block_at(record: SimRecord, sm: int, slot: int, t_us: float) -> int:
    """Simulated block id resident in (sm, slot) at t_us, or -1."""
    res = record.resident_at(t_us)
    if 0 <= sm < res.shape[0] and 0 <= slot < res.shape[1]:
        return int(res[sm, slot])
    return -1


@dataclass(frozen=True, slots=True)
class TraceView:
    """A recorded block trace, packed into lanes per SM, beside the simulation of the same grid."""

    path: str
    gpu_name: str
    spec: GpuSpec
    blocks_per_sm: int
    comparison: object  # sim.compare.TraceComparison
    lines: tuple
    sm_count: int
    lanes: int
    raster: np.ndarray = field(repr=False)
    wave: np.ndarray = field(repr=False)  # per recorded block: its position in its lane
    makespan_us: float = 0.0
    sim_raster: np.ndarray = field(default=None, repr=False)
    sim_wave: np.ndarray = field(default=None, repr=False)
    sim_makespan_us: float = 0.0


def pack_lanes(sm: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hardware traces do not say which block slot a block used: give each block the first lane of
    its SM that is free when it starts. Returns (lane, position within the lane) per block."""
    lane = np.zeros(len(sm), dtype=np.int64)
    pos = np.zeros(len(sm), dtype=np.int64)
    order = np.lexsort((start, sm))
    free_at: dict[int, list[float]] = {}
    count: dict[int, list[int]] = {}
    for i in order:
        ends = free_at.setdefault(int(sm[i]), [])
        counts = count.setdefault(int(sm[i]), [])
        for k, e in enumerate(ends):
            if e <= start[i] + 1e-9:
                break
        else:
            k = len(ends)
            ends.append(0.0)
            counts.append(0)
        ends[k] = float(end[i])
        lane[i], pos[i] = k, counts[k]
        counts[k] += 1
    return lane, pos


def load_trace_view(
    path: str, fallback: GpuSpec, blocks_per_sm: int | None = None, bins: int = TIMELINE_BINS
) -> TraceView:
    """Load a trace file (sim.trace format), simulate the same grid, rasterise both."""
    from sim.compare import compare_trace, placement_from_trace
    from sim.devices import preset_for_device_name
    from sim.errors import UserError
    from sim.trace import load_trace

    trace = load_trace(path)
    if len(trace.block) == 0:
        raise UserError(f"{path} holds no blocks")
    spec = preset_for_device_name(trace.gpu, trace.meta.get("sm_count")) or fallback
    predicted = trace.meta.get("predicted")
    per_sm = blocks_per_sm or (predicted.get("blocks_per_sm") if isinstance(predicted, dict) else None)
    try:
        per_sm = int(per_sm or 0)
    except (TypeError, ValueError):
        per_sm = 0
    if not 1 <= per_sm <= spec.max_blocks_per_sm:  # missing or nonsense (100000 wanted 44 GiB)
        per_sm = max(1, min(int(trace.max_resident_per_sm().max()), spec.max_blocks_per_sm))
    comparison, sim = compare_trace(trace, spec, int(per_sm), placement_from_trace(trace))
    start = trace.start_us - trace.start_us.min()
    end = trace.end_us - trace.start_us.min()
    lane, pos = pack_lanes(trace.sm, start, end)
    lanes = int(max(lane.max() + 1, per_sm))
    sm_count = int(max(spec.sm_count, trace.sm.max() + 1))
    makespan = float(max(end.max(), sim.makespan_us))
    raster, _ = raster_from_arrays(trace.sm, lane, start, end, sm_count, lanes, makespan, bins)
    sim_raster, _ = raster_from_arrays(
        sim.block_sm,
        sim.block_slot,
        sim.block_start_us,
        sim.block_end_us,
        sm_count,
        lanes,
        makespan,
        bins,
    )
    return TraceView(
        path=str(path),
        gpu_name=trace.gpu,
        spec=spec,
        blocks_per_sm=int(per_sm),
        comparison=comparison,
        lines=tuple(comparison.lines()),
        sm_count=sm_count,
        lanes=lanes,
        raster=raster,
        wave=pos,
        makespan_us=makespan,
        sim_raster=sim_raster,
        sim_wave=np.asarray(sim.block_wave),
        sim_makespan_us=float(sim.makespan_us),
    )
