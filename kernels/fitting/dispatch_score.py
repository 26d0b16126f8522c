"""Score compare's predictions on a set of recorded traces (a trace bundle): the issue's bar per
trace, for the calibrated dispatch model and the ideal textbook schedule.

    # on a bundle recorded anywhere (`trace` writes the traces; no GPU needed to score):
    python3 -m kernels.fitting.dispatch_score DIR [--json FILE]

Each trace is predicted from its launch alone (sim.traces.compare.compare_trace); the bar is makespan
within 10%, the median SM's peak within 1 block and residency error at most 0.15.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from sim.inputs.errors import UserError  # noqa: E402

MODES = ("calibrated", "ideal")


def score(folder: str) -> list[dict]:
    from sim.traces.compare import compare_trace
    from sim.rules.devices import preset_for_device_name
    from sim.traces.trace_bundle import load_bundle
    from kernels.declare.kernel_file import with_declared_chain

    rows = []
    for name, trace in load_bundle(folder).items():
        trace = with_declared_chain(trace)  # a kernel file's declared passes and reductions
        gpu = preset_for_device_name(trace.gpu, trace.meta.get("sm_count"))
        if gpu is None:
            raise UserError(f"{name}: {trace.gpu!r} is no preset")
        row = {"name": name}
        for mode in MODES:
            c = compare_trace(trace, gpu, mode=mode)
            peak = c.simulated_median_peak_blocks_per_sm - c.recorded_median_peak_blocks_per_sm
            row[mode] = {"makespan_error": round(c.makespan_error, 4),
                         "recorded_median_peak": c.recorded_median_peak_blocks_per_sm,
                         "simulated_median_peak": c.simulated_median_peak_blocks_per_sm,
                         "residency_error": round(c.residency_error, 4),
                         "within": bool(abs(c.makespan_error) <= 0.10 and abs(peak) <= 1
                                        and c.residency_error <= 0.15)}
        rows.append(row)
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", metavar="DIR", help="a trace bundle (dispatch_index.json + npz)")
    p.add_argument("--json", default=None, metavar="FILE", help="also write every score here")
    args = p.parse_args(argv)
    try:
        rows = score(args.folder)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for row in rows:
        c, i = row["calibrated"], row["ideal"]
        print(f"{row['name']:28s} {'ok  ' if c['within'] else 'MISS'} makespan "
              f"{c['makespan_error']:+6.1%} peak {c['recorded_median_peak']:g}/"
              f"{c['simulated_median_peak']:g} residency {c['residency_error']:.3f}   "
              f"(ideal: {i['makespan_error']:+.0%}, {i['residency_error']:.2f})")
    for mode in MODES:
        print(f"{mode}: {sum(r[mode]['within'] for r in rows)} of {len(rows)} traces within the "
              "bar (makespan 10%, median peak 1, residency error 0.15)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
