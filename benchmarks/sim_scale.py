"""How long the block scheduler takes for big grids on 132 SMs (target: 1,000,000 blocks <= 1 s).

    .venv/bin/python benchmarks/sim_scale.py

Uniform and memory-bound block durations, 128-thread blocks at 32 registers (16 blocks per SM on
an H200, 2,112 block slots). Prints the median of 5 runs per size and the cost per block.
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.rules.devices import preset  # noqa: E402
from sim.rules.occupancy import occupancy  # noqa: E402
from sim.rules.geometry import BYTES_PER_ELEMENT_ADD  # noqa: E402
from sim.model.launch_model import Launch, TripCost  # noqa: E402
from sim.schedule.scheduler import TpcSpreadPlacement, UniformCost, simulate  # noqa: E402


def time_it(fn, repeats=5) -> float:
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> None:
    gpu = preset("H200")
    threads = 128
    occ = occupancy(gpu, threads, 32)
    print(f"{gpu.name}: {gpu.sm_count} SMs, {occ.blocks_per_sm} blocks/SM")
    print(f"{'blocks':>10} {'cost':>8} {'median s':>9} {'us/block':>9} {'waves':>6}")
    for n in (10_000, 100_000, 1_000_000):
        for label, cost in (("uniform", UniformCost(10.0)),
                            ("memory", TripCost.for_gpu(gpu, Launch(n, threads, occ.blocks_per_sm,
                                                                    BYTES_PER_ELEMENT_ADD * n * threads)))):
            result = {}
            seconds = time_it(lambda: result.setdefault("sim", simulate(gpu, n, occ, cost, TpcSpreadPlacement())))
            print(f"{n:>10,} {label:>8} {seconds:>9.3f} {seconds / n * 1e6:>9.3f} {result['sim'].waves:>6}")


if __name__ == "__main__":
    main()
