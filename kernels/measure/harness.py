"""One point of work, shared by `check` and `bench`: inputs for a kernel at a size, bound and run
on whatever its backend runs on here, checked against float64, timed, and predicted by sim/.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.inputs.errors import RunFailure, UserError

from kernels.launching.backends import Availability, available
from kernels.launching import launcher
from kernels.launching.launch import LiveLaunch, Resources
from kernels.declare.spec import KernelSpec, call_with
from kernels.measure.timing import (
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


def block_setting(spec: KernelSpec, block=None, num_warps: int | None = None):
    """A sweep value and an optional Triton num_warps as the kernel's block setting."""
    if num_warps is None or spec.backend != "triton":
        return block
    setting = {} if block is None else (dict(block) if isinstance(block, dict) else {spec.sweep: block})
    setting["num_warps"] = num_warps
    return setting


def sm_count_here(gpu) -> int:
    """The SM count a grid rule sees: the real device's, or the simulator's 4 SMs."""
    return gpu.sm_count if gpu is not None else 4


def _torch_tensor(a, device: str):
    import torch

    return torch.from_numpy(np.ascontiguousarray(a)).to(device)


def make_arrays(spec: KernelSpec, elements: int, on_gpu: bool, *, seed: int | None = None,
                extra_bytes: int = 0):
    """Random inputs (never zeros: they hide unwritten outputs) and a NaN-poisoned output, so an
    element the kernel never wrote fails the check. A declaration's `inputs` makes numpy arrays
    on the host; the built-ins' "k float32 arrays of n" are drawn on the device directly."""
    import torch

    check_elements(elements)
    device = "cuda" if on_gpu else "cpu"
    dims = spec.size_dims(elements)
    try:
        if isinstance(spec.inputs, int):
            need = (spec.inputs + spec.kernels_per_call) * elements * 4 + extra_bytes
            _check_free(spec, elements, need, on_gpu)
            gen = torch.Generator(device=device)
            gen.manual_seed(int(np.random.SeedSequence(seed).generate_state(1)[0]))
            inputs = tuple(torch.randn(elements, generator=gen, device=device, dtype=torch.float32)
                           for _ in range(spec.inputs))
            out = torch.full((elements,), float("nan"), device=device, dtype=torch.float32)
            return inputs, out
        np.random.seed(np.random.SeedSequence(seed).generate_state(1)[0])
        host = [np.asarray(a) for a in call_with(spec.inputs, **dims)]
        host_out = (call_with(spec.output, *host, **dims) if spec.output is not None
                    else np.empty_like(host[0]))
        need = sum(a.nbytes for a in host) + np.asarray(host_out).nbytes + extra_bytes
        _check_free(spec, elements, need, on_gpu)
        inputs = tuple(_torch_tensor(a, device) for a in host)
        out = _torch_tensor(np.asarray(host_out), device)
        if out.is_floating_point():
            out.fill_(float("nan"))
        return inputs, out
    except torch.OutOfMemoryError:
        raise RunFailure(f"out of GPU memory: {spec.name} at {elements:,} elements") from None


def _check_free(spec: KernelSpec, elements: int, need: int, on_gpu: bool) -> None:
    if not on_gpu:
        return
    import torch

    free, total = torch.cuda.mem_get_info()
    if need > free:
        raise RunFailure(f"out of GPU memory: {spec.name} at {elements:,} elements needs "
                        f"{need / 2**30:.1f} GiB, {free / 2**30:.1f} GiB of "
                        f"{total / 2**30:.0f} free")


def bind(spec: KernelSpec, inputs, out, elements: int, block=None, gpu=None,
         dynamic_smem_bytes: int = 0) -> LiveLaunch:
    try:
        return launcher.bind(spec, inputs, out, elements, block, sm_count_here(gpu),
                             dynamic_smem_bytes)
    except UserError:
        raise
    except Exception as exc:  # a compile error surfaces at bind or at first run
        raise UserError(f"{spec.name}: cannot build the launch: {_one_line(exc)}") from None


def reference_of(spec: KernelSpec, inputs):
    """The float64 answer. A user's reference takes numpy arrays; the built-ins take either."""
    if spec.reference is None:
        return None
    if spec.origin == "built-in":
        return spec.reference(*inputs)
    return np.asarray(spec.reference(*(t.detach().cpu().numpy() for t in inputs)), dtype=np.float64)


def first_run(spec: KernelSpec, launch: LiveLaunch) -> None:
    """The first launch compiles; turn compiler failures into one line."""
    import torch

    try:
        launch.run()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    except torch.OutOfMemoryError:
        raise RunFailure(f"out of GPU memory while running {spec.name}") from None
    except Exception as exc:
        raise UserError(f"{spec.name}: compile or launch failed: {_one_line(exc)}") from None


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[0][:300] if lines else type(exc).__name__


def result_of(launch: LiveLaunch, out):
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
    from kernels.bodies.reference import as_f64

    if isinstance(ref, np.ndarray) and hasattr(out, "detach"):
        out = out.detach().cpu().numpy()  # a user's numpy reference: compare on the host
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


def model_view(gpu, launch: LiveLaunch, res: Resources, dynamic_smem_bytes: int = 0) -> dict:
    """sim/'s view of this launch: blocks per SM, occupancy, limiter, waves (empty if unknown)."""
    if gpu is None or launch.threads_per_block is None or launch.grid_blocks is None:
        return {}
    from sim.rules.geometry import waves_of
    from sim.rules.occupancy import occupancy

    occ = occupancy(gpu, launch.threads_per_block, res.regs_per_thread or 0,
                    (res.smem_per_block_bytes or 0) + int(dynamic_smem_bytes))
    waves = waves_of(launch.grid_blocks, occ.blocks_per_sm * gpu.sm_count) if occ.blocks_per_sm else None
    return dict(blocks_per_sm=occ.blocks_per_sm, occupancy=occ.occupancy,
                limited_by=tuple(occ.limited_by), waves=waves)


def measure(spec: KernelSpec, elements: int, block=None, num_warps: int | None = None,
            *, flush_l2: bool = True, reps: int = 50, gpu=None, device_name: str = "",
            check: bool = True, ahead: str | None = None,
            dynamic_smem_bytes: int = 0) -> Measurement:
    """Time one kernel at one size and block; on the CPU path, with a host clock and labelled.
    `block` is a value of the kernel's sweep parameter or a dict of block parameters.
    `ahead` ("flush", "flush_only", "spin", "none") overrides what flush_l2 picks; see
    timing.time_gpu."""
    ahead = ahead or ("flush" if flush_l2 else "spin")
    status = backend_status(spec)
    if not status.ok:
        raise UserError(f"{spec.name}: {spec.backend} cannot run here: {status.reason}")
    if not spec.benchable:
        raise UserError(f"{spec.name} is not a kernel with a throughput to measure")
    block = block_setting(spec, block, num_warps)
    on_gpu = status.is_gpu
    flush_bytes = flush_bytes_for(gpu.l2_bytes if gpu is not None else None)
    inputs, out = make_arrays(spec, elements, on_gpu, extra_bytes=flush_bytes if on_gpu else 0)
    launch = bind(spec, inputs, out, elements, block, gpu, dynamic_smem_bytes)
    first_run(spec, launch)
    if check and spec.reference is not None:
        acc = compare(result_of(launch, out), reference_of(spec, inputs), rtol=spec.rtol,
                      atol=spec.atol)
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
    nbytes = spec.bytes_moved(elements, (*inputs, out))
    res = launch.resources()
    params = spec.block_params(block) if spec.sweep else {}
    return Measurement(
        kernel=spec.name, backend=spec.backend, elements=int(elements),
        block_size=params.get(spec.sweep) if spec.sweep else None,
        threads_per_block=launch.threads_per_block, num_warps=launch.num_warps,
        median_ms=median, p20_ms=p20, p80_ms=p80, reps=len(times),
        flush_l2=ahead in ("flush", "flush_only"),
        bytes_moved=nbytes, bandwidth_gbps=bandwidth_gbps(nbytes, median),
        bandwidth_p20_gbps=bandwidth_gbps(nbytes, p80),
        bandwidth_p80_gbps=bandwidth_gbps(nbytes, p20),
        regs_per_thread=res.regs_per_thread, smem_per_block_bytes=res.smem_per_block_bytes,
        is_gpu_timing=on_gpu, method=method, device=device_name or ("GPU" if on_gpu else "CPU"),
        grid_blocks=launch.grid_blocks, flops=spec.flops_of(elements),
        dynamic_smem_bytes=int(dynamic_smem_bytes) or None, **model_view(gpu, launch, res, dynamic_smem_bytes))
