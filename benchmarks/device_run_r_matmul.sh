#!/usr/bin/env bash
# GPU run R (issue 21): the TEST of run Q's refit. TMA stream-K now declares flatten=False,
# warp_specialize=True and TMA tiled takes 4 stages at 128x256x64 (kernels/declare/matmul_problem.py
# TMA_LOOP, sim/model/matmul_choice.py CANDIDATE_STAGES); their efficiencies were fitted on run Q
# (benchmarks/tiles_fit.py RUN_Q_FIT), none on this run.
# On an H200, bf16, from the repo root on a fresh machine (torch and triton only), at most 200 s:
# run O's command (benchmarks/device_run_o_matmul.sh) with run P's nine cuBLAS dips as the
# targets (M=1024, K=8192) and `--extras before-q`: 4096^3, 8192^3 and the dips, then the rest of
# the sawtooth (N=2048..16384 step 256) while its budget lasts. Per size, in 3 interleaved rounds
# of do_bench medians after a warm-up call of each launch: matmul_auto, its 18 candidates (tiled,
# persistent, stream-K, TMA tiled, TMA-persistent, TMA stream-K at three tiles, as declared now),
# cuBLAS; at the eleven targets also TMA_R_EXTRAS (benchmarks/chooser_run.py), the same launches
# as declared before: TMA stream-K at its three tiles with flatten=True and no warp
# specialisation, TMA tiled 128x256x64 at s3, and TMA-persistent with warp specialisation.
# Run P took 137 s of chooser time for the same sweep with four extras at ten targets.
#   bash benchmarks/device_run_r_matmul.sh OUT_DIR            (on the H200)
#   bash benchmarks/device_run_r_matmul.sh OUT_DIR --dry-run  (here: tiny sizes, interpreter)
# Writes OUT_DIR/chooser/chooser_h200.json, OUT_DIR/chooser.log, nvidia_smi.txt, versions.txt.
set -u
: "${1:?usage: device_run_r_matmul.sh OUT_DIR [--dry-run]}"
DIPS=3328,4352,5376,6400,8704,9472,10240,10752,12800 EXTRAS=before-q \
  exec bash "$(dirname "$0")/device_run_o_matmul.sh" "$@"
