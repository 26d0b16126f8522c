"""What the scheduler predicts a memory-bound kernel's bandwidth to be.

The grid runs through the block scheduler with a memory-bound cost: each block moves its bytes at
its share of the achievable DRAM bandwidth, but never faster than one DRAM round trip
(`latency_us`); each SM starts at most one block per `sm_dispatch_interval_us`; every launch pays
`launch_overhead_us`. These three numbers were fitted once, to a block-size sweep of the article's
one-element-per-thread add on the H200 (benchmarks/RESULTS.md); the per-SM start interval is the
dispatch model's (sim/dispatch_profile.py: the GPU's calibration, else the H200's), so the
schedules the window draws and the bandwidth it predicts come from one model. They explain why small blocks are
slow: with 32-thread blocks an SM is busy starting blocks, not moving bytes; with one element per
thread too few bytes are in flight to cover the latency (Little's law). Long grids are simulated
for a bounded number of waves and extended by the steady per-wave time, so a prediction costs
milliseconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dataclasses import replace

from sim.devices import GpuSpec
from sim.dispatch_profile import builtin_profile, profile_for
from sim.scheduler import MemoryBoundCost, simulate


@dataclass(frozen=True, slots=True)
class MemoryModel:
    latency_us: float  # shortest time a block that waits on DRAM can take
    sm_dispatch_interval_us: float  # an SM starts at most one block this often
    launch_overhead_us: float  # per kernel: from the start event to the first block, and draining
    source: str

    def kernel_gbps(self, bytes_moved: float, makespan_us: float) -> float:
        """GB/s a device-event timing would report for a grid the scheduler ran in makespan_us."""
        return bytes_moved / ((self.launch_overhead_us + makespan_us) * 1e3)


# Least-squares fit (by hand, in benchmarks/RESULTS.md) to add_numba_naive at 2^26 elements,
# 32..1024 threads per block, measured on the H200 on 2026-11-29; the SM interval (0.078 us) is
# the checked-in H200 dispatch profile's, which holds that fit.
H200_FIT = MemoryModel(latency_us=0.95,
                       sm_dispatch_interval_us=builtin_profile().params.sm_interval_us,
                       launch_overhead_us=4.4,
                       source="fit to the naive Numba add's block-size sweep on the H200, 2026-11-29")


def memory_model_for(gpu: GpuSpec) -> MemoryModel:
    """H200_FIT with the per-SM start interval of the GPU's dispatch profile."""
    profile = profile_for(gpu.name)
    return replace(H200_FIT, sm_dispatch_interval_us=profile.params.sm_interval_us,
                   source=f"{H200_FIT.source}; SM interval {profile.label}")


@dataclass(frozen=True, slots=True)
class Prediction:
    time_us: float
    bandwidth_gbps: float
    waves: int
    simulated_blocks: int  # blocks actually run through the scheduler (the rest extrapolated)
    bound: str  # "bandwidth", "latency" or "block dispatch": what sets the steady wave time


def predict_bandwidth(gpu: GpuSpec, grid_blocks: int, blocks_per_sm: int, bytes_moved: float,
                      ceiling_gbps: float | None = None, model: MemoryModel | None = None,
                      max_waves: int = 12) -> Prediction:
    """Time and GB/s the scheduler predicts for a memory-bound grid.

    `ceiling_gbps` is the bandwidth a full GPU can reach (a measured copy ceiling is best; default
    the theoretical peak). `model`: default memory_model_for(gpu)."""
    model = model or memory_model_for(gpu)
    if grid_blocks < 1 or blocks_per_sm < 1 or bytes_moved <= 0:
        raise ValueError("a prediction needs at least one block, one block per SM and some bytes")
    ceiling = float(ceiling_gbps or gpu.peak_dram_gbps)
    slots = gpu.sm_count * blocks_per_sm
    waves = math.ceil(grid_blocks / slots)
    bytes_per_block = bytes_moved / grid_blocks
    cost = MemoryBoundCost(bytes_per_block=bytes_per_block, peak_gbps=ceiling, overhead_us=0.0,
                           latency_us=model.latency_us)
    # Simulate the first waves (the ramp), a steady middle and the last partial wave.
    head = min(waves, max_waves)
    n_sim = grid_blocks if waves <= max_waves else (head - 1) * slots + (grid_blocks - (waves - 1) * slots)
    sim = simulate(gpu, n_sim, blocks_per_sm, cost,
                   sm_dispatch_interval_us=model.sm_dispatch_interval_us)
    makespan_us = sim.makespan_us
    if waves > max_waves:
        makespan_us += (waves - head) * _steady_wave_us(sim)
    per_sm_rate = min(blocks_per_sm / model.latency_us, 1.0 / model.sm_dispatch_interval_us)
    if bytes_per_block * per_sm_rate * gpu.sm_count / 1e3 >= ceiling:
        bound = "bandwidth"
    elif blocks_per_sm / model.latency_us <= 1.0 / model.sm_dispatch_interval_us:
        bound = "latency"
    else:
        bound = "block dispatch"
    return Prediction(time_us=model.launch_overhead_us + makespan_us,
                      bandwidth_gbps=model.kernel_gbps(bytes_moved, makespan_us), waves=waves,
                      simulated_blocks=n_sim, bound=bound)


def _steady_wave_us(sim) -> float:
    """Time per wave once the GPU is full: between the starts of the middle waves."""
    starts = sim.wave_boundaries_us()
    if len(starts) < 3:
        return sim.makespan_us / max(sim.waves, 1)
    a, b = len(starts) // 3, len(starts) - 1
    return float((starts[b] - starts[a]) / (b - a))
