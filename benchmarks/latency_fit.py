"""Fit the loaded latency model (sim.latency.predict_loaded) on part of the H200's forced-occupancy
sweep and report its error on the rest.

    .venv/bin/python benchmarks/latency_fit.py [--json benchmarks/latency_h200.json]

Two constants are fitted (a grid search, least squares of the relative error): the overhead of a
block's trip that is neither DRAM latency nor queueing (`overhead_ns`), and the launch's start and
drain (`launch_us`). Everything else is measured in the same run: the DRAM latency (pointer chase,
64 MiB), the block dispatch interval (idle blocks), the copy ceiling. Splits:

- "2^24 -> 2^26" (the one sim.latency.H200_TRIP uses): fit on every 2^24 row, report the 2^26 rows;
- "fast add -> naive add": fit on the four-per-thread add only, report the naive add.

Plain Little's law with the unloaded latency (sim.latency.predict) is shown beside it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.devices import GpuSpec, preset  # noqa: E402
from sim.latency import H200_TRIP, BlockTrip, predict, predict_loaded  # noqa: E402

HERE = Path(__file__).resolve().parent
ELEMENTS_PER_THREAD = {"add_numba_naive": 1, "add_numba": 4}
OVERHEADS_NS = np.arange(0.0, 400.0, 5.0)
LAUNCHES_US = np.arange(0.0, 10.0, 0.2)


@dataclasses.dataclass(frozen=True)
class Row:
    kernel: str
    elements: int
    threads: int
    blocks_per_sm: int
    round: int
    measured_gbps: float
    ceiling_gbps: float  # the run's copy ceiling at its largest size (the steady state)

    @property
    def trip(self) -> BlockTrip:
        return BlockTrip(self.threads, ELEMENTS_PER_THREAD[self.kernel])


def load_rows(data: dict) -> list[Row]:
    """Forced-occupancy rows (the unpadded launches are the controls, left out)."""
    ceiling = max(p["gbps"] for p in data["occupancy"]["peers"] if p["kernel"] == "copy_torch")
    return [Row(r["kernel"], r["elements"], r["threads"], r["driver_blocks_per_sm"], r["round"],
                r["gbps"], ceiling)
            for r in data["occupancy"]["rows"] if r["target_blocks_per_sm"] is not None]


def run_gpu(data: dict) -> tuple[GpuSpec, float, float]:
    """The H200 preset with this run's chase as its latency; and the run's dispatch interval."""
    chase = min(c["median_ns"] for c in data["calibration"]["dram_latency"])
    idle = next(c for c in data["calibration"]["idle_blocks"] if c["target_blocks_per_sm"] == 8)
    gpu = dataclasses.replace(preset("H200"), dram_latency_ns=chase)
    dispatch_ns = gpu.sm_count / idle["blocks_per_us"] * 1e3
    return gpu, chase, dispatch_ns * gpu.clock_mhz / 1e3


def loaded(gpu, row: Row, costs) -> float:
    return predict_loaded(gpu, row.blocks_per_sm, row.trip, ceiling_gbps=row.ceiling_gbps,
                          costs=costs, elements=row.elements).bandwidth_gbps


def little(gpu, row: Row) -> float:
    t = row.trip
    return predict(gpu, row.blocks_per_sm, t.threads // 32, t.load_bytes_in_flight_per_thread / 4,
                   4, ceiling_gbps=row.ceiling_gbps,
                   bytes_moved_per_byte_loaded=t.bytes_moved_per_byte_loaded).bandwidth_gbps


def errors(gpu, rows, costs) -> np.ndarray:
    return np.array([loaded(gpu, r, costs) / r.measured_gbps - 1 for r in rows])


def fit(gpu, rows, dispatch_cycles: float):
    best = None
    for overhead in OVERHEADS_NS:
        for launch in LAUNCHES_US:
            costs = dataclasses.replace(H200_TRIP, overhead_ns=float(overhead),
                                        launch_us=float(launch), dispatch_cycles=dispatch_cycles)
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
                     f"{r.blocks_per_sm} | {r.measured_gbps:,.0f} | {m:,.0f} | "
                     f"{m / r.measured_gbps - 1:+.1%} | {p:,.0f} | {p / r.measured_gbps - 1:+.1%} |")
    return "\n".join(lines)


def summary(gpu, name, rows, costs) -> str:
    e = errors(gpu, rows, costs)
    lit = np.array([little(gpu, r) / r.measured_gbps - 1 for r in rows])
    return (f"{name}: {len(rows)} rows, loaded model rms {np.sqrt(np.mean(e ** 2)):.1%}, "
            f"max |error| {np.abs(e).max():.1%}; plain Little's law rms "
            f"{np.sqrt(np.mean(lit ** 2)):.1%}, max {np.abs(lit).max():.1%}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=str(HERE / "latency_h200.json"))
    args = ap.parse_args(argv)
    data = json.loads(Path(args.json).read_text())
    gpu, chase, dispatch_cycles = run_gpu(data)
    rows = load_rows(data)
    print(f"DRAM latency (chase) {chase:.1f} ns; dispatch {dispatch_cycles:.1f} cycles "
          f"({dispatch_cycles / gpu.clock_mhz * 1e3:.1f} ns); copy ceiling "
          f"{rows[0].ceiling_gbps:,.0f} GB/s")
    splits = {"2^24 -> 2^26": (lambda r: r.elements == 2**24, lambda r: r.elements == 2**26),
              "fast add -> naive add": (lambda r: r.kernel == "add_numba",
                                        lambda r: r.kernel == "add_numba_naive")}
    for name, (train, test) in splits.items():
        rms, costs = fit(gpu, [r for r in rows if train(r)], dispatch_cycles)
        print(f"\n## {name}: fitted overhead_ns={costs.overhead_ns:.0f}, "
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
