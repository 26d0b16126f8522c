"""Fake measurements and availabilities, shared by the model and window tests."""

from __future__ import annotations

import time
from dataclasses import dataclass

from kernels.measure.timing import BenchResult, Measurement


def measurement(kernel, n, block, gbps, gpu=True):
    ms = 3 * n * 4 / (gbps * 1e6)
    return Measurement(
        kernel=kernel, backend="triton", elements=n, block_size=block, threads_per_block=128,
        num_warps=4, median_ms=ms, p20_ms=ms * 0.98, p80_ms=ms * 1.03, reps=50, flush_l2=True,
        bytes_moved=3 * n * 4, bandwidth_gbps=gbps, bandwidth_p20_gbps=gbps * 0.97,
        bandwidth_p80_gbps=gbps * 1.02, regs_per_thread=24, smem_per_block_bytes=0,
        is_gpu_timing=gpu, method="CUDA events, median of 50" if gpu else "interpreter, host clock",
        device="H200", grid_blocks=-(-n // block), blocks_per_sm=16, occupancy=1.0,
        limited_by=("warps",), waves=1.5)


def fake_sweep(points_done=None, delay=0.0, gpu=True):
    """A stand-in for kernels.measure.bench.sweep with its signature: one point per (kernel, size, block)."""
    def sweep(names, sizes, blocks, flush_l2=True, reps=50, on_progress=None, should_cancel=None,
              allow_cpu=False, command=""):
        pts = [(k, n, b) for k in names for n in sizes for b in (blocks or [1024])]
        out, cancelled = [], False
        for i, (k, n, b) in enumerate(pts):
            if should_cancel and should_cancel():
                cancelled = True
                break
            if on_progress:
                on_progress(i, len(pts), f"{k} n={n}")
            time.sleep(delay)
            out.append(measurement(k, n, b, 100.0 + i, gpu))
            if points_done is not None:
                points_done.set()
        return BenchResult(device={"name": "H200"}, created="2026-11-29T00:00:00+00:00",
                           command=command, measurements=tuple(out), copy_ceiling_gbps=4200.0,
                           peak_dram_gbps=4800.0, cancelled=cancelled)

    return sweep


@dataclass(frozen=True)
class Av:
    ok: bool
    is_gpu: bool
    reason: str

    @property
    def mode(self):
        return "gpu" if self.is_gpu else ("interpreter" if self.ok else "unavailable")


NO_GPU = {
    "triton": Av(True, False, "no CUDA GPU; TRITON_INTERPRET=1"),
    "numba": Av(True, False, "no CUDA GPU; NUMBA_ENABLE_CUDASIM=1"),
    "torch": Av(True, False, "no CUDA GPU: torch runs on the CPU"),
}
GPU = {k: Av(True, True, "") for k in ("triton", "numba", "torch")}


class Recorder:
    """Every emission of a model's signal, as the tuple of its arguments."""

    def __init__(self, signal):
        self.calls = []
        signal.connect(self._on)

    def _on(self, *args):
        self.calls.append(args)
