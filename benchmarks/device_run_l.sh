#!/usr/bin/env bash
# GPU run L (2026-12-02, the session's last ~6 device minutes), one call:
#   1. the blind register-limited set for the dispatch model's register rule (issue 16):
#      benchmarks/device_run_j_dispatch.sh, <= 85 s;
#   2. the real window, offscreen: Kernel source > Trace on the GPU on the example NUMBA stencil
#      (issue 19: Numba files through the same button), <= 150 s;
#   3. run H's matmul sweep again with 3 interleaved rounds per launch (issue 21), whatever time
#      is left of its budget.
# Needs .qtcarry/ carried (benchmarks/make_qtcarry.sh) and docs/ moved aside for the 64 MiB limit.
#   bash benchmarks/device_run_l.sh $OUT
set -u
OUT=${1:?usage: device_run_l.sh OUT}
mkdir -p "$OUT"
start=$(date +%s)
bash benchmarks/device_run_j_dispatch.sh "$OUT/dispatch" > "$OUT/dispatch.log" 2>&1
echo "dispatch set: exit $? after $(( $(date +%s) - start )) s"; tail -3 "$OUT/dispatch.log"
tar -C "$OUT" -czf "$OUT/dispatch.tgz" dispatch && rm -rf "$OUT/dispatch"
mkdir -p "$OUT/gui"
timeout 150 bash benchmarks/gui_on_device.sh "$OUT/gui" trace --file resources/examples/stencil_numba.py \
  --kernel stencil_kernel > "$OUT/gui.log" 2>&1
echo "window: exit $? after $(( $(date +%s) - start )) s"; tail -8 "$OUT/gui.log"
left=$(( 300 - ($(date +%s) - start) ))
if [ "$left" -gt 60 ]; then
  timeout "$left" python3 benchmarks/chooser_run.py --out "$OUT/chooser" --budget-s $(( left - 15 )) \
    > "$OUT/chooser.log" 2>&1
  echo "chooser: exit $? after $(( $(date +%s) - start )) s"; sed -n '/^Summary/,$p' "$OUT/chooser.log"
else
  echo "chooser: skipped, $left s left"
fi
