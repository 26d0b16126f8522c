#!/usr/bin/env bash
# GPU run T (2026-12-03, fifth session), one call under the 10-minute limit, after the drain change
# (d906f6e: a staggered SM's later load rounds wait out their trips while its other blocks stream),
# to test it on what it has not seen:
#   1. issue 16's fourth blind set (benchmarks/jobs/blind_t.tsv), never fitted on;
#   2. issue 21's next step on 12 more held-out pairs (benchmarks/chooser_run.py --pairs
#      held-out-t), before and after interleaved in 5 rounds; the JSON holds the predictions this
#      commit made on the GPU before the measurements.
#   bash benchmarks/device_run_t.sh OUT_DIR        (on the H200, from the repo root)
# Comes back as OUT_DIR/blind_t.tar.xz, OUT_DIR/next_step_t.json, OUT_DIR/logs_t.tgz, OUT_DIR/env_t.txt
set -u
OUT=${1:?usage: device_run_t.sh OUT_DIR}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
. benchmarks/device_env.sh && device_env "$OUT/env_t.txt"
TRACE_BUDGET_S=200 timeout --kill-after=10 230 bash benchmarks/trace_jobs.sh \
  benchmarks/jobs/blind_t.tsv "$OUT" blind_t > "$OUT/blind_t.log" 2>&1
echo "blind_t exit $?" >> "$OUT/env_t.txt"
timeout --kill-after=10 150 $PY benchmarks/chooser_run.py --out "$OUT/ns" --only-next-step \
  --pairs held-out-t --rounds 5 > "$OUT/next_step_t.log" 2>&1
echo "next step exit $?" >> "$OUT/env_t.txt"
cp "$OUT/ns/chooser_h200.json" "$OUT/next_step_t.json" 2>/dev/null && rm -rf "$OUT/ns"
(cd "$OUT" && tar -czf logs_t.tgz next_step_t.log blind_t.log)
cat "$OUT/env_t.txt"; tail -n 16 "$OUT/next_step_t.log"
