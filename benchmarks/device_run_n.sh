#!/usr/bin/env bash
# GPU run N (2026-12-02): the Numba stamp designs timed (benchmarks/device_run_n_stamps.sh), then
# matmul_auto's confirmation sweep (benchmarks/device_run_n_matmul.sh). One call, < 10 minutes.
#   bash benchmarks/device_run_n.sh OUT_DIR     # on the H200, from the repo root
set -u
OUT=${1:?usage: device_run_n.sh OUT_DIR}
mkdir -p "$OUT"
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  python3 -c "import numba_cuda; print('numba-cuda', numba_cuda.__version__)"; } > "$OUT/env_n.txt" 2>&1
timeout --kill-after=10 150 bash benchmarks/device_run_n_stamps.sh "$OUT/stamps" > "$OUT/stamps.log" 2>&1
echo "stamps exit $?" >> "$OUT/env_n.txt"
timeout --kill-after=10 300 bash benchmarks/device_run_n_matmul.sh "$OUT/matmul" > "$OUT/matmul.log" 2>&1
echo "matmul exit $?" >> "$OUT/env_n.txt"
(cd "$OUT" && tar -czf stamps.tgz stamps stamps.log && rm -rf stamps stamps.log)
(cd "$OUT" && tar -czf matmul.tgz matmul matmul.log && rm -rf matmul matmul.log)
cat "$OUT/env_n.txt"
