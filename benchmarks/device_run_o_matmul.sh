#!/usr/bin/env bash
# GPU run O (issue 21): TMA stream-K (kernels/bodies/matmul_tma.py, STREAM_K=True) measured, and
# matmul_auto with the declared TMA loop flags (the tile fit's flatten=False dropped after run N).
# On an H200, bf16, from the repo root on a fresh machine (torch and triton only), at most 200 s:
#   benchmarks/chooser_run.py --targets-first --extras stream-k --dips ... --skip-next-step:
#   4096^3, 8192^3, run N's seven cuBLAS dips and 8704 (M=1024, K=8192), then the rest of the
#   sawtooth (N=2048..16384 step 256) while its budget lasts. Per size, in 3 interleaved rounds
#   of do_bench medians after a warm-up call of each launch: matmul_auto, its 18 candidates
#   (tiled, persistent, stream-K, TMA tiled, TMA-persistent, TMA stream-K at three tiles), cuBLAS;
#   at the ten targets also TMA_SK_EXTRAS (TMA stream-K flatten=False, epilogue subtile s3/s4,
#   256x128). Every launch of the first size checked against fp32 torch; registers, shared memory
#   and spills of each compiled launch recorded.
#   bash benchmarks/device_run_o_matmul.sh OUT_DIR            (on the H200)
#   bash benchmarks/device_run_o_matmul.sh OUT_DIR --dry-run  (here: tiny sizes, interpreter)
# Writes OUT_DIR/chooser/chooser_h200.json, OUT_DIR/chooser.log, nvidia_smi.txt, versions.txt.
# DIPS and EXTRAS (chooser_run.py's --dips and --extras) default to run O's; run R sets its own
# (benchmarks/device_run_r_matmul.sh).
set -u
OUT=${1:?usage: device_run_o_matmul.sh OUT_DIR [--dry-run]}
PY=${PYTHON:-python3}
DIPS=${DIPS:-3328,4352,5376,6400,8704,10240,10752,12800}
EXTRAS=${EXTRAS:-stream-k}
mkdir -p "$OUT"
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$OUT/nvidia_smi.txt" 2>&1
{ $PY -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  git log -1 --format='commit %H %s' 2>/dev/null; } | tee "$OUT/versions.txt"
timeout --kill-after=5 185 $PY benchmarks/chooser_run.py --out "$OUT/chooser" --budget-s 165 \
  --targets-first --extras "$EXTRAS" --dips "$DIPS" --skip-next-step "${@:2}" > "$OUT/chooser.log" 2>&1
echo "chooser: exit $? after $(( $(date +%s) - start )) s (124: past its 185 s limit; the JSON holds what was done)"
sed -n '/^Summary/,$p' "$OUT/chooser.log" | head -60
