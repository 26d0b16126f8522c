"""One GPU run that records how the GPU really fills its SMs (issue 9): ~250 block traces.

    PYTHONUNBUFFERED=1 python3 benchmarks/dispatch_run.py --out DIR [--budget-s 240]

Families, most important first (a run cut short by its budget keeps what it has):
  A  wait=spin (the default trace kernel): warps {1,2,4,8,16,32} x {2,5,10,20,50,100,200} us x
     {0.5,1,2.2,4.5} waves; then warps {4,16} x {5,20} us x 8.5 waves
  F  the same 4,225-block grids the CUDA C probe measured (4 and 8 warps, 20 us): the CUDA C
     probe's spin-all, spin-one and sleep, Triton's cubin launched by cupy, and Triton's spin and
     sleep kernels (benchmarks/dispatch_probe_cuda.py)
  E  the stamped vector add: 2^22 and 2^24 elements x BLOCK_SIZE 256 (2 warps) and 1024 (4 warps)
  B  wait=sleep: warps {1,4,8,16} x {5,20,100} us x {1,3.3} waves
  C  wait=memory: warps {4,8,16} x {5,20,100} us x {1,3.3} waves
  D  registers limit occupancy: 4 warps, 20 us, 3.3 waves, spin and sleep, 64 and 128 held
  G  eight A configurations again (run-to-run noise)
Waves are counted at the occupancy sim/ predicts for the compiled kernel.

Writes DIR/dispatch_index.json (meta, command and summary per trace, the failures, the run) and
DIR/dispatch_traces.npz (every trace's block/sm/start/end), the pair rewritten after each family;
read them with sim.traces.trace_bundle. Prints a line per trace and a table at the end. Survives a
failing variant; stops before a trace that would overrun the budget. `--dry-run` goes through
the whole plan without a GPU, with simulated traces (to check the plan, the budget and the
output size).
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from sim.traces.trace_bundle import ARRAYS_NAME, INDEX_NAME, write_bundle  # noqa: E402

A_WARPS = (1, 2, 4, 8, 16, 32)
A_US = (2, 5, 10, 20, 50, 100, 200)
A_WAVES = (0.5, 1, 2.2, 4.5)
PROBE_GRID, PROBE_US = 4225, 20.0  # the grid of the CUDA C probe in h200-facts.md
COMPILE_S = 1.5  # a new kernel variant's compile, on the estimate side
PER_TRACE_S = 0.15  # launch, copy back, summary
RESERVE_S = 8.0  # writing the files at the end


@dataclass(frozen=True)
class Experiment:
    name: str
    family: str
    kind: str  # "spin" (kernels/tracing/trace.py), "add", or "probe" (dispatch_probe_cuda.py)
    params: dict = field(default_factory=dict)

    def command(self) -> str:
        """The command that records this trace alone."""
        p = self.params
        if self.kind == "add":
            return (f"python3 main.py trace --kernel add --elements {p['elements']} "
                    f"--block {p['block_size']} --warps {p['num_warps']} --out TRACE.json")
        if self.kind == "probe":
            from dispatch_probe_cuda import probe_command

            return probe_command(p["wait"], p["num_warps"], p["spin_us"], p["grid"])
        size = f"--grid {p['grid']}" if p.get("grid") else f"--waves {p['waves']:g}"
        hold = f" --hold-regs {p['hold_regs']}" if p.get("hold_regs") else ""
        return (f"python3 main.py trace --wait {p['wait']} --warps {p['num_warps']} "
                f"--spin-us {p['spin_us']:g} {size}{hold} --out TRACE.json")

    def compile_key(self) -> tuple:
        """Experiments with equal keys share one compiled kernel."""
        p = self.params
        return (self.kind, p.get("wait"), p.get("num_warps"), p.get("hold_regs", 0),
                p.get("block_size"))

    def estimate_s(self, compiled: set) -> float:
        """Seconds this trace should take, compile included if its kernel is new."""
        p = self.params
        waves = p.get("waves") or 4.0
        busy = math.ceil(waves) * p.get("spin_us", 1.0) * 2e-6 * 3  # grid, first launch, slack
        return PER_TRACE_S + busy + (0 if self.compile_key() in compiled else COMPILE_S)


def _spin(family, wait, warps, us, waves=None, grid=None, hold=0, tag=""):
    size = f"{waves:g}w" if grid is None else f"{grid}b"
    name = f"{family}{tag}-{wait}-w{warps}-{us:g}us-{size}" + (f"-hold{hold}" if hold else "")
    return Experiment(name, family, "spin", dict(wait=wait, num_warps=warps, spin_us=float(us),
                                                 waves=waves, grid=grid, hold_regs=hold))


def plan() -> list[Experiment]:
    """Every trace of the run, in the order they are recorded (most important first)."""
    a = [_spin("A", "spin", w, us, waves) for w in A_WARPS for us in A_US for waves in A_WAVES]
    a += [_spin("A", "spin", w, us, 8.5) for w in (4, 16) for us in (5, 20)]
    f = []
    for warps in (4, 8):
        for wait in ("spin-all", "spin-one", "sleep", "triton-binary"):
            f.append(Experiment(f"F-cuda-{wait}-w{warps}-20us-{PROBE_GRID}b", "F", "probe",
                                dict(wait=wait, num_warps=warps, spin_us=PROBE_US,
                                     grid=PROBE_GRID, waves=2.0)))
        f += [_spin("F", wait, warps, PROBE_US, grid=PROBE_GRID, tag="-triton")
              for wait in ("spin", "sleep")]
    e = [Experiment(f"E-add-2^{int(math.log2(n))}-b{block}-w{warps}", "E", "add",
                    dict(elements=n, block_size=block, num_warps=warps))
         for n in (1 << 22, 1 << 24) for block, warps in ((256, 2), (1024, 4))]
    b = [_spin("B", "sleep", w, us, waves) for w in (1, 4, 8, 16) for us in (5, 20, 100)
         for waves in (1, 3.3)]
    c = [_spin("C", "memory", w, us, waves) for w in (4, 8, 16) for us in (5, 20, 100)
         for waves in (1, 3.3)]
    d = [_spin("D", wait, 4, 20, 3.3, hold=hold) for wait in ("spin", "sleep")
         for hold in (64, 128)]
    repeats = [(4, 20, 2.2), (4, 5, 4.5), (1, 20, 2.2), (8, 20, 2.2), (16, 100, 2.2),
               (32, 20, 2.2), (4, 200, 1), (2, 2, 4.5)]
    g = [_spin("G", "spin", w, us, waves) for w, us, waves in repeats]
    return a + f + e + b + c + d + g


def record(exp: Experiment, recorded_by: str):
    """Run one experiment on the GPU; returns its Trace (meta says how it was made)."""
    p, command = exp.params, exp.command()
    if exp.kind == "spin":
        from kernels.tracing.trace import record_trace

        trace = record_trace(p["grid"], p["num_warps"], p["spin_us"], command, wait=p["wait"],
                             hold_regs=p["hold_regs"], waves=None if p["grid"] else p["waves"])
    elif exp.kind == "add":
        from kernels.tracing.trace import record_tile_trace

        trace = record_tile_trace("add", p["elements"], p["block_size"], p["num_warps"], command)
    else:
        from dispatch_probe_cuda import record_probe

        trace = record_probe(p["wait"], p["num_warps"], p["spin_us"], p["grid"], command=command)
    trace.meta.update(experiment=exp.name, family=exp.family, recorded_by=recorded_by)
    return trace


def simulated(exp: Experiment, recorded_by: str):
    """--dry-run: a stand-in trace from sim/'s scheduler, with start jitter like a real one."""
    from kernels.launching.launch import Resources
    from kernels.tracing.trace import grid_for_waves, trace_from_stamps, trace_meta
    from sim.rules.devices import preset
    from sim.schedule.scheduler import UniformCost, simulate

    gpu, p = preset("H200"), exp.params
    rng = np.random.default_rng(zlib.crc32(exp.name.encode()))
    res = Resources(12 + 1 * p.get("hold_regs", 0), 0, 0)
    us = p.get("spin_us", 0.8)
    if exp.kind == "add":
        grid, warps = -(-p["elements"] // p["block_size"]), p["num_warps"]
    else:
        warps = p["num_warps"]
        grid = p["grid"] or grid_for_waves(gpu, p["waves"], 32 * warps, res)
    per_sm = max(1, min(32, 64 // warps))
    sim = simulate(gpu, grid, per_sm, UniformCost(us))
    start = sim.block_start_us + rng.exponential(0.3, grid)
    end = start + us * (1 + rng.exponential(0.002, grid))
    stamps = np.stack([sim.block_sm, np.round(start * 1e3), np.round(end * 1e3)], 1)
    meta = trace_meta(gpu, kernel={"add": "add-trace", "probe": "cuda-probe"}.get(exp.kind,
                                                                                  "spin-trace"),
                      grid=grid, num_warps=warps, res=res, command=exp.command(),
                      wait=p.get("wait"), spin_us=None if exp.kind == "add" else us,
                      dry_run=True)
    meta.update(experiment=exp.name, family=exp.family, recorded_by=recorded_by)
    return trace_from_stamps(stamps.astype(np.int64), gpu.name, meta)


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def format_table(done) -> str:
    rows = [("trace", "kernel", "wait", "warps", "us", "blocks", "<=0.5us", "peak(med)/pred",
             "makespan", "textbook")]
    for name, _, trace, s in done:
        m = trace.meta
        rows.append((name, m.get("kernel", ""), str(m.get("wait") or "-"), str(m.get("num_warps")),
                     f"{m['spin_us']:g}" if m.get("spin_us") else "-", f"{s['blocks']:,}",
                     f"{s['started_within_0_5us']:,}",
                     f"{s['median_max_resident_per_sm']:g}/{s['predicted_blocks_per_sm']}",
                     f"{s['makespan_us']:.1f}",
                     "-" if s["textbook_makespan_us"] is None
                     else f"{s['textbook_makespan_us']:.1f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) if i < 3 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths))) for r in rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, metavar="DIR", help="folder for the two result files")
    ap.add_argument("--budget-s", type=float, default=240.0,
                    help="wall-clock budget, compiles included (default: %(default)s)")
    ap.add_argument("--only", default=None, metavar="FAMILIES",
                    help="record only these families, e.g. AF (default: all)")
    ap.add_argument("--dry-run", action="store_true",
                    help="no GPU: simulated traces, to check the plan and the output size")
    args = ap.parse_args(argv)
    t_start = time.monotonic()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    recorded_by = "python3 benchmarks/dispatch_run.py " + " ".join(
        sys.argv[1:] if argv is None else argv)
    experiments = [e for e in plan() if not args.only or e.family in args.only]
    info = {"command": recorded_by, "budget_s": args.budget_s, "planned": len(experiments),
            "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "dry_run": args.dry_run}
    if not args.dry_run:
        import torch
        import triton

        from kernels.tracing.trace import require_gpu

        gpu = require_gpu()
        info.update(gpu=gpu.name, triton_version=triton.__version__,
                    torch_version=torch.__version__)
        print(f"{gpu.name}: {gpu.sm_count} SMs; triton {triton.__version__}, torch "
              f"{torch.__version__}; {len(experiments)} traces planned, budget "
              f"{args.budget_s:.0f} s", flush=True)
    run = simulated if args.dry_run else record
    done, failed, compiled = [], [], set()
    cuda_errors, stopped = 0, None

    def save():
        info.update(elapsed_s=round(time.monotonic() - t_start, 1), recorded=len(done),
                    failed=len(failed), stopped_early=stopped)
        write_bundle(out, done, failed, info)

    for i, exp in enumerate(experiments):
        elapsed = time.monotonic() - t_start
        if elapsed + exp.estimate_s(compiled) + RESERVE_S > args.budget_s:
            stopped = f"budget: {elapsed:.0f} s used, {len(experiments) - i} traces not recorded"
            print(f"stopping: {stopped}", flush=True)
            break
        if i and exp.family != experiments[i - 1].family:
            save()  # a family is complete: its traces are safe on disk
        try:
            trace = run(exp, recorded_by)
        except Exception as exc:  # one failing variant must not end the run
            failed.append({"name": exp.name, "family": exp.family, "error": _one_line(exc),
                           "command": exp.command()})
            print(f"[{i + 1}/{len(experiments)}] {elapsed:6.1f}s {exp.name}: FAILED "
                  f"{_one_line(exc)}", flush=True)
            cuda_errors = cuda_errors + 1 if "CUDA" in str(exc) or "cuda" in str(exc) else 0
            if cuda_errors >= 3:
                stopped = "three CUDA errors in a row: the context is likely broken"
                print(f"stopping: {stopped}", flush=True)
                break
            continue
        cuda_errors = 0
        compiled.add(exp.compile_key())
        from kernels.tracing.trace import check_trace, summarize_trace

        summary = summarize_trace(trace) | {"problems": check_trace(trace)}
        done.append((exp.name, exp.family, trace, summary))
        s = summary
        textbook = s["textbook_makespan_us"]
        print(f"[{i + 1}/{len(experiments)}] {time.monotonic() - t_start:6.1f}s {exp.name}: "
              f"{s['blocks']:,} blocks, {s['started_within_0_5us']:,} within 0.5 us, peak/SM "
              f"median {s['median_max_resident_per_sm']:g} max {s['max_resident_per_sm']} "
              f"(predicted {s['predicted_blocks_per_sm']}), makespan {s['makespan_us']:.1f} us "
              f"(textbook {textbook if textbook is None else round(textbook, 1)})"
              + (f"; PROBLEMS: {'; '.join(s['problems'])}" if s["problems"] else ""), flush=True)
    save()
    print("\n" + format_table(done), flush=True)
    sizes = {n: os.path.getsize(out / n) for n in (INDEX_NAME, ARRAYS_NAME)}
    print(f"\n{len(done)} traces recorded, {len(failed)} failed"
          + (f", stopped early ({stopped})" if stopped else "")
          + f", {time.monotonic() - t_start:.0f} s; "
          + ", ".join(f"{n} {b / 2**20:.2f} MiB" for n, b in sizes.items()), flush=True)
    for f in failed:
        print(f"FAILED {f['name']}: {f['error']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
