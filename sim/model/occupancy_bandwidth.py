"""Bandwidth against occupancy: the launch model (sim.model.launch_model) with the blocks per SM forced
down, as published occupancy benchmarks force them with a shared-memory "spoiler", and the points
`bench --occupancy-sweep` measured (kernels/measure/occupancy_sweep.py), each with its own prediction.

`occupancy_curve` predicts one launch at 1..its own blocks per SM; `sweep_points` reads a sweep's
measurements (a results file's rows, as dicts or as kernels.measure.timing.Measurement objects);
`predict_point` is the model's answer for one of them. The window's view
(gui/widgets/qt_occupancy_bandwidth.py) reads these.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.rules.devices import GpuSpec
from sim.rules.geometry import LaunchGeometry
from sim.model.launch_model import Launch, LaunchPrediction, launch_of, predict_launch
from sim.rules.occupancy import Occupancy

SWEEP_PREFIX = "occupancy_"  # `bench --occupancy-sweep` names its kernels occupancy_<kernel>_<dtype>


@dataclass(frozen=True, slots=True)
class CurvePoint:
    blocks_per_sm: int
    occupancy: float  # resident warps / the SM's warp slots
    gbps: float
    bound: str


def occupancy_curve(gpu: GpuSpec, occ: Occupancy, geo: LaunchGeometry, *,
                    bytes_moved: float | None = None) -> list[CurvePoint]:
    """The launch predicted at every blocks per SM from 1 to what its occupancy allows (a
    spoiler can only take blocks away)."""
    out = []
    for b in range(1, occ.blocks_per_sm + 1):
        p = predict_launch(gpu, launch_of(occ, geo, bytes_moved=bytes_moved, blocks_per_sm=b))
        out.append(CurvePoint(b, b * occ.warps_per_block / occ.max_warps_per_sm,
                              p.bandwidth_gbps, p.bound))
    return out


@dataclass(frozen=True, slots=True)
class SweepPoint:
    kernel: str  # add, copy, scale
    dtype: str
    threads: int
    blocks_per_sm: int
    forced: bool  # launched with padding shared memory
    grid: int
    elements: int
    bytes_moved: float
    measured_gbps: float

    @property
    def loads(self) -> int:
        """Input arrays: each sweep kernel writes one array and reads the rest
        (kernels/measure/occupancy_sweep.py), so its bytes per element say how many it reads."""
        size = {"fp64": 8, "fp32": 4, "fp16": 2}.get(self.dtype, 4)
        return max(round(self.bytes_moved / self.elements / size) - 1, 0)

    @property
    def forced_text(self) -> str:
        return f"{self.blocks_per_sm}/SM" if self.forced else "unpadded"


def _get(row, name):
    return row.get(name) if isinstance(row, dict) else getattr(row, name, None)


def sweep_points(measurements) -> list[SweepPoint]:
    """The occupancy-sweep rows among `measurements`; a forced one is a launch with padding
    (dynamic_smem_bytes set); rows without a GPU timing or a blocks-per-SM figure are left out."""
    out = []
    for m in measurements:
        name = str(_get(m, "kernel") or "")
        if not name.startswith(SWEEP_PREFIX) or not _get(m, "blocks_per_sm") \
                or not _get(m, "is_gpu_timing"):
            continue
        kernel, _, dtype = name.removeprefix(SWEEP_PREFIX).rpartition("_")
        out.append(SweepPoint(kernel, dtype, int(_get(m, "threads_per_block")),
                              int(_get(m, "blocks_per_sm")), _get(m, "dynamic_smem_bytes") is not None,
                              int(_get(m, "grid_blocks")), int(_get(m, "elements")),
                              float(_get(m, "bytes_moved")), float(_get(m, "bandwidth_gbps"))))
    return out


def predict_point(gpu: GpuSpec, p: SweepPoint) -> LaunchPrediction:
    """The launch model for one measured point: its grid, block size, blocks per SM, bytes and
    input arrays."""
    return predict_launch(gpu, Launch(p.grid, p.threads, p.blocks_per_sm, p.bytes_moved,
                                      p.elements, loads=p.loads), "memory")
