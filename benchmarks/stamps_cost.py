"""The Numba stencil plain and under stamp designs: sm_90 SASS facts, then (on a GPU) timings.

Run by benchmarks/device_run_m_stamps.sh and device_run_n_stamps.sh (issue 19: the stamps' cost),
which say what they compare through the environment:
  STAMP_DESIGNS  name=probe,... (kernels/tracing/instrument.py's PROBES)   STAMP_SIZES  24,26
  ROUNDS         rotated rounds of time_gpu(reps=20)                       NPZ_DIR  under OUT_DIR
  python3 benchmarks/stamps_cost.py [--dry-run] OUT_DIR   (--dry-run: the SASS facts only)
"""
import json
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.getcwd())
from kernels.offline_compile.toolchain import cuobjdump, ptx_to_cubin, res_usage  # noqa: E402
from kernels.launching.compat import numba_cuda  # noqa: E402
from kernels.tracing.numba_stamps import (bind_numba_traced, instrument_numba,  # noqa: E402
                                          launch_dims)

STENCIL = "resources/examples/stencil_numba.py"
DESIGNS = dict(d.split("=", 1) for d in os.environ.get(  # name -> probe
    "STAMP_DESIGNS", "row_at_exit=numba-row-at-exit,default=numba").split(","))
SIZES = tuple(int(p) for p in os.environ.get("STAMP_SIZES", "24,26").split(","))
NPZ_DIR = os.environ.get("NPZ_DIR", "traces_m")
KERNEL_STORE = re.compile(r"\bSTG\.E desc")  # the stencil's own 4-byte store (stamps are .64)
SLOW = ("S2R", "S2UR", "LDC")  # variable-latency: special registers, constant loads


def sass_facts(py_func, argtypes):
    """Registers and what the sm_90 SASS does, above all after the kernel's last store: what
    there lengthens every block's life (the stencil's blocks live ~2,000 cycles)."""
    cuda = numba_cuda()
    ptx, _ = cuda.compile_ptx(py_func, argtypes, cc=(9, 0))
    cubin, _ = ptx_to_cubin(ptx, (9, 0), py_func.__name__)
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"m_stamps_{py_func.__name__}.cubin")
    with open(path, "wb") as fh:
        fh.write(cubin)
    text = subprocess.run([cuobjdump(), "-sass", path], capture_output=True, text=True).stdout
    ins = [re.sub(r"\s*/\* 0x[0-9a-f]+ \*/", "", ln).split("*/", 1)[1].strip()
           for ln in text.splitlines() if re.match(r"\s+/\*[0-9a-f]{4}\*/", ln)]
    ins = [i for i in ins if not i.startswith("NOP")]
    last = max(k for k, i in enumerate(ins) if KERNEL_STORE.search(i))
    end = max(k for k, i in enumerate(ins) if i.startswith("EXIT"))
    tail = ins[last + 1:end + 1]
    count = lambda ops, body: sum(opcode(i).startswith(ops) for i in body)  # noqa: E731
    return {"regs": res_usage(cubin)["REG"], "instructions": len(ins),
            "paths_to_exit": paths_to_exit(text),
            **{f"{op}_count": count(op, ins) for op in ("LDG", "STG", "S2R", "S2UR", "CS2R",
                                                         "LDC", "BRA", "EXIT")},
            "tail_after_kernel_store": len(tail), "tail_slow_ops": count(SLOW, tail),
            "tail": tail}


def paths_to_exit(sass: str) -> list[int]:
    """Instructions executed on each path from the entry to an EXIT (a predicated EXIT or
    branch: both ways), in the order found: what every warp, or warp 0 alone, pays."""
    ins = [(int(m.group(1), 16), m.group(2).strip()) for m in
           re.finditer(r"/\*([0-9a-f]{4})\*/\s+([^;]*);", sass) if not m.group(2).startswith("NOP")]
    at = {a: k for k, (a, _) in enumerate(ins)}
    found = []

    def walk(k, n):
        while k < len(ins):
            a, i = ins[k]
            n, op, predicated = n + 1, opcode(i), i.startswith("@")
            if op == "EXIT":
                found.append(n)
                if not predicated:
                    return
            elif op == "BRA":
                target = int(re.search(r"0x([0-9a-f]+)", i).group(1), 16)
                if target == a:
                    return
                if predicated or re.search(r"BRA\s+!?P\d", i):  # conditional: both ways
                    walk(k + 1, n)
                k = at[target]
                continue
            k += 1

    walk(0, 0)
    return found


def opcode(instruction: str) -> str:
    """'@!P0 EXIT ;' -> 'EXIT'; 'S2UR UR4, SR_VIRTUALSMID ;' -> 'S2UR'."""
    words = instruction.split()
    return words[1] if words[0].startswith("@") else words[0]


def static_part(results):
    from numba import types

    from kernels.declare.kernel_file import open_kernel_file

    spec = open_kernel_file(STENCIL, cpu_fallback=False)[0]
    f2, i2 = types.float32[:, ::1], types.int64[:, ::1]
    facts = {}
    try:
        facts["plain"] = sass_facts(spec.kernel.py_func, (f2, f2))
        dims = launch_dims(spec.launch_shape(1 << SIZES[0], None, 132))  # the stencil: (2, 2)
        for name, probe in DESIGNS.items():
            facts[name] = sass_facts(instrument_numba(spec.kernel, probe, dims).py_func,
                                     (i2, f2, f2))
    except Exception as exc:  # a toolchain this machine lacks: the timings still count
        facts["error"] = f"{type(exc).__name__}: {exc}"[:500]
    results["sass_sm90"] = facts
    for name, f in facts.items():
        if name != "error":
            print(f"sm_90 {name:13} regs {f['regs']:3} instructions {f['instructions']:4} "
                  f"after the kernel's last store {f['tail_after_kernel_store']:3} "
                  f"(slow ops {f['tail_slow_ops']}) paths to EXIT {f['paths_to_exit']}")


def schedule(rows):
    """What a design's stamps say about the launch (the model compares these)."""
    from kernels.tracing.trace import trace_from_stamps

    t = trace_from_stamps(rows, "gpu", {})
    resident = t.max_resident_per_sm()
    return {"blocks": int(len(t.block)), "sms_used": int(len(np.unique(t.sm))),
            "makespan_us": float(t.end_us.max() - t.start_us.min()),
            "median_block_us": float(np.median(t.end_us - t.start_us)),
            "median_peak_blocks_per_sm": float(np.median(resident[np.unique(t.sm)]))}


def gpu_part(results, out_dir, rounds):
    import torch

    from kernels.declare.kernel_file import open_kernel_file
    from kernels.launching.launcher import bind_numba, kernel_args
    from kernels.measure.harness import compare, first_run, make_arrays, reference_of, result_of
    from kernels.measure.timing import flush_bytes_for, summarize, time_gpu
    from kernels.tracing.trace import require_gpu

    gpu = require_gpu("numba")
    spec = open_kernel_file(STENCIL)[0]
    for p in SIZES:
        n = 1 << p
        shape = spec.launch_shape(n, None, gpu.sm_count)
        flush = flush_bytes_for(gpu.l2_bytes)
        inputs, out = make_arrays(spec, n, on_gpu=True, extra_bytes=flush)
        args = kernel_args(spec, inputs, out, n)
        stamps = torch.full((shape.grid_blocks, 3), -1, dtype=torch.int64, device="cuda")
        launches = {"plain": bind_numba(spec, shape, args)}
        launches.update({name: bind_numba_traced(spec, shape, args, stamps, probe)
                         for name, probe in DESIGNS.items()})
        want = reference_of(spec, inputs)
        row = {"elements": n, "blocks": shape.grid_blocks, "grid": list(shape.grid),
               "regs_driver": {}, "correct": {}, "rounds_median_us": {k: [] for k in launches}}
        for name, launch in launches.items():
            out.fill_(float("nan"))
            stamps.fill_(-1)
            first_run(spec, launch)
            torch.cuda.synchronize()
            row["correct"][name] = compare(result_of(launch, out), want, rtol=spec.rtol,
                                           atol=spec.atol).ok
            row["regs_driver"][name] = launch.resources().regs_per_thread
        order = list(launches)
        for r in range(rounds):  # rotated, so neither design always runs first or after the other
            for name in order[r % len(order):] + order[:r % len(order)]:
                times = time_gpu(launches[name].run, reps=20, flush_bytes=flush)
                row["rounds_median_us"][name].append(1e3 * summarize(times)[0])
        med = {k: float(np.median(v)) for k, v in row["rounds_median_us"].items()}
        row["median_us"] = med
        row["cost_percent"] = {k: 100 * (med[k] / med["plain"] - 1) for k in DESIGNS}
        row["cost_percent_per_round"] = {
            k: [100 * (a / b - 1) for a, b in zip(row["rounds_median_us"][k],
                                                 row["rounds_median_us"]["plain"])]
            for k in DESIGNS}
        row["schedule"] = {}
        for name in DESIGNS:  # one recorded launch each, after an L2 flush, as trace records
            stamps.fill_(-1)
            torch.empty(flush, dtype=torch.int8, device="cuda").zero_()
            torch.cuda.synchronize()
            launches[name].run()
            torch.cuda.synchronize()
            rows = stamps.cpu().numpy()
            np.savez_compressed(os.path.join(out_dir, NPZ_DIR, f"stamps_{name}_n{p}.npz"),
                                stamps=rows)
            row["schedule"][name] = schedule(rows)
        results["sizes"].append(row)
        print(f"2^{p}: " + ", ".join(f"{k} {v:.1f} us" for k, v in med.items())
              + "; cost " + ", ".join(f"{k} {v:+.1f}%" for k, v in row["cost_percent"].items())
              + f"; regs {row['regs_driver']}; correct {row['correct']}")
        del inputs, out, args, stamps, launches
        torch.cuda.empty_cache()


def main():
    dry = sys.argv[1] == "--dry-run"
    out_dir = sys.argv[-1]
    rounds = int(os.environ.get("ROUNDS", "5"))
    results = {"run": os.environ.get("RUN_NAME", "M stamps"), "kernel_file": STENCIL, "designs": DESIGNS, "rounds": rounds,
               "timing_method": "time_gpu(reps=20, flush_bytes=2 x L2): CUDA events, L2 flushed "
                                "before each rep; per round the median, over rounds the median",
               "sizes": []}
    static_part(results)
    os.makedirs(os.path.join(out_dir, NPZ_DIR), exist_ok=True)
    if not dry:
        gpu_part(results, out_dir, rounds)
    with open(os.path.join(out_dir, "stamps_cost.json"), "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=1)
    with open(os.path.join(out_dir, "stamps_summary.txt"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(summary_lines(results)) + "\n")


def summary_lines(results):
    """Each design's SASS facts and, per size, its time, cost per round and schedule."""
    lines = [f"=== {results['run']}: {results['kernel_file']} plain and stamped "
             f"({', '.join(f'{k}={v}' for k, v in results['designs'].items())}) ==="]
    for name, f in results["sass_sm90"].items():
        lines.append(f"sm_90 {name}: {f}" if name == "error" else
                     f"sm_90 {name:13} regs {f['regs']:3} instructions {f['instructions']:4} "
                     f"after the kernel's last store {f['tail_after_kernel_store']:3} "
                     f"(slow {f['tail_slow_ops']}) paths to EXIT {f['paths_to_exit']}")
    for s in results["sizes"]:
        lines.append(f"elements {s['elements']:,} ({s['blocks']:,} blocks), correct "
                     f"{s['correct']}, regs (driver) {s['regs_driver']}")
        for k, v in s["median_us"].items():
            line = f"  {k:13} {v:8.1f} us"
            if k in s["cost_percent"]:
                sched = s["schedule"][k]
                line += (f"  cost {s['cost_percent'][k]:+5.1f}% (rounds "
                         + " ".join(f"{c:+.1f}" for c in s["cost_percent_per_round"][k])
                         + f")  makespan {sched['makespan_us']:.1f} us, median block "
                         f"{sched['median_block_us']:.2f} us, peak "
                         f"{sched['median_peak_blocks_per_sm']:.0f}/SM")
            lines.append(line)
    return lines


main()
