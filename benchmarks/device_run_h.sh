#!/usr/bin/env bash
# GPU run H (issue 21): matmul_auto, its nine candidates and cuBLAS over the M=1024, K=8192
# sawtooth (N = 2048..16384 step 256) and at 4096^3 and 8192^3, bf16, do_bench medians; then the
# next-step advice measured (Triton num_warps / BLOCK_SIZE, Numba threads, register caps, shared
# memory). At most 6 minutes; results in $OUT (default ./out): chooser_h200.json and the log.
# Usage on the device machine, from the repo root:  bash benchmarks/device_run_h.sh [OUT]
# (here, without a GPU: bash benchmarks/device_run_h.sh /tmp/h --dry-run)
set -u
OUT=${1:-${OUT:-out}}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit \
  --format=csv > "$OUT/nvidia_smi.txt" 2>&1
timeout 345 python3 benchmarks/chooser_run.py --out "$OUT" --budget-s 320 "${@:2}" 2>&1 | tee "$OUT/chooser_run.log" \
  | grep -v "^  N=\|^  advice " 
status=${PIPESTATUS[0]}
echo "chooser_run exit status $status (124: past its 345 s limit; the JSON holds what was done)"
ls -la "$OUT"
# the summary table last
sed -n '/^Summary/,$p' "$OUT/chooser_run.log"
