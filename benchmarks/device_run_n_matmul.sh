#!/usr/bin/env bash
# GPU run N (issue 21): the confirmation of matmul_auto after the TMA fit (benchmarks/tiles_fit.py,
# resources/fits/H200_matmul_tiles.json: TMA efficiencies fitted on run M, TMA-persistent
# 128x256x64 flatten=False). On an H200, bf16, from the repo root on a fresh machine (torch and
# triton only), at most 240 s:
#   benchmarks/chooser_run.py --targets-first --skip-next-step (run N also passed --declared-loop,
#   gone since the fit stopped choosing loop flags): 4096^3, 8192^3,
#   run L's seven cuBLAS dips (M=1024, K=8192, N=3328..12800), then the rest of the sawtooth
#   (N=2048..16384 step 256) while its budget lasts. Per size: matmul_auto, its 15 candidates,
#   the flagged candidate also with the declared flags, cuBLAS, all in the same 3 interleaved
#   rounds of do_bench medians; every launch of the first size checked against fp32 torch. The
#   summary gives the bars and the predictions with this run's scale (median cuBLAS over
#   every size measured, against run H) and raw.
#   bash benchmarks/device_run_n_matmul.sh OUT_DIR            (on the H200)
#   bash benchmarks/device_run_n_matmul.sh OUT_DIR --dry-run  (here: tiny sizes, interpreter)
# Writes OUT_DIR/chooser/chooser_h200.json, OUT_DIR/chooser.log, nvidia_smi.txt, versions.txt.
set -u
OUT=${1:?usage: device_run_n_matmul.sh OUT_DIR [--dry-run]}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$OUT/nvidia_smi.txt" 2>&1
{ $PY -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  git log -1 --format='commit %H %s' 2>/dev/null; } | tee "$OUT/versions.txt"
timeout --kill-after=5 225 $PY benchmarks/chooser_run.py --out "$OUT/chooser" --budget-s 200 \
  --targets-first --skip-next-step "${@:2}" > "$OUT/chooser.log" 2>&1
echo "chooser: exit $? after $(( $(date +%s) - start )) s (124: past its 225 s limit; the JSON holds what was done)"
sed -n '/^Summary/,$p' "$OUT/chooser.log" | head -30
