"""Fit the loaded latency model (sim.model.latency.predict_loaded) on part of the H200's forced-occupancy
sweep and report its error on the rest.

    .venv/bin/python benchmarks/latency_fit.py [--json resources/measured/H200_latency.json]

A block trip's overhead (neither DRAM latency nor queueing) is a fixed part plus a cost per input
array past the first (sim.model.latency.TripCosts). The fixed part is measured in the same run, not
fitted: the idle block's slot turn at 1 block/SM less its one start at the dispatcher (the network
counts that start as its own station). Two constants are fitted (a grid search, least squares of
the relative error): the cost per extra input array (`load_ns`; every row's kernel loads two
arrays, x and y) and the launch's start and drain (`launch_us`). Everything else is measured in
the same run: the DRAM latency (pointer chase, 64 MiB), the block dispatch interval (idle
blocks), the copy ceiling. Splits:

- "2^24 -> 2^26" (the one resources/physics/H200.json's trip_load_ns comes from): fit on every 2^24 row, report the 2^26 rows;
- "fast add -> naive add": fit on the four-per-thread add only, report the naive add.

Plain Little's law with the unloaded latency (sim.model.latency.bandwidth_at_occupancy) is shown beside it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.rules.devices import GpuSpec, preset  # noqa: E402
from sim.model.latency import BlockTrip, TripCosts, bandwidth_at_occupancy, predict_loaded  # noqa: E402
from sim.traces.latency_data import (CHECKED_IN, ELEMENTS_PER_THREAD, LatencyRun,  # noqa: E402
                              OccupancyRow, load_latency_run)

LOAD_NS = np.arange(0.0, 300.0, 5.0)
LOADS = 2  # both kernels of the run (add_numba, add_numba_naive) load x and y
LAUNCHES_US = np.arange(0.0, 10.0, 0.2)


def trip(row: OccupancyRow) -> BlockTrip:
    return BlockTrip(row.threads, row.elements_per_thread, loads=LOADS)


def fixed_overhead_ns(path, dispatch_ns: float) -> float:
    """The idle 256-thread block's slot turn at 1 block/SM less its dispatch: what a trip costs
    besides DRAM, queueing and its loads (measured, not fitted)."""
    idle = json.loads(Path(path).read_text())["calibration"]["idle_blocks"]
    turn = next(c["slot_turn_ns"] for c in idle if c.get("target_blocks_per_sm") == 1)
    return turn - dispatch_ns


def run_gpu(run: LatencyRun) -> tuple[GpuSpec, float]:
    """The H200 preset with the run's chase as its latency; the run's dispatch in cycles."""
    gpu = dataclasses.replace(preset("H200"), dram_latency_ns=run.dram_latency_ns)
    return gpu, run.dispatch_ns * gpu.clock_mhz / 1e3


@dataclasses.dataclass(frozen=True)
class FitCosts:
    """What this fit searches: the steady MVA's trip costs, and a launch time added to the
    steady stream (the fit of 2026-12-01; the launch model, sim.model.launch_model, schedules the
    ramp and tail itself and takes its launch overhead from resources/physics)."""
    trip: TripCosts
    launch_us: float

    @property
    def overhead_ns(self) -> float:
        return self.trip.overhead_ns(LOADS)


def loaded(gpu, row: OccupancyRow, costs: FitCosts) -> float:
    steady = predict_loaded(gpu, row.blocks_per_sm, trip(row), ceiling_gbps=CEILING[0],
                            costs=costs.trip).steady_gbps
    total = row.elements * trip(row).bytes_per_element
    return total / (costs.launch_us * 1e3 + total / steady)


def little(gpu, row: OccupancyRow) -> float:
    t = trip(row)
    return bandwidth_at_occupancy(gpu, row.blocks_per_sm, t.threads // 32, t.load_bytes_in_flight_per_thread / 4,
                   4, ceiling_gbps=CEILING[0],
                   bytes_moved_per_byte_loaded=t.bytes_moved_per_byte_loaded).bandwidth_gbps


CEILING = [0.0]  # the run's copy ceiling (set in main)


def errors(gpu, rows, costs) -> np.ndarray:
    return np.array([loaded(gpu, r, costs) / r.gbps - 1 for r in rows])


def fit(gpu, rows, dispatch_cycles: float, fixed_ns: float):
    best = None
    for load in LOAD_NS:
        for launch in LAUNCHES_US:
            costs = FitCosts(TripCosts(fixed_ns, dispatch_cycles / gpu.clock_mhz * 1e3, "fit",
                                       float(load)), float(launch))
            rms = float(np.sqrt(np.mean(errors(gpu, rows, costs) ** 2)))
            if best is None or rms < best[0]:
                best = (rms, costs)
    return best


def table(gpu, rows, costs) -> str:
    lines = ["| kernel | n | threads | blocks/SM | measured GB/s | loaded model | error | "
             "Little (unloaded) | error |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        m, p = loaded(gpu, r, costs), little(gpu, r)
        lines.append(f"| {r.kernel} | 2^{r.elements.bit_length() - 1} | {r.threads} | "
                     f"{r.blocks_per_sm} | {r.gbps:,.0f} | {m:,.0f} | "
                     f"{m / r.gbps - 1:+.1%} | {p:,.0f} | {p / r.gbps - 1:+.1%} |")
    return "\n".join(lines)


def summary(gpu, name, rows, costs) -> str:
    e = errors(gpu, rows, costs)
    lit = np.array([little(gpu, r) / r.gbps - 1 for r in rows])
    return (f"{name}: {len(rows)} rows, loaded model rms {np.sqrt(np.mean(e ** 2)):.1%}, "
            f"max |error| {np.abs(e).max():.1%}; plain Little's law rms "
            f"{np.sqrt(np.mean(lit ** 2)):.1%}, max {np.abs(lit).max():.1%}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=str(CHECKED_IN))
    args = ap.parse_args(argv)
    run = load_latency_run(args.json)
    gpu, dispatch_cycles = run_gpu(run)
    CEILING[0] = run.copy_ceiling_gbps
    rows = list(run.occupancy)
    fixed = fixed_overhead_ns(args.json, run.dispatch_ns)
    print(f"{run.source()}: DRAM latency (chase) {run.dram_latency_ns:.1f} ns; dispatch "
          f"{dispatch_cycles:.1f} cycles ({run.dispatch_ns:.1f} ns); copy ceiling "
          f"{run.copy_ceiling_gbps:,.0f} GB/s; fixed trip overhead (idle turn - dispatch) "
          f"{fixed:.1f} ns")
    splits = {"2^24 -> 2^26": (lambda r: r.elements == 2**24, lambda r: r.elements == 2**26),
              "fast add -> naive add": (lambda r: r.kernel == "add_numba",
                                        lambda r: r.kernel == "add_numba_naive")}
    for name, (train, test) in splits.items():
        rms, costs = fit(gpu, [r for r in rows if train(r)], dispatch_cycles, fixed)
        print(f"\n## {name}: fitted load_ns={costs.trip.load_ns:.0f} (overhead at {LOADS} loads "
              f"{costs.overhead_ns:.0f} ns), "
              f"launch_us={costs.launch_us:.1f} (fit rms {rms:.1%})")
        print(summary(gpu, "fitted on", [r for r in rows if train(r)], costs))
        held = [r for r in rows if test(r)]
        print(summary(gpu, "held out", held, costs))
        for kernel in ELEMENTS_PER_THREAD:
            sub = [r for r in held if r.kernel == kernel]
            if sub:
                print(summary(gpu, f"  held out, {kernel}", sub, costs))
        if name.startswith("2^24"):
            print()
            print(table(gpu, [r for r in held if r.round == 1], costs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
