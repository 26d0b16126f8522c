#!/usr/bin/env bash
# GPU run A, part 1 (2026-12-01): how the H200 fills its SMs (dispatch traces) and latency hiding.
# Usage on the device machine, from the repo root: bash benchmarks/device_run_a.sh $OUT
set -u
OUT=${1:?usage: device_run_a.sh OUT_DIR}
export PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv;
  python3 -c "import torch, triton, numpy; print('torch', torch.__version__, 'triton', triton.__version__, 'numpy', numpy.__version__)"; } 2>&1 | tee "$OUT/env_a.txt"
timeout 230 python3 benchmarks/dispatch_run.py --out "$OUT" --budget-s 200 2>&1 | tail -n 400 > "$OUT/dispatch_log.txt"
tail -n 25 "$OUT/dispatch_log.txt"
timeout 160 python3 benchmarks/latency_run.py --out "$OUT" --budget-s 130 2>&1 | tail -n 300 > "$OUT/latency_log.txt"
tail -n 30 "$OUT/latency_log.txt"
ls -la "$OUT"
