#!/usr/bin/env bash
# GPU run J-dispatch (issue 16, register-limited schedule): a blind set of `trace --hold-regs`
# traces at settings tests/data/limits_h200 lacks (16, 20, 26, 32 at 2 warps, 40 at 2 and 16
# warps, 64 at 1 warp, 80 registers; 20, 50 and 200 us; sleep with held registers), to score the dispatch
# model's register rule on. About 20-40 s on an H200 (one process; 20 launches of <= 1.5 ms,
# each compiled first); hard limit 85 s. Output: a trace bundle in $OUT plus the log.
# Usage on the device machine, from the repo root:  bash benchmarks/device_run_j_dispatch.sh OUT
# (here, without a GPU: bash benchmarks/device_run_j_dispatch.sh /tmp/j --dry-run)
# Then, anywhere:
#   python3 benchmarks/dispatch_score.py OUT              # the bar per trace
#   python3 benchmarks/dispatch_regs_fit.py --blind OUT   # register rule off vs on, per trace
set -u
OUT=${1:-${OUT:-out}}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv \
  > "$OUT/nvidia_smi.txt" 2>&1
timeout 85 python3 benchmarks/dispatch_regs_record.py --out "$OUT" --budget-s 70 "${@:2}" 2>&1 \
  | tee "$OUT/dispatch_regs_record.log"
status=${PIPESTATUS[0]}
echo "dispatch_regs_record exit status $status (124: past its 85 s limit)"
ls -la "$OUT"
exit "$status"
