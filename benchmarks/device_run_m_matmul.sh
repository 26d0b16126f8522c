#!/usr/bin/env bash
# GPU run M (issue 21): the TMA matmul kernels (kernels/bodies/matmul_tma.py) beside cuBLAS,
# the pointer kernels and matmul_auto on the H200, bf16, about 4.5 minutes. Runs from the repo
# root on a fresh machine (torch and triton only).
#   1. benchmarks/chooser_run.py --targets-first --extras --skip-next-step (<= 215 s): 4096^3,
#      8192^3 and run L's seven cuBLAS dips first (auto, its 15 candidates = 5 variants x 3 tiles,
#      8 more TMA configurations, cuBLAS), then the rest of the 57-size sawtooth (M=1024, K=8192,
#      N=2048..16384 step 256) while its budget lasts; 3 interleaved rounds of do_bench medians
#      after a warm-up; every launch of the first size checked against fp32 torch.
#   2. benchmarks/tile_explore.py --set tma-ws (<= 60 s): warp specialisation on the persistent
#      TMA loop at the same nine sizes, apart, so a configuration that hangs costs only this step.
#   bash benchmarks/device_run_m_matmul.sh $OUT
set -u
OUT=${1:?usage: device_run_m_matmul.sh OUT}
mkdir -p "$OUT"
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$OUT/nvidia_smi.txt" 2>&1
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" \
  | tee "$OUT/versions.txt"
timeout 215 python3 benchmarks/chooser_run.py --out "$OUT/chooser" --budget-s 195 --targets-first \
  --extras --skip-next-step > "$OUT/chooser.log" 2>&1
echo "chooser: exit $? after $(( $(date +%s) - start )) s"; sed -n '/^Summary/,$p' "$OUT/chooser.log"
left=$(( 275 - ($(date +%s) - start) ))
if [ "$left" -gt 20 ]; then
  timeout "$left" python3 benchmarks/tile_explore.py --out "$OUT/explore" --set tma-ws \
    --budget-s $(( left - 15 )) > "$OUT/explore.log" 2>&1
  echo "explore: exit $? after $(( $(date +%s) - start )) s"
  grep -v "^ \|^#\|^{\|^}" "$OUT/explore.log" | grep -E "^[0-9]+x|Error" | head -12
else
  echo "explore: skipped, $left s left"
fi
