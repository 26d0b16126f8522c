"""The timing harness every backend uses, and the records it produces.

On a GPU it measures the way ``triton.testing.do_bench`` does, and says so in ``method``:
device events around each launch; a warm-up of 25 ms; at least `reps` timed launches and as many
as fit in 100 ms; before every timed launch a buffer of at least twice the L2 (and at least
do_bench's 256 MiB) is zeroed, so the inputs come from DRAM, not from the cache
(``flush_l2=False`` turns that off, to show the trap); the median with p20/p80; GB/s from the
kernel's bytes-moved formula. A short spin kernel is queued after the flush, so the start event
fires only when the GPU reaches the launch, even for launchers whose host path is slower than
the flush (Numba's): the event pair times the GPU, not the CPU's launch gap.

Without a GPU the same records are made from a host clock around interpreter/simulator runs, with
``is_gpu_timing=False``: they say how slow the CPU path is, never how fast a GPU is.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

FLUSH_MIN_BYTES = 256 * 1024 * 1024  # do_bench's buffer, so our numbers compare with its
FORMAT = "warpscope-bench/1"


# --------------------------------------------------------------------------------------------
# Arithmetic (pure, tested without a GPU)
# --------------------------------------------------------------------------------------------
def quantile(values: Sequence[float], q: float) -> float:
    """q-quantile with linear interpolation between order statistics (numpy's and
    torch.quantile's default, which do_bench uses)."""
    if not values:
        raise ValueError("quantile of no values")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be in [0, 1], got {q}")
    s = sorted(values)
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summarize(times_ms: Sequence[float]) -> tuple[float, float, float]:
    """(median, p20, p80) of the timed runs, in ms."""
    return quantile(times_ms, 0.5), quantile(times_ms, 0.2), quantile(times_ms, 0.8)


def bandwidth_gbps(bytes_moved: int, ms: float) -> float:
    """Bytes moved over time, in GB/s (10^9 bytes per second, as memory is rated)."""
    if ms <= 0:
        raise ValueError(f"time must be positive, got {ms} ms")
    return bytes_moved / (ms * 1e-3) / 1e9


def percent_of(value: float | None, ceiling: float | None) -> float | None:
    if value is None or not ceiling:
        return None
    return 100.0 * value / ceiling


def flush_bytes_for(l2_bytes: int | None) -> int:
    """Size of the eviction buffer: at least twice the L2, and never less than do_bench's."""
    return max(FLUSH_MIN_BYTES, 2 * int(l2_bytes or 0))


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Measurement:
    kernel: str
    backend: str
    elements: int
    block_size: int | None  # threads per block (Numba) or BLOCK_SIZE (Triton); None for torch
    threads_per_block: int | None
    num_warps: int | None
    median_ms: float
    p20_ms: float
    p80_ms: float
    reps: int
    flush_l2: bool
    bytes_moved: int
    bandwidth_gbps: float  # from the median time
    bandwidth_p20_gbps: float  # 20th percentile of bandwidth = bytes / p80 time
    bandwidth_p80_gbps: float  # 80th percentile of bandwidth = bytes / p20 time
    regs_per_thread: int | None
    smem_per_block_bytes: int | None
    is_gpu_timing: bool
    method: str
    device: str
    # the launch as sim/ predicts it
    grid_blocks: int | None = None
    blocks_per_sm: int | None = None
    occupancy: float | None = None  # 0..1, predicted by sim.rules.occupancy from the real resources
    limited_by: tuple[str, ...] = ()
    waves: float | None = None  # grid blocks / (SMs x blocks per SM)
    percent_of_copy: float | None = None  # of the copy ceiling measured in the same run
    percent_of_peak: float | None = None  # of the theoretical DRAM peak
    flops: int | None = None  # floating-point operations of one call (compute-bound kernels)
    dynamic_smem_bytes: int | None = None  # shared memory padded on at launch (forced occupancy)
    dims: str | None = None  # the sizes when they are not those of `elements`: "M=1024,N=4352,K=8192"

    @property
    def tflops(self) -> float | None:
        """TFLOP/s from the median time (compute-bound kernels)."""
        return None if not self.flops else self.flops / (self.median_ms * 1e-3) / 1e12

    @property
    def label(self) -> str:
        return f"{self.kernel} n={self.elements} block={self.block_size}"


@dataclass(frozen=True, slots=True)
class BenchResult:
    device: dict
    created: str  # ISO 8601, UTC
    command: str
    measurements: tuple[Measurement, ...]
    copy_ceiling_gbps: float | None = None
    peak_dram_gbps: float | None = None
    cancelled: bool = False
    compute_ceiling_tflops: float | None = None  # torch.matmul (cuBLAS) at 8192^3 in the same run
    notes: tuple[str, ...] = field(default=())

# --------------------------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------------------------
AHEAD = ("flush", "flush_only", "spin", "none")
SPIN_CYCLES = 500_000  # ~250 us at boost clock: longer than any launcher's host path; torch.compile's
# is 46-89 us per call on an H200 machine, so a 50 us spin let its start event fire early and
# timed 17-19 us for 5-8 us kernels


def gpu_method(ahead: str, reps: int, flush_bytes: int) -> str:
    what = {"flush": f"{flush_bytes / 2**20:.0f} MiB zeroed then a spin kernel before each rep "
                     "(L2 evicted, launch gap hidden)",
            "flush_only": f"{flush_bytes / 2**20:.0f} MiB zeroed before each rep, nothing else "
                          "(exactly do_bench's method)",
            "spin": "NO L2 flush, a spin kernel before each rep (repeated runs read the L2 cache)",
            "none": "nothing queued before each rep (events also time the CPU's launch gap)"}[ahead]
    return f"CUDA events, median of {reps} after warm-up, {what}"


def time_gpu(fn: Callable[[], object], *, reps: int = 50, flush_l2: bool = True,
             flush_bytes: int = FLUSH_MIN_BYTES, ahead: str | None = None, warmup_ms: float = 25.0,
             rep_ms: float = 100.0, max_reps: int = 5000) -> list[float]:
    """Device-event times (ms) of launches of fn, measured like do_bench: warm up for warmup_ms,
    then time max(reps, rep_ms / estimate) launches, each after `ahead`:
      "flush" (default when flush_l2): zero the flush buffer (evicts L2), then queue a spin kernel,
              so the start event fires only once the GPU is busy up to the launch: a launcher whose
              host path is slower than the flush (Numba's) is not timed with its CPU gap, and the
              flush's dirty lines have drained to DRAM before the timed kernel starts;
      "flush_only": zero the buffer and nothing else: do_bench's own method;
      "spin"  (default when not flush_l2): only the spin kernel: shows the L2 trap alone;
      "none": nothing: shows the launch-gap trap (a lone launch timed with the CPU's gap)."""
    import torch

    ahead = ahead or ("flush" if flush_l2 else "spin")
    if ahead not in AHEAD:
        raise ValueError(f"ahead must be one of {AHEAD}")
    if reps < 1:
        raise ValueError("reps must be at least 1")
    flush = ahead in ("flush", "flush_only")
    cache = torch.empty(flush_bytes, dtype=torch.int8, device="cuda") if flush else None
    spin = getattr(torch.cuda, "_sleep", None) if ahead in ("flush", "spin") else None

    def before():
        if cache is not None:
            cache.zero_()
        if spin is not None:
            spin(SPIN_CYCLES)

    # estimate one launch (with what goes before it), as do_bench does, to size warm-up and reps
    fn()
    torch.cuda.synchronize()
    t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0.record()
    for _ in range(5):
        before()
        fn()
    t1.record()
    torch.cuda.synchronize()
    estimate_ms = max(t0.elapsed_time(t1) / 5, 1e-3)
    for _ in range(max(1, int(warmup_ms / estimate_ms))):
        before()
        fn()
    n = min(max_reps, max(reps, int(rep_ms / estimate_ms)))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for start, end in zip(starts, ends):
        before()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def host_method(reps: int, where: str) -> str:
    return f"host clock around each run, median of {reps}, on the CPU ({where}): NOT a GPU timing"


def time_host(fn: Callable[[], object], *, reps: int = 5, warmup: int = 1) -> list[float]:
    """Host-clock times (ms) of fn on the CPU path (interpreter, simulator, CPU torch)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return times
