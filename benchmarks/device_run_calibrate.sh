#!/usr/bin/env bash
# `main.py calibrate` on the H200 (eighth session): the dispatch fit and, new, the two long adds
# that tell which SMs of this chip move bytes faster (sim.traces.sm_share), written as the user's
# profile's "dram_share"; then what the launch model reads from it.
#   bash benchmarks/device_run_calibrate.sh OUT_DIR        (on the H200, from the repo root)
# Comes back as OUT_DIR/env_cal.txt, calibrate.log, the profile (H200.json), cal_traces.tar.xz
set -u
OUT=${1:?usage: device_run_calibrate.sh OUT_DIR}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
. benchmarks/device_env.sh && device_env "$OUT/env_cal.txt"
export XDG_CONFIG_HOME=/tmp/cal_cfg PYTHONUNBUFFERED=1
timeout --kill-after=10 420 $PY main.py calibrate --fit-seconds 120 --keep-traces /tmp/cal_traces \
  > "$OUT/calibrate.log" 2>&1
echo "calibrate exit $?" >> "$OUT/env_cal.txt"
cp /tmp/cal_cfg/warpscope/dispatch/*.json "$OUT/" 2>/dev/null
(cd /tmp && XZ_OPT="-1 -T0" tar -cJf "$OUT/cal_traces.tar.xz" cal_traces) 2>/dev/null
$PY - >> "$OUT/env_cal.txt" 2>&1 <<'PY'
from kernels.tracing.trace import require_gpu
from sim.schedule.dispatch_profile import dram_share_for
gpu = require_gpu()
share = dram_share_for(gpu)
print("the model reads for", gpu.name, ":", share.as_constant().label if share else None,
      sorted(share.faster_sms) if share else None, share.share if share else None)
PY
cat "$OUT/env_cal.txt"; grep -v "^\[" "$OUT/calibrate.log" | tail -n 8
