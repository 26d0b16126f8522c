"""The launch model's per-GPU constants, measured on this GPU for `main.py calibrate`.

Each probe times one thing apart from the others, with CUDA events (kernels.measure.timing):

- ``trip_overhead_ns``: 2^18 idle 256-thread blocks held to one per SM by unused dynamic shared
  memory: a block slot's turn (the launch's time over the blocks each slot runs) less the one
  start at the SM's dispatcher that the loaded model counts as its own station (the dispatch
  profile's `sm_interval_us`);
- ``copy_fraction``: torch's device-to-device copy of arrays far past the L2, over the GPU's
  rated DRAM bandwidth (the model's achievable ceiling);
- ``dram_latency_ns``: one thread chasing pointers through cache lines in random order, the L2
  flushed before each run (kernels.bodies.latency_kernels); the time per hop is the slope
  between two chain lengths, so the launch's own time drops out;
- ``l2_latency_ns``: the same chase over a region a tenth of the L2, warm;
- ``l2_gbps``: copies of arrays that fit in the L2 together, warm, at two sizes: the bytes
  between them over the time between them, so the launch's own time drops out.

Not measured here: the launch overhead. The model's is the start event to the first block plus the
drain after the last of a real kernel, fitted on kernel times; the events around an idle launch
(3.5 us on an H200, 3.9 on an H100) are another quantity, and put in its place they made held-out
kernel times worse (an H200's 112 -> 99 of 120 within 10%), so the GPU's stored figure stays.

Each result is a sim.rules.physics.Constant labelled "calibrated on <GPU>" with the date and the
command, the form the user's per-GPU file keeps it in (sim.rules.physics.calibrated_constants).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from statistics import median

from sim.rules.physics import CALIBRATED, MODEL_CONSTANTS, Constant

CHASE_HOPS = (2048, 8192)  # two chain lengths: the slope between them is the time per hop
PROBES = ("copy_fraction", "dram_latency_ns", "l2_latency_ns", "l2_gbps", "trip_overhead_ns")


def _events_ms(fn: Callable[[], object], *, flush_l2: bool, reps: int = 20) -> float:
    from kernels.measure.timing import time_gpu

    return median(time_gpu(fn, reps=reps, flush_l2=flush_l2))


def trip_overhead_ns(gpu, dispatch_ns: float) -> float:
    import torch

    from kernels.bodies.latency_kernels import idle_block_kernel
    from kernels.bodies.numba_kernels import device_arrays
    from kernels.measure.occupancy_probe import padded_launch

    threads, grid = 256, 1 << 18
    (out,) = device_arrays((torch.empty(grid * threads, device="cuda"),))
    launch = padded_launch(idle_block_kernel, (out, 0), grid, threads, gpu, 1)
    slots = launch.predicted.blocks_per_sm * gpu.sm_count
    return _events_ms(launch.run, flush_l2=False) * 1e6 * slots / grid - dispatch_ns


def copy_fraction(gpu) -> float:
    import torch

    free, _ = torch.cuda.mem_get_info()
    nbytes = min(1 << 30, max(8 * gpu.l2_bytes, 1 << 26), free // 4)
    src = torch.ones(nbytes // 4, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    ms = _events_ms(lambda: dst.copy_(src), flush_l2=True)
    return 2 * nbytes / (ms * 1e6) / gpu.peak_dram_gbps


def l2_gbps(gpu) -> float:
    import torch

    sizes = (max(1 << 18, gpu.l2_bytes // 32), max(1 << 20, gpu.l2_bytes // 5))  # bytes per array
    times = []
    for nbytes in sizes:
        src = torch.ones(nbytes // 4, dtype=torch.float32, device="cuda")
        dst = torch.empty_like(src)
        times.append(_events_ms(lambda: dst.copy_(src), flush_l2=False))
    return 2 * (sizes[1] - sizes[0]) / ((times[1] - times[0]) * 1e6)


def _chase_ns(region_bytes: int, flush_l2: bool) -> float:
    from kernels.bodies.latency_kernels import chase_array, chase_kernel

    times = []
    for hops in CHASE_HOPS:
        nxt, out = chase_array(region_bytes, hops)
        times.append(_events_ms(lambda: chase_kernel[1, 1](nxt, hops, out), flush_l2=flush_l2,
                                reps=5))
    return (times[1] - times[0]) * 1e6 / (CHASE_HOPS[1] - CHASE_HOPS[0])


def dram_latency_ns(gpu) -> float:
    return _chase_ns(max(1 << 26, 4 * gpu.l2_bytes), flush_l2=True)


def l2_latency_ns(gpu) -> float:
    region = max(gpu.l2_bytes // 10, 2 * CHASE_HOPS[1] * 128)
    return _chase_ns(region, flush_l2=False)


MEASURE = {"copy_fraction": copy_fraction,
           "dram_latency_ns": dram_latency_ns, "l2_latency_ns": l2_latency_ns, "l2_gbps": l2_gbps}
PLAUSIBLE = {"copy_fraction": (0.2, 1.05), "trip_overhead_ns": (1, 2000),
             "dram_latency_ns": (50, 5000), "l2_latency_ns": (10, 2000), "l2_gbps": (100, 1e5)}


def measure_constants(gpu, command: str, say: Callable[[str], None] = print,
                      measure: dict | None = None, date: str | None = None) -> tuple[dict, list]:
    """({name: Constant} of every probe that gave a plausible number, [(name, why not)]).
    `measure` maps names to functions of the GPU (tests pass fakes)."""
    date = date or datetime.date.today().isoformat()
    got, failed = {}, []
    for name, probe in (MEASURE if measure is None else measure).items():
        try:
            value = float(probe(gpu))
        except Exception as exc:  # noqa: BLE001 - one probe failing keeps the preset's figure
            failed.append((name, f"{type(exc).__name__}: {exc}"))
            say(f"{name}: FAILED {exc}")
            continue
        lo, hi = PLAUSIBLE[name]
        if not lo <= value <= hi:
            failed.append((name, f"{value:.4g} is outside {lo:g}..{hi:g}"))
            say(f"{name}: {value:.4g} is not plausible; the stored figure stays")
            continue
        got[name] = Constant(round(value, 4), MODEL_CONSTANTS[name], "measured",
                             f"{CALIBRATED}{gpu.name}", date, command)
        say(f"{name}: {value:.4g} {MODEL_CONSTANTS[name]}")
    return got, failed
