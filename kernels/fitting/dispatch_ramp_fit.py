"""How fast the H200 starts blocks of real kernels, read off recorded traces, and the fit of the
dispatch profile's per-warp start interval (`sm_interval_warp_us`) on ONE trace. No GPU needed:

    python3 -m kernels.fitting.dispatch_ramp_fit --describe   # what the traces show (table below)
    python3 -m kernels.fitting.dispatch_ramp_fit              # fit on FIT, print FIT and TEST rows
    python3 -m kernels.fitting.dispatch_ramp_fit --write      # ... and write it to resources/physics/H200.json

(Not written today: the fitted 0.0157 us over-predicts held-out kernel times, NOTES-dispatch.md.)

What is measured per trace (steady state: starts between 20% and 80% of the makespan):
- the per-SM start rate (blocks per us per SM) and its inverse, the interval, per block and per warp;
- blocks resident per SM = rate x median stamped block time (Little's law), against the slots;
- the first wave: when 50%, 90% and all of its blocks had started, from the first stamp.

The split, fixed before any score with the new number (benchmarks/NOTES-dispatch.md):
FIT = tests/data/h200_kernel_files_more_heldout stencil_numba_n20 (the Numba stencil, 8-warp blocks, 2^20);
TEST = everything else: h200_kernel_files_more_heldout's other 14 traces (its stencil at 2^24 and
2^26), all of tests/data/h200_kernel_files_heldout (fit_launch.py's TEST; its stencil_numba_n20
is the FIT launch recorded again, its n24 is not), tests/data/h200_memory_kernels_fit, the spin sets
(kernels.fitting.dispatch_score) and fit_launch.py's TEST.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

import sim.schedule.dispatch_profile as dp  # noqa: E402
from kernels.declare.kernel_file import with_declared_chain  # noqa: E402
from sim.rules.devices import preset  # noqa: E402
from sim.traces.compare import compare_trace, launch_of_trace  # noqa: E402
from sim.traces.trace_bundle import load_bundle  # noqa: E402

DATA = ROOT / "tests" / "data"
RUN_J = DATA / "h200_kernel_files_more_heldout"
FIT = (RUN_J, "stencil_numba_n20")
TEST = ((RUN_J, None), (DATA / "h200_kernel_files_heldout", None),
        (DATA / "h200_memory_kernels_fit", None))
RANGE_US = (0.0, 0.05)  # bisection bounds of the per-warp interval
BUILTIN = dp.BUILTIN_DIR / "H200.json"


def steady_starts(trace) -> dict:
    """The recorded per-SM start rate in the launch's middle, and its first wave's fill."""
    gpu = preset("H200")
    launch = launch_of_trace(trace, gpu)
    t0 = trace.start_us.min()
    start, end = trace.start_us - t0, trace.end_us - t0
    span = float(end.max())
    middle = (start > 0.2 * span) & (start < 0.8 * span)
    rate = middle.sum() / (0.6 * span) / gpu.sm_count  # blocks per us per SM
    block_us = float(np.median(end - start))
    slots = gpu.sm_count * launch.blocks_per_sm
    first = np.sort(start)[:min(slots, start.size)]
    return {"warps": launch.warps_per_block, "blocks_per_sm": launch.blocks_per_sm,
            "blocks": int(start.size), "block_us": block_us, "rate": float(rate),
            "interval_ns": 1e3 / rate if rate else float("inf"),
            "resident_per_sm": rate * block_us,
            "fill_us": tuple(float(first[min(first.size - 1, int(q * first.size))])
                             for q in (0.5, 0.9, 1.0))}


def describe() -> None:
    print(f"{'trace':36s} {'w':>2s} {'slots':>5s} {'block':>6s} {'rate/SM':>8s} {'ns/blk':>7s} "
          f"{'ns/warp':>7s} {'res/SM':>6s}  first wave 50/90/100% (us)")
    for folder, _ in TEST:
        for name, trace in load_bundle(folder).items():
            if len(trace.block) < 4 * 132:  # under ~half a wave per SM: no steady state
                continue
            s = steady_starts(trace)
            print(f"{folder.name + '/' + name:36s} {s['warps']:2d} {s['blocks_per_sm']:5d} "
                  f"{s['block_us']:6.2f} {s['rate']:8.2f} {s['interval_ns']:7.0f} "
                  f"{s['interval_ns'] / s['warps']:7.1f} {s['resident_per_sm']:6.1f}  "
                  + "/".join(f"{x:.2f}" for x in s["fill_us"]))


@contextlib.contextmanager
def warp_interval(value_us: float):
    """Every H200 prediction with the profile's per-warp start interval set to `value_us`."""
    real = dp.profile_for
    base = real("H200")
    trial = replace(base, params=replace(base.params, sm_interval_warp_us=value_us))
    dp.profile_for = lambda name, folders=None: trial if dp.gpu_key(name) == "H200" \
        else real(name, folders)
    try:
        yield
    finally:
        dp.profile_for = real


def compare(folder: Path, name: str):
    return compare_trace(with_declared_chain(load_bundle(folder)[name]))


def fit() -> float:
    """The per-warp interval at which the FIT trace's predicted makespan meets the recorded one."""
    lo, hi = RANGE_US
    for _ in range(14):
        mid = (lo + hi) / 2
        with warp_interval(mid):
            err = compare(*FIT).makespan_error
        lo, hi = (mid, hi) if err < 0 else (lo, mid)
    return round((lo + hi) / 2, 4)


def row(c) -> str:
    peak = c.simulated_median_peak_blocks_per_sm - c.recorded_median_peak_blocks_per_sm
    ok = abs(c.makespan_error) <= 0.10 and abs(peak) <= 1 and c.residency_error <= 0.15
    return (f"makespan {c.makespan_error:+6.1%} peak {c.recorded_median_peak_blocks_per_sm:g}/"
            f"{c.simulated_median_peak_blocks_per_sm:g} residency {c.residency_error:.3f} "
            f"{'ok' if ok else 'MISS'}")


def write(value_us: float) -> None:
    profile = dp.load_profile(BUILTIN)
    note = (f"; sm_interval_warp_us {value_us} from python3 -m kernels.fitting.dispatch_ramp_fit --write "
            "(2026-12-02) on ONE trace, tests/data/h200_kernel_files_more_heldout stencil_numba_n20 (the Numba "
            "stencil's 8-warp blocks, recorded on the H200 on 2026-12-02); every other real-kernel "
            "trace held out: benchmarks/NOTES-dispatch.md")
    source = profile.source.split("; sm_interval_warp_us ")[0] + note
    dp.save_profile(BUILTIN, replace(profile, source=source,
                                     params=replace(profile.params, sm_interval_warp_us=value_us)))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--describe", action="store_true", help="only what the traces show")
    p.add_argument("--write", action="store_true", help="write the fitted value")
    args = p.parse_args(argv)
    if args.describe:
        describe()
        return 0
    value = fit()
    print(f"sm_interval_warp_us = {value} us (FIT: {FIT[0].name}/{FIT[1]})")
    for label, v in (("before (off)", 0.0), ("after", value)):
        with warp_interval(v):
            print(f"  FIT  {label:12s} {FIT[1]:28s} {row(compare(*FIT))}")
            for folder, _ in TEST:
                for name in load_bundle(folder):
                    if "stencil" in name and (folder, name) != FIT:
                        print(f"  TEST {label:12s} {folder.name + '/' + name:28s} "
                              f"{row(compare(folder, name))}")
    if args.write:
        write(value)
        print(f"written to {BUILTIN}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
