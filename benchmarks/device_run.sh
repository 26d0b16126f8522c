#!/usr/bin/env bash
# Every figure benchmarks/RESULTS.md publishes, recorded on one lent GPU in one call, each beside
# its peers measured in the same run (torch for the kernels, cuBLAS for the matmul, the recorded
# trace of the same launch for the simulator, the other launch of each next-step pair, Nsight
# Compute's report of the same launch for `compare --ncu`).
#
#   bash benchmarks/device_run.sh OUT_DIR          (about 9 minutes on an H200; NCU=path/to/ncu)
#
# Each part has its own time limit and writes its JSON, its log and its exit status (in
# OUT_DIR/env.txt); a part cut short keeps what it wrote. The parts' limits add up to 580 s, under
# one call's 10 minutes. Then, without a GPU, score what was recorded:
#   python3 -m kernels.fitting.predict_check; python3 benchmarks/fit_launch.py --kernel-times OUT_DIR
#   python3 main.py compare OUT_DIR/traces/NAME.json; python3 main.py compare --ncu OUT_DIR/ncu/ncu_NAME.csv
set -u
OUT=${1:?usage: device_run.sh OUT_DIR}
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
NCU=${NCU:-ncu}
mkdir -p "$OUT/logs" "$OUT/traces" "$OUT/ncu"

{ date -u +%FT%TZ  # what the run was recorded on: the GPU, its clocks, the libraries, the tree
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
  nvidia-smi --query-gpu=uuid,pci.bus_id --format=csv,noheader
  $PY -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  $PY -c "import numba_cuda; print('numba-cuda', numba_cuda.__version__)"
  git log -1 --format='commit %H %s' 2>/dev/null; git status --short | head -5; } > "$OUT/env.txt" 2>&1

part() {  # NAME LIMIT_S COMMAND...: one part, its output in logs/NAME.log, its exit in env.txt
  local name=$1 limit=$2; shift 2
  timeout --kill-after=10 "$limit" "$@" > "$OUT/logs/$name.log" 2>&1
  echo "$name exit $?" >> "$OUT/env.txt"
}
SIZES=2^12,2^14,2^16,2^18,2^20,2^22,2^24,2^26,2^28

# the occupancy calculator against the CUDA driver (tests/data/occupancy_h200.json)
part occupancy 40 $PY benchmarks/occupancy_truth.py --out "$OUT/occupancy_h200.json"
# kernel times against their torch peers, interleaved (tests/data/h200_kernel_times_*)
part kernel_times 110 $PY -m kernels.cli bench \
  --kernel add_triton,add_torch,copy_triton,copy_torch,square_triton,square_torch,add_relu_triton,add_relu_torch_eager \
  --sizes "$SIZES" --reps 20 --out "$OUT/bench_kernel_times.json"
part block_sizes 30 $PY -m kernels.cli bench --kernel add_numba_naive --sizes 2^26 \
  --block 32,64,128,256,512,1024 --reps 20 --out "$OUT/bench_block_sizes.json"
# loaded latency against forced occupancy (resources/measured/H200_latency.json)
part latency 100 $PY benchmarks/latency_run.py --out "$OUT" --budget-s 80
# the matmul sawtooth against cuBLAS (resources/measured/H200_matmul_sawtooth.json)
part matmul 70 $PY -m kernels.cli bench --waves-sweep M=1024,K=8192,N=256..14080x1024 --reps 5 \
  --out "$OUT/matmul_sawtooth.json"
# the next step's direction: each pair's two launches measured in the same rounds
part next_step 70 $PY benchmarks/chooser_run.py --out "$OUT/next_step" --only-next-step \
  --pairs held-out-t --rounds 5
# recorded block schedules the simulator is scored on (one launch of each kind of trace)
part traces 40 bash -c "
  $PY main.py trace --kernel add --elements 2^24 --block 1024 --out '$OUT/traces/add_n24_b1024.json' &&
  $PY main.py trace --kernel copy --elements 2^22 --block 256 --out '$OUT/traces/copy_n22_b256.json' &&
  $PY main.py trace --kernel-file resources/examples/softmax_triton.py --elements 2^20 \
    --out '$OUT/traces/softmax_triton_n20.json'"

# Nsight Compute's report of four launches (tests/data/ncu): each program launches its kernel
# once to warm it, then once inside the profiler range that --profile-from-start off records
ncu_record() {  # NAME KERNEL SIZE [BLOCK]
  local name=$1; shift
  "$NCU" --csv --page details --print-kernel-base function --profile-from-start off \
    --section LaunchStats --section Occupancy --section SpeedOfLight \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum --log-file "$OUT/ncu/ncu_$name.csv" \
    $PY benchmarks/ncu_programs.py "$@" > "$OUT/ncu/$name.json"
}
"$NCU" --version >> "$OUT/env.txt" 2>&1
export -f ncu_record; export OUT PY NCU
part ncu 90 bash -c "ncu_record triton_add add_triton 16777216 1024; ncu_record numba_add add_numba 16777216 256;
  ncu_record torch_add add_torch 16777216; ncu_record triton_matmul matmul_tiled 4096"
# the window's Live launch: each slider move measured on the GPU beside its prediction
part slider 30 env QT_QPA_PLATFORM=offscreen $PY benchmarks/slider_launch_check.py --out "$OUT/slider"

cat "$OUT/env.txt"
tail -n 3 "$OUT"/logs/*.log
