"""Latency hiding as Little's law: the bytes a memory-bound kernel must keep in flight.

A warp that has issued its loads waits one DRAM round trip for them. Little's law says that a
memory system delivering X bytes per second with latency L holds X x L bytes in flight on average.
Turned around: a launch whose resident warps keep B bytes of loads outstanding on each SM can pull
at most

    X_loads = SMs x B / L                 (bytes per nanosecond = GB/s)

and never more than the DRAM can deliver. With

    B = resident warps per SM x warp size x loads in flight per thread x bytes per load

the bandwidth a kernel's timing reports is

    min(ceiling, X_loads x bytes moved per byte loaded)

Two refinements, both from what the hardware does rather than from any fit:

1. Only loads hold a warp. Stores are posted: the warp issues them and goes on (or exits). They
   still cross the DRAM bus, and a kernel's GB/s counts them, so a kernel that stores w bytes for
   every r it loads reports (r + w) / r times its load throughput: 3/2 for the vector add (loads
   x and y, stores out). That is `bytes_moved_per_byte_loaded`. The ceiling (best a measured
   copy, which counts its reads and writes alike) caps the total.
2. A warp slot does not wait on DRAM for the whole of its turn. In a one-trip kernel (each thread
   loads, waits, stores, exits) the block must also be dispatched, compute its indices, issue its
   loads and store, and retire. `overhead_ns` is that time per trip; Little's law then applies to
   the slot's whole cycle, L + overhead_ns. It defaults to 0 (pure Little's law). A figure for it
   must be measured, never fitted to the bandwidth it predicts: benchmarks/latency_run.py times
   blocks that do nothing for it.

Left out on purpose: latency rising under load (queueing near the ceiling makes the real knee round
where this one is sharp), a launch's ramp and tail (this is the steady state), caches (inputs come
from DRAM) and any limit on outstanding requests per SM.

The DRAM latency of each preset is in resources/gpus.json, with a source that says whether it was
measured on that GPU or assumed from another. The ceiling defaults to the theoretical DRAM peak;
pass a measured copy ceiling where there is one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.devices import GpuSpec
from sim.errors import UserError


@dataclass(frozen=True, slots=True)
class LatencyPrediction:
    resident_warps_per_sm: int
    bytes_in_flight_per_sm: int  # loads outstanding on one SM at any moment
    bytes_in_flight_needed_per_sm: float  # what reaching the ceiling would take
    latency_ns: float
    cycle_ns: float  # latency + overhead: one trip of a warp slot
    latency_bound_gbps: float  # what the bytes in flight allow (counting loads and stores)
    ceiling_gbps: float
    bandwidth_gbps: float  # the smaller of the two
    bound: str  # "latency" or "bandwidth"

    @property
    def fraction_of_needed(self) -> float:
        """Bytes in flight over the bytes the ceiling needs (>= 1: the latency is covered)."""
        return self.bytes_in_flight_per_sm / self.bytes_in_flight_needed_per_sm


def dram_latency_ns(gpu: GpuSpec) -> float:
    """The GPU's DRAM round trip from resources/gpus.json (UserError if it has none)."""
    if gpu.dram_latency_ns is None:
        raise UserError(f"no DRAM latency figure for {gpu.name}: pass latency_ns")
    return float(gpu.dram_latency_ns)


def bytes_in_flight_per_sm(resident_warps: int, loads_in_flight_per_thread: float,
                           bytes_per_load: int, warp_size: int = 32) -> int:
    """Bytes of loads one SM has outstanding when every resident warp waits on its loads."""
    _check_nonnegative(resident_warps=resident_warps, loads=loads_in_flight_per_thread,
                       bytes_per_load=bytes_per_load)
    return int(round(resident_warps * warp_size * loads_in_flight_per_thread * bytes_per_load))


def bytes_in_flight_needed(gpu: GpuSpec, ceiling_gbps: float | None = None, *,
                           latency_ns: float | None = None,
                           bytes_moved_per_byte_loaded: float = 1.0,
                           overhead_ns: float = 0.0) -> float:
    """Bytes of loads each SM must keep outstanding for the kernel to reach `ceiling_gbps`
    (default: the theoretical peak): Little's law, ceiling / ratio x cycle / SMs."""
    ceiling, cycle = _ceiling(gpu, ceiling_gbps), _cycle_ns(gpu, latency_ns, overhead_ns)
    _check_ratio(bytes_moved_per_byte_loaded)
    return ceiling / bytes_moved_per_byte_loaded * cycle / gpu.sm_count


def latency_bound_gbps(gpu: GpuSpec, resident_warps_per_sm, loads_in_flight_per_thread: float,
                       bytes_per_load: int, *, latency_ns: float | None = None,
                       bytes_moved_per_byte_loaded: float = 1.0, overhead_ns: float = 0.0):
    """What the bytes in flight allow, ignoring the ceiling: SMs x B / cycle x ratio.
    Takes a number or a numpy array of resident warps (for curves)."""
    warps = np.asarray(resident_warps_per_sm, dtype=float)
    _check_nonnegative(resident_warps=float(warps.min(initial=0.0)),
                       loads=loads_in_flight_per_thread, bytes_per_load=bytes_per_load)
    _check_ratio(bytes_moved_per_byte_loaded)
    in_flight = warps * gpu.warp_size * loads_in_flight_per_thread * bytes_per_load
    gbps = (gpu.sm_count * in_flight / _cycle_ns(gpu, latency_ns, overhead_ns)
            * bytes_moved_per_byte_loaded)
    return float(gbps) if gbps.ndim == 0 else gbps


def predict(gpu: GpuSpec, blocks_per_sm: int, warps_per_block: int,
            loads_in_flight_per_thread: float, bytes_per_load: int, *,
            ceiling_gbps: float | None = None, latency_ns: float | None = None,
            bytes_moved_per_byte_loaded: float = 1.0,
            overhead_ns: float = 0.0) -> LatencyPrediction:
    """Bandwidth of a memory-bound launch with `blocks_per_sm` resident blocks of
    `warps_per_block` warps, each thread keeping `loads_in_flight_per_thread` loads of
    `bytes_per_load` bytes outstanding; see the module's docstring for the other arguments."""
    if blocks_per_sm < 1 or warps_per_block < 1:
        raise ValueError("a prediction needs at least one resident block of at least one warp")
    warps = int(blocks_per_sm) * int(warps_per_block)
    ceiling = _ceiling(gpu, ceiling_gbps)
    bound = latency_bound_gbps(gpu, warps, loads_in_flight_per_thread, bytes_per_load,
                               latency_ns=latency_ns,
                               bytes_moved_per_byte_loaded=bytes_moved_per_byte_loaded,
                               overhead_ns=overhead_ns)
    return LatencyPrediction(
        resident_warps_per_sm=warps,
        bytes_in_flight_per_sm=bytes_in_flight_per_sm(warps, loads_in_flight_per_thread,
                                                      bytes_per_load, gpu.warp_size),
        bytes_in_flight_needed_per_sm=bytes_in_flight_needed(
            gpu, ceiling, latency_ns=latency_ns,
            bytes_moved_per_byte_loaded=bytes_moved_per_byte_loaded, overhead_ns=overhead_ns),
        latency_ns=_latency(gpu, latency_ns),
        cycle_ns=_cycle_ns(gpu, latency_ns, overhead_ns),
        latency_bound_gbps=bound, ceiling_gbps=ceiling, bandwidth_gbps=min(bound, ceiling),
        bound="latency" if bound < ceiling else "bandwidth")


def predicted_gbps(gpu: GpuSpec, blocks_per_sm: int, warps_per_block: int,
                   loads_in_flight_per_thread: float, bytes_per_load: int, **kwargs) -> float:
    """The bandwidth of :func:`predict` alone, in GB/s."""
    return predict(gpu, blocks_per_sm, warps_per_block, loads_in_flight_per_thread,
                   bytes_per_load, **kwargs).bandwidth_gbps


def predicted_curve(gpu: GpuSpec, blocks_per_sm, warps_per_block: int,
                    loads_in_flight_per_thread: float, bytes_per_load: int, *,
                    ceiling_gbps: float | None = None, **kwargs) -> np.ndarray:
    """GB/s for each entry of `blocks_per_sm` (an array): the curve a forced-occupancy sweep
    is compared with."""
    blocks = np.asarray(blocks_per_sm, dtype=float)
    bound = latency_bound_gbps(gpu, blocks * warps_per_block, loads_in_flight_per_thread,
                               bytes_per_load, **kwargs)
    return np.minimum(bound, _ceiling(gpu, ceiling_gbps))


# --------------------------------------------------------------------------------------------
def _latency(gpu: GpuSpec, latency_ns: float | None) -> float:
    latency = dram_latency_ns(gpu) if latency_ns is None else float(latency_ns)
    if latency <= 0:
        raise ValueError(f"DRAM latency must be positive, got {latency} ns")
    return latency


def _cycle_ns(gpu: GpuSpec, latency_ns: float | None, overhead_ns: float) -> float:
    if overhead_ns < 0:
        raise ValueError(f"overhead per trip cannot be negative, got {overhead_ns} ns")
    return _latency(gpu, latency_ns) + float(overhead_ns)


def _ceiling(gpu: GpuSpec, ceiling_gbps: float | None) -> float:
    ceiling = float(gpu.peak_dram_gbps if ceiling_gbps is None else ceiling_gbps)
    if ceiling <= 0:
        raise ValueError(f"the bandwidth ceiling must be positive, got {ceiling} GB/s")
    return ceiling


def _check_ratio(ratio: float) -> None:
    if ratio < 1:
        raise ValueError(f"bytes moved per byte loaded is at least 1 (loads count), got {ratio}")


def _check_nonnegative(**values) -> None:
    for name, value in values.items():
        if value < 0:
            raise ValueError(f"{name.replace('_', ' ')} cannot be negative, got {value}")
