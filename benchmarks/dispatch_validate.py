"""Record a fresh set of H200 traces that the dispatch model was NOT fitted on, to test it.

Durations, grids and (for sleep) combinations deliberately off the fitting grid of
benchmarks/dispatch_run.py (2/5/10/20/50/100/200 us, 0.5/1/2.2/4.5 waves), spanning what the
issue asks the model to predict: 1..16 warps per block, 5..100 us blocks, under one to six waves.
Each trace is what `main.py trace --wait W --warps N --spin-us T --waves X` records; all of them go
into one bundle (sim/traces/trace_bundle.py) in --out.

    PYTHONUNBUFFERED=1 python3 benchmarks/dispatch_validate.py --out DIR [--budget-s 90]
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.traces.trace_bundle import write_bundle  # noqa: E402

# (wait, warps, block duration us, waves): none of these durations or grids was used for fitting
CONFIGS = [
    ("spin", 1, 7, 0.7), ("spin", 1, 30, 3.0), ("spin", 1, 12, 5.0), ("spin", 2, 15, 1.5),
    ("spin", 2, 75, 6.0), ("spin", 2, 40, 2.5), ("spin", 4, 7, 6.0), ("spin", 4, 15, 0.7),
    ("spin", 4, 30, 1.5), ("spin", 4, 75, 3.0), ("spin", 4, 12, 4.2), ("spin", 8, 7, 1.5),
    ("spin", 8, 15, 3.0), ("spin", 8, 30, 6.0), ("spin", 8, 75, 0.7), ("spin", 16, 7, 3.0),
    ("spin", 16, 15, 6.0), ("spin", 16, 30, 0.7), ("spin", 16, 75, 1.5), ("spin", 16, 50, 2.6),
    ("sleep", 4, 15, 3.0), ("sleep", 16, 30, 1.5), ("sleep", 1, 7, 6.0), ("sleep", 8, 75, 0.7),
]


def record_set(out, plan, budget_s: float, purpose: str) -> int:
    """Record `plan` — (name, family, make) with make() -> Trace — into one bundle in `out`,
    each trace on its own (a failure costs only that trace), none started past `budget_s`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0, done, failed = time.perf_counter(), [], []
    for name, family, make in plan:
        if time.perf_counter() - t0 > budget_s:
            failed.append({"name": name, "family": family, "error": "not run: past the budget"})
            continue
        try:
            trace = make()
            summary = {"blocks": int(len(trace.block)),
                       "regs_per_thread": trace.meta.get("regs_per_thread"),
                       "makespan_us": float(trace.end_us.max() - trace.start_us.min())}
            done.append((name, family, trace, summary))
            print(f"{name:28s} {summary['blocks']:6d} blocks {summary['regs_per_thread']} regs "
                  f"{summary['makespan_us']:8.1f} us", flush=True)
        except Exception as exc:  # noqa: BLE001 - one failing config must not cost the rest
            failed.append({"name": name, "family": family, "error": traceback.format_exc(limit=2)})
            print(f"{name}: FAILED {type(exc).__name__}: {exc}", flush=True)
    write_bundle(out, done, failed, {"recorded_by": " ".join(["python3", *sys.argv]),
                                     "purpose": purpose})
    print(f"{len(done)} traces, {len(failed)} failed, {time.perf_counter() - t0:.0f} s -> {out}")
    return 0 if done else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=90.0)
    args = ap.parse_args(argv)
    from kernels.tracing.trace import record_trace

    def make(wait, warps, us, waves):
        command = (f"python3 main.py trace --wait {wait} --warps {warps} --spin-us {us} "
                   f"--waves {waves} --out TRACE.json")
        return lambda: record_trace(None, warps, float(us), command, wait=wait, waves=waves)

    plan = [(f"V-{wait}-w{warps}-{us}us-{waves}w", "V", make(wait, warps, us, waves))
            for wait, warps, us, waves in CONFIGS]
    return record_set(args.out, plan, args.budget_s, "held-out validation of the dispatch model")


if __name__ == "__main__":
    sys.exit(main())
