#!/usr/bin/env bash
# GPU run B (2026-12-01): the dispatch model's blind test (traces recorded after it was frozen),
# the Triton-binary bisection, `calibrate` end to end, and `bench --waves-sweep` end to end.
# Usage on the device machine, from the repo root: bash benchmarks/device_run_b.sh $OUT
set -u
OUT=${1:?usage: device_run_b.sh OUT_DIR}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT/logs"
timeout 130 python3 benchmarks/dispatch_validate.py --out "$OUT/validate" --budget-s 100 > "$OUT/logs/validate.log" 2>&1
tail -n 4 "$OUT/logs/validate.log"
timeout 90 python3 benchmarks/dispatch_bisect.py --out "$OUT" --budget-s 70 > "$OUT/logs/bisect.log" 2>&1
tail -n 20 "$OUT/logs/bisect.log"
timeout 200 python3 -m kernels.cli calibrate --out "$OUT/H200-calibrated.json" --keep-traces "$OUT/calibrate_traces" --fit-seconds 100 > "$OUT/logs/calibrate.log" 2>&1
tail -n 8 "$OUT/logs/calibrate.log"
timeout 170 python3 -m kernels.cli bench --waves-sweep M=1024,K=8192,N=256..14080x512 --reps 10 --out "$OUT/waves_h200.json" > "$OUT/logs/waves.log" 2>&1
tail -n 12 "$OUT/logs/waves.log"
tar -czf "$OUT/calibrate_traces.tgz" -C "$OUT" calibrate_traces 2>/dev/null && rm -rf "$OUT/calibrate_traces"
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
ls -laR "$OUT" | head -30
