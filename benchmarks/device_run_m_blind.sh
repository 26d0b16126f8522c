#!/usr/bin/env bash
# GPU run M, blind part (issues 16 and 19): real-kernel and register-limited traces at settings
# no earlier run recorded (tests/data/real_h200, kernel_files_h200, limits_h200,
# dispatch_h200_blind_regs, benchmarks/run_j), recorded before the models they will test are
# final, and never fitted on. The job list is benchmarks/jobs/blind_m.tsv.
#
#   bash benchmarks/device_run_m_blind.sh OUT_DIR     # on the H200, from the repo root
# Comes back as OUT_DIR/blind_m.tar.xz (traces + logs + commands.tsv).
set -u
OUT=${1:?usage: device_run_m_blind.sh OUT_DIR}
TRACE_BUDGET_S=${M_BLIND_S:-170} exec bash benchmarks/trace_jobs.sh benchmarks/jobs/blind_m.tsv "$OUT" blind_m
