"""Fit the dispatch model's register rule (sim/schedule/dispatch.py, rule 5) on the H200's
`trace --hold-regs` traces and score it on held-out ones.

    python3 benchmarks/dispatch_regs_fit.py            # search on the fit set, print both sets
    python3 benchmarks/dispatch_regs_fit.py --write    # ... and write the winner into H200.json
    python3 benchmarks/dispatch_regs_fit.py --blind DIR  # no search: a bundle, rule off vs on

The split (2026-12-02, second fit; fixed by the launch's name before any score of the refit):
fitted on every hold trace of tests/data/h200_register_hold_fit plus the traces of the blind register set
tests/data/h200_register_hold_heldout whose name ends in '-20us-3w' or '-50us-2.5w'; held out: that
set's '-200us-3w' traces. The search scores only the fit traces the rule acts on (register_fill not
"busy", spin): on the others the searched numbers change nothing.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

BUNDLE = ROOT / "tests" / "data" / "h200_register_hold_fit"
BLIND = ROOT / "tests" / "data" / "h200_register_hold_heldout"
FIT_SUFFIXES = ("-20us-3w", "-50us-2.5w")  # of BLIND's names; its '-200us-3w' ones are held out
# register-file share where the rule starts: chosen, not fitted. The traces bracket it in
# (0.75, 0.9375]: 20 registers x 64 warps (allocated 24: 75% of the file) fill as the profile says,
# 40 registers x 48 warps (94%) do not; every share in there scores the same on them.
FRACTION = 0.8
# the first search (24..40 x 0.004..0.012 x 8..16) chose edges of that grid: widened past them.
# A cap at or under burst_warps (28) does nothing (rule 1 already lets every block in below it,
# a visit never past it): 16..28 score the same, so the caps start at 28.
CAPS = (28, 32, 36, 40)  # warps: the H200 held 28..40 at 32 registers
GAPS = (0.008, 0.012, 0.016, 0.024)  # us per warp of the block
GAP_WARPS = (12.0, 16.0, 24.0, 32.0)


def split(limits: dict, blind: dict) -> tuple[dict, dict]:
    """(fit, held out) among the `trace --hold-regs` traces of both bundles."""
    fit = {n: t for n, t in limits.items() if t.meta.get("hold_regs")}
    test = {}
    for name, t in blind.items():
        (fit if name.endswith(FIT_SUFFIXES) else test)[name] = t
    return fit, test


def acted_on(traces: dict, params) -> dict:
    """The traces whose schedule the register numbers can change."""
    from sim.rules.devices import preset_for_device_name
    from sim.rules.occupancy import occupancy
    from sim.schedule.dispatch import register_fill

    out = {}
    for name, t in traces.items():
        gpu = preset_for_device_name(t.gpu, t.meta.get("sm_count"))
        w, regs = int(t.meta["num_warps"]), int(t.meta["regs_per_thread"])
        per_sm = occupancy(gpu, w * gpu.warp_size, regs).blocks_per_sm
        if t.meta.get("wait") == "spin" and register_fill(gpu, per_sm, w, regs, params) != "busy":
            out[name] = t
    return out


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
                   "records) with the rule off and on")
    args = p.parse_args(argv)
    base = builtin_profile()
    off = replace(base, params=replace(base.params, regfile_fraction=2.0))
    if args.blind:
        traces = load_bundle(args.blind)
        print(table(f"{args.blind} (rule off: before; checked-in profile: after)",
                    scores(traces, off), scores(traces, base)))
        return 0
    fit, test = split(load_bundle(BUNDLE), load_bundle(BLIND))
    searched = acted_on(fit, replace(base.params, regfile_fraction=FRACTION))
    best = None
    for cap, gap, gap_warps in itertools.product(CAPS, GAPS, GAP_WARPS):
        prof = replace(base, params=replace(base.params, regfile_fraction=FRACTION,
                                            regfile_full_cap_warps=float(cap),
                                            regfile_gap_warp_us=gap, regfile_gap_warps=gap_warps))
        key = loss(scores(searched, prof)) + (cap, gap, gap_warps)  # ties: the lowest values
        if best is None or key < best[0]:
            best = (key, prof)
    prof = best[1]
    print(f"fitted on {len(fit)} traces ({len(searched)} acted on): regfile_fraction {prof.params.regfile_fraction}, "
          f"regfile_full_cap_warps {prof.params.regfile_full_cap_warps:g}, "
          f"regfile_gap_warp_us {prof.params.regfile_gap_warp_us:g}, "
          f"regfile_gap_warps {prof.params.regfile_gap_warps:g}\n")
    print(table("fit set", scores(fit, off), scores(fit, prof)) + "\n")
    print(table("held out", scores(test, off), scores(test, prof)))
    if args.write:
        save_profile(BUILTIN_DIR / "H200.json", prof)
        print(f"wrote {BUILTIN_DIR / 'H200.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
