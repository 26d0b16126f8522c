"""The article's other measurements: kernel counting, launch returned vs work finished, and the
five host steps of the square example.

Each returns a frozen record that says whether its times are GPU timings.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import numpy as np

from sim.inputs.errors import RunFailure, UserError

from kernels.measure.harness import backend_status, bind, first_run, make_arrays
from kernels.declare.registry import get_kernel

ADD_RELU_VARIANTS = ("add_relu_torch_eager", "add_relu_torch_compile", "add_relu_triton",
                     "add_relu_numba")


# --------------------------------------------------------------------------------------------
# Counting kernels with torch.profiler (eager add+ReLU = 2, fused = 1)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class KernelCount:
    variant: str  # registry name
    elements: int
    count: int  # GPU kernels one call launched
    kernels: tuple[tuple[str, float], ...]  # (kernel name, GPU time in us), in launch order
    total_gpu_us: float
    trips: int  # array-sized memory trips (the declared bytes over one float32 array)


def count_kernels(variants=ADD_RELU_VARIANTS, elements: int = 1_000_000) -> list[KernelCount]:
    """Run each variant once under torch.profiler (after a warm-up) and list the GPU kernels."""
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    out: list[KernelCount] = []
    for name in variants:
        spec = get_kernel(name)
        status = backend_status(spec)
        if not status.is_gpu:
            raise RunFailure(f"counting GPU kernels needs a GPU: {status.reason}")
        inputs, dst = make_arrays(spec, elements, True)
        launch = bind(spec, inputs, dst, elements)
        first_run(spec, launch)  # compiles, and keeps one-time work out of the trace
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            launch.run()
            torch.cuda.synchronize()  # wait for the GPU before ending the trace
        events = sorted((e for e in prof.events() if e.device_type == DeviceType.CUDA
                         and not e.name.startswith(("Memcpy", "Memset"))),
                        key=lambda e: e.time_range.start)
        kernels = tuple((e.name, float(e.time_range.elapsed_us())) for e in events)
        out.append(KernelCount(name, elements, len(kernels), kernels,
                               sum(t for _, t in kernels),
                               spec.bytes_moved(elements) // (4 * elements)))
    return out


# --------------------------------------------------------------------------------------------
# Launch returned vs work finished
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LaunchVsFinish:
    kernel: str
    elements: int
    launch_returned_us: float  # host time until the launch call returned (median)
    work_finished_us: float  # host time until the GPU had finished it (median)
    reps: int
    is_gpu_timing: bool
    method: str


def launch_vs_finish(kernel: str = "add_torch", elements: int = 50_000_000,
                     reps: int = 5) -> LaunchVsFinish:
    """The article's measurement: time.perf_counter around the launch, then after synchronize.
    On the CPU path a launch runs to completion before it returns, so the two are equal there."""
    import torch

    spec = get_kernel(kernel)
    status = backend_status(spec)
    if not status.ok:
        raise UserError(f"{kernel}: {status.reason}")
    if not status.is_gpu:
        elements = min(elements, spec.cpu_max_elements)
    inputs, out = make_arrays(spec, elements, status.is_gpu)
    launch = bind(spec, inputs, out, elements)
    first_run(spec, launch)  # warm up: compile and allocate outside the timed region
    sync = torch.cuda.synchronize if status.is_gpu else (lambda: None)
    returned, finished = [], []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        launch.run()
        t1 = time.perf_counter()
        sync()  # block until the GPU has finished all queued work
        t2 = time.perf_counter()
        returned.append((t1 - t0) * 1e6)
        finished.append((t2 - t0) * 1e6)
    method = (f"host clock (perf_counter), median of {reps}, synchronize before each launch"
              + ("" if status.is_gpu else f"; on the CPU ({status.mode}): NOT a GPU timing"))
    return LaunchVsFinish(kernel, elements, statistics.median(returned),
                          statistics.median(finished), reps, status.is_gpu, method)


# --------------------------------------------------------------------------------------------
# The square example's five host steps, each timed
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class HostStep:
    name: str
    start_ms: float  # from the start of step 1
    duration_ms: float
    on_gpu: bool  # only the launch runs on the GPU; the rest is driver work and the bus


@dataclass(frozen=True, slots=True)
class HostSteps:
    elements: int
    threads_per_block: int
    steps: tuple[HostStep, ...]
    total_ms: float
    correct: bool
    is_gpu_timing: bool
    method: str


STEP_NAMES = ("allocate", "copy in", "launch", "copy out", "free")


def _five_steps(cuda, kernel, h_in: np.ndarray, threads: int, simulated: bool):
    """The explicit CUDA workflow through numba-cuda; returns (durations in ms, host result)."""
    from kernels.declare.spec import cdiv

    sync = (lambda: None) if simulated else cuda.synchronize
    marks = [time.perf_counter()]

    def mark():
        sync()  # each step is timed to its completion, not to its return
        marks.append(time.perf_counter())

    d_in = cuda.device_array(h_in.size, dtype=h_in.dtype)  # 1. allocate on the device
    d_out = cuda.device_array(h_in.size, dtype=h_in.dtype)
    mark()
    d_in.copy_to_device(h_in)  # 2. copy in (host to device)
    mark()
    kernel[cdiv(h_in.size, threads), threads](d_in, d_out)  # 3. launch
    mark()
    h_out = d_out.copy_to_host()  # 4. copy out (device to host)
    mark()
    del d_in, d_out  # 5. free: numba defers frees; clear() makes them happen now
    if not simulated:
        cuda.current_context().deallocations.clear()
    mark()
    return [(b - a) * 1e3 for a, b in zip(marks, marks[1:])], h_out


def square_host_steps(elements: int = 1 << 24, threads_per_block: int = 256,
                      reps: int = 3) -> HostSteps:
    """Allocate, copy in, launch, copy out, free — each timed on the host clock, the median of
    `reps` passes after one warm-up pass (which compiles the kernel and creates the context)."""
    spec = get_kernel("square_numba")
    status = backend_status(spec)
    if not status.ok:
        raise UserError(f"square_numba: {status.reason}")
    from kernels.bodies.numba_kernels import SIMULATED, cuda, square_kernel

    spec.check_block(threads_per_block)
    if SIMULATED:
        elements = min(elements, spec.cpu_max_elements)
    # pageable host memory, as in the article
    h_in = np.random.default_rng().random(elements, dtype=np.float32) * 2 - 1
    _five_steps(cuda, square_kernel, h_in[: min(elements, 1024)], threads_per_block, SIMULATED)
    passes = [_five_steps(cuda, square_kernel, h_in, threads_per_block, SIMULATED)
              for _ in range(reps)]
    durations = [statistics.median(p[0][i] for p in passes) for i in range(len(STEP_NAMES))]
    ref = h_in.astype(np.float64) ** 2
    correct = all(np.allclose(p[1], ref, rtol=1e-6, atol=0) for p in passes)
    steps, t = [], 0.0
    for name, d in zip(STEP_NAMES, durations):
        steps.append(HostStep(name, t, d, name == "launch"))
        t += d
    method = (f"host clock (perf_counter), synchronize after each step, median of {reps} passes, "
              "pageable host memory" + ("" if status.is_gpu else
                                        f"; on the CPU ({status.mode}): NOT a GPU timing"))
    return HostSteps(elements, threads_per_block, tuple(steps), t, correct, status.is_gpu, method)


# --------------------------------------------------------------------------------------------
# The window runs these in its kernel host process (kernels.host.process), on the host's main thread, as
# the command line does: inside a worker thread of the window torch.compile did not finish on the
# H200, and the window stopped answering.
EXPERIMENTS = {"count_kernels": count_kernels, "launch_vs_finish": launch_vs_finish,
               "square_host_steps": square_host_steps}
