#!/usr/bin/env bash
# GPU run M (2026-12-02, second session): one call per part, each under the 10-minute limit.
#   bash benchmarks/device_run_m.sh traces OUT_DIR   # the Numba stamps' cost, then the blind traces
#   bash benchmarks/device_run_m.sh matmul OUT_DIR   # the Hopper (TMA) matmul against cuBLAS
# Each part leaves one archive (or a few files) under OUT_DIR, and OUT_DIR/env_PART.txt.
set -u
PART=${1:?usage: device_run_m.sh traces|matmul OUT_DIR}
OUT=${2:?usage: device_run_m.sh traces|matmul OUT_DIR}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  $PY -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  $PY -c "import numba_cuda; print('numba-cuda', numba_cuda.__version__)"
  git log -1 --format='commit %H %s' 2>/dev/null; } > "$OUT/env_$PART.txt" 2>&1
case "$PART" in
  traces)
    [ -f benchmarks/device_run_m_stamps.sh ] && \
      timeout --kill-after=10 200 bash benchmarks/device_run_m_stamps.sh "$OUT/stamps" > "$OUT/stamps.log" 2>&1
    echo "stamps exit $?" >> "$OUT/env_$PART.txt"
    M_BLIND_S=230 timeout --kill-after=10 260 bash benchmarks/device_run_m_blind.sh "$OUT" > "$OUT/blind.log" 2>&1
    echo "blind exit $?" >> "$OUT/env_$PART.txt"
    [ -d "$OUT/stamps" ] && (cd "$OUT" && tar -czf stamps.tgz stamps stamps.log && rm -rf stamps stamps.log) ;;
  matmul)
    timeout --kill-after=10 540 bash benchmarks/device_run_m_matmul.sh "$OUT/matmul" > "$OUT/matmul.log" 2>&1
    echo "matmul exit $?" >> "$OUT/env_$PART.txt"
    (cd "$OUT" && tar -czf matmul.tgz matmul matmul.log && rm -rf matmul matmul.log) ;;
  *) echo "unknown part $PART" >&2; exit 2 ;;
esac
cat "$OUT/env_$PART.txt"
