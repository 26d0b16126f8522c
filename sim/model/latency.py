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
   must be measured, never fitted to the bandwidth it predicts: time blocks that do nothing.

Left out on purpose: latency rising under load (queueing near the ceiling makes the real knee round
where this one is sharp), a launch's ramp and tail (this is the steady state), caches (inputs come
from DRAM) and any limit on outstanding requests per SM.

The DRAM latency of each GPU is in its per-GPU data (resources/physics/<KEY>.json), with a source
that says whether it was measured on that GPU, published, or assumed from another. The ceiling defaults to the theoretical DRAM peak;
pass a measured copy ceiling where there is one.

Measured on the H200 (benchmarks/RESULTS.md), plain Little's law with the unloaded latency
is far too high: x2 for the naive add at 1 block/SM, +27% at full occupancy. `predict_loaded`
(below) is the steady state of the launch model's memory-bound block cost (sim.model.launch_model):
each SM is a closed queueing network whose customers are its resident blocks, solved by mean
value analysis (MVA) with the port's service nearly deterministic (`mean_value_analysis`). A
whole launch's time is sim.model.launch_model's, never this module's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim.rules.devices import GpuSpec
from sim.rules.geometry import BYTES_PER_ELEMENT_ADD


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
    """The GPU's DRAM round trip: its per-GPU data (resources/physics, sim/rules/physics.py), the one
    figure the launch model and this module use."""
    from sim.rules.physics import physics_for

    return physics_for(gpu).value("dram_latency_ns")


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


def bandwidth_at_occupancy(gpu: GpuSpec, blocks_per_sm: int, warps_per_block: int,
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
    return bandwidth_at_occupancy(gpu, blocks_per_sm, warps_per_block, loads_in_flight_per_thread,
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
# The loaded model: each SM a closed queueing network, solved by mean value analysis
# --------------------------------------------------------------------------------------------
# Input arrays a thread loads per element when the kernel does not say: the article's vector add
# (x and y), the kernel the default traffic (BYTES_PER_ELEMENT_ADD) assumes too.
DEFAULT_LOADS = 2


@dataclass(frozen=True, slots=True)
class TripCosts:
    """The loaded model's constants besides the DRAM latency and the ceiling."""

    fixed_ns: float  # per block trip: neither DRAM latency nor queueing (an empty block's turn)
    dispatch_ns: float  # an SM starts at most one block this often
    source: str
    load_ns: float = 0.0  # added per input array past the first

    def overhead_ns(self, loads: int = DEFAULT_LOADS) -> float:
        """A trip's overhead for a kernel loading `loads` input arrays: the fixed part, plus for
        each array past the first its issue and its loads' later return (the first load's round
        trip is the pointer chase's latency). A kernel that loads nothing pays the fixed part."""
        return self.fixed_ns + self.load_ns * max(int(loads) - 1, 0)


def trip_costs_for(gpu: GpuSpec, physics=None) -> TripCosts:
    """The GPU's trip overhead (resources/physics) and the per-SM start interval of its dispatch
    profile: the constants sim.model.launch_model's block cost uses too."""
    from sim.schedule.dispatch_profile import profile_for
    from sim.rules.physics import physics_for

    ph = physics or physics_for(gpu)
    fixed, load = ph.constant("trip_overhead_ns"), ph.constant("trip_load_ns")
    profile = profile_for(gpu.name)
    return TripCosts(fixed.value, profile.params.sm_interval_us * 1e3,
                     f"trip overhead {fixed.label}; per load {load.label}; dispatch {profile.label}",
                     load.value)


@dataclass(frozen=True, slots=True)
class BlockTrip:
    """What a block does between its dispatch and its retirement, from the kernel's own numbers."""

    threads: int
    elements_per_thread: float = 1.0
    bytes_per_element: float = BYTES_PER_ELEMENT_ADD  # moved, loads and stores
    read_fraction: float = 2 / 3  # of those bytes, loads (they hold the warp; stores are posted)
    round_trips: int = 1  # DRAM round trips one after the other (1: every load issued up front)
    loads: int = DEFAULT_LOADS  # input arrays each thread loads (the add: x and y)

    @property
    def bytes_per_block(self) -> float:
        return self.threads * self.elements_per_thread * self.bytes_per_element

    @property
    def load_bytes_in_flight_per_thread(self) -> float:
        return self.elements_per_thread * self.bytes_per_element * self.read_fraction / self.round_trips

    @property
    def bytes_moved_per_byte_loaded(self) -> float:
        return 1.0 / self.read_fraction


@dataclass(frozen=True, slots=True)
class LoadedPrediction:
    blocks_per_sm: int  # resident per SM (fewer than occupancy allows when the grid is small)
    active_sms: int
    bytes_per_block: float
    latency_ns: float  # the unloaded DRAM round trip (a pointer chase)
    overhead_ns: float
    dispatch_ns: float  # time at the SM's block dispatcher: its service plus waiting for it
    memory_ns: float  # time at the SM's memory port: moving the block's bytes plus waiting
    cycle_ns: float  # a block slot's whole trip: the four above (latency x round trips)
    steady_gbps: float  # the GB/s of a launch long enough that its start and end do not count
    ceiling_gbps: float
    bytes_in_flight_per_sm: float  # loads outstanding on one SM when every resident warp waits
    bytes_in_flight_needed_per_sm: float  # Little's law at the ceiling, unloaded latency
    port_busy: float  # share of the time each SM's memory port moves bytes (1: at the ceiling)
    dispatcher_busy: float  # share of the time each SM's dispatcher starts blocks
    dispatch_service_ns: float  # one block start

    @property
    def bound(self) -> str:
        """What holds the launch back: "bandwidth" (the port is nearly always busy), "block
        dispatch" (the dispatcher is), else "latency" (too few bytes in flight to hide it)."""
        if self.port_busy >= BUSY:
            return "bandwidth"
        return "block dispatch" if self.dispatcher_busy >= BUSY else "latency"

    @property
    def average_bytes_in_flight_per_sm(self) -> float:
        """Little's law on the SM: load bytes per ns x how long a load is outstanding. Below the
        peak figure because a slot spends part of each trip starting, retiring or queued."""
        wait = self.cycle_ns - self.overhead_ns - self.dispatch_ns
        return self.bytes_in_flight_per_sm * max(0.0, wait) / self.cycle_ns

    @property
    def loaded_latency_ns(self) -> float:
        """A load's round trip under this load: the unloaded latency plus the port's share."""
        return self.latency_ns + self.memory_ns

    @property
    def bytes_needed_at_loaded_latency_per_sm(self) -> float:
        """Little's law at the ceiling with this load's round trip: the loads one SM must have
        outstanding on average for the launch to reach the ceiling."""
        return self.bytes_in_flight_needed_per_sm * self.loaded_latency_ns / self.latency_ns


BUSY = 0.9  # a station busier than this is what the launch waits on


# Squared coefficient of variation (cv^2) of each station's service time, in the order both
# callers pass the demands: (the SM's block dispatcher, the SM's memory port).
DISPATCH_CV2 = 1.0  # exponential, as before: no measurement of the spread of block starts says otherwise
PORT_CV2 = 0.25
# A block's port time is the sum of hundreds of 32-byte sector transfers interleaved with every
# other SM's, so it varies far less than an exponential (cv^2 = 1) does. On the fitting set (the
# V100's published occupancy sweep and the H200's naive-add rows) the error is flat from 0 to
# 0.25 and grows beyond (mean rms 5.1% at 0 to 0.25, 5.5% at 0.5); 0.25 is the largest value
# in the flat range that keeps >= 90% of the held-out H200 rows within 10%.
STATION_CV2 = (DISPATCH_CV2, PORT_CV2)


def mean_value_analysis(customers: int, delay_ns: float, demands_ns,
                        cv2=STATION_CV2) -> tuple[float, np.ndarray]:
    """MVA of a closed network: `customers` circulate through an infinite-server delay and
    single-server FCFS queues with the given service demands (default cv2: two stations, the
    dispatcher then the port). Returns (throughput per ns, residence time at each queue in ns).

    With cv2 = 1 (exponential service) this is exact MVA: an arriving customer waits a full
    service for every customer ahead of it. For other service-time distributions it is the
    residual-time approximation (Reiser; Lazowska et al., "Quantitative System Performance",
    ch. 7, FCFS centers with non-exponential service): the customer in service has only its
    residual time left, D (1 + cv2) / 2 on average, the queued ones a full D each. With few
    customers of large demand (an SM holding one or two big blocks) exponential service stalls
    far below the ceiling that the cards reach; throughput is capped at the bottleneck's 1 / D
    (the approximation can overshoot it: the excess time is then queueing at the bottleneck)."""
    throughputs, residences = mva_levels(customers, delay_ns, demands_ns, cv2)
    if not len(throughputs):
        return 0.0, np.asarray(demands_ns, dtype=float).copy()
    return float(throughputs[-1]), residences[-1]


def mva_levels(customers: int, delay_ns: float, demands_ns,
               cv2=STATION_CV2) -> tuple[np.ndarray, np.ndarray]:
    """`mean_value_analysis` at every population 1..`customers` (MVA computes them in turn
    anyway): throughputs per ns, shape (customers,), and residence times, (customers, stations).
    The launch model's drain asks for an SM's rate as its blocks leave one by one."""
    demands = np.asarray(demands_ns, dtype=float)
    cv2 = np.asarray(cv2, dtype=float)
    if cv2.ndim and cv2.shape != demands.shape:
        raise ValueError(f"one cv^2 per station: {cv2.size} for {demands.size} stations")
    cv2 = np.broadcast_to(cv2, demands.shape)
    if (cv2 < 0).any():
        raise ValueError(f"a squared coefficient of variation cannot be negative, got {cv2}")
    queue, busy = np.zeros_like(demands), np.zeros_like(demands)
    cap = 1.0 / demands.max() if demands.size and demands.max() > 0 else math.inf
    n = max(int(customers), 0)
    throughputs, residences = np.zeros(n), np.zeros((n, demands.size))
    for m in range(1, n + 1):
        residence = demands * (1.0 + queue - busy) + busy * demands * (1.0 + cv2) / 2.0
        throughput = m / (delay_ns + residence.sum())
        if throughput > cap:  # saturated: the customers' extra time is spent queued at the bottleneck
            residence[int(np.argmax(demands))] += m / cap - delay_ns - residence.sum()
            throughput = cap
        queue, busy = throughput * residence, throughput * demands
        throughputs[m - 1], residences[m - 1] = throughput, residence
    return throughputs, residences


def predict_loaded(gpu: GpuSpec, blocks_per_sm: int, trip: BlockTrip, *,
                   ceiling_gbps: float | None = None, latency_ns: float | None = None,
                   costs: TripCosts | None = None,
                   grid_blocks: int | None = None) -> LoadedPrediction:
    """Steady GB/s of a memory-bound launch at `blocks_per_sm`: the state the launch model's
    block cost (sim.model.memory_cost.TripCost) reaches on a full GPU, for the latency view's curves.
    A whole launch's time (its ramp, tail and launch overhead) is sim.model.launch_model's.

    Each SM is a closed network whose customers are its resident blocks. A block's trip passes
    (1) the SM's block dispatcher, one block per `dispatch_ns` (a queue), (2) a delay that
    does not queue: the trip overhead for the kernel's `trip.loads` input arrays
    (`TripCosts.overhead_ns`) plus the DRAM latency per round trip, and (3) the SM's memory
    port, which moves its bytes at the SM's share of the ceiling, ceiling / SMs (a queue: the
    blocks of one SM wait for each other there). `mean_value_analysis` solves it (the port's
    service nearly deterministic, PORT_CV2); its waiting rounds the knee where plain Little's law
    is sharp, and as more blocks queue at the port the throughput approaches the ceiling without
    passing it.
    `grid_blocks` below one full wave leaves fewer blocks resident (and SMs idle)."""
    if blocks_per_sm < 1 or trip.threads < 1 or trip.elements_per_thread <= 0:
        raise ValueError("a prediction needs at least one resident block with some work")
    if not 0 < trip.read_fraction <= 1 or trip.round_trips < 1:
        raise ValueError("read_fraction is in (0, 1] and round_trips at least 1")
    ceiling, latency = _ceiling(gpu, ceiling_gbps), _latency(gpu, latency_ns)
    costs = costs or trip_costs_for(gpu)
    sms, resident = gpu.sm_count, int(blocks_per_sm)
    if grid_blocks is not None:
        if grid_blocks < 1:
            raise ValueError("a launch has at least one block")
        sms = min(sms, int(grid_blocks))
        resident = min(resident, math.ceil(grid_blocks / gpu.sm_count))
    nbytes = trip.bytes_per_block
    dispatch_service = costs.dispatch_ns
    port_service = nbytes / (ceiling / gpu.sm_count)  # GB/s = bytes per ns
    overhead = costs.overhead_ns(trip.loads)
    delay = overhead + latency * trip.round_trips
    per_ns, (dispatch, memory) = mean_value_analysis(resident, delay,
                                                     (dispatch_service, port_service))
    steady = per_ns * nbytes * sms
    warps = resident * math.ceil(trip.threads / gpu.warp_size)
    return LoadedPrediction(
        blocks_per_sm=resident, active_sms=sms, bytes_per_block=nbytes, latency_ns=latency,
        overhead_ns=overhead, dispatch_ns=float(dispatch), memory_ns=float(memory),
        cycle_ns=resident / per_ns, steady_gbps=steady,
        ceiling_gbps=ceiling,
        bytes_in_flight_per_sm=warps * gpu.warp_size * trip.load_bytes_in_flight_per_thread,
        bytes_in_flight_needed_per_sm=bytes_in_flight_needed(
            gpu, ceiling, latency_ns=latency,
            bytes_moved_per_byte_loaded=trip.bytes_moved_per_byte_loaded),
        port_busy=per_ns * port_service, dispatcher_busy=per_ns * dispatch_service,
        dispatch_service_ns=dispatch_service)


def loaded_curve(gpu: GpuSpec, blocks_per_sm, trip: BlockTrip, **kwargs) -> np.ndarray:
    """`predict_loaded(...).steady_gbps` for each entry of `blocks_per_sm`."""
    return np.array([predict_loaded(gpu, int(b), trip, **kwargs).steady_gbps
                     for b in np.atleast_1d(blocks_per_sm)])


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
