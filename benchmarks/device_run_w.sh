#!/usr/bin/env bash
# GPU run W (2026-12-03, eighth session), one call under the 10-minute limit:
#   1. the GPC layout read off the hardware (benchmarks/gpc_probe.py: thread-block clusters), to
#      check the per-GPC DRAM share whose layout was read off the FIT traces' per-SM block counts;
#   2. issue 16's sixth blind set (benchmarks/jobs/blind_w.tsv), recorded after that change and
#      never fitted on;
#   3. the GPU's identity (uuid, serial, bus id), so that runs on one chip can be told apart.
#   bash benchmarks/device_run_w.sh OUT_DIR        (on the H200, from the repo root)
# Comes back as OUT_DIR/gpc_h200.json, OUT_DIR/blind_w.tar.xz, OUT_DIR/env_w.txt and logs
set -u
OUT=${1:?usage: device_run_w.sh OUT_DIR}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
. benchmarks/device_env.sh && device_env "$OUT/env_w.txt"
nvidia-smi --query-gpu=uuid,serial,pci.bus_id --format=csv,noheader >> "$OUT/env_w.txt" 2>&1
timeout --kill-after=5 90 $PY benchmarks/gpc_probe.py --out "$OUT/gpc_h200.json" > "$OUT/gpc.log" 2>&1
echo "gpc probe exit $?" >> "$OUT/env_w.txt"
TRACE_BUDGET_S=330 timeout --kill-after=10 360 bash benchmarks/trace_jobs.sh \
  benchmarks/jobs/blind_w.tsv "$OUT" blind_w > "$OUT/blind_w.log" 2>&1
echo "blind_w exit $?" >> "$OUT/env_w.txt"
cat "$OUT/env_w.txt" "$OUT/gpc.log"; tail -n 5 "$OUT/blind_w.log"
