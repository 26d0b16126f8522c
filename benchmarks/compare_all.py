"""`main.py compare --json` on every trace in tests/data: one line of scores per trace, and how many
are within the issue's bar (makespan within 10%, median peak within 1 block, residency error at
most 0.15), by kind of trace.

    python3 benchmarks/compare_all.py [--json FILE]

Bundle traces (tests/data/dispatch_h200*) are extracted as `python3 -m sim.traces.trace_bundle` does;
a Proton file names no GPU, so it is compared on the H200 (`--gpu H200`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import main  # noqa: E402
from sim.traces.schedule_metrics import ScheduleScore  # noqa: E402
from sim.traces.trace import write_trace  # noqa: E402
from sim.traces.trace_bundle import load_bundle  # noqa: E402

DATA = ROOT / "tests" / "data"


def traces():
    """(name, path maker) for every trace in tests/data."""
    for path in sorted(DATA.rglob("*")):
        if path.suffix == ".chrome_trace" or (path.suffix == ".json" and path.name != "dispatch_index.json"
                                              and '"warpscope-trace/1"' in path.read_text()[:200]):
            yield str(path.relative_to(DATA)), (lambda p=path: p)
    for index in sorted(DATA.rglob("dispatch_index.json")):
        bundle = load_bundle(index.parent)
        for name, trace in bundle.items():
            def extract(t=trace):
                path = Path(tempfile.mkstemp(suffix=".json")[1])
                write_trace(path, t)
                return path
            yield f"{index.parent.name}/{name}", extract


def cli_compare(path: Path) -> dict:
    argv = ["compare", str(path), "--json"] + (["--gpu", "H200"] if path.suffix == ".chrome_trace" else [])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main.main(argv)
    if code != 0:
        raise SystemExit(f"compare {path} exited {code}")
    return json.loads(out.getvalue())


def main_(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", metavar="FILE", help="also write every comparison here")
    args = p.parse_args(argv)
    rows, tally = [], defaultdict(lambda: [0, 0])
    for name, make in traces():
        path = make()
        c = cli_compare(path)
        if not path.is_relative_to(DATA):  # an extracted bundle trace
            path.unlink()
        s = ScheduleScore(c["recorded_makespan_us"], c["simulated_makespan_us"],
                          c["recorded_median_peak_blocks_per_sm"],
                          c["simulated_median_peak_blocks_per_sm"], c["residency_error"])
        ok = s.within()
        kind = f"{c['kernel']} ({c['model']})"
        tally[kind][0] += ok
        tally[kind][1] += 1
        rows.append({"trace": name, "ok": ok, **c})
        print(f"{name:48s} {'ok  ' if ok else 'MISS'} {kind:26s} makespan {c['makespan_error']:+7.1%}  "
              f"peak {c['recorded_median_peak_blocks_per_sm']:g}/{c['simulated_median_peak_blocks_per_sm']:g}  "
              f"residency {c['residency_error']:.3f}")
    print()
    for kind, (ok, n) in sorted(tally.items()):
        print(f"{kind:30s} {ok:3d} of {n:3d} within the bar")
    print(f"{'all':30s} {sum(v[0] for v in tally.values()):3d} of {len(rows):3d}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main_())
