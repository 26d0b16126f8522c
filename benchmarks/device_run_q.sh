#!/usr/bin/env bash
# GPU run Q (2026-12-02, third session), one call under the 10-minute limit:
#   1. issue 16's new blind set (benchmarks/jobs/blind_q.tsv), recorded before this session's model
#      changes and never fitted on;
#   2. issue 21: TMA stream-K's loop flags, tiles, stages and GROUP_M at run P's nine cuBLAS dips
#      and the two squares, beside cuBLAS (benchmarks/tile_explore.py --set tma-sk), exploration.
#   bash benchmarks/device_run_q.sh OUT_DIR        (on the H200, from the repo root)
# Comes back as OUT_DIR/blind_q.tar.xz, OUT_DIR/explore_q.tgz and OUT_DIR/env_q.txt.
set -u
OUT=${1:?usage: device_run_q.sh OUT_DIR}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
  $PY -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  $PY -c "import numba_cuda; print('numba-cuda', numba_cuda.__version__)"
  git log -1 --format='commit %H %s' 2>/dev/null; } > "$OUT/env_q.txt" 2>&1
TRACE_BUDGET_S=200 timeout --kill-after=10 230 bash benchmarks/trace_jobs.sh \
  benchmarks/jobs/blind_q.tsv "$OUT" blind_q > "$OUT/blind_q.log" 2>&1
echo "blind_q exit $?" >> "$OUT/env_q.txt"
mkdir -p "$OUT/explore_q"
timeout --kill-after=10 260 $PY benchmarks/tile_explore.py --set tma-sk --rounds 3 --budget-s 230 \
  --out "$OUT/explore_q" > "$OUT/explore_q/explore.log" 2>&1
echo "explore exit $? (124: past its 260 s limit; the JSON holds what was done)" >> "$OUT/env_q.txt"
(cd "$OUT" && tar -czf explore_q.tgz explore_q && rm -rf explore_q)
cat "$OUT/env_q.txt"; tail -n 3 "$OUT/blind_q.log"
