"""The throughput panel's model: GB/s for memory-bound kernels, TFLOP/s for compute-bound ones,
each with its own ceilings and the scheduler's prediction in the same unit."""

from __future__ import annotations

import numpy as np

from gui.models.bench import GBPS, TFLOPS, BenchModel
from kernels.declare.registry import KERNELS
from kernels.measure.timing import BenchResult, Measurement
from sim.rules.devices import preset
from sim.model.throughput import predict_matmul

from tests.models.fakes import fake_sweep

H200 = preset("H200")


def _matmul(kernel, n, tflops, backend="triton", dims=None):
    flops = 2 * n**3 if dims is None else 2 * dims[0] * dims[1] * dims[2]
    ms = flops / (tflops * 1e12) * 1e3
    nbytes = 6 * n * n
    return Measurement(
        kernel=kernel, backend=backend, elements=n, block_size=128 if backend == "triton" else None,
        threads_per_block=256, num_warps=8, median_ms=ms, p20_ms=ms * 0.99, p80_ms=ms * 1.02,
        reps=50, flush_l2=True, bytes_moved=nbytes, bandwidth_gbps=nbytes / ms / 1e6,
        bandwidth_p20_gbps=nbytes / (ms * 1.02) / 1e6, bandwidth_p80_gbps=nbytes / (ms * 0.99) / 1e6,
        regs_per_thread=220 if backend == "triton" else None,
        smem_per_block_bytes=147456 if backend == "triton" else None, is_gpu_timing=True,
        method="CUDA events", device="H200", grid_blocks=(n // 128) * (n // 256), blocks_per_sm=1,
        flops=flops, dims=None if dims is None else "M=%d,N=%d,K=%d" % dims)


def _model(result) -> BenchModel:
    m = BenchModel()
    m.set_kernels(KERNELS)
    m.set_result(result)
    return m


def _result(measurements, **kw):
    return BenchResult(device=H200.to_dict(), created="2026-12-01T00:00:00+00:00", command="test",
                       measurements=tuple(measurements), copy_ceiling_gbps=4190.0,
                       peak_dram_gbps=4813.0, **kw)


def test_compute_bound_kernels_are_drawn_in_tflops_with_their_ceilings():
    ms = [_matmul("matmul_tiled", n, t) for n, t in ((2048, 604), (4096, 734), (8192, 697))]
    m = _model(_result(ms, compute_ceiling_tflops=704.4))
    m.set_ticked(["matmul_tiled"])
    assert m.metric() == TFLOPS
    s = m.series("size")[0]
    assert np.allclose(s.median, [604, 734, 697]) and (s.p20 < s.median).all() and (s.median < s.p80).all()
    expected = predict_matmul(KERNELS[[k.name for k in KERNELS].index("matmul_tiled")],
                              dict(M=4096, N=4096, K=4096), H200, {"BLOCK_M": 128, "num_warps": 8},
                              resources=(220, 147456)).tflops
    assert s.predicted[1] == expected and "TFLOP/s" in s.tips[1] and "compute-bound" in s.tips[1]
    assert [(c.value, c.kind) for c in m.ceilings()] == [(704.4, "measured"), (989.4, "spec")]
    header, rows = m.export_rows("size")
    assert rows[1][header.index("predicted_tflops")] == expected
    assert rows[1][header.index("predicted_gbps")] is None


def test_memory_bound_kernels_stay_in_gbps():
    m = _model(fake_sweep()(["add_triton", "add_torch"], [2**20, 2**24], [1024]))
    assert m.metric() == GBPS
    assert [c.label for c in m.ceilings()] == ["copy 4,200 GB/s", "peak 4,800 GB/s"]


def test_a_mixed_selection_falls_back_to_gbps():
    ms = [_matmul("matmul_tiled", 4096, 700)] + list(fake_sweep()(["add_triton"], [2**20], [1024]).measurements)
    m = _model(_result(ms))
    m.set_ticked(["matmul_tiled", "add_triton"])
    assert m.metric() == GBPS
    m.set_ticked(["matmul_tiled"])
    assert m.metric() == TFLOPS


def test_a_waves_point_is_predicted_at_its_own_matrix():
    dims = (896, 4864, 8192)
    m = _model(_result([_matmul("matmul_tiled", 4864, 420, dims=dims)]))
    p = m.predicted(m.result.measurements[0])
    assert p.tiles == 133 and p.simulation.waves == 2
