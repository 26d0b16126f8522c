"""One point of work, shared by `check` and `bench`: inputs for a kernel at a size, bound and run
on whatever its backend runs on here, checked against float64, timed, and predicted by sim/.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.errors import UserError

from .backends import Availability, available
from .launch import Launch, Resources
from .registry import KernelSpec
from .timing import (
    Measurement,
    bandwidth_gbps,
    flush_bytes_for,
    gpu_method,
    host_method,
    summarize,
    time_gpu,
    time_host,
)

MAX_ELEMENTS = 1 << 31  # the GUI's slider ends here


def backend_status(spec: KernelSpec) -> Availability:
    return available()[spec.backend]


def check_elements(elements: int) -> None:
    if not 1 <= int(elements) <= MAX_ELEMENTS:
        raise UserError(f"element count must be 1..{MAX_ELEMENTS:,}, got {elements:,}")


def _torch_dtype(itemsize: int):
    import torch

    return {2: torch.float16, 4: torch.float32, 8: torch.float64}[itemsize]


def bytes_needed(spec: KernelSpec, elements: int, itemsize: int = 4) -> int:
    """Device memory one point needs: inputs and output, plus eager add+ReLU's temporary."""
    arrays = spec.arity + 1 + (spec.kernels_per_call - 1)
    return arrays * elements * itemsize


def make_arrays(spec: KernelSpec, elements: int, on_gpu: bool, *, seed: int | None = None,
                itemsize: int = 4, extra_bytes: int = 0):
    """Normal random inputs, as in the article (never zeros: they hide unwritten outputs), and a
    NaN-poisoned output, so an element the kernel never wrote fails the check."""
    import torch

    check_elements(elements)
    device = "cuda" if on_gpu else "cpu"
    if on_gpu:
        free, total = torch.cuda.mem_get_info()
        need = bytes_needed(spec, elements, itemsize) + extra_bytes
        if need > free:
            raise UserError(f"out of GPU memory: {spec.name} at {elements:,} elements needs "
                            f"{need / 2**30:.1f} GiB, {free / 2**30:.1f} GiB of "
                            f"{total / 2**30:.0f} free")
    gen = torch.Generator(device=device)
    gen.manual_seed(int(np.random.SeedSequence(seed).generate_state(1)[0]))
    dtype = _torch_dtype(itemsize)
    try:
        inputs = tuple(torch.randn(elements, generator=gen, device=device, dtype=dtype)
                       for _ in range(spec.arity))
        out = torch.full((elements,), float("nan"), device=device, dtype=dtype)
    except torch.OutOfMemoryError:
        raise UserError(f"out of GPU memory: {spec.name} at {elements:,} elements") from None
    return inputs, out


def bind(spec: KernelSpec, inputs, out, block: int | None, num_warps: int | None) -> Launch:
    try:
        return spec.bind(inputs, out, block, num_warps)
    except UserError:
        raise
    except Exception as exc:  # a compile error surfaces at bind or at first run
        raise UserError(f"{spec.name}: cannot build the launch: {_one_line(exc)}") from None


def first_run(spec: KernelSpec, launch: Launch) -> None:
    """The first launch compiles; turn compiler failures into one line."""
    import torch

    try:
        launch.run()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    except torch.OutOfMemoryError:
        raise UserError(f"out of GPU memory while running {spec.name}") from None
    except Exception as exc:
        raise UserError(f"{spec.name}: compile or launch failed: {_one_line(exc)}") from None


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[0][:300] if lines else type(exc).__name__


def result_of(launch: Launch, out):
    return launch.output() if launch.output is not None else out


@dataclass(frozen=True, slots=True)
class Accuracy:
    ok: bool
    max_abs_err: float
    rel_l2_err: float
    unwritten: int  # output elements still NaN (never written)
    detail: str


def compare(out, ref, *, rtol: float = 1e-6, atol: float = 1e-6) -> Accuracy:
    """A result against its float64 reference: each element within atol + rtol*|ref| (one fp32
    rounding is ~6e-8 relative), every element written, NaN never passes. Works on numpy arrays
    and on torch tensors (on their device), with operators both share."""
    from .reference import as_f64

    out64 = as_f64(out)
    if tuple(out64.shape) != tuple(ref.shape):
        return Accuracy(False, float("inf"), float("inf"), -1,
                        f"shape {tuple(out64.shape)} != {tuple(ref.shape)}")
    nan = out64 != out64  # NaN is the poison a kernel never overwrote
    unwritten = int(nan.sum())
    diff = abs(out64 - ref)
    bad = int((~(diff <= atol + rtol * abs(ref))).sum())  # NaN compares False: counted bad
    written = diff[~nan]
    max_abs = float(written.max()) if written.shape[0] else 0.0
    ref_norm = float((ref * ref).sum()) ** 0.5 or 1.0
    rel = float((written * written).sum()) ** 0.5 / ref_norm if not unwritten else float("inf")
    ok = bad == 0 and unwritten == 0
    detail = ("" if ok else
              f"{bad} elements off ({unwritten} never written), max |err| {max_abs:.3g}")
    return Accuracy(ok, max_abs, rel, unwritten, detail)


def predict(gpu, launch: Launch, res: Resources) -> dict:
    """sim/'s view of this launch: blocks per SM, occupancy, limiter, waves (empty if unknown)."""
    if gpu is None or launch.threads_per_block is None or launch.grid_blocks is None:
        return {}
    from sim.occupancy import occupancy

    occ = occupancy(gpu, launch.threads_per_block, res.regs_per_thread or 0,
                    res.smem_per_block_bytes or 0)
    waves = launch.grid_blocks / (occ.blocks_per_sm * gpu.sm_count) if occ.blocks_per_sm else None
    return dict(blocks_per_sm=occ.blocks_per_sm, occupancy=occ.occupancy,
                limited_by=tuple(occ.limited_by), waves=waves)


def measure(spec: KernelSpec, elements: int, block: int | None = None, num_warps: int | None = None,
            *, flush_l2: bool = True, reps: int = 50, gpu=None, device_name: str = "",
            check: bool = True, ahead: str | None = None) -> Measurement:
    """Time one kernel at one size and block; on the CPU path, with a host clock and labelled.
    `ahead` ("flush", "flush_only", "spin", "none") overrides what flush_l2 picks; see
    timing.time_gpu."""
    ahead = ahead or ("flush" if flush_l2 else "spin")
    status = backend_status(spec)
    if not status.ok:
        raise UserError(f"{spec.name}: {spec.backend} cannot run here: {status.reason}")
    if not spec.benchable:
        raise UserError(f"{spec.name} is not a streaming kernel; it has no bandwidth to measure")
    on_gpu = status.is_gpu
    flush_bytes = flush_bytes_for(gpu.l2_bytes if gpu is not None else None)
    inputs, out = make_arrays(spec, elements, on_gpu, extra_bytes=flush_bytes if on_gpu else 0)
    launch = bind(spec, inputs, out, block, num_warps)
    first_run(spec, launch)
    if check:
        acc = compare(result_of(launch, out), spec.reference(*inputs))
        if not acc.ok:
            raise UserError(f"{spec.name} at {elements:,} elements gave wrong results: "
                            f"{acc.detail}")
    if on_gpu:
        times = time_gpu(launch.run, reps=reps, flush_bytes=flush_bytes, ahead=ahead)
        method = gpu_method(ahead, len(times), flush_bytes)
    else:
        reps = min(reps, 3)  # the interpreter is slow; these numbers only say how slow
        times = time_host(launch.run, reps=reps)
        method = host_method(reps, status.mode)
    median, p20, p80 = summarize(times)
    nbytes = spec.bytes_moved(elements, out.element_size())
    res = launch.resources()
    return Measurement(
        kernel=spec.name, backend=spec.backend, elements=int(elements),
        block_size=(spec.default_block if block is None else block) if spec.block_param else None,
        threads_per_block=launch.threads_per_block, num_warps=launch.num_warps,
        median_ms=median, p20_ms=p20, p80_ms=p80, reps=len(times),
        flush_l2=ahead in ("flush", "flush_only"),
        bytes_moved=nbytes, bandwidth_gbps=bandwidth_gbps(nbytes, median),
        bandwidth_p20_gbps=bandwidth_gbps(nbytes, p80),
        bandwidth_p80_gbps=bandwidth_gbps(nbytes, p20),
        regs_per_thread=res.regs_per_thread, smem_per_block_bytes=res.smem_per_block_bytes,
        is_gpu_timing=on_gpu, method=method, device=device_name or ("GPU" if on_gpu else "CPU"),
        grid_blocks=launch.grid_blocks, **predict(gpu, launch, res))
