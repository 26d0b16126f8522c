"""The compute-bound model's tensor efficiency and exposed memory fraction
(sim.model.throughput.ComputeModel), fitted on the tiled kernel's measured times.

The tiled kernel at M=1024, K=8192 with 128x256 tiles runs one wave up to the GPU's SM count of
tiles; within one wave each block's time is its FLOPs over the tensor rate times 1/efficiency plus
the exposed fraction of its DRAM time, so the launch's time less the launch overhead is linear in
(1/efficiency, fraction): two sizes (a quarter and a full GPU) solve it exactly, more are fitted
by least squares. benchmarks/waves_fit.py fits the H200's on a recorded sawtooth;
`main.py calibrate --matmul` (kernels.measure.matmul_calibrate) fits the user's GPU's.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

TILE = (128, 256)  # the tile the compute terms are fitted with (matmul_tiled's default)


def one_wave_sizes(sm_count: int, M: int = 1024) -> tuple[int, int]:
    """The N of the two fitting sizes at this M: 32 tiles, and the most whole tile columns that
    still fit one wave of 128x256 tiles (the H200's 132 SMs: N = 1024 and 4096)."""
    rows = -(-M // TILE[0])
    return TILE[1] * max(1, 32 // rows), TILE[1] * max(1, sm_count // rows)


def solve_tile_terms(points, gpu, dtype: str, model, resources=None,
                     block: dict | None = None) -> tuple[float, float]:
    """(tensor efficiency, exposed memory fraction) from the tiled kernel's measured times at
    one-wave sizes: `points` [(dims, measured us)]; `model` gives the terms not fitted here;
    `resources` (registers, shared memory) of the compiled kernel, default estimated; `block` its
    tile parameters, default the declaration's."""
    from kernels.declare.registry import get_kernel
    from sim.model.throughput import predict_matmul

    spec = get_kernel("matmul_tiled")
    rows, rhs = [], []
    for dims, measured_us in points:
        def predicted(exposed):
            return predict_matmul(spec, dims, gpu, block, dtype=dtype, resources=resources,
                                  model=replace(model, tensor_efficiency=1.0,
                                                memory_exposed=exposed), fitted=False)

        compute, both = predicted(0.0), predicted(1.0)
        overhead = compute.launch.launch_overhead_us  # the GPU's one (resources/physics)
        rows.append([compute.time_us - overhead, both.time_us - compute.time_us])
        rhs.append(measured_us - overhead)
    if len(rows) < 2:
        raise ValueError(f"the compute terms need two sizes, got {len(rows)}")
    (inv_eff, exposed), *_ = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)
    return float(1.0 / inv_eff), float(exposed)
