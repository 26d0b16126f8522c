#!/usr/bin/env bash
# Nsight Compute reports of four launches, for `compare --ncu` and tests/data/ncu:
#   bash benchmarks/record_ncu.sh OUT_DIR        (on a lent GPU, from the repo root; ~1-2 min)
# Writes OUT_DIR/ncu_<kernel>.csv (ncu --csv --page details: LaunchStats, Occupancy, SpeedOfLight's
# Duration and the DRAM bytes; kernel names without their parameters), OUT_DIR/<kernel>.json (the
# launch as WarpScope bound it), OUT_DIR/device.txt (the GPU, driver, ncu and library versions).
set -u
OUT=${1:?usage: record_ncu.sh OUT_DIR}
PY=${PYTHON:-python3}
NCU=${NCU:-ncu}
mkdir -p "$OUT"
. benchmarks/device_env.sh && device_env "$OUT/device.txt"
"$NCU" --version >> "$OUT/device.txt" 2>&1
record() {  # record NAME KERNEL SIZE [BLOCK]
  local name=$1; shift
  timeout --kill-after=10 110 "$NCU" --csv --page details --print-kernel-base function \
    --profile-from-start off --section LaunchStats --section Occupancy --section SpeedOfLight \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum --log-file "$OUT/ncu_$name.csv" \
    $PY benchmarks/ncu_programs.py "$@" > "$OUT/$name.json" 2> "$OUT/$name.err"
  echo "$name exit $? ($(wc -c < "$OUT/ncu_$name.csv" 2>/dev/null || echo 0) bytes)" >> "$OUT/device.txt"
  [ -s "$OUT/$name.err" ] || rm -f "$OUT/$name.err"
}
record triton_add add_triton 16777216 1024
record numba_add add_numba 16777216 256
record torch_add add_torch 16777216
record triton_matmul matmul_tiled 4096
cat "$OUT/device.txt"
for f in "$OUT"/ncu_*.csv; do $PY main.py compare --ncu "$f" | tail -n 1; done
