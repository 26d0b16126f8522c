"""Sweeps: every (kernel, size, block) point measured by the harness, in the caller's thread.

The GUI runs ``sweep`` in a worker thread and passes ``on_progress`` / ``should_cancel``; the CLI
passes a progress bar. A cancelled sweep returns what it measured, with ``cancelled=True``.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import sys
from typing import Callable, Iterable, Sequence

from sim.inputs.errors import RunFailure, UserError

from kernels.launching.backends import gpu_status
from kernels.launching.device import detect_device, device_summary
from kernels.measure.harness import backend_status, block_setting, measure
from kernels.declare.registry import get_kernel
from kernels.declare.spec import KernelSpec
from kernels.measure.timing import BenchResult, Measurement, percent_of

CEILING_KERNEL = "copy_torch"
CEILING_ELEMENTS = 1 << 27  # 512 MiB per array: far past any L2, long enough to hide launch cost


def _points(kernels: Sequence[KernelSpec], sizes: Sequence[int], blocks,
            num_warps: int | None = None) -> tuple[list[tuple], list[str]]:
    """Every (kernel, size, block) point whose launch shape suits its kernel, and what was skipped.

    Block sizes apply to the kernels they suit (threads per block for Numba, a power of two for a
    Triton BLOCK_SIZE); a size a kernel cannot take is named, not fatal. A kernel none of the
    block sizes suits is an error: the sweep would measure nothing of it."""
    points, skipped = [], []
    for spec in kernels:
        candidates = list(blocks) if (blocks and spec.sweep) else [None]
        chosen = []
        for b in candidates:
            problem = spec.block_problem(block_setting(spec, b, num_warps))
            if problem:
                skipped.append(f"{spec.name} block {b}: {problem}")
            else:
                chosen.append(b)
        if not chosen:
            raise UserError(f"{spec.name}: no block size given suits it ({skipped[-1].split(': ', 1)[1]})")
        points += [(spec, int(n), b) for n in sizes for b in chosen]
    return points, skipped


def measure_copy_ceiling(gpu, reps: int = 20, elements: int = CEILING_ELEMENTS) -> float | None:
    """torch's device-to-device copy at a large size: the bandwidth any kernel can hope for here."""
    import torch

    if gpu is None:
        return None
    free, _ = torch.cuda.mem_get_info()
    while elements > 1 << 20 and 3 * elements * 4 + 2 * gpu.l2_bytes > free:
        elements //= 2
    return measure(get_kernel(CEILING_KERNEL), elements, reps=reps, gpu=gpu,
                   device_name=gpu.name).bandwidth_gbps


CEILING_MATMUL_N = 8192  # 2^40 FLOPs: long enough (~1.5 ms on an H200) to reach steady clocks


def measure_matmul_ceiling(gpu, reps: int = 20) -> float | None:
    """torch.matmul (cuBLAS) on fp16 8192^3: the TFLOP/s a compute-bound kernel can hope for here."""
    if gpu is None:
        return None
    peer = get_kernel("matmul_tiled").peer_spec()
    return measure(peer, CEILING_MATMUL_N, reps=reps, gpu=gpu, device_name=gpu.name,
                   check=False).tflops


def sweep(kernel_names: Iterable[str], sizes: Sequence[int], blocks: Sequence[int] | None = None,
          flush_l2: bool = True, reps: int = 50,
          on_progress: Callable[[int, int, str], None] | None = None,
          should_cancel: Callable[[], bool] | None = None, *, num_warps: int | None = None,
          allow_cpu: bool = False, measure_ceiling: bool = True, command: str = "") -> BenchResult:
    """Measure every kernel x size x block. `blocks` applies to kernels with a block parameter
    (threads per block for Numba, BLOCK_SIZE for Triton); None means each kernel's default.
    Without a GPU it raises UserError unless `allow_cpu` (then every figure has
    is_gpu_timing=False)."""
    kernels = [get_kernel(n) if isinstance(n, str) else n for n in kernel_names]
    if not kernels or not sizes:
        raise UserError("nothing to measure: give at least one kernel and one size")
    has_gpu, why = gpu_status()
    if not has_gpu and not allow_cpu:
        raise RunFailure(f"no GPU to time on: {why}; `check` runs the kernels on the CPU, and "
                        "--cpu times that path (labelled: not GPU timings)")
    for spec in kernels:
        if not spec.benchable:
            raise UserError(f"{spec.name} is not a kernel with a throughput to measure")
        if not has_gpu and max(sizes) > spec.cpu_max_elements:  # bounded work, as `check` caps it
            raise UserError(f"{spec.name}: {max(sizes):,} elements is above the CPU path's cap of "
                            f"{spec.cpu_max_elements:,} (its interpreter/simulator would take minutes "
                            "and gigabytes); give smaller sizes, or run on a GPU")
        status = backend_status(spec)
        if not status.ok:
            raise UserError(f"{spec.name}: {status.reason}")
        if has_gpu and not status.is_gpu:
            raise RunFailure(f"{spec.name} would not run on the GPU here: {status.reason}")
    gpu, why = detect_device()
    name = gpu.name if gpu is not None else f"CPU ({why})"
    points, skipped = _points(kernels, sizes, blocks, num_warps)
    total = len(points) + (1 if measure_ceiling and gpu is not None else 0)
    done = 0
    results: list[Measurement] = []
    cancelled = False
    ceiling = None
    compute_ceiling = None
    if measure_ceiling and gpu is not None:
        if on_progress:
            on_progress(done, total, "copy ceiling")
        ceiling = measure_copy_ceiling(gpu)
        if any(spec.flops is not None for spec in kernels):
            compute_ceiling = measure_matmul_ceiling(gpu)
        done += 1
    for spec, n, b in points:
        if should_cancel is not None and should_cancel():
            cancelled = True
            break
        label = f"{spec.name} n={n:,}" + (f" block={b}" if b else "")
        if on_progress:
            on_progress(done, total, label)
        results.append(measure(spec, n, b, num_warps, flush_l2=flush_l2, reps=reps, gpu=gpu,
                               device_name=name))
        done += 1
    if on_progress:
        on_progress(done, total, "cancelled" if cancelled else "done")
    peak = gpu.peak_dram_gbps if gpu is not None else None
    results = [dataclasses.replace(m, percent_of_copy=percent_of(m.bandwidth_gbps, ceiling),
                                   percent_of_peak=percent_of(m.bandwidth_gbps, peak))
               for m in results]
    return BenchResult(device=device_summary(gpu), created=now_iso(),
                       command=command or " ".join(sys.argv), measurements=tuple(results),
                       copy_ceiling_gbps=ceiling, peak_dram_gbps=peak, cancelled=cancelled,
                       notes=tuple(f"skipped {s}" for s in skipped),
                       compute_ceiling_tflops=compute_ceiling)


def at_dims(spec: KernelSpec, dims: dict) -> KernelSpec:
    """The kernel with its sizes fixed at `dims` (M, N, K), whatever size it is asked for: the
    harness, the launcher and the grid rule then all see this matrix."""
    fixed = {k: int(v) for k, v in dims.items()}
    return dataclasses.replace(spec, dims=lambda n, _d=fixed: dict(_d))


def waves_sweep(dims_list: Sequence[dict], kernel_names: Iterable[str] = ("matmul",),
                reps: int = 10, on_progress: Callable[[int, int, str], None] | None = None,
                should_cancel: Callable[[], bool] | None = None, *, cublas: bool = True,
                allow_cpu: bool = False, command: str = "") -> BenchResult:
    """The wave-quantization experiment: every matmul kernel (and cuBLAS, its torch peer) at every
    M x N x K of `dims_list` (sim.traces.waves.parse_sweep). Each measurement names its sizes in `dims`;
    `elements` is the swept size. Results are checked against float64 at the first size."""
    from sim.traces.waves import dims_text, swept_axis

    from kernels.declare.registry import parse_kernel_list

    kernels: list[KernelSpec] = []
    for item in kernel_names:
        for spec in (parse_kernel_list(item) if isinstance(item, str) else [item]):
            if spec not in kernels:
                kernels.append(spec)
    if not kernels or not dims_list:
        raise UserError("nothing to measure: give at least one matmul kernel and one size")
    has_gpu, why = gpu_status()
    if not has_gpu and not allow_cpu:
        raise RunFailure(f"no GPU to time on: {why}")
    for spec in kernels:
        if not spec.is_matrix_product:
            raise UserError(f"{spec.name} is not a matrix product (its sizes are not M, N, K)")
    gpu, why = detect_device()
    name = gpu.name if gpu is not None else f"CPU ({why})"
    axis = swept_axis(list(dims_list))
    peer = kernels[0].peer_spec() if cublas else None
    total = len(dims_list) * (len(kernels) + (peer is not None))
    done, results, cancelled = 0, [], False
    for i, dims in enumerate(dims_list):
        for spec in kernels + ([peer] if peer is not None else []):
            if should_cancel is not None and should_cancel():
                cancelled = True
                break
            label = f"{spec.name} {dims_text(dims)}"
            if on_progress:
                on_progress(done, total, label)
            m = measure(at_dims(spec, dims), int(dims[axis]), reps=reps, gpu=gpu,
                        device_name=name, check=i == 0 and spec.reference is not None)
            results.append(dataclasses.replace(m, dims=dims_text(dims)))
            done += 1
        if cancelled:
            break
    if on_progress:
        on_progress(done, total, "cancelled" if cancelled else "done")
    return BenchResult(device=device_summary(gpu), created=now_iso(),
                       command=command or " ".join(sys.argv), measurements=tuple(results),
                       peak_dram_gbps=gpu.peak_dram_gbps if gpu is not None else None,
                       cancelled=cancelled,
                       notes=(f"waves sweep over {axis}: {dims_text(dims_list[0])} .. "
                              f"{dims_text(dims_list[-1])}, {len(dims_list)} sizes",))


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
