#!/usr/bin/env bash
# GPU run C (2026-12-01): the real window on the H200 (start-up, a live sweep, a recorded sweep
# opened, the Experiments tab: the longest GUI-thread stall of each, and screenshots), then the
# matmul waves sweep through the CLI end to end (run B's 112-point sweep ran past its limit).
# Usage on the device machine, from the repo root, with .qtcarry carried:
#     bash benchmarks/device_run_c.sh $OUT
set -u
OUT=${1:?usage: device_run_c.sh OUT_DIR}
export PYTHONUNBUFFERED=1
bash benchmarks/gui_on_device.sh "$OUT"
mkdir -p "$OUT/logs"
timeout 170 python3 -m kernels.cli bench --waves-sweep M=1024,K=8192,N=256..14080x1024 --reps 5 \
  --out "$OUT/waves_h200_cli.json" > "$OUT/logs/waves.log" 2>&1
echo "waves sweep exit status $?"
tail -n 6 "$OUT/logs/waves.log"
tar -czf "$OUT/logs.tgz" -C "$OUT" logs gui_stalls.log 2>/dev/null && rm -rf "$OUT/logs"
ls -laR "$OUT" | head -30
