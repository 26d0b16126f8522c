"""What the scheduler predicts a memory-bound kernel's bandwidth to be.

The grid runs through the block scheduler; each block's time comes from the loaded model of
sim/latency.py (`TripCost` below): on each SM the resident blocks are customers of a closed
queueing network (the SM's block dispatcher, a delay of overhead + DRAM round trip, the SM's
memory port at its share of the ceiling), solved by mean value analysis for the blocks resident
when a block starts. So a block's time grows with its bytes (a square's 8 B per element move faster
through the port than an add's 12 B), a grid-stride block is one dispatch and many trips, and a
partial last wave runs with less queueing. The port cannot start before the first trip's loads
come back: a launch of a wave or less takes at least that fill plus its busiest SM's bytes. Every
launch pays `launch_overhead_us`. Long grids are simulated for a bounded number of waves and
extended by the steady per-wave time, so a prediction costs milliseconds.

Constants: the DRAM round trip (351 ns) is measured (resources/gpus.json); the per-SM dispatch
interval is the dispatch profile's (sim/dispatch_profile.py: the GPU's calibration, else the
H200's); the trip overhead (180 ns) is sim.latency.H200_TRIP's, fitted on the 2^24 rows of
benchmarks/latency_h200.json, not on the rows this model is checked against; the launch overhead
(4.4 us) was fitted to `add_numba_naive` at 2^26 (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from sim.devices import GpuSpec
from sim.dispatch_profile import builtin_profile, profile_for
from sim.latency import BUSY, H200_TRIP, TripCosts, dram_latency_ns, mean_value_analysis
from sim.scheduler import simulate


@dataclass(frozen=True, slots=True)
class MemoryModel:
    latency_us: float  # the animation's memory cost (sim.policies): no block is shorter
    sm_dispatch_interval_us: float  # an SM starts at most one block this often
    launch_overhead_us: float  # per kernel: from the start event to the first block, and draining
    source: str
    trip: TripCosts = H200_TRIP  # the loaded model's per-trip overhead

    def kernel_gbps(self, bytes_moved: float, makespan_us: float) -> float:
        """GB/s a device-event timing would report for a grid the scheduler ran in makespan_us."""
        return bytes_moved / ((self.launch_overhead_us + makespan_us) * 1e3)


# latency_us and launch_overhead_us: fitted by hand (benchmarks/RESULTS.md) to add_numba_naive at
# 2^26 elements, 32..1024 threads per block, measured on the H200 on 2026-11-29; the SM interval
# (0.078 us) is the checked-in H200 dispatch profile's.
H200_FIT = MemoryModel(latency_us=0.95,
                       sm_dispatch_interval_us=builtin_profile().params.sm_interval_us,
                       launch_overhead_us=4.4,
                       source="fit to the naive Numba add's block-size sweep on the H200, "
                              "2026-11-29; trip overhead from sim.latency.H200_TRIP")


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
                      max_waves: int = 12, *, loop_trips: int = 1) -> Prediction:
    """Time and GB/s the scheduler predicts for a memory-bound grid.

    `ceiling_gbps` is the bandwidth a full GPU can reach (a measured copy ceiling is best; default
    the theoretical peak). `model`: default memory_model_for(gpu). `loop_trips`: DRAM round trips
    one block makes one after the other (a grid-stride block loops: elements / (blocks x threads);
    a fixed tile issues every load up front: 1)."""
    model = model or memory_model_for(gpu)
    if grid_blocks < 1 or blocks_per_sm < 1 or bytes_moved <= 0 or loop_trips < 1:
        raise ValueError("a prediction needs at least one block, one block per SM, some bytes "
                         "and at least one trip per block")
    ceiling = float(ceiling_gbps or gpu.peak_dram_gbps)
    cost = TripCost(gpu, bytes_moved / grid_blocks / loop_trips, int(loop_trips), ceiling, model)
    slots = gpu.sm_count * blocks_per_sm
    waves = math.ceil(grid_blocks / slots)
    # Simulate the first waves (the ramp), a steady middle and the last partial wave.
    head = min(waves, max_waves)
    n_sim = grid_blocks if waves <= max_waves else (head - 1) * slots + (grid_blocks - (waves - 1) * slots)
    sim = simulate(gpu, n_sim, blocks_per_sm, cost)
    makespan_us = sim.makespan_us
    if waves > max_waves:
        makespan_us += (waves - head) * _steady_wave_us(sim)
    # The port of the busiest SM cannot start before the first trip's loads come back (the fill).
    sms = min(gpu.sm_count, grid_blocks)
    busiest_bytes = math.ceil(grid_blocks / sms) * bytes_moved / grid_blocks
    makespan_us = max(makespan_us, (cost.first_trip_ns + busiest_bytes / (ceiling / sms)) / 1e3)
    return Prediction(time_us=model.launch_overhead_us + makespan_us,
                      bandwidth_gbps=model.kernel_gbps(bytes_moved, makespan_us), waves=waves,
                      simulated_blocks=n_sim, bound=cost.bound(min(grid_blocks, slots)))


@dataclass(frozen=True, slots=True)
class TripCost:
    """A block's time from the loaded model (sim.latency's MVA): each SM is a closed network whose
    customers are its resident blocks; a trip passes the SM's dispatcher (once per block), a
    delay (overhead + the DRAM round trip) and the SM's memory port, which moves the trip's bytes
    at the active SMs' share of the ceiling. A block makes `trips` such trips in a row."""

    id: ClassVar[str] = "loaded trip"
    gpu: GpuSpec
    bytes_per_trip: float
    trips: int
    ceiling_gbps: float
    model: MemoryModel

    @property
    def delay_ns(self) -> float:
        return self.model.trip.overhead_ns + dram_latency_ns(self.gpu)

    @property
    def first_trip_ns(self) -> float:
        return self.model.sm_dispatch_interval_us * 1e3 + self.delay_ns

    def _solve(self, resident_blocks: int):
        sms = min(self.gpu.sm_count, max(int(resident_blocks), 1))
        port_ns = self.bytes_per_trip / (self.ceiling_gbps / sms)  # GB/s = bytes per ns
        # A looping block is dispatched once: its trips share that one start.
        demands = (self.model.sm_dispatch_interval_us * 1e3 / self.trips, port_ns)
        per_sm = math.ceil(resident_blocks / sms)
        per_ns, residence = mean_value_analysis(per_sm, self.delay_ns, demands)
        return per_ns, residence, demands

    def durations(self, block_ids: np.ndarray, resident_blocks: int) -> np.ndarray:
        _, residence, _ = self._solve(resident_blocks)
        trip_ns = self.delay_ns + float(residence.sum())
        return np.full(block_ids.shape, self.trips * trip_ns / 1e3)

    def bound(self, resident_blocks: int) -> str:
        """"bandwidth" (the port is nearly always busy), "block dispatch" (the dispatcher is),
        else "latency": at `resident_blocks` on the GPU."""
        per_ns, _, (dispatch_ns, port_ns) = self._solve(resident_blocks)
        if per_ns * port_ns >= BUSY:
            return "bandwidth"
        return "block dispatch" if per_ns * dispatch_ns >= BUSY else "latency"


def _steady_wave_us(sim) -> float:
    """Time per wave once the GPU is full: between the starts of the middle waves."""
    starts = sim.wave_boundaries_us()
    if len(starts) < 3:
        return sim.makespan_us / max(sim.waves, 1)
    a, b = len(starts) // 3, len(starts) - 1
    return float((starts[b] - starts[a]) / (b - a))
