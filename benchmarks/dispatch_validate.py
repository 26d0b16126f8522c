"""A fresh validation set for the dispatch model: record traces the model was never fitted to, then
score compare's predictions on them.

    # on the GPU (about a minute): busy spin at 1..16 warps, 7..70 us, 0.7..6 waves; a few asleep
    PYTHONUNBUFFERED=1 python3 benchmarks/dispatch_validate.py record --out $OUT
    # anywhere: compare every trace (calibrated and ideal) and print the bar's table
    python3 benchmarks/dispatch_validate.py score $OUT [--json FILE]

The block times (7, 15, 35, 70 us) and wave counts (0.7, 1.5, 3, 6) are none of the recorded
families' (tests/data/dispatch_h200: 2..200 us at 0.5, 1, 2.2, 4.5, 8.5 waves). Every trace is
what `main.py trace --warps W --spin-us T --waves X [--wait sleep]` records (its meta holds that
command); the set is written as one trace bundle (sim/trace_bundle.py). Recording stops cleanly
at --budget-s and survives a failing trace.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.errors import UserError  # noqa: E402

PLAN = [("spin", w, us, waves) for w in (1, 2, 4, 8, 16) for us in (7.0, 15.0, 35.0, 70.0)
        for waves in (0.7, 1.5, 3.0, 6.0)] + [("sleep", w, us, waves) for w in (2, 8)
                                               for us in (15.0, 70.0) for waves in (1.5, 6.0)]


def name_of(wait, warps, us, waves) -> str:
    return f"V-{wait}-w{warps}-{us:g}us-{waves:g}w"


def record(out: str, budget_s: float) -> int:
    from kernels.trace import record_trace, summarize_trace
    from sim.trace_bundle import write_bundle

    t0, done, failed = time.perf_counter(), [], []
    for i, (wait, warps, us, waves) in enumerate(PLAN, 1):
        name = name_of(wait, warps, us, waves)
        if time.perf_counter() - t0 > budget_s:
            failed.append({"name": name, "family": "V", "error": "budget spent"})
            continue
        command = (f"python3 main.py trace --wait {wait} --warps {warps} --spin-us {us:g} "
                   f"--waves {waves:g} --out {name}.json")
        try:
            trace = record_trace(None, warps, us, command, wait=wait, waves=waves)
        except UserError:
            raise
        except Exception as exc:  # noqa: BLE001 - one failing trace must not end the run
            failed.append({"name": name, "family": "V", "error": f"{type(exc).__name__}: {exc}"})
            print(f"[{i}/{len(PLAN)}] {name}: FAILED {exc}", flush=True)
            continue
        trace.meta.update(family="V", recorded_by="python3 benchmarks/dispatch_validate.py record")
        s = summarize_trace(trace)
        done.append((name, "V", trace, s))
        print(f"[{i}/{len(PLAN)}] {time.perf_counter() - t0:6.1f}s {name}: {s['blocks']:,} blocks, "
              f"makespan {s['makespan_us']:.1f} us", flush=True)
    write_bundle(out, done, failed, {"command": "python3 benchmarks/dispatch_validate.py record",
                                     "plan": [list(p) for p in PLAN]})
    print(f"{len(done)} traces recorded, {len(failed)} failed; wrote {out}", flush=True)
    return 0


def score(folder: str, json_out: str | None) -> int:
    from sim.compare import compare_trace
    from sim.devices import preset_for_device_name
    from sim.trace_bundle import load_bundle

    rows = []
    for name, trace in load_bundle(folder).items():
        gpu = preset_for_device_name(trace.gpu, trace.meta.get("sm_count"))
        row = {"name": name}
        for mode in ("calibrated", "ideal"):
            c, _ = compare_trace(trace, gpu, mode=mode)
            ok = (abs(c.makespan_error) <= 0.10 and c.residency_error <= 0.15
                  and abs(c.simulated_median_peak_blocks_per_sm
                          - c.recorded_median_peak_blocks_per_sm) <= 1)
            row[mode] = {"makespan_error": round(c.makespan_error, 4),
                         "recorded_median_peak": c.recorded_median_peak_blocks_per_sm,
                         "simulated_median_peak": c.simulated_median_peak_blocks_per_sm,
                         "residency_error": round(c.residency_error, 4), "within": ok}
        rows.append(row)
        c = row["calibrated"]
        print(f"{name:28s} {'ok  ' if c['within'] else 'MISS'} makespan {c['makespan_error']:+6.1%} "
              f"peak {c['recorded_median_peak']:g}/{c['simulated_median_peak']:g} "
              f"residency {c['residency_error']:.3f}   (ideal: {row['ideal']['makespan_error']:+.0%}, "
              f"{row['ideal']['residency_error']:.2f})")
    for mode in ("calibrated", "ideal"):
        n = sum(r[mode]["within"] for r in rows)
        print(f"{mode}: {n} of {len(rows)} traces within the bar (makespan 10%, median peak 1, "
              "residency error 0.15)")
    if json_out:
        Path(json_out).write_text(json.dumps(rows, indent=1))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    r = sub.add_parser("record", help="record the set on the GPU")
    r.add_argument("--out", required=True, metavar="DIR")
    r.add_argument("--budget-s", type=float, default=150.0)
    s = sub.add_parser("score", help="compare every trace of a recorded set")
    s.add_argument("folder", metavar="DIR")
    s.add_argument("--json", default=None, metavar="FILE")
    args = p.parse_args(argv)
    try:
        if args.what == "record":
            Path(args.out).mkdir(parents=True, exist_ok=True)
            return record(args.out, args.budget_s)
        return score(args.folder, args.json)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
