#!/usr/bin/env bash
# GPU run V (2026-12-03, seventh session): issue 16's "measured times" bar on another H200. Run F's
# kernel-time sweep (2^12..2^28; add, copy, square in Triton and torch, add+ReLU fused and eager,
# the naive Numba add, the example row softmax and its torch peer, torch.compile's add+ReLU),
# measured again on a freshly lent machine with this tree. Nothing is fitted on it: every point
# is TEST (`python3 benchmarks/fit_launch.py --kernel-times benchmarks/run_v`).
#   bash benchmarks/device_run_v.sh OUT_DIR        (on the H200, from the repo root)
set -u
OUT=${1:?usage: device_run_v.sh OUT_DIR}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
. benchmarks/device_env.sh && device_env "$OUT/env_v.txt"
SIZES=2^12,2^13,2^14,2^15,2^16,2^17,2^18,2^19,2^20,2^21,2^22,2^23,2^24,2^25,2^26,2^27,2^28
part() {  # NAME LIMIT_S COMMAND...: one part, its output in NAME.log, its exit in env_v.txt
  local name=$1 limit=$2; shift 2
  timeout --kill-after=10 "$limit" "$@" > "$OUT/$name.log" 2>&1
  echo "$name exit $?" >> "$OUT/env_v.txt"
}
part bench 150 $PY -m kernels.cli bench --kernel add_triton,add_torch,copy_triton,copy_torch,square_triton,square_torch \
  --sizes "$SIZES" --reps 20 --out "$OUT/bench_v.json"
part bench_b 120 $PY -m kernels.cli bench --kernel add_relu_triton,add_relu_torch_eager,add_numba_naive \
  --sizes "$SIZES" --reps 20 --out "$OUT/bench_v_b1.json"
part bench_softmax 120 $PY -m kernels.cli bench --kernel-file resources/examples/softmax_triton.py \
  --sizes "$SIZES" --reps 20 --out "$OUT/bench_v_b2.json"
part bench_compile 90 $PY -m kernels.cli bench --kernel add_relu_torch_compile \
  --sizes 2^12,2^14,2^16,2^18,2^20,2^22,2^24,2^26,2^28 --reps 20 --out "$OUT/bench_v_compile.json"
cat "$OUT/env_v.txt"; tail -n 3 "$OUT"/*.log
