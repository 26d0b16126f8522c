#!/usr/bin/env bash
# GPU run A, part 2 (2026-12-01): the Triton matmuls, wave quantization, per-tile traces.
set -u
OUT=${1:?usage: device_run_a2.sh OUT_DIR}
export PYTHONUNBUFFERED=1
timeout 230 python3 benchmarks/matmul_run.py --out "$OUT" --budget-s 190 2>&1 | tail -n 400 > "$OUT/matmul_log.txt"
tail -n 45 "$OUT/matmul_log.txt"
ls -la "$OUT"
