"""How long the dispatch model (sim/schedule/dispatch.py) takes for the window's biggest grid: 150,000
blocks per slider change (gui/models/simulation.py MAX_SIM_BLOCKS; target: under ~1 s).

    python3 benchmarks/dispatch_scale.py

Busy-spinning blocks of 1..16 warps, 1..100 us, on the H200 with its profile; CPU seconds (the
process's own time: this machine is shared), median of 3 runs, and the makespan as a sanity check.
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.rules.devices import preset  # noqa: E402
from sim.schedule.dispatch import dispatch_schedule  # noqa: E402
from sim.schedule.dispatch_profile import builtin_profile  # noqa: E402
from sim.schedule.scheduler import TpcSpreadPlacement  # noqa: E402

CASES = [(1, 32, 5.0), (2, 32, 10.0), (4, 16, 5.0), (4, 16, 100.0), (8, 8, 1.0), (16, 4, 20.0)]


def main(n: int = 150_000) -> None:
    gpu, params = preset("H200"), builtin_profile().params
    print(f"{'warps':>5} {'blocks/SM':>9} {'block us':>8} {'blocks':>8} {'cpu s':>6} {'makespan us':>12}")
    for warps, per_sm, us in CASES:
        order = TpcSpreadPlacement().slot_order(gpu, per_sm)
        samples, end = [], None
        for _ in range(3):
            t0 = time.process_time()
            _, _, _, end = dispatch_schedule(gpu, n, per_sm, warps, us, params, "spin", order)
            samples.append(time.process_time() - t0)
        print(f"{warps:>5} {per_sm:>9} {us:>8g} {n:>8,} {statistics.median(samples):>6.2f} "
              f"{end.max():>12,.1f}")


if __name__ == "__main__":
    main()
