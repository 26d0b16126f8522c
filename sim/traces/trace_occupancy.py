"""A recorded trace's achieved occupancy beside its theoretical one (sim.schedule.achieved):
the trace's own block start and end stamps, its launch read from its meta as `compare` reads it."""

from __future__ import annotations

from sim.inputs.errors import UserError
from sim.rules.devices import GpuSpec, preset_for_device_name
from sim.rules.geometry import waves_of
from sim.schedule.achieved import Achieved, achieved_occupancy
from sim.traces.compare import launch_of_trace
from sim.traces.trace import Trace

RECORDED = "the recorded trace"


def achieved_of_trace(trace: Trace, gpu: GpuSpec | None = None,
                      blocks_per_sm: int | None = None) -> Achieved:
    """Achieved (from the stamps) and theoretical occupancy, and waves per SM, of a recorded
    trace; UserError (one line) where the trace does not say its launch."""
    sm_count = trace.meta.get("sm_count") if isinstance(trace.meta.get("sm_count"), int) else None
    gpu = gpu or preset_for_device_name(trace.gpu, sm_count)
    if gpu is None:
        raise UserError(f"the trace names {trace.gpu!r}, which is no GPU preset; pass --gpu")
    launch = launch_of_trace(trace, gpu, blocks_per_sm)
    warps = launch.warps_per_block
    theoretical = min(1.0, launch.blocks_per_sm * warps / gpu.max_warps_per_sm)
    achieved = achieved_occupancy(trace.sm, trace.start_us, trace.end_us, warps, gpu.max_warps_per_sm)
    return Achieved(achieved, theoretical,
                    waves_of(len(trace.block), gpu.sm_count * launch.blocks_per_sm), RECORDED)
