"""Fit the dispatch model's register rule (sim/schedule/dispatch.py, rule 5) on half of the
register-limited traces of tests/data/limits_h200 and score it on the other half.

    python3 benchmarks/dispatch_regs_fit.py            # search on the fit half, print both halves
    python3 benchmarks/dispatch_regs_fit.py --write    # ... and write the winner into H200.json
    python3 benchmarks/dispatch_regs_fit.py --blind DIR  # no search: a bundle, rule off vs on

The split is fixed by the launch, not by any score: the hold traces' eight launches, sorted by
(registers per thread, warps), alternate which spin time is fitted (even: 20 us, odd: 200 us);
the other spin time of each launch is held out. So every launch and both spin times are on both
sides. A new register-limited set recorded on the H200 (benchmarks/device_run_j_dispatch.sh) is
the blind test: `python3 benchmarks/dispatch_score.py DIR`.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BUNDLE = ROOT / "tests" / "data" / "limits_h200"
# register-file share where the rule starts: chosen, not fitted. The traces bracket it in
# (0.5, 0.9375] (12 registers at 64 warps hold half the file and fill as the profile says; 40
# registers at 48 warps hold 94% and do not); every share in there scores the same on them.
FRACTION = 0.8
CAPS = tuple(range(28, 50, 2))  # warps: the H200 held 28..40 at 32 registers
GAPS = (0.002, 0.004, 0.006, 0.008, 0.012)  # us per warp of the block
GAP_WARPS = (6.0, 8.0, 10.0, 12.0, 16.0)


def split(traces: dict) -> tuple[dict, dict]:
    """(fit, held out) among the bundle's `trace --hold-regs` traces."""
    hold = {n: t for n, t in traces.items() if t.meta.get("hold_regs")}
    launches = sorted({(t.meta["regs_per_thread"], t.meta["num_warps"]) for t in hold.values()})
    fit, test = {}, {}
    for name, t in hold.items():
        i = launches.index((t.meta["regs_per_thread"], t.meta["num_warps"]))
        fitted_us = 20.0 if i % 2 == 0 else 200.0
        (fit if float(t.meta["spin_us"]) == fitted_us else test)[name] = t
    return fit, test


def scores(traces: dict, profile) -> dict:
    """name -> (makespan error, peak error, residency error, within the bar)."""
    from sim.rules.devices import preset_for_device_name
    from sim.traces.compare import compare_trace

    out = {}
    for name, t in traces.items():
        gpu = preset_for_device_name(t.gpu, t.meta.get("sm_count"))
        c = compare_trace(t, gpu, profile=profile)
        peak = c.simulated_median_peak_blocks_per_sm - c.recorded_median_peak_blocks_per_sm
        out[name] = (c.makespan_error, peak, c.residency_error,
                     abs(c.makespan_error) <= 0.10 and abs(peak) <= 1 and c.residency_error <= 0.15)
    return out


def loss(s: dict) -> tuple:
    """More traces within the bar first, then the smaller summed (scaled) misses."""
    return (-sum(v[3] for v in s.values()),
            sum(abs(m) / 0.10 + abs(p) + r / 0.15 for m, p, r, _ in s.values()))


def table(title: str, before: dict, after: dict) -> str:
    rows = [f"{title}", "",
            "| trace | before: makespan / peak / residency | after: makespan / peak / residency |",
            "|---|---|---|"]
    for name in sorted(after):
        cells = []
        for s in (before[name], after[name]):
            m, p, r, ok = s
            cells.append(f"{m:+.1%} / {p:+g} / {r:.3f} {'ok' if ok else 'MISS'}")
        rows.append(f"| {name} | {cells[0]} | {cells[1]} |")
    rows.append(f"| within the bar | {sum(v[3] for v in before.values())} of {len(before)} | "
                f"{sum(v[3] for v in after.values())} of {len(after)} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    from sim.schedule.dispatch_profile import BUILTIN_DIR, builtin_profile, save_profile
    from sim.traces.trace_bundle import load_bundle

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--write", action="store_true", help="write the fitted rule into H200.json")
    p.add_argument("--blind", metavar="DIR", help="score a trace bundle (e.g. the one "
                   "benchmarks/device_run_j_dispatch.sh records) with the rule off and on")
    args = p.parse_args(argv)
    base = builtin_profile()
    off = replace(base, params=replace(base.params, regfile_fraction=2.0))
    if args.blind:
        traces = load_bundle(args.blind)
        print(table(f"{args.blind} (rule off: before; checked-in profile: after)",
                    scores(traces, off), scores(traces, base)))
        return 0
    fit, test = split(load_bundle(BUNDLE))
    best = None
    for cap, gap, gap_warps in itertools.product(CAPS, GAPS, GAP_WARPS):
        prof = replace(base, params=replace(base.params, regfile_fraction=FRACTION,
                                            regfile_full_cap_warps=float(cap),
                                            regfile_gap_warp_us=gap, regfile_gap_warps=gap_warps))
        key = loss(scores(fit, prof)) + (cap, gap, gap_warps)  # ties: the lowest values
        if best is None or key < best[0]:
            best = (key, prof)
    prof = best[1]
    print(f"fitted on {len(fit)} traces: regfile_fraction {prof.params.regfile_fraction}, "
          f"regfile_full_cap_warps {prof.params.regfile_full_cap_warps:g}, "
          f"regfile_gap_warp_us {prof.params.regfile_gap_warp_us:g}, "
          f"regfile_gap_warps {prof.params.regfile_gap_warps:g}\n")
    print(table("fit half", scores(fit, off), scores(fit, prof)) + "\n")
    print(table("held-out half", scores(test, off), scores(test, prof)))
    if args.write:
        save_profile(BUILTIN_DIR / "H200.json", prof)
        print(f"wrote {BUILTIN_DIR / 'H200.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
