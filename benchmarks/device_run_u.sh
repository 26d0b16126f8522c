#!/usr/bin/env bash
# GPU run U (2026-12-03, sixth session): how reproducible issue 21's next-step measurements are.
# Runs S and T measured 24 held-out pairs once each (5 interleaved rounds); most direction misses
# were within +-5% where a launch's spread over its rounds reached 5.4%, over the 2% dead band.
# Here the same pairs, each set measured twice more in separate invocations of 15 rounds, so a
# pair's measured change can be compared run to run. No model change since run T: the
# predictions are the same (the JSONs hold them, made on the GPU before the measurements).
#   bash benchmarks/device_run_u.sh OUT_DIR        (on the H200, from the repo root)
set -u
OUT=${1:?usage: device_run_u.sh OUT_DIR}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
. benchmarks/device_env.sh && device_env "$OUT/env_u.txt"
for pairs in held-out-t held-out-s; do
  for rep in 1 2; do
    timeout --kill-after=10 200 $PY benchmarks/chooser_run.py --out "$OUT/ns" --only-next-step \
      --pairs "$pairs" --rounds 15 > "$OUT/${pairs}_$rep.log" 2>&1
    echo "$pairs rep $rep exit $?" >> "$OUT/env_u.txt"
    cp "$OUT/ns/chooser_h200.json" "$OUT/${pairs}_$rep.json" 2>/dev/null && rm -rf "$OUT/ns"
  done
done
cat "$OUT/env_u.txt"; grep -h "direction right" "$OUT"/*.log
