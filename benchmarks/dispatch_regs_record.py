"""Record a blind set of register-limited H200 traces: launches `trace --hold-regs` at settings
that tests/data/limits_h200 (where the dispatch model's register rule was fitted) does not have.

Each trace is what `python3 main.py trace --wait W --warps N --hold-regs K --spin-us T --waves X`
records (the same function, kernels.tracing.trace.record_trace, in one process so that CUDA
starts once; each trace's meta holds its own command); all go into one bundle in --out:

    PYTHONUNBUFFERED=1 python3 benchmarks/dispatch_regs_record.py --out DIR [--budget-s 75]
    python3 benchmarks/dispatch_score.py DIR                 # the issue's bar per trace
    python3 benchmarks/dispatch_regs_fit.py --blind DIR      # rule off vs on, per trace

Without a GPU every launch fails with the trace command's own message and the bundle lists them
as failed (exit status 1). `--dry-run` writes stand-in traces from sim/'s own calibrated model
instead (meta "dry_run": true): it checks the plan and the scoring commands, never the model.
The registers per thread in CONFIGS are what ptxas gave here (triton 3.7, sm_90, with
benchmarks/dispatch_sass.py's tools); each trace's meta has the real ones. --hold-regs takes
powers of two only, so 24, 48 or 56 registers per thread cannot be asked for.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# (wait, warps, hold_regs, block us, waves, registers per thread ptxas gives: only --dry-run reads
# it) and what the register rule calls each on the H200:
CONFIGS = [
    ("spin", 4, 1, 20, 3, 16), ("spin", 4, 1, 200, 3, 16),  # 50% of the file: rule off
    ("spin", 4, 2, 20, 3, 20), ("spin", 4, 2, 200, 3, 20),  # 24 allocated, 75%: off (< 0.8)
    ("spin", 4, 4, 20, 3, 26), ("spin", 4, 4, 200, 3, 26),  # 32 allocated: "full"
    ("spin", 2, 8, 20, 3, 32), ("spin", 2, 8, 200, 3, 32),  # 32 blocks of 2 warps: "full"
    ("spin", 16, 32, 20, 3, 40), ("spin", 16, 32, 200, 3, 40),  # 3 blocks, 48 warps: "registers"
    ("spin", 2, 32, 20, 3, 40), ("spin", 2, 32, 200, 3, 40),  # 24 blocks, 48 warps: "registers"
    # 32 one-warp blocks fill the file with half the warp slots, and the wait loop stays on the
    # regular datapath (at 40+ registers from hold 32 it moves to the uniform one): "registers"
    # when recorded; since the second fit (block slots full count as full slots): "full"
    ("spin", 1, 32, 20, 3, 64), ("spin", 1, 32, 200, 3, 64),
    ("spin", 8, 64, 20, 3, 80), ("spin", 8, 64, 200, 3, 80),  # 3 blocks, 24 warps: "registers"
    ("spin", 4, 16, 50, 2.5, 32), ("spin", 8, 32, 50, 2.5, 40),  # fitted launches, new times
    ("sleep", 4, 16, 20, 3, 32), ("sleep", 4, 32, 20, 3, 40),  # warps asleep: rule off
]


def simulated(wait: str, warps: int, hold: int, us: float, waves: float, regs: int,
              command: str):
    """--dry-run: a stand-in trace, the calibrated dispatch model's own schedule."""
    import numpy as np

    from kernels.launching.launch import Resources
    from kernels.tracing.trace import grid_for_waves, trace_from_stamps, trace_meta
    from sim.rules.devices import preset
    from sim.rules.occupancy import occupancy
    from sim.schedule.policies import run_schedule
    from sim.schedule.scheduler import TpcSpreadPlacement, UniformCost

    gpu, res = preset("H200"), Resources(regs, 0, 0)
    grid = grid_for_waves(gpu, waves, 32 * warps, res)
    per_sm = occupancy(gpu, 32 * warps, res.regs_per_thread).blocks_per_sm
    sim = run_schedule(gpu, grid, per_sm, warps, UniformCost(us), TpcSpreadPlacement(),
                       wait=wait, regs_per_thread=res.regs_per_thread, seed=hold)
    stamps = np.stack([sim.block_sm, np.round(sim.block_start_us * 1e3),
                       np.round(sim.block_end_us * 1e3)], 1)
    meta = trace_meta(gpu, kernel="spin-trace", grid=grid, num_warps=warps, res=res,
                      command=command, wait=wait, spin_us=us, hold_regs=hold, dry_run=True)
    return trace_from_stamps(stamps.astype(np.int64), gpu.name, meta)


def main(argv=None) -> int:
    from benchmarks.dispatch_validate import record_set

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=75.0,
                    help="start no new trace after this many seconds (default 75)")
    ap.add_argument("--dry-run", action="store_true",
                    help="no GPU: stand-in traces from sim/ (checks the plan and the scoring)")
    args = ap.parse_args(argv)
    from kernels.tracing.trace import record_trace

    def make(wait, warps, hold, us, waves, regs):
        command = (f"python3 main.py trace --wait {wait} --warps {warps} --hold-regs {hold} "
                   f"--spin-us {us} --waves {waves} --out TRACE.json")
        if args.dry_run:
            return lambda: simulated(wait, warps, hold, float(us), waves, regs, command)
        return lambda: record_trace(None, warps, float(us), command, wait=wait, hold_regs=hold,
                                    waves=waves)

    plan = [(f"J-{c[0]}-w{c[1]}-h{c[2]}-{c[3]}us-{c[4]}w", "J", make(*c)) for c in CONFIGS]
    return record_set(args.out, plan, args.budget_s,
                      "blind test of the dispatch model's register rule")


if __name__ == "__main__":
    sys.exit(main())
