#!/usr/bin/env bash
# GPU run M, the stamps part (issue 19: the instrument's cost <= 5% at >= 2^24): the Numba stencil
# (resources/examples/stencil_numba.py) timed plain, stamped as in run J (probe
# "numba-row-at-exit": thread (0, 0, 0) finds its row and the SM after the kernel's work) and
# stamped as now (probe "numba": row, SM and start found at entry, branch-free; the exit keeps a
# timer read and three stores), at 2^24 and 2^26, all three in one process, in rotated order over
# ROUNDS rounds (CUDA events, L2 flushed before each rep, median of >= 20: run J's time_gpu). Each
# copy's result is checked, its stamps too, and the schedule each records (makespan, median block
# time, peak blocks per SM) is kept so the two designs can be laid side by side. Then
# `trace --kernel-file resources/examples/stencil_numba.py` at 2^24, 2^26 and 2^20 with the
# instrument as it is now, and `compare --json` on each (as run J).
#
#   bash benchmarks/device_run_m_stamps.sh OUT_DIR            # on the H200, from the repo root (~2 min)
#   bash benchmarks/device_run_m_stamps.sh --dry-run OUT_DIR  # here, no GPU: pyflakes on the Python
#       part, the three copies compiled for sm_90 (registers, SASS counts), and every trace
#       command must exit 2 with one line ("needs a GPU")
# Comes back under OUT_DIR: summary.txt, stamps_cost.json (timings per round, costs, the driver's
# registers, the sm_90 SASS facts, the schedules), traces_m.tar.xz (the three traces, their
# compares, each design's raw stamps as .npz) and logs.tgz.
set -u
DRY=0
if [ "${1:-}" = "--dry-run" ]; then DRY=1; shift; fi
OUT=${1:?usage: device_run_m_stamps.sh [--dry-run] OUT_DIR}
PY=${PYTHON:-python3}
M_TOTAL_S=${M_TOTAL_S:-140}  # the traces stop here; packing follows
export PYTHONUNBUFFERED=1 ROUNDS=${ROUNDS:-5}
mkdir -p "$OUT/logs" "$OUT/traces_m"
T0=$(date +%s)
say() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a "$OUT/logs/run.log" >&2; }
left() { echo $(( M_TOTAL_S - ($(date +%s) - T0) )); }

{ $PY -c "import sys, torch, triton, numpy; print(sys.version); print('torch', torch.__version__, 'triton', triton.__version__, 'numpy', numpy.__version__); print(torch.cuda.get_device_name() if torch.cuda.is_available() else 'no CUDA GPU')"
  $PY -c "import numba_cuda; print('numba-cuda', numba_cuda.__version__)"
  git log -1 --format='commit %H %s' 2>/dev/null; git status --short 2>/dev/null | head -20; } > "$OUT/logs/env.txt" 2>&1

cat > "$OUT/logs/stamps_cost.py" <<'EOF'
"""The stencil plain and under both stamp designs: sm_90 SASS facts, then (on a GPU) timings."""
import json
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.getcwd())
from kernels.build.toolchain import cuobjdump, ptx_to_cubin, res_usage  # noqa: E402
from kernels.launching.compat import numba_cuda  # noqa: E402
from kernels.tracing.numba_stamps import bind_numba_traced, instrument_numba  # noqa: E402

STENCIL = "resources/examples/stencil_numba.py"
DESIGNS = {"row_at_exit": "numba-row-at-exit", "row_at_entry": "numba"}  # name -> probe
SIZES = (24, 26)
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
            **{f"{op}_count": count(op, ins) for op in ("LDG", "STG", "S2R", "S2UR", "CS2R",
                                                         "LDC", "BRA", "EXIT")},
            "tail_after_kernel_store": len(tail), "tail_slow_ops": count(SLOW, tail),
            "tail": tail}


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
        for name, probe in DESIGNS.items():
            facts[name] = sass_facts(instrument_numba(spec.kernel, probe).py_func, (i2, f2, f2))
    except Exception as exc:  # a toolchain this machine lacks: the timings still count
        facts["error"] = f"{type(exc).__name__}: {exc}"[:500]
    results["sass_sm90"] = facts
    for name, f in facts.items():
        if name != "error":
            print(f"sm_90 {name:13} regs {f['regs']:3} instructions {f['instructions']:4} "
                  f"after the kernel's last store {f['tail_after_kernel_store']:3} "
                  f"(slow ops {f['tail_slow_ops']})")


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
            np.savez_compressed(os.path.join(out_dir, "traces_m", f"stamps_{name}_n{p}.npz"),
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
    results = {"run": "M stamps", "kernel_file": STENCIL, "designs": DESIGNS, "rounds": rounds,
               "timing_method": "time_gpu(reps=20, flush_bytes=2 x L2): CUDA events, L2 flushed "
                                "before each rep; per round the median, over rounds the median",
               "sizes": []}
    static_part(results)
    if not dry:
        gpu_part(results, out_dir, rounds)
    with open(os.path.join(out_dir, "stamps_cost.json"), "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=1)


main()
EOF

dryflag=(); [ "$DRY" = 1 ] && dryflag=(--dry-run)
: > "$OUT/logs/status.txt"
if [ "$DRY" = 1 ]; then
  $PY -m pyflakes "$OUT/logs/stamps_cost.py" > "$OUT/logs/pyflakes.txt" 2>&1 \
    || echo "DRY RUN FAILED: pyflakes: $(head -c 600 "$OUT/logs/pyflakes.txt")" | tee -a "$OUT/logs/status.txt" >&2
fi
say "stencil plain / row at exit / row at entry ($ROUNDS rounds)"
timeout --kill-after=5 90 $PY "$OUT/logs/stamps_cost.py" "${dryflag[@]}" "$OUT" > "$OUT/logs/stamps_cost.log" 2>&1
echo "stamps_cost exit status $?" | tee -a "$OUT/logs/status.txt" >&2
tail -n 6 "$OUT/logs/stamps_cost.log" >&2

: > "$OUT/logs/commands.tsv"
for p in 24 26 20; do
  name="stencil_numba_n$p"
  cmd="$PY main.py trace --kernel-file resources/examples/stencil_numba.py --elements 2^$p --out $OUT/traces_m/$name.json"
  secs=$(left); [ "$secs" -gt 60 ] && secs=60
  if [ "$secs" -lt 15 ]; then
    echo "$name not run: the time is spent" | tee -a "$OUT/logs/status.txt" >&2; continue
  fi
  say "$name (limit $secs s): $cmd"
  echo "\$ $cmd" > "$OUT/logs/$name.log"
  timeout --kill-after=5 "$secs" $cmd >> "$OUT/logs/$name.log" 2>&1
  rc=$?
  echo "$name exit status $rc" | tee -a "$OUT/logs/status.txt" >&2
  printf '%s\t%s\t%s\n' "$name" "$rc" "$cmd" >> "$OUT/logs/commands.tsv"
  if [ "$DRY" = 1 ]; then  # no GPU: the one-line refusal, exit 2, and no trace file
    lines=$(grep -vc '^\$ ' "$OUT/logs/$name.log")
    if [ "$rc" != 2 ] || [ "$lines" != 1 ] || ! grep -q "needs a GPU" "$OUT/logs/$name.log" \
       || [ -e "$OUT/traces_m/$name.json" ]; then
      echo "DRY RUN FAILED: $name exit $rc, $lines lines" | tee -a "$OUT/logs/status.txt" >&2
    fi
  elif [ "$rc" = 0 ]; then
    $PY main.py compare --json "$OUT/traces_m/$name.json" > "$OUT/traces_m/$name.compare.json" \
      2> "$OUT/logs/$name.compare.log" &
  fi
done
say "waiting for the compares"
wait

$PY - "$OUT" > "$OUT/summary.txt" 2>> "$OUT/logs/status.txt" <<'EOF'
import json, os, sys
out = sys.argv[1]
lines = ["=== run M, stamps: the Numba stencil plain and under both stamp designs ==="]
try:
    with open(os.path.join(out, "stamps_cost.json"), encoding="utf-8") as fh:
        r = json.load(fh)
except (OSError, ValueError) as exc:
    r = {"sass_sm90": {}, "sizes": []}
    lines.append(f"no stamps_cost.json ({exc}); logs/stamps_cost.log says why")
for name, f in r["sass_sm90"].items():
    lines.append(f"sm_90 {name}: {f}" if name == "error" else
                 f"sm_90 {name:13} regs {f['regs']:3} instructions {f['instructions']:4} "
                 f"after the kernel's last store {f['tail_after_kernel_store']:3} (slow {f['tail_slow_ops']})")
for s in r["sizes"]:
    lines.append(f"elements {s['elements']:,} ({s['blocks']:,} blocks), correct {s['correct']}, "
                 f"regs (driver) {s['regs_driver']}")
    for k, v in s["median_us"].items():
        cost = s["cost_percent"].get(k)
        sched = s["schedule"].get(k, {})
        lines.append(f"  {k:13} {v:8.1f} us" + (f"  cost {cost:+5.1f}% (rounds "
                     + " ".join(f"{c:+.1f}" for c in s["cost_percent_per_round"][k]) + ")"
                     f"  makespan {sched['makespan_us']:.1f} us, median block {sched['median_block_us']:.2f} us, "
                     f"peak {sched['median_peak_blocks_per_sm']:.0f}/SM" if cost is not None else ""))
lines.append("trace --kernel-file (the instrument as now):")
for line in open(os.path.join(out, "logs", "commands.tsv"), encoding="utf-8"):
    name, status, _ = line.rstrip("\n").split("\t", 2)
    try:
        with open(os.path.join(out, "traces_m", f"{name}.json"), encoding="utf-8") as fh:
            meta = json.load(fh)["meta"]
        with open(os.path.join(out, "traces_m", f"{name}.compare.json"), encoding="utf-8") as fh:
            c = json.load(fh)
        lines.append(f"  {name:20} plain {meta['untraced_median_us']:8.1f} us  stamped "
                     f"{meta['traced_median_us']:8.1f} us  cost {meta['overhead_percent']:+5.1f}%  "
                     f"regs {meta['regs_per_thread']} (plain {meta['untraced_regs_per_thread']})  "
                     f"makespan rec/sim {c['recorded_makespan_us']:.1f}/{c['simulated_makespan_us']:.1f} us "
                     f"({100 * c['makespan_error']:+.1f}%)")
    except (OSError, ValueError, KeyError) as exc:
        lines.append(f"  {name:20} exit status {status}; {type(exc).__name__}: {exc}"[:200])
print("\n".join(lines))
EOF
cat "$OUT/logs/status.txt" >> "$OUT/summary.txt"

say "packing"
export XZ_OPT="-1 -T0"
(cd "$OUT" && tar -cJf traces_m.tar.xz traces_m && rm -rf traces_m)
cp "$OUT/summary.txt" "$OUT/logs/"
say "done"
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
cat "$OUT/summary.txt"
