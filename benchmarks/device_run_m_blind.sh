#!/usr/bin/env bash
# GPU run M, blind part (issues 16 and 19): real-kernel and register-limited traces at settings
# no earlier run recorded (tests/data/real_h200, kernel_files_h200, limits_h200,
# dispatch_h200_blind_regs, benchmarks/run_j), recorded before the models they will test are
# final, and never fitted on. Trace only: `compare` runs afterwards on the CPU.
#
#   bash benchmarks/device_run_m_blind.sh OUT_DIR     # on the H200, from the repo root
# Comes back as OUT_DIR/blind_m.tar.xz (traces + logs + commands.tsv).
set -u
OUT=${1:?usage: device_run_m_blind.sh OUT_DIR}
PY=${PYTHON:-python3}
BUDGET_S=${M_BLIND_S:-170}
export PYTHONUNBUFFERED=1
D="$OUT/blind_m"; mkdir -p "$D/traces" "$D/logs"
T0=$(date +%s)
left() { echo $(( BUDGET_S - ($(date +%s) - T0) )); }
JOBS=(
  "add_n24_b4096_w4	--kernel add --elements 2^24 --block 4096 --warps 4"
  "add_n23_b512_w4	--kernel add --elements 2^23 --block 512 --warps 4"
  "add_n21_b2048_w4	--kernel add --elements 2^21 --block 2048 --warps 4"
  "add_n26_b2048_w8	--kernel add --elements 2^26 --block 2048 --warps 8"
  "copy_n23_b1024_w4	--kernel copy --elements 2^23 --block 1024 --warps 4"
  "copy_n25_b256_w4	--kernel copy --elements 2^25 --block 256 --warps 4"
  "copy_n21_b512_w4	--kernel copy --elements 2^21 --block 512 --warps 4"
  "square_n23_b2048_w8	--kernel square --elements 2^23 --block 2048 --warps 8"
  "square_n21_b256_w4	--kernel square --elements 2^21 --block 256 --warps 4"
  "regs_w4_h8_s100	--kernel spin --warps 4 --hold-regs 8 --spin-us 100 --waves 2.5"
  "regs_w8_h8_s50	--kernel spin --warps 8 --hold-regs 8 --spin-us 50 --waves 3"
  "regs_w2_h16_s100	--kernel spin --warps 2 --hold-regs 16 --spin-us 100 --waves 3"
  "regs_w16_h16_s50	--kernel spin --warps 16 --hold-regs 16 --spin-us 50 --waves 3"
  "regs_w1_h64_s50	--kernel spin --warps 1 --hold-regs 64 --spin-us 50 --waves 3"
  "regs_w8_h128_s50	--kernel spin --warps 8 --hold-regs 128 --spin-us 50 --waves 3"
  "add_n27_b8192_w8	--kernel add --elements 2^27 --block 8192 --warps 8"
)
: > "$D/commands.tsv"
for job in "${JOBS[@]}"; do
  name=${job%%	*}; args=${job#*	}
  secs=$(left); [ "$secs" -gt 60 ] && secs=60
  if [ "$secs" -lt 12 ]; then printf '%s\tnot run\t%s\n' "$name" "$args" >> "$D/commands.tsv"; continue; fi
  cmd="$PY main.py trace $args --out $D/traces/$name.json"
  timeout --kill-after=5 "$secs" $cmd > "$D/logs/$name.log" 2>&1
  rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "warpscope trace $args --out TRACE.json" >> "$D/commands.tsv"
  echo "[blind $(( $(date +%s) - T0 )) s] $name exit $rc" >&2
done
(cd "$OUT" && XZ_OPT="-1 -T0" tar -cJf blind_m.tar.xz blind_m && rm -rf blind_m)
