"""One launch timed six ways, each record saying what that way really measures.

Only the first is the kernel's own GPU time with its inputs in DRAM (the harness's default). The
others are the traps people fall into, measured rather than described: no L2 flush (small inputs
come from the cache), a host clock that stops when the launch call returns (the CPU's launch,
not the GPU's work), a host clock around launch and synchronize (adds the launch and the sync),
events around a lone launch on an idle GPU (adds the launch gap), and many launches back to back
between one event pair (hides the launch cost, keeps the L2 warm).

Without a GPU there are no device events: those methods come back with no times and a note that
says so, and the two host-clock methods time the CPU path (interpreter or simulator), where a
launch runs the whole kernel before it returns. Every such record has ``is_gpu_timing=False``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

from sim.inputs.errors import UserError

from kernels.measure.timing import FLUSH_MIN_BYTES, bandwidth_gbps, summarize, time_gpu


@dataclass(frozen=True, slots=True)
class TimingMethod:
    id: str
    label: str
    measures: str  # what it measures on a GPU, in one plain sentence
    device_events: bool  # needs CUDA events (a GPU)


METHODS: tuple[TimingMethod, ...] = (
    TimingMethod("events_flushed", "device events, L2 flushed",
                 "The kernel's own GPU time with its inputs coming from DRAM: the L2 is flushed "
                 "and a spin kernel queued before each launch, so the start event fires only when "
                 "the GPU reaches it.", True),
    TimingMethod("events_no_flush", "device events, not flushed",
                 "The kernel's GPU time with whatever the previous run left in the L2: inputs that "
                 "fit in the cache are read from it, so small sizes look faster than the DRAM "
                 "can be.", True),
    TimingMethod("host_launch_returned", "host clock, launch returned",
                 "How long the CPU takes to queue the launch: the call returns before the GPU "
                 "has done any of the work.", False),
    TimingMethod("host_synchronized", "host clock, with synchronize",
                 "The launch call, the GPU's work and the synchronize that waits for it, end to "
                 "end on the CPU's clock.", False),
    TimingMethod("events_lone_launch", "device events, lone launch",
                 "Events around one launch on an idle GPU: the start event fires at once, so the "
                 "CPU's launch call (the launch gap) is timed along with the kernel.", True),
    TimingMethod("events_back_to_back", "device events, back to back",
                 "Many launches between one event pair, divided by their number: per launch, "
                 "the larger of the kernel's time and the CPU's launch rate, with the L2 warm "
                 "from the launch before.", True),
)
METHOD_IDS = tuple(m.id for m in METHODS)
_BY_ID = {m.id: m for m in METHODS}


@dataclass(frozen=True, slots=True)
class TimingRecord:
    method: str  # one of METHOD_IDS
    label: str
    measures: str
    kernel: str
    elements: int
    median_us: float | None  # None: not measured here (see note)
    p20_us: float | None
    p80_us: float | None
    bandwidth_gbps: float | None  # bytes moved / median, whatever the method measured
    reps: int  # timings the quantiles are over (back to back: groups of launches)
    is_gpu_timing: bool
    note: str  # "" for a GPU timing; otherwise what it is instead, or why it is missing


def method(method_id: str) -> TimingMethod:
    try:
        return _BY_ID[method_id]
    except KeyError:
        raise UserError(f"unknown timing method {method_id!r}; known: "
                        f"{', '.join(METHOD_IDS)}") from None


def time_methods(fn: Callable[[], object], bytes_moved: int, *, on_gpu: bool, kernel: str = "",
                 elements: int = 0, methods: Sequence[str] = METHOD_IDS, reps: int = 50,
                 flush_bytes: int = FLUSH_MIN_BYTES,
                 cpu_mode: str = "CPU") -> tuple[TimingRecord, ...]:
    """Time launches of `fn` with each of `methods` (ids of METHODS), in that order.

    `fn` must already have run once (compiled). `cpu_mode` names the CPU path ("interpreter",
    "simulator", "cpu") for the notes of records made without a GPU."""
    chosen = [method(m) for m in methods]
    if reps < 1:
        raise ValueError("reps must be at least 1")
    out = []
    for m in chosen:
        if on_gpu:
            times_ms = _GPU[m.id](fn, reps, flush_bytes)
            note = ""
        elif m.device_events:
            out.append(TimingRecord(m.id, m.label, m.measures, kernel, int(elements), None, None,
                                    None, None, 0, False,
                                    f"not measured: device events need a CUDA GPU ({cpu_mode} "
                                    "here)"))
            continue
        else:
            times_ms = _host_times(fn, min(reps, 3), sync=None, before=None)
            note = (f"not a GPU timing: on the CPU path ({cpu_mode}) a launch runs the whole "
                    "kernel before it returns")
        med, p20, p80 = summarize(times_ms)
        out.append(TimingRecord(m.id, m.label, m.measures, kernel, int(elements), med * 1e3,
                                p20 * 1e3, p80 * 1e3,
                                bandwidth_gbps(bytes_moved, med) if med > 0 else None,
                                len(times_ms), on_gpu, note))
    return tuple(out)


def time_kernel_methods(kernel: str, elements: int, block: int | None = None,
                        num_warps: int | None = None, *, gpu=None,
                        methods: Sequence[str] = METHOD_IDS,
                        reps: int = 50) -> tuple[TimingRecord, ...]:
    """A registry kernel at one size, checked against float64 once, then timed each way. On the
    CPU path the size is capped at the kernel's `cpu_max_elements` (the record says the size
    it ran)."""
    from kernels.measure.harness import (backend_status, bind, block_setting, compare, first_run, make_arrays,
                          reference_of, result_of)
    from kernels.declare.registry import get_kernel
    from kernels.measure.timing import flush_bytes_for

    spec = get_kernel(kernel)
    status = backend_status(spec)
    if not status.ok:
        raise UserError(f"{spec.name}: {spec.backend} cannot run here: {status.reason}")
    if not spec.benchable:
        raise UserError(f"{spec.name} is not a kernel with a throughput to time")
    on_gpu = status.is_gpu
    n = int(elements) if on_gpu else min(int(elements), spec.cpu_max_elements)
    flush_bytes = flush_bytes_for(gpu.l2_bytes if gpu is not None else None)
    inputs, out = make_arrays(spec, n, on_gpu, extra_bytes=flush_bytes if on_gpu else 0)
    launch = bind(spec, inputs, out, n, block_setting(spec, block, num_warps), gpu)
    first_run(spec, launch)
    acc = compare(result_of(launch, out), reference_of(spec, inputs))
    if not acc.ok:
        raise UserError(f"{spec.name} at {n:,} elements gave wrong results: {acc.detail}")
    return time_methods(launch.run, spec.bytes_moved(n, (*inputs, out)), on_gpu=on_gpu,
                        kernel=spec.name, elements=n, methods=methods, reps=reps,
                        flush_bytes=flush_bytes, cpu_mode=status.mode)


# --------------------------------------------------------------------------------------------
# The ways, on a GPU (torch owns the events and the flush buffer)
# --------------------------------------------------------------------------------------------
def _host_times(fn, reps: int, sync, before) -> list[float]:
    """Host-clock ms of each launch; `before` runs (and is waited for) outside the clock;
    `sync` (if given) is inside it."""
    times = []
    for _ in range(reps):
        if before is not None:
            before()
        t0 = time.perf_counter()
        fn()
        if sync is not None:
            sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def _flush_then_idle(flush_bytes: int):
    """Zero the flush buffer (evicts the L2) and wait, so the GPU is idle at the launch."""
    import torch

    cache = torch.empty(flush_bytes, dtype=torch.int8, device="cuda")

    def before():
        cache.zero_()
        torch.cuda.synchronize()

    return before


def _events_flushed(fn, reps, flush_bytes):
    return time_gpu(fn, reps=reps, flush_bytes=flush_bytes, ahead="flush")


def _events_no_flush(fn, reps, flush_bytes):
    return time_gpu(fn, reps=reps, ahead="spin")


def _host_launch_returned(fn, reps, flush_bytes):
    import torch

    before = _flush_then_idle(flush_bytes)
    times = _host_times(fn, reps, sync=None, before=before)
    torch.cuda.synchronize()
    return times


def _host_synchronized(fn, reps, flush_bytes):
    import torch

    return _host_times(fn, reps, sync=torch.cuda.synchronize,
                       before=_flush_then_idle(flush_bytes))


def _events_lone_launch(fn, reps, flush_bytes):
    import torch

    before = _flush_then_idle(flush_bytes)
    times = []
    for _ in range(reps):
        before()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return times


BACK_TO_BACK_MS = 2.0  # each group of launches spans about this much GPU time
BACK_TO_BACK_GROUPS = 10


def _events_back_to_back(fn, reps, flush_bytes):
    import torch

    est = time_gpu(fn, reps=3, ahead="spin", warmup_ms=2.0, rep_ms=2.0)
    per_launch_ms = max(sorted(est)[len(est) // 2], 1e-3)
    n = min(500, max(10, int(BACK_TO_BACK_MS / per_launch_ms)))
    times = []
    for _ in range(min(reps, BACK_TO_BACK_GROUPS)):
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(n):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / n)
    return times


_GPU = {"events_flushed": _events_flushed, "events_no_flush": _events_no_flush,
        "host_launch_returned": _host_launch_returned, "host_synchronized": _host_synchronized,
        "events_lone_launch": _events_lone_launch, "events_back_to_back": _events_back_to_back}
assert set(_GPU) == set(METHOD_IDS)
