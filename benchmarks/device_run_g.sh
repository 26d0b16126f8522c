#!/usr/bin/env bash
# GPU run G (2026-12-01): issue 19's instrument on the H200, in one call of at most 9 minutes.
#   files     `warpscope trace --kernel-file` on the two Triton example kernels, 2^20 and 2^24
#             (each trace holds the kernel's time untraced and stamped: the instrument's cost),
#             and `trace --kernel add` at 2^24 beside them (the hand-stamped twin of the add)
#   builtins  the same instrument on two built-ins (the article's add, square), 2^20/2^24/2^26
#   proton    Proton's intra-kernel profiler (instrumentation backend) on a copy of the kernel
#             with one Proton scope around the program; its .chrome_trace kept as a sample
#   numba     the stencil example (Numba) stamped (run G linked the readers from
#             a .cu; now kernels/tracing/numba_stamps.py reads them by inline PTX)
# Usage on the device machine, from the repo root: bash benchmarks/device_run_g.sh [OUT_DIR]
# Comes back: traces_g.tar.xz (every trace), proton_samples.tar.xz (Proton's own files), logs.tgz
# (logs, the environment and index_*.json: every attempt's command, result or error).
set -u
OUT=${1:-${OUT:?usage: device_run_g.sh OUT_DIR (or set OUT)}}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT/logs" "$OUT/traces_g"
T0=$(date +%s)
say() { echo "[$(( $(date +%s) - T0 )) s] $*" >&2; }
left() { echo $(( 490 - ($(date +%s) - T0) )); }  # of the 9 minutes, less packing
run() {  # run NAME SECONDS COMMAND...: a timeout (never past the run's end), a log, the status
  local name=$1 secs=$2; shift 2
  local rest=$(left)
  [ "$rest" -lt "$secs" ] && secs=$rest
  if [ "$secs" -lt 15 ]; then
    echo "$name not run: the 9 minutes are spent" | tee -a "$OUT/logs/status.txt" >&2
    return 124
  fi
  say "$name (limit ${secs} s): $*"
  echo "\$ $*" > "$OUT/logs/$name.log"
  timeout --kill-after=10 "$secs" "$@" >> "$OUT/logs/$name.log" 2>&1
  local rc=$?
  echo "$name exit status $rc" | tee -a "$OUT/logs/status.txt" >&2
  tail -n 3 "$OUT/logs/$name.log" >&2
  return $rc
}
{ python3 -c "import sys, torch, triton, numpy; print(sys.version); print('torch', torch.__version__, 'triton', triton.__version__, 'numpy', numpy.__version__); print(torch.cuda.get_device_name())"
  python3 -c "import numba_cuda, cupy; print('numba-cuda', numba_cuda.__version__, 'cupy', cupy.__version__)"
  git log -1 --format='commit %H %s' 2>/dev/null; } > "$OUT/logs/env.txt" 2>&1

: > "$OUT/files_commands.txt"
for spec in softmax_triton:20 softmax_triton:24 layernorm_triton:20 layernorm_triton:24; do
  file=${spec%%:*}; p=${spec##*:}; name="${file}_n$p"
  cmd="python3 -m kernels.cli trace --kernel-file resources/examples/$file.py --elements 2^$p --out $OUT/traces_g/$name.json"
  run "$name" 60 $cmd; printf '%s\t%s\t%s\n' "$name" "$?" "$cmd" >> "$OUT/files_commands.txt"
done
cmd="python3 -m kernels.cli trace --kernel add --elements 2^24 --block 1024 --out $OUT/traces_g/add_trace_kernel_n24.json"
run add_trace_kernel_n24 60 $cmd; printf '%s\t%s\t%s\n' add_trace_kernel_n24 "$?" "$cmd" >> "$OUT/files_commands.txt"
python3 benchmarks/record_g.py files-index --out "$OUT" 2>> "$OUT/logs/status.txt"
run builtins 100 python3 benchmarks/record_g.py builtins --out "$OUT"
run proton 70 python3 benchmarks/record_g.py proton --out "$OUT"
run numba 90 python3 benchmarks/record_g.py numba --out "$OUT"

say "packing"
export XZ_OPT="-1 -T0"
mv "$OUT"/index_*.json "$OUT/logs/" 2>/dev/null
(cd "$OUT" && tar -cJf traces_g.tar.xz traces_g && rm -rf traces_g)
(cd "$OUT" && ls proton_* >/dev/null 2>&1 && tar -cJf proton_samples.tar.xz proton_* && rm -f proton_*.chrome_trace proton_*.hatchet)
python3 benchmarks/record_g.py summary --out "$OUT" > "$OUT/logs/summary.txt" 2>&1
cat "$OUT/logs/status.txt" >> "$OUT/logs/summary.txt"
cp "$OUT/logs/summary.txt" /tmp/run_g_summary.txt
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
ls -la "$OUT" >&2
say "done"
cat /tmp/run_g_summary.txt
