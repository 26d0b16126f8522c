"""Fit the H200's dispatch profile to the recorded traces, and measure it on traces it never saw.

Data: tests/data/h200_spin_fit (242 traces recorded on the H200 on 2026-12-01 by the spin
recorder that lived in benchmarks/ at 8be3ded). Three fits, run side by
side (one process each), all with sim/traces/calibrate.py's search from the same start:

- fold "a": fit on the busy-spin family A at 2, 10, 50, 200 us; check on A at 5, 20, 100 us and on
  every other family (B sleep, C memory, D held registers, F CUDA C vs Triton binary, G repeats);
- fold "b": the other way round (fit on A at 5, 20, 100 us);
- "all": fit on all of A and B (sleep: the pacing) -> the checked-in profile; check on C, D, F, G.

Writes the profile (`--out`, default resources/physics/H200.json (its dispatch section)) and a report of every trace's
score under each fit (`--report`, default $TMPDIR/dispatch_fit_h200.json), which
docs/DISPATCH.md and benchmarks/RESULTS.md quote. About an hour on a loaded 2-core machine.

    python3 benchmarks/dispatch_fit.py
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.traces.calibrate import cases_of, fit, held_out, summary  # noqa: E402
from sim.rules.devices import preset  # noqa: E402
from sim.schedule.dispatch_profile import DispatchParams, DispatchProfile, save_profile  # noqa: E402
from sim.traces.trace_bundle import load_bundle  # noqa: E402

DATA = ROOT / "tests" / "data" / "h200_spin_fit"
COMMAND = "python3 benchmarks/dispatch_fit.py"
FOLDS = {"a": (2.0, 10.0, 50.0, 200.0), "b": (5.0, 20.0, 100.0)}


def block_us(name: str) -> float | None:
    for part in name.split("-"):
        if part.endswith("us") and part[:-2].replace(".", "").isdigit():
            return float(part[:-2])
    return None


def split(fold: str, cases):
    """(train, test) for a fold; the stamped add (family E, real memory-bound blocks whose time
    varies) is no uniform-block launch and stays out of both."""
    cases = [c for c in cases if not c.name.startswith("E-")]
    if fold == "all":
        train = [c for c in cases if c.name.startswith(("A-", "B-"))]
    else:
        train = [c for c in cases if c.name.startswith("A-") and block_us(c.name) in FOLDS[fold]]
    names = {c.name for c in train}
    return train, [c for c in cases if c.name not in names]


def run_fold(fold: str) -> dict:
    gpu = preset("H200")
    train, test = split(fold, cases_of(load_bundle(DATA), gpu))
    t0 = time.perf_counter()
    params = fit(train, rounds=2, processes=1,
                 progress=lambda m: print(f"[{fold} {time.perf_counter() - t0:6.0f}s] {m}", flush=True))
    out = {"fold": fold, "params": params.to_json(), "fit_seconds": round(time.perf_counter() - t0),
           "train": [c.name for c in train]}
    for label, cs in (("train", train), ("test", test)):
        rows = held_out(cs, params)
        out[label + "_summary"] = summary(rows)
        out[label + "_scores"] = {n: {"makespan_error": round(s.makespan_error, 4),
                                      "recorded_median_peak": s.recorded_median_peak,
                                      "simulated_median_peak": s.simulated_median_peak,
                                      "residency_error": round(s.residency_error, 4),
                                      "within": s.within()} for n, s in rows}
    print(f"[{fold}] test {out['test_summary']}", flush=True)
    return out


FAMILIES = {"A": "A busy spin", "B": "B sleep", "C": "C memory", "D": "D held registers",
            "F": "F CUDA C / Triton binary", "G": "G repeats"}


def tables(report: dict, profile_path: str) -> str:
    """The markdown tables docs/DISPATCH.md and benchmarks/RESULTS.md quote."""
    from sim.schedule.dispatch_profile import load_profile

    p = load_profile(profile_path).params
    lines = ["| number | H200 | | number | H200 |", "|---|---:|---|---|---:|"]
    items = [(k, v) for k, v in p.to_json().items() if k != "trickle"]
    half = (len(items) + 1) // 2
    for (k1, v1), right in zip(items[:half], items[half:] + [("", "")]):
        lines.append(f"| `{k1}` | {v1:g} | | {'`' + right[0] + '`' if right[0] else ''} | "
                     f"{right[1] if right[1] == '' else format(right[1], 'g')} |")
    lines += ["", "| warps per block | trickle probability | median wait (µs) |", "|---:|---:|---:|"]
    lines += [f"| {w} | {pr:g} | {m:g} |" for w, (pr, m) in sorted(p.trickle.items())]
    lines += ["", "| fit | checked on | traces | makespan ≤ 10% | median peak ± 1 | residency error "
              "≤ 0.15 | all three | median residency error |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for fold, label in (("a", "A at 2, 10, 50, 200 µs"), ("b", "A at 5, 20, 100 µs"),
                        ("all", "A and B (the profile)")):
        f = report["folds"].get(fold)
        if f is None:
            continue
        by_family: dict = {}
        for name, s in f["test_scores"].items():
            by_family.setdefault(name[0], []).append(s)
        for fam, rows in sorted(by_family.items()):
            n = len(rows)
            lines.append(
                f"| {label} | {FAMILIES.get(fam, fam)} | {n} | "
                f"{sum(abs(r['makespan_error']) <= 0.10 for r in rows)} | "
                f"{sum(abs(r['simulated_median_peak'] - r['recorded_median_peak']) <= 1 for r in rows)}"
                f" | {sum(r['residency_error'] <= 0.15 for r in rows)} | "
                f"{sum(r['within'] for r in rows)} | "
                f"{sorted(r['residency_error'] for r in rows)[n // 2]:.3f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "resources" / "dispatch" / "H200.json"))
    parser.add_argument("--report", default=str(Path(os.environ.get("TMPDIR", "/tmp")) / "dispatch_fit_h200.json"))
    parser.add_argument("--folds", default="a,b,all")
    parser.add_argument("--tables", action="store_true",
                        help="print the markdown tables of an existing report and profile; fit nothing")
    args = parser.parse_args()
    if args.tables:
        print(tables(json.loads(Path(args.report).read_text()), args.out))
        return 0
    folds = args.folds.split(",")
    with mp.get_context("fork").Pool(len(folds)) as pool:
        results = pool.map(run_fold, folds)
    report = {"command": COMMAND, "data": str(DATA.relative_to(ROOT)),
              "date": datetime.date.today().isoformat(), "start": DispatchParams().to_json(),
              "folds": {r["fold"]: r for r in results}}
    Path(args.report).write_text(json.dumps(report, indent=1))
    final = report["folds"].get("all")
    if final is not None:
        from sim.schedule.dispatch_profile import params_from_json

        source = (f"{COMMAND} (sim/traces/calibrate.py's search) on {len(final['train'])} traces of "
                  f"{report['data']} recorded on the H200 on 2026-12-01 with "
                  "the spin recorder (benchmarks/ at 8be3ded): family A (Triton busy spin, 1..32 warps, 2..200 us, "
                  "0.5..8.5 waves) and B (sleep); sm_interval_us from the memory-bound "
                  "block-size sweep of 2026-11-29 (sim/model/launch_model.py); held-out accuracy in "
                  "docs/DISPATCH.md")
        profile = DispatchProfile("NVIDIA H200", True, "2026-12-01", source,
                                  params_from_json(final["params"], "fit"))
        save_profile(args.out, profile)
        print(f"wrote {args.out}")
    print(f"wrote {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
