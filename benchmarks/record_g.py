#!/usr/bin/env python3
"""GPU run G's parts (benchmarks/device_run_g.sh runs them one by one): issue 19's instrument.

    python3 benchmarks/record_g.py builtins --out DIR   # trace two built-ins, 2^20/2^24/2^26
    python3 benchmarks/record_g.py proton   --out DIR   # Proton's intra-kernel profiler
    python3 benchmarks/record_g.py numba    --out DIR   # the stencil example (Numba stamps)
    python3 benchmarks/record_g.py summary  --out DIR   # the table printed last
(The two Triton example files are traced by `warpscope trace --kernel-file` itself, in
device_run_g.sh.) Each part writes DIR/index_<part>.json: one row per attempt with its command,
what it measured, or the error that stopped it, and traces under DIR/traces_g/.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import kernels  # noqa: E402,F401  (the CPU fallback where there is no GPU)

BUILTINS = ("add_triton_tutorial", "square_triton")
EXAMPLES = os.path.join(ROOT, "resources", "examples")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _attempt(rows: list, name: str, command: str, fn, out: str = "", part: str = "") -> None:
    """Run fn, keep its result or its error as a row; with out and part, write the index at
    once (a part killed by its timeout keeps the rows it had)."""
    log(name)
    row = {"name": name, "command": command}
    try:
        row.update(fn() or {})
    except Exception as exc:  # one failure costs only its row
        row["error"] = f"{type(exc).__name__}: {exc}"[:600]
        row["traceback"] = traceback.format_exc()[-2000:]
        log(f"  failed: {row['error']}")
    rows.append(row)
    if out:
        _write(out, part, rows)


def _write(out: str, part: str, rows: list) -> int:
    with open(os.path.join(out, f"index_{part}.json"), "w", encoding="utf-8") as fh:
        json.dump({"part": part, "rows": rows}, fh, indent=1, default=str)
    return 0


def _save(out: str, name: str, trace) -> dict:
    from kernels.tracing.trace import save, summarize_trace

    os.makedirs(os.path.join(out, "traces_g"), exist_ok=True)
    save(trace, os.path.join(out, "traces_g", f"{name}.json"))
    keys = ("regs_per_thread", "untraced_regs_per_thread", "untraced_median_us",
            "traced_median_us", "overhead_percent")
    return {"file": f"traces_g/{name}.json", "summary": summarize_trace(trace),
            **{k: trace.meta.get(k) for k in keys}}


def part_builtins(out: str) -> int:
    from kernels.declare.registry import get_kernel
    from kernels.tracing.trace_file import record_file_trace

    rows = []
    for name in BUILTINS:
        for p in (20, 24, 26):
            command = (f"python3 benchmarks/record_g.py builtins: record_file_trace("
                       f"get_kernel({name!r}), {1 << p}, overhead_reps=50)")
            _attempt(rows, f"{name}_n{p}", command, lambda n=name, p=p, c=command: _save(
                out, f"{n}_n{p}", record_file_trace(get_kernel(n), 1 << p, command=c,
                                                    overhead_reps=50)), out, "builtins")
    return _write(out, "builtins", rows)


def _proton_run(out: str, spec, n: int, tag: str, data: str = "trace") -> dict:
    """One launch of the Proton-scoped copy under Proton's instrumentation backend."""
    import torch
    import triton.profiler as proton
    import triton.profiler.language as pl

    from kernels.measure.harness import make_arrays
    from kernels.tracing.instrument import instrument
    from kernels.launching.launcher import bind_triton, kernel_args
    from kernels.declare.spec import resolve

    pl.enable_semantic("triton")
    shape = spec.launch_shape(n, None, 132)
    inputs, out_arr = make_arrays(spec, n, on_gpu=True)
    launch = bind_triton(spec, shape, kernel_args(spec, inputs, out_arr, n),
                         kernel=instrument(resolve(spec.kernel), probe="proton"))
    stem = os.path.join(out, f"proton_{tag}")
    proton.start(stem, data=data, backend="instrumentation", mode=proton.mode.Default())
    launch.run()
    torch.cuda.synchronize()
    proton.finalize()
    made = sorted(glob.glob(stem + "*"))
    if not made:
        raise RuntimeError("Proton wrote no file")
    if data != "trace":  # a hatchet tree: per-scope totals, no timeline
        return {"files": [os.path.basename(f) for f in made], "data": data,
                "bytes": os.path.getsize(made[0])}
    with open(made[0], encoding="utf-8") as fh:
        doc = json.load(fh)
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    ctas = {e.get("pid") for e in events if isinstance(e, dict)}
    return {"files": [os.path.basename(f) for f in made], "events": len(events),
            "programs_launched": shape.grid_blocks, "ctas_in_trace": len(ctas),
            "first_events": events[:3]}


def part_proton(out: str) -> int:
    import triton

    from kernels.declare.kernel_file import open_kernel_file
    from kernels.declare.registry import get_kernel

    rows = [{"name": "versions", "triton": triton.__version__}]
    softmax = [s for s in open_kernel_file(os.path.join(EXAMPLES, "softmax_triton.py"))
               if s.backend == "triton"][0]
    for tag, spec, n in (("softmax_n22", softmax, 1 << 22),
                         ("add_tutorial_n20", get_kernel("add_triton_tutorial"), 1 << 20)):
        command = (f"python3 benchmarks/record_g.py proton: {spec.name} at {n}, one Proton "
                   "scope around the program (kernels/tracing/instrument.py probe 'proton'), "
                   "proton.start(data='trace', backend='instrumentation')")
        _attempt(rows, f"proton_{tag}", command,
                 lambda s=spec, n=n, t=tag: _proton_run(out, s, n, t), out, "proton")
    if all("error" in r for r in rows[1:]):  # no timeline: does the tree (per-scope cycles) work?
        _attempt(rows, "proton_softmax_n22_tree", "the same, data='tree'",
                 lambda: _proton_run(out, softmax, 1 << 22, "softmax_n22_tree", data="tree"),
                 out, "proton")
    return _write(out, "proton", rows)


def part_numba(out: str) -> int:
    """The stencil example through trace --kernel-file's own recorder (kernels/tracing/
    trace_file.py, Numba stamps of kernels/tracing/numba_stamps.py). Run G (2026-12-01) linked
    the readers from a .cu instead; run J replaced that with inline PTX."""
    from kernels.declare.kernel_file import open_kernel_file
    from kernels.tracing.trace_file import record_file_trace

    rows = []
    spec = [s for s in open_kernel_file(os.path.join(EXAMPLES, "stencil_numba.py"))
            if s.backend == "numba"][0]
    for p in (20, 24):
        command = (f"python3 benchmarks/record_g.py numba: record_file_trace(stencil, {1 << p}, "
                   "overhead_reps=30)")
        _attempt(rows, f"stencil_n{p}", command, lambda p=p, c=command: _save(
            out, f"stencil_numba_n{p}", record_file_trace(spec, 1 << p, command=c,
                                                          overhead_reps=30)), out, "numba")
    return _write(out, "numba", rows)


def part_summary(out: str) -> int:
    lines = ["", "=== run G summary ==="]
    for part in ("files", "builtins", "proton", "numba"):
        path = os.path.join(out, "logs", f"index_{part}.json")
        if not os.path.exists(path):
            path = os.path.join(out, f"index_{part}.json")
        try:
            with open(path, encoding="utf-8") as fh:
                rows = json.load(fh)["rows"]
        except (OSError, ValueError, KeyError):
            lines.append(f"{part}: no index")
            continue
        lines.append(f"{part}:")
        for r in rows:
            if "error" in r:
                lines.append(f"  {r['name']:28} FAILED {r['error'][:110]}")
            elif "summary" in r:
                s = r["summary"]
                lines.append(
                    f"  {r['name']:28} {s['blocks']:>6} blk {s['makespan_us']:>8.1f} us peak/SM "
                    f"{s['median_max_resident_per_sm']:.0f} (pred {s['predicted_blocks_per_sm']}) "
                    f"regs {r.get('regs_per_thread')} vs {r.get('untraced_regs_per_thread')}; "
                    f"untraced {r.get('untraced_median_us') or 0:.1f} us traced "
                    f"{r.get('traced_median_us') or 0:.1f} us ({r.get('overhead_percent') or 0:+.1f}%)")
            else:
                lines.append(f"  {r['name']:28} " + json.dumps(
                    {k: v for k, v in r.items() if k not in ("name", "command", "first_events")},
                    default=str)[:160])
    print("\n".join(lines))
    return 0


def part_files_index(out: str) -> int:
    """The kernel-file traces device_run_g.sh recorded with the CLI, as an index like the rest."""
    from sim.traces.trace import load_trace

    from kernels.tracing.trace import summarize_trace

    rows = []
    with open(os.path.join(out, "files_commands.txt"), encoding="utf-8") as fh:
        for line in fh:
            name, status, command = line.rstrip("\n").split("\t", 2)
            row = {"name": name, "command": command}
            path = os.path.join(out, "traces_g", f"{name}.json")
            if status != "0" or not os.path.exists(path):
                row["error"] = f"exit status {status} (see logs/{name}.log)"
            else:
                t = load_trace(path)
                row.update({"file": f"traces_g/{name}.json", "summary": summarize_trace(t),
                            **{k: t.meta.get(k) for k in (
                                "regs_per_thread", "untraced_regs_per_thread",
                                "untraced_median_us", "traced_median_us", "overhead_percent")}})
            rows.append(row)
    os.remove(os.path.join(out, "files_commands.txt"))
    return _write(out, "files", rows)


PARTS = {"builtins": part_builtins, "proton": part_proton, "numba": part_numba,
         "summary": part_summary, "files-index": part_files_index}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("part", choices=sorted(PARTS))
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    return PARTS[args.part](args.out)


if __name__ == "__main__":
    sys.exit(main())
