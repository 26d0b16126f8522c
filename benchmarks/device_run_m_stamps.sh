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

# the timing part, shared with device_run_n_stamps.sh (run M's "row at entry" copy is gone: +11%;
# "numba" is now the default design)
cp benchmarks/stamps_cost.py "$OUT/logs/stamps_cost.py"

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
try:  # the designs' part, as benchmarks/stamps_cost.py wrote it
    lines = [open(os.path.join(out, "stamps_summary.txt"), encoding="utf-8").read().rstrip()]
except OSError as exc:
    lines = [f"no stamps_summary.txt ({exc}); logs/stamps_cost.log says why"]
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
