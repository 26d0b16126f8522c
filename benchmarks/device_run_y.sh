#!/usr/bin/env bash
# GPU run Y (2026-12-03, eighth session): issue 21's next step on 12 more held-out pairs
# (benchmarks/chooser_run.py --pairs held-out-y), before and after interleaved in 5 rounds, after
# the per-SM DRAM shares landed; the JSON holds the predictions the tree made on the GPU first.
#   bash benchmarks/device_run_y.sh OUT_DIR        (on the H200, from the repo root)
# Comes back as OUT_DIR/next_step_y.json, OUT_DIR/next_step_y.log, OUT_DIR/env_y.txt
set -u
OUT=${1:?usage: device_run_y.sh OUT_DIR}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
. benchmarks/device_env.sh && device_env "$OUT/env_y.txt"
timeout --kill-after=10 300 $PY benchmarks/chooser_run.py --out "$OUT/ns" --only-next-step \
  --pairs held-out-y --rounds 5 > "$OUT/next_step_y.log" 2>&1
echo "next step exit $?" >> "$OUT/env_y.txt"
cp "$OUT/ns/chooser_h200.json" "$OUT/next_step_y.json" 2>/dev/null && rm -rf "$OUT/ns"
cat "$OUT/env_y.txt"; tail -n 18 "$OUT/next_step_y.log"
