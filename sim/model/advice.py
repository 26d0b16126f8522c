"""Verdicts: what is wrong with a launch, how much it costs, and what to try.

Each finding carries its number and an estimate of the share of the GPU it wastes (`impact`,
0..1), so a list of them can be ranked the way a profiler's advice is: the biggest waste first.
The numbers come from the occupancy rules, the launch geometry and (when given) the simulator's
tail and the latency model; nothing here is measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sim.rules.devices import GpuSpec
from sim.rules.geometry import LaunchGeometry
from sim.model.latency import DEFAULT_LOADS, LoadedPrediction, predict_loaded
from sim.rules.occupancy import Occupancy, occupancy

MIN_IMPACT = 0.05  # findings that waste less than this share of the GPU are not worth a line
BANDWIDTH_SHORTFALL = 0.9  # steady state below this share of the ceiling: too few bytes in flight
# (the naive add, 1 element per thread, runs at 79% of the H200's copy; the model's steady state
# says 85% since the port's service is taken as nearly fixed)


@dataclass(frozen=True, slots=True)
class Finding:
    key: str  # stable id: "cannot-launch", "below-one-wave", "tail", "registers", ...
    impact: float  # estimated share of the GPU's time or throughput lost, 0..1
    title: str  # one line, with its number
    detail: str  # why, with the numbers behind it
    action: str  # what to try


@dataclass(frozen=True, slots=True)
class BandwidthOutlook:
    """What the latency model says of a memory-bound launch (`bandwidth_outlook` fills it in
    from sim.model.latency's loaded model)."""
    predicted_gbps: float
    ceiling_gbps: float
    bytes_in_flight_per_sm: float  # what this launch keeps in flight (on average)
    bytes_needed_per_sm: float  # what covering DRAM latency at the ceiling takes
    peak_bytes_in_flight_per_sm: float | None = None  # when every resident warp waits at once
    round_trip_ns: float | None = None  # a load's round trip under this load
    bound: str = "latency"  # what sim.model.latency says holds the launch back
    dispatcher_busy: float = 0.0  # share of time each SM's block dispatcher is starting blocks
    dispatch_ns: float | None = None  # one block start
    basis: str = ""  # what the kernel's traffic is taken to be


def bandwidth_outlook(p: LoadedPrediction, basis: str = "") -> BandwidthOutlook:
    """The verdicts' view of the launch model's steady state (sim.model.latency.predict_loaded)."""
    return BandwidthOutlook(
        predicted_gbps=p.steady_gbps, ceiling_gbps=p.ceiling_gbps,
        bytes_in_flight_per_sm=p.average_bytes_in_flight_per_sm,
        bytes_needed_per_sm=p.bytes_needed_at_loaded_latency_per_sm,
        peak_bytes_in_flight_per_sm=p.bytes_in_flight_per_sm, round_trip_ns=p.loaded_latency_ns,
        bound=p.bound, dispatcher_busy=p.dispatcher_busy,
        dispatch_ns=p.dispatch_service_ns, basis=basis)


def launch_findings(gpu: GpuSpec, occ: Occupancy, geo: LaunchGeometry, *,
                    bytes_moved: int | None = None, loads: int = DEFAULT_LOADS,
                    ceiling_gbps: float | None = None, memory_bound: bool = True) -> list[Finding]:
    """`findings` with the latency model's outlook for a memory-bound launch (the kernel's
    declared bytes, else the article's vector add): what `explain`, the window's verdicts panel
    and the export all show. A compute-bound launch (a matmul: `memory_bound=False`) gets no
    bytes-in-flight advice: its time is its tiles' FLOPs, not its loads in flight."""
    outlook = None
    if memory_bound and occ.can_launch:
        from sim.model.launch_model import achievable_gbps, block_trip_of

        trip, basis = block_trip_of(geo, bytes_moved, loads)
        steady = predict_loaded(gpu, occ.blocks_per_sm, trip, grid_blocks=geo.blocks,
                                ceiling_gbps=ceiling_gbps or achievable_gbps(gpu))
        outlook = bandwidth_outlook(steady, basis)
    return findings(gpu, occ, geo, outlook)


def findings(gpu: GpuSpec, occ: Occupancy, geo: LaunchGeometry,
             bandwidth: BandwidthOutlook | None = None) -> list[Finding]:
    """Every finding for this launch, the biggest waste first (empty: nothing to fix)."""
    if not occ.can_launch:
        return [Finding("cannot-launch", 1.0, "This launch cannot run",
                        occ.reason, "Use fewer threads, registers or shared memory per block.")]
    below = _below_one_wave(gpu, geo)
    if below is not None:  # too few blocks is the cause; "more warps" would be the wrong advice
        bandwidth = None
    found = [f for f in (below, _tail(geo), _idle_lanes(gpu, geo),
                         _resource_limit(gpu, occ, "registers"),
                         _resource_limit(gpu, occ, "shared memory"),
                         _too_few_bytes_in_flight(bandwidth), _block_dispatch(bandwidth))
             if f is not None]
    return sorted(found, key=lambda f: -f.impact)


def _below_one_wave(gpu: GpuSpec, geo: LaunchGeometry) -> Finding | None:
    per_wave = geo.blocks_per_wave
    if not per_wave or geo.blocks >= per_wave:
        return None
    fill = geo.blocks / per_wave
    sms = min(geo.blocks, gpu.sm_count)
    idle_sms = gpu.sm_count - sms
    where = (f"only {sms} of {gpu.sm_count} SMs get a block" if idle_sms
             else f"every SM gets a block but holds {geo.blocks / gpu.sm_count:.1f} of its "
                  f"{geo.blocks_per_sm}")
    return Finding(
        "below-one-wave", 1.0 - fill,
        f"Grid below one wave: {geo.blocks:,} blocks fill {fill:.0%} of the GPU",
        f"One wave is {gpu.sm_count} SMs x {geo.blocks_per_sm} blocks = {per_wave:,} blocks; "
        f"{where}. The occupancy shown is theoretical (what one SM could hold): the warp slots "
        f"of the whole GPU are {fill:.0%} used.",
        f"Give it at least {per_wave:,} blocks: smaller blocks or more work per launch "
        "(or several launches in flight at once).")


def _tail(geo: LaunchGeometry) -> Finding | None:
    """The last partial wave: its empty slots wait for the last blocks to finish."""
    waves = geo.waves_at_occupancy
    if not waves or waves <= 1 or not math.isfinite(waves):
        return None
    full, fill = math.floor(waves), waves - math.floor(waves)
    if fill == 0:
        return None
    waste = (1 - fill) / math.ceil(waves)  # idle slot-time over all slot-time, uniform blocks
    if waste < MIN_IMPACT:
        return None
    last = geo.blocks - full * geo.blocks_per_wave
    return Finding(
        "tail", waste,
        f"Tail: the last wave is {fill:.0%} full, {waste:.0%} of the block slots' time idle "
        "(equal blocks)",
        f"{geo.blocks:,} blocks are {waves:.2f} waves of {geo.blocks_per_wave:,}: after {full} "
        f"full wave{'s' if full != 1 else ''}, {last:,} block{'s run' if last != 1 else ' runs'} "
        "while the rest of the GPU waits.",
        "Make the grid a whole number of waves, or use more, smaller blocks so each wave (and "
        "so the tail) is shorter.")


def _idle_lanes(gpu: GpuSpec, geo: LaunchGeometry) -> Finding | None:
    idle = geo.idle_lanes_per_block
    if not idle:
        return None
    share = idle / (geo.warps_per_block * gpu.warp_size)
    up = geo.warps_per_block * gpu.warp_size
    return Finding(
        "idle-lanes", share,
        f"{idle} idle lanes in every block ({share:.0%} of its warps' lanes)",
        f"{geo.threads_per_block} threads make {geo.warps_per_block} warps of {gpu.warp_size} "
        f"lanes; the last warp runs {gpu.warp_size - idle} of them.",
        f"Use a multiple of {gpu.warp_size} threads per block (e.g. {up} or "
        f"{max(gpu.warp_size, up - gpu.warp_size)}).")


def _resource_limit(gpu: GpuSpec, occ: Occupancy, limiter: str) -> Finding | None:
    """Registers or shared memory hold occupancy down: the value that allows one more block."""
    if limiter not in occ.limited_by or occ.occupancy >= 1.0:
        return None
    target = occ.blocks_per_sm + 1
    threads, regs, smem = occ.threads_per_block, occ.regs_per_thread, occ.smem_per_block_bytes
    if limiter == "registers":
        lifted = next((r for r in range(regs - 1, -1, -1)
                       if occupancy(gpu, threads, r, smem, occ.carveout_percent).blocks_per_sm >= target),
                      None)
        value = f"{lifted} registers per thread" if lifted is not None else None
        now = f"{regs} registers per thread"
        how = "cap registers (Triton maxnreg, CUDA __launch_bounds__/-maxrregcount) or keep fewer values live"
    else:
        step = gpu.smem_alloc_unit_bytes
        lifted = next((s for s in range(smem - smem % step, -1, -step)
                       if occupancy(gpu, threads, regs, s, occ.carveout_percent).blocks_per_sm >= target),
                      None)
        value = f"{lifted:,} B of shared memory per block" if lifted is not None else None
        now = f"{smem:,} B of shared memory per block"
        how = "use smaller tiles or fewer pipeline stages"
    if value is None:
        return None
    after = occupancy(gpu, threads, regs if limiter != "registers" else lifted,
                      smem if limiter != "shared memory" else lifted, occ.carveout_percent)
    return Finding(
        limiter.replace(" ", "-"), 0.5 * (after.occupancy - occ.occupancy),
        f"Occupancy limited by {limiter}: {occ.blocks_per_sm} blocks/SM "
        f"({occ.occupancy:.0%} theoretical)",
        f"{now} allow {occ.blocks_per_sm} blocks per SM; at most {value} would allow "
        f"{after.blocks_per_sm} ({after.occupancy:.0%} theoretical occupancy).",
        f"To reach {after.blocks_per_sm} blocks/SM, {how}. More occupancy helps only if the "
        "kernel waits on memory.")


def _too_few_bytes_in_flight(b: BandwidthOutlook | None) -> Finding | None:
    if b is None or b.ceiling_gbps <= 0 or b.predicted_gbps >= BANDWIDTH_SHORTFALL * b.ceiling_gbps:
        return None
    if b.bound != "latency" or b.bytes_in_flight_per_sm >= b.bytes_needed_per_sm:
        return None
    share = b.predicted_gbps / b.ceiling_gbps
    peak = (f" ({b.peak_bytes_in_flight_per_sm / 1024:.1f} KiB when every resident warp waits; "
            "less on average, as blocks also start, retire and queue)"
            if b.peak_bytes_in_flight_per_sm else "")
    trip = f" at a {b.round_trip_ns:,.0f} ns round trip under this load" if b.round_trip_ns else ""
    basis = f" Traffic: {b.basis}." if b.basis else ""
    return Finding(
        "bytes-in-flight", 1.0 - share,
        f"Latency-bound: the steady state streams {b.predicted_gbps:,.0f} GB/s, {share:.0%} of the "
        f"{b.ceiling_gbps:,.0f} GB/s ceiling",
        f"Each SM keeps about {b.bytes_in_flight_per_sm / 1024:.1f} KiB of loads in flight{peak}; "
        f"reaching the {b.ceiling_gbps:,.0f} GB/s ceiling{trip} takes {b.bytes_needed_per_sm / 1024:.1f} KiB "
        f"(Little's law).{basis}",
        "Issue more independent loads per thread (several elements per thread, loads before "
        "stores) or keep more warps resident.")


def _block_dispatch(b: BandwidthOutlook | None) -> Finding | None:
    """Blocks so short that starting them is the bottleneck (tiny blocks, little work each)."""
    if b is None or b.bound != "block dispatch" or b.ceiling_gbps <= 0:
        return None
    share = b.predicted_gbps / b.ceiling_gbps
    if share >= BANDWIDTH_SHORTFALL:
        return None
    every = f" (one per {b.dispatch_ns:,.0f} ns)" if b.dispatch_ns else ""
    return Finding(
        "block-dispatch", 1.0 - share,
        f"Block-dispatch-bound: the steady state streams {b.predicted_gbps:,.0f} GB/s, {share:.0%} of "
        f"the {b.ceiling_gbps:,.0f} GB/s ceiling",
        f"Each SM's dispatcher is busy {b.dispatcher_busy:.0%} of the time starting blocks{every}: "
        "the blocks carry too little work for what starting one costs.",
        "Give each block more work: more threads per block or more elements per thread.")
