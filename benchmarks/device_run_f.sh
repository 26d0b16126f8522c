#!/usr/bin/env bash
# GPU run F (2026-12-01): the recordings issues 16 and 20 need, in one call of at most 9 minutes.
#   a. real-kernel block traces (add 2^20..2^27 x BLOCK_SIZE 256/512/1024; copy, square, a row
#      softmax), each with the same kernel's time unstamped and stamped beside it
#   b. register-limited (--hold-regs) and shared-memory-limited (1..8 blocks/SM) spin traces
#   c. kernel times 2^12..2^28, every power of two: add, copy, square (Triton and torch), then
#      add+ReLU fused and eager and the naive Numba add, the example softmax (and torch's), then
#      torch.compile's add+ReLU at even powers (it recompiles at every size), each in its own call
#   d. bench --occupancy-sweep: add, copy, scale, fp64 2^28 (then fp32 2^28 if time is left),
#      block 32..1024, unpadded and 1 or 2 blocks per SM forced by shared memory
# Usage on the device machine, from the repo root: bash benchmarks/device_run_f.sh [OUT_DIR]
# Every part runs under its own timeout; a failed part costs only itself. Seven files come back:
# traces_real.tar.xz, traces_limits.tar.xz, bench_f.json, bench_f_b.json, bench_f_softmax.json,
# occupancy_fp64.json and logs.tgz (the logs, the environment, index.json: every trace's command,
# summary and stamping overhead, and the two parts run only if time is left:
# bench_f_compile.json and occupancy_fp32.json).
set -u
OUT=${1:-${OUT:?usage: device_run_f.sh OUT_DIR (or set OUT)}}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT/logs"
T0=$(date +%s)
say() { echo "[$(( $(date +%s) - T0 )) s] $*" >&2; }
left() { echo $(( 500 - ($(date +%s) - T0) )); }  # seconds left of the 9 minutes, less packing
part() {  # part NAME SECONDS COMMAND...: run with a timeout (never past the run's end), log to
  local name=$1 secs=$2; shift 2  # logs/NAME.log, keep going
  local rest=$(left)
  [ "$rest" -lt "$secs" ] && secs=$rest
  if [ "$secs" -lt 15 ]; then
    echo "part $name not run: the 9 minutes are spent" | tee -a "$OUT/logs/status.txt" >&2
    return
  fi
  say "part $name (limit ${secs} s): $*"
  echo "\$ $*" > "$OUT/logs/$name.log"
  timeout --kill-after=10 "$secs" "$@" >> "$OUT/logs/$name.log" 2>&1
  local rc=$?
  echo "part $name exit status $rc" | tee -a "$OUT/logs/status.txt" >&2
  tail -n 3 "$OUT/logs/$name.log" >&2
}

{ python3 -c "import sys, torch, triton, numpy; print(sys.version); print('torch', torch.__version__, 'triton', triton.__version__, 'numpy', numpy.__version__); print(torch.cuda.get_device_name())"
  python3 -c "import numba_cuda, cupy; print('numba-cuda', numba_cuda.__version__, 'cupy', cupy.__version__)"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
  git log -1 --format='commit %H %s' 2>/dev/null; } > "$OUT/logs/env.txt" 2>&1

SIZES=2^12,2^13,2^14,2^15,2^16,2^17,2^18,2^19,2^20,2^21,2^22,2^23,2^24,2^25,2^26,2^27,2^28
part real 110 python3 benchmarks/record_f.py real --out "$OUT" --budget-s 90
part regs 40 python3 benchmarks/record_f.py regs --out "$OUT" --budget-s 25
part smem 45 python3 benchmarks/record_f.py smem --out "$OUT" --budget-s 30
part bench 100 python3 -m kernels.cli bench --kernel add_triton,add_torch,copy_triton,copy_torch,square_triton,square_torch \
  --sizes "$SIZES" --reps 20 --out "$OUT/bench_f.json"
part bench_b 80 python3 -m kernels.cli bench --kernel add_relu_triton,add_relu_torch_eager,add_numba_naive \
  --sizes "$SIZES" --reps 20 --out "$OUT/bench_f_b.json"
part bench_softmax 90 python3 -m kernels.cli bench --kernel-file resources/examples/softmax_triton.py \
  --sizes "$SIZES" --reps 20 --out "$OUT/bench_f_softmax.json"
part occupancy_fp64 80 python3 -m kernels.cli bench --occupancy-sweep --dtype fp64 --sizes 2^28 --reps 20 --out "$OUT/occupancy_fp64.json"
T=$(left); [ "$T" -gt 60 ] && part bench_compile $(( T > 100 ? 60 : T - 30 )) python3 -m kernels.cli bench --kernel add_relu_torch_compile \
  --sizes 2^12,2^14,2^16,2^18,2^20,2^22,2^24,2^26,2^28 --reps 20 --out "$OUT/logs/bench_f_compile.json"
T=$(left); [ "$T" -gt 45 ] && part occupancy_fp32 $(( T > 80 ? 60 : T - 15 )) python3 -m kernels.cli bench --occupancy-sweep --dtype fp32 --sizes 2^28 --reps 20 --out "$OUT/logs/occupancy_fp32.json"

say "packing"
python3 - "$OUT" <<'EOF'
import json, os, sys
out = sys.argv[1]
index = {}
for part in ("real", "regs", "smem"):
    path = os.path.join(out, f"index_{part}.json")
    if os.path.exists(path):
        with open(path) as fh:
            index[part] = json.load(fh)
        os.remove(path)
with open(os.path.join(out, "logs", "index.json"), "w") as fh:
    json.dump(index, fh, indent=1)
EOF
export XZ_OPT="-1 -T0"  # fast: 8 MB of trace JSON in about a second, about 4x smaller
pack() {  # pack TAR DIR...: tar the folders; while the tar is over 15 MiB, leave out the largest trace
  local tarfile=$1; shift
  local dirs=$(cd "$OUT" && ls -d "$@" 2>/dev/null)
  [ -z "$dirs" ] && return
  while :; do
    (cd "$OUT" && tar -cJf "$tarfile" $dirs)
    [ "$(stat -c %s "$OUT/$tarfile")" -le $((15 * 1024 * 1024)) ] && break
    big=$(cd "$OUT" && find $dirs -name '*.json' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2)
    [ -z "$big" ] && break
    say "$tarfile is over 15 MiB: leaving out $big (its summary stays in index.json)"
    echo "left out of $tarfile: $big" >> "$OUT/logs/status.txt"; rm -f "$OUT/$big"
  done
  (cd "$OUT" && rm -rf $dirs)
}
pack traces_real.tar.xz traces_real
pack traces_limits.tar.xz traces_regs traces_smem
python3 benchmarks/record_f.py summary --out "$OUT" > "$OUT/logs/summary.txt" 2>&1
cat "$OUT/logs/status.txt" >> "$OUT/logs/summary.txt"
cp "$OUT/logs/summary.txt" /tmp/run_f_summary.txt
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
ls -la "$OUT" >&2
say "done"
cat /tmp/run_f_summary.txt
