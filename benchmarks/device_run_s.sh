#!/usr/bin/env bash
# GPU run S (2026-12-02, fourth session), one call under the 10-minute limit, before this session's
# model changes:
#   1. issue 16's third blind set (benchmarks/jobs/blind_s.tsv), never fitted on;
#   2. issue 21's next step on 12 held-out pairs (benchmarks/chooser_run.py --pairs held-out-s),
#      before and after interleaved in 5 rounds;
#   3. issue 21's chooser sweep again on the unchanged code (run R's command, 3 rounds): 4096^3,
#      8192^3 and run P's nine cuBLAS dips first, then the sawtooth while its budget lasts.
#   bash benchmarks/device_run_s.sh OUT_DIR        (on the H200, from the repo root)
# Comes back as OUT_DIR/blind_s.tar.xz, OUT_DIR/next_step_s.json, OUT_DIR/mm.tgz, OUT_DIR/env_s.txt
set -u
OUT=${1:?usage: device_run_s.sh OUT_DIR}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
  $PY -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  $PY -c "import numba_cuda; print('numba-cuda', numba_cuda.__version__)"
  git log -1 --format='commit %H %s' 2>/dev/null; } > "$OUT/env_s.txt" 2>&1
TRACE_BUDGET_S=190 timeout --kill-after=10 220 bash benchmarks/trace_jobs.sh \
  benchmarks/jobs/blind_s.tsv "$OUT" blind_s > "$OUT/blind_s.log" 2>&1
echo "blind_s exit $?" >> "$OUT/env_s.txt"
timeout --kill-after=10 120 $PY benchmarks/chooser_run.py --out "$OUT/ns" --only-next-step \
  --pairs held-out-s --rounds 5 > "$OUT/next_step_s.log" 2>&1
echo "next step exit $?" >> "$OUT/env_s.txt"
cp "$OUT/ns/chooser_h200.json" "$OUT/next_step_s.json" 2>/dev/null && rm -rf "$OUT/ns"
DIPS=3328,4352,5376,6400,8704,9472,10240,10752,12800 EXTRAS=before-q \
  timeout --kill-after=10 200 bash benchmarks/device_run_o_matmul.sh "$OUT/mm" > "$OUT/mm.log" 2>&1
echo "matmul exit $?" >> "$OUT/env_s.txt"
(cd "$OUT" && tar -czf mm.tgz mm mm.log next_step_s.log blind_s.log && rm -rf mm mm.log)
cat "$OUT/env_s.txt"; tail -n 4 "$OUT/next_step_s.log"
