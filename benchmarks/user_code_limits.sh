#!/usr/bin/env bash
# User code in child processes (issue 17 item 2), on a machine with an NVIDIA GPU: the limits
# (RLIMIT_AS for a kernel file's process, and for its import in the kernel host) must not get in
# the way of CUDA. Each line should end "ok"; paste the output into the report.
#   bash benchmarks/user_code_limits.sh
set -u
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
ex=resources/examples
run() {  # name, expected exit status, command...
  local name=$1 want=$2; shift 2
  local t0=$(date +%s.%N)
  "$@" >/tmp/warpscope-limits.out 2>/tmp/warpscope-limits.err
  local rc=$? t1=$(date +%s.%N)
  printf '%-34s rc=%s %6.2f s %s\n' "$name" "$rc" "$(echo "$t1 - $t0" | bc)" \
    "$([ "$rc" = "$want" ] && echo ok || { echo FAILED; tail -3 /tmp/warpscope-limits.err; })"
}
export XDG_CACHE_HOME=$(mktemp -d)  # a cold cache: the first explain starts the file's process
run "explain softmax (cold)" 0 $PY main.py explain --kernel-file $ex/softmax_triton.py --gpu H200
run "explain softmax (cached)" 0 $PY main.py explain --kernel-file $ex/softmax_triton.py --gpu H200
run "explain stencil (numba)" 0 $PY main.py explain --kernel-file $ex/stencil_numba.py --gpu H200
run "check softmax (kernel host)" 0 $PY main.py check --kernel-file $ex/softmax_triton.py
run "bench layernorm (kernel host)" 0 $PY main.py bench --kernel-file $ex/layernorm_triton.py \
  --sizes 2^20,2^24 --reps 5 --out /tmp/warpscope-limits-bench.json
run "hostile kernel-file tests" 0 $PY -m pytest -q -n 0 tests/hostile/test_kernel_files.py
