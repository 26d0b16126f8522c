#!/usr/bin/env bash
# One GPU call under the 10-minute limit for a blind trace set (eighth session on: runs W, X):
#   1. the GPU and its identity (device_env: uuid, serial, bus id), to tell chips apart;
#   2. the GPC layout read off the hardware (benchmarks/gpc_probe.py: thread-block clusters);
#   3. the blind set benchmarks/jobs/blind_<SET>.tsv, recorded and never fitted on.
#   bash benchmarks/device_run_blind.sh SET OUT_DIR        (on the H200, from the repo root)
# Run W was `bash benchmarks/device_run_w.sh $OUT`, this script with SET w before it took the set.
# Comes back as OUT_DIR/gpc_<SET>_h200.json, OUT_DIR/blind_<SET>.tar.xz, OUT_DIR/env_<SET>.txt, logs
set -u
SET=${1:?usage: device_run_blind.sh SET OUT_DIR}
OUT=${2:?usage: device_run_blind.sh SET OUT_DIR}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
. benchmarks/device_env.sh && device_env "$OUT/env_$SET.txt"
timeout --kill-after=5 90 $PY benchmarks/gpc_probe.py --out "$OUT/gpc_${SET}_h200.json" > "$OUT/gpc_$SET.log" 2>&1
echo "gpc probe exit $?" >> "$OUT/env_$SET.txt"
TRACE_BUDGET_S=330 timeout --kill-after=10 360 bash benchmarks/trace_jobs.sh \
  "benchmarks/jobs/blind_$SET.tsv" "$OUT" "blind_$SET" > "$OUT/blind_$SET.log" 2>&1
echo "blind_$SET exit $?" >> "$OUT/env_$SET.txt"
cat "$OUT/env_$SET.txt" "$OUT/gpc_$SET.log"; tail -n 5 "$OUT/blind_$SET.log"
