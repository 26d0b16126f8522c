#!/usr/bin/env bash
# GPU run N, the stamps part (issue 19: the instrument's cost <= 5% at >= 2^24): the Numba stencil
# (resources/examples/stencil_numba.py) timed plain and under four stamp designs (probes of
# kernels/tracing/instrument.py), at 2^24 and 2^26, all in one process, in rotated order over
# ROUNDS rounds (benchmarks/stamps_cost.py, run M's timing part: CUDA events, L2 flushed before
# each rep, median of 20 per round, median over rounds; each copy's result checked, its stamps'
# schedule kept). Entry is one timer read in every design; the exits:
#   row_at_exit  "numba-row-at-exit"  run J's: the row found in Numba code (64-bit signed math)
#   exit         "numba-exit"         one intrinsic, 32-bit unsigned index, all three axes
#   exit_dims    "numba-exit-dims"    the same, the launch's grid/block dims baked in
#   exit_split   "numba-exit-split"   the same, pushed into both branches of a trailing if
#                                     (the default, probe "numba")
# Then `trace --kernel-file ... --elements 2^24` with the default design.
#
#   bash benchmarks/device_run_n_stamps.sh OUT_DIR            # on the H200, from the repo root (~1.5 min)
#   bash benchmarks/device_run_n_stamps.sh --dry-run OUT_DIR  # here, no GPU: pyflakes, the sm_90
#       SASS facts of every design, and the trace command must exit 2 with one line ("needs a GPU")
# Comes back under OUT_DIR: summary.txt, stamps_cost.json (timings per round, costs, driver
# registers, SASS facts, schedules), stencil_n24.json (the trace), stamps_npz/ (each design's raw
# stamps), logs/.
set -u
DRY=0
if [ "${1:-}" = "--dry-run" ]; then DRY=1; shift; fi
OUT=${1:?usage: device_run_n_stamps.sh [--dry-run] OUT_DIR}
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 ROUNDS=${ROUNDS:-5} RUN_NAME="run N stamps" NPZ_DIR=stamps_npz \
  STAMP_SIZES=24,26 \
  STAMP_DESIGNS=row_at_exit=numba-row-at-exit,exit=numba-exit,exit_dims=numba-exit-dims,exit_split=numba-exit-split
mkdir -p "$OUT/logs"
T0=$(date +%s)
say() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a "$OUT/logs/run.log" >&2; }
: > "$OUT/logs/status.txt"
fail() { echo "FAILED: $*" | tee -a "$OUT/logs/status.txt" >&2; }

{ $PY -c "import sys, torch, triton, numpy; print(sys.version); print('torch', torch.__version__, 'triton', triton.__version__); print(torch.cuda.get_device_name() if torch.cuda.is_available() else 'no CUDA GPU')"
  $PY -c "import numba_cuda; print('numba-cuda', numba_cuda.__version__)"
  git log -1 --format='commit %H %s' 2>/dev/null; git status --short 2>/dev/null | head -20; } > "$OUT/logs/env.txt" 2>&1

dryflag=(); [ "$DRY" = 1 ] && dryflag=(--dry-run)
if [ "$DRY" = 1 ]; then
  $PY -m pyflakes benchmarks/stamps_cost.py > "$OUT/logs/pyflakes.txt" 2>&1 \
    || fail "pyflakes: $(head -c 600 "$OUT/logs/pyflakes.txt")"
fi
say "stencil plain / $STAMP_DESIGNS ($ROUNDS rounds)"
timeout --kill-after=5 80 $PY benchmarks/stamps_cost.py "${dryflag[@]}" "$OUT" > "$OUT/logs/stamps_cost.log" 2>&1
rc=$?
echo "stamps_cost exit status $rc" >> "$OUT/logs/status.txt"
[ "$rc" = 0 ] || fail "stamps_cost exit $rc: $(tail -c 800 "$OUT/logs/stamps_cost.log")"

cmd="$PY main.py trace --kernel-file resources/examples/stencil_numba.py --elements 2^24 --out $OUT/stencil_n24.json"
say "trace (default design): $cmd"
echo "\$ $cmd" > "$OUT/logs/trace_n24.log"
timeout --kill-after=5 35 $cmd >> "$OUT/logs/trace_n24.log" 2>&1
rc=$?
echo "trace exit status $rc" >> "$OUT/logs/status.txt"
if [ "$DRY" = 1 ]; then  # no GPU: the one-line refusal, exit 2, and no trace file
  lines=$(grep -vc '^\$ ' "$OUT/logs/trace_n24.log")
  if [ "$rc" != 2 ] || [ "$lines" != 1 ] || ! grep -q "needs a GPU" "$OUT/logs/trace_n24.log" \
     || [ -e "$OUT/stencil_n24.json" ]; then
    fail "trace exit $rc, $lines lines: $(tail -c 400 "$OUT/logs/trace_n24.log")"
  fi
elif [ "$rc" != 0 ]; then
  fail "trace exit $rc: $(tail -c 400 "$OUT/logs/trace_n24.log")"
fi

$PY - "$OUT" > "$OUT/summary.txt" 2>> "$OUT/logs/status.txt" <<'EOF'
import json, os, sys
out = sys.argv[1]
try:
    print(open(os.path.join(out, "stamps_summary.txt"), encoding="utf-8").read().rstrip())
except OSError as exc:
    print(f"no stamps_summary.txt ({exc}); logs/stamps_cost.log says why")
try:
    with open(os.path.join(out, "stencil_n24.json"), encoding="utf-8") as fh:
        meta = json.load(fh)["meta"]
    print(f"trace --kernel-file stencil 2^24 (default design): plain {meta['untraced_median_us']:.1f} us"
          f"  stamped {meta['traced_median_us']:.1f} us  cost {meta['overhead_percent']:+.1f}%  regs "
          f"{meta['regs_per_thread']} (plain {meta['untraced_regs_per_thread']})")
except (OSError, ValueError, KeyError) as exc:
    print(f"trace: {type(exc).__name__}: {exc}"[:300])
EOF
cat "$OUT/logs/status.txt" >> "$OUT/summary.txt"
say "done"
cat "$OUT/summary.txt"
