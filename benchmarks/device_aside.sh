#!/usr/bin/env bash
# The device tool copies the tracked tree, at most 64 MiB; since run X's traces the tree is ~71 MB
# (~77 MB since runs Z and Z2).
# Move the largest data files a GPU run does not read out of the tree before the run, and back after:
#   bash benchmarks/device_aside.sh out     # then the `run` call
#   bash benchmarks/device_aside.sh back    # at once after it (git status shows them deleted until then)
set -eu
cd "$(dirname "$0")/.."
ASIDE=/tmp/warpscope-aside
FILES="tests/data/real_h200/dispatch_traces.npz tests/data/proton/proton_softmax_n22.chrome_trace
benchmarks/run_j/traces/dispatch_traces.npz tests/data/blind_t_h200/dispatch_traces.npz
tests/data/blind_z_h200/dispatch_traces.npz tests/data/blind_z2_h200/dispatch_traces.npz"
for f in $FILES; do
  case "${1:?usage: device_aside.sh out|back}" in
    out) mkdir -p "$ASIDE/$(dirname "$f")" && mv "$f" "$ASIDE/$f" ;;
    back) mv "$ASIDE/$f" "$f" ;;
    *) echo "usage: device_aside.sh out|back" >&2; exit 2 ;;
  esac
done
git ls-files -z | xargs -0 du -ck 2>/dev/null | tail -1
