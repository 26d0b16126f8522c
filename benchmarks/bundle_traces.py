"""Pack recorded warpscope-trace/1 files into one bundle (sim/traces/trace_bundle.py) for
tests/data, with each trace's summary and the command that recorded it.

    python3 benchmarks/bundle_traces.py OUT_DIR TRACE.json... [--commands commands.tsv] [--info TEXT]

commands.tsv (name<TAB>exit status<TAB>command) is what benchmarks/device_run_m_blind.sh writes; a
trace that exited non-zero goes into the bundle's "failed" list.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernels.tracing.trace import summarize_trace  # noqa: E402
from sim.traces.trace import load_trace  # noqa: E402
from sim.traces.trace_bundle import write_bundle  # noqa: E402


def family(trace) -> str:
    kernel = str(trace.meta.get("kernel", ""))
    if kernel.startswith("spin") or trace.meta.get("wait"):
        return "limits" if trace.meta.get("hold_regs") else "spin"
    return "kernel-file" if trace.meta.get("kernel_file") else "real"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("traces", nargs="+")
    parser.add_argument("--commands", default=None)
    parser.add_argument("--info", default="")
    args = parser.parse_args(argv)
    failed = []
    if args.commands:
        for line in Path(args.commands).read_text(encoding="utf-8").splitlines():
            name, status, command = line.split("\t", 2)
            if status != "0":
                failed.append({"name": name, "family": "?", "error": f"exit {status}: {command}"})
    done = []
    for path in sorted(args.traces):
        trace = load_trace(path)
        done.append((Path(path).stem, family(trace), trace, summarize_trace(trace)))
    Path(args.out).mkdir(parents=True, exist_ok=True)
    write_bundle(args.out, done, failed, {"recorded_by": args.info})
    print(f"{len(done)} traces, {len(failed)} failed -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
