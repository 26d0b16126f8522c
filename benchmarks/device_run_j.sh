#!/usr/bin/env bash
# GPU run J (issue 19): `trace --kernel-file` on every example kernel file (Triton and Numba) and
# `trace --kernel add|square` (two built-ins), at 2^24, 2^26 and 2^20 (that order: the sizes the
# overhead target is about come first), then `main.py compare --json` on every trace, and a table:
# per trace the makespan error, the peak blocks per SM (recorded / simulated), the residency error
# and the instrument's cost (stamped vs untraced kernel time, target <= 5% at >= 2^24).
# Traces run one at a time (the GPU's timings); each trace's compare runs on the CPU beside the
# next recording. Then benchmarks/device_run_j_dispatch.sh "$OUT/dispatch", if it exists (its
# time is its own: the traces and compares stop by J_TRACE_S, the whole run by J_TOTAL_S).
#
#   bash benchmarks/device_run_j.sh OUT_DIR              # on the H200, from the repo root
#   bash benchmarks/device_run_j.sh --dry-run OUT_DIR    # here, no GPU: every trace command must
#       exit 2 with one line ("needs a GPU"), and the compare + table run on the H200's traces of
#       tests/data/kernel_files_h200 instead
# Comes back under OUT_DIR: summary.txt (the table and every exit status), index_j.json (one row
# per trace: command, status, compare's numbers, the stamps' cost), traces_j.tar.xz, logs.tgz,
# and dispatch.tgz (the dispatch part's folder, whole) when that part ran.
set -u
DRY=0
if [ "${1:-}" = "--dry-run" ]; then DRY=1; shift; fi
OUT=${1:?usage: device_run_j.sh [--dry-run] OUT_DIR}
PY=${PYTHON:-python3}
J_TRACE_S=${J_TRACE_S:-225}   # traces + compares: the 4 minutes, less packing
J_TOTAL_S=${J_TOTAL_S:-540}   # and the dispatch part after them, inside one 10-minute call
export PYTHONUNBUFFERED=1
mkdir -p "$OUT/logs" "$OUT/traces_j" "$OUT/compare"
T0=$(date +%s)
say() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a "$OUT/logs/run.log" >&2; }
left() { echo $(( $1 - ($(date +%s) - T0) )); }

{ $PY -c "import sys, torch, triton, numpy; print(sys.version); print('torch', torch.__version__, 'triton', triton.__version__, 'numpy', numpy.__version__); print(torch.cuda.get_device_name() if torch.cuda.is_available() else 'no CUDA GPU')"
  $PY -c "import numba_cuda; print('numba-cuda', numba_cuda.__version__)"
  git log -1 --format='commit %H %s' 2>/dev/null; } > "$OUT/logs/env.txt" 2>&1

# name<TAB>command, one per trace
JOBS=()
for p in 24 26 20; do
  for f in resources/examples/*_triton.py resources/examples/*_numba.py; do
    [ -f "$f" ] || continue
    name="$(basename "$f" .py)_n$p"
    JOBS+=("$name	$PY main.py trace --kernel-file $f --elements 2^$p --out $OUT/traces_j/$name.json")
  done
  for k in add square; do
    name="${k}_trace_kernel_n$p"
    JOBS+=("$name	$PY main.py trace --kernel $k --elements 2^$p --block 1024 --out $OUT/traces_j/$name.json")
  done
done

compare() {  # compare NAME: the launch model's prediction of a recorded trace, as JSON
  $PY main.py compare --json "$OUT/traces_j/$1.json" > "$OUT/compare/$1.json" 2> "$OUT/logs/$1.compare.log" \
    || echo "$1 compare exit status $?" >> "$OUT/logs/status.txt"
}

: > "$OUT/logs/status.txt"
: > "$OUT/logs/commands.tsv"
for job in "${JOBS[@]}"; do
  name=${job%%	*}; cmd=${job#*	}
  secs=$(left "$J_TRACE_S"); [ "$secs" -gt 90 ] && secs=90
  if [ "$secs" -lt 20 ]; then
    echo "$name not run: the time is spent" | tee -a "$OUT/logs/status.txt" >&2
    printf '%s\t%s\t%s\n' "$name" "not run" "$cmd" >> "$OUT/logs/commands.tsv"
    continue
  fi
  say "$name (limit $secs s): $cmd"
  echo "\$ $cmd" > "$OUT/logs/$name.log"
  timeout --kill-after=5 "$secs" $cmd >> "$OUT/logs/$name.log" 2>&1
  rc=$?
  echo "$name exit status $rc" | tee -a "$OUT/logs/status.txt" >&2
  tail -n 2 "$OUT/logs/$name.log" >&2
  printf '%s\t%s\t%s\n' "$name" "$rc" "$cmd" >> "$OUT/logs/commands.tsv"
  if [ "$DRY" = 1 ]; then  # no GPU: the one-line refusal, exit 2, and no trace file
    lines=$(grep -vc '^\$ ' "$OUT/logs/$name.log")
    if [ "$rc" != 2 ] || [ "$lines" != 1 ] || ! grep -q "needs a GPU" "$OUT/logs/$name.log" \
       || [ -e "$OUT/traces_j/$name.json" ]; then
      echo "DRY RUN FAILED: $name exit $rc, $lines lines" | tee -a "$OUT/logs/status.txt" >&2
    fi
  elif [ "$rc" = 0 ]; then
    compare "$name" &
  fi
done

if [ "$DRY" = 1 ]; then  # the compare and the table, on traces the H200 recorded (run G)
  say "dry run: comparing the H200's traces of tests/data/kernel_files_h200"
  $PY -c "
import sys; sys.path.insert(0, '.')
from sim.traces.trace_bundle import load_bundle
from sim.traces.trace import write_trace
for name, t in load_bundle('tests/data/kernel_files_h200').items():
    write_trace(f'$OUT/traces_j/{name}.json', t)
    print(name)" > "$OUT/logs/dry_names.txt" || echo "DRY RUN FAILED: no bundle" >> "$OUT/logs/status.txt"
  : > "$OUT/logs/commands.tsv"
  while read -r name; do
    printf '%s\t0\t(run G, tests/data/kernel_files_h200)\n' "$name" >> "$OUT/logs/commands.tsv"
    compare "$name" &
  done < "$OUT/logs/dry_names.txt"
fi
say "waiting for the compares"
wait

say "summary"
$PY - "$OUT" > "$OUT/summary.txt" 2>> "$OUT/logs/status.txt" <<'EOF'
import json, os, sys
out = sys.argv[1]
rows, lines = [], []
head = (f"{'trace':28} {'blocks':>7} {'rec us':>8} {'sim us':>8} {'mksp err':>8} "
        f"{'peak rec/sim':>12} {'resid err':>9} {'plain us':>9} {'stamped':>9} {'cost':>7}")
lines += ["=== run J: trace --kernel-file and two built-ins, compared with the launch model ===", head]
for line in open(os.path.join(out, "logs", "commands.tsv"), encoding="utf-8"):
    name, status, command = line.rstrip("\n").split("\t", 2)
    row = {"name": name, "status": status, "command": command}
    try:
        with open(os.path.join(out, "traces_j", f"{name}.json"), encoding="utf-8") as fh:
            meta = json.load(fh).get("meta", {})
        with open(os.path.join(out, "compare", f"{name}.json"), encoding="utf-8") as fh:
            c = json.load(fh)
    except (OSError, ValueError) as exc:
        row["error"] = f"exit status {status}; {type(exc).__name__}" if status != "0" else str(exc)
        lines.append(f"{name:28} FAILED ({row['error'][:90]}; logs/{name}.log)")
        rows.append(row)
        continue
    keys = ("untraced_median_us", "traced_median_us", "overhead_percent", "elements")
    row.update({k: meta.get(k) for k in keys}, compare=c)
    rows.append(row)
    cost = meta.get("overhead_percent")
    lines.append(
        f"{name:28} {c['blocks']:>7} {c['recorded_makespan_us']:>8.1f} {c['simulated_makespan_us']:>8.1f} "
        f"{100 * c['makespan_error']:>+7.1f}% "
        f"{c['recorded_median_peak_blocks_per_sm']:>5.0f}/{c['simulated_median_peak_blocks_per_sm']:<6.0f} "
        f"{c['residency_error']:>9.2f} {meta.get('untraced_median_us') or float('nan'):>9.1f} "
        f"{meta.get('traced_median_us') or float('nan'):>9.1f} "
        + (f"{cost:>+6.1f}%" if cost is not None else f"{'-':>7}"))
ok = [r for r in rows if "compare" in r]
within = [r for r in ok if abs(r["compare"]["makespan_error"]) <= 0.10]
big = [r for r in ok if (r.get("elements") or 0) >= 1 << 24 and r.get("overhead_percent") is not None]
cheap = [r for r in big if r["overhead_percent"] <= 5.0]
lines += ["", f"{len(ok)} of {len(rows)} traces recorded and compared; makespan within 10%: "
          f"{len(within)} of {len(ok)}; stamps within 5% at >= 2^24 elements: {len(cheap)} of {len(big)}"]
print("\n".join(lines))
with open(os.path.join(out, "index_j.json"), "w", encoding="utf-8") as fh:
    json.dump({"run": "J", "rows": rows}, fh, indent=1, default=str)
EOF
cat "$OUT/logs/status.txt" >> "$OUT/summary.txt"

if [ -f benchmarks/device_run_j_dispatch.sh ]; then
  secs=$(left "$J_TOTAL_S")
  if [ "$secs" -ge 30 ]; then
    say "dispatch part (limit $secs s): bash benchmarks/device_run_j_dispatch.sh $OUT/dispatch"
    dry=(); [ "$DRY" = 1 ] && dry=(--dry-run)
    timeout --kill-after=10 "$secs" bash benchmarks/device_run_j_dispatch.sh "$OUT/dispatch" \
      "${dry[@]}" 2>&1 | tee "$OUT/logs/dispatch.log"
    echo "dispatch exit status ${PIPESTATUS[0]}" | tee -a "$OUT/summary.txt" >&2
  else
    echo "dispatch not run: the time is spent" | tee -a "$OUT/summary.txt" >&2
  fi
fi

say "packing"
export XZ_OPT="-1 -T0"
(cd "$OUT" && tar -cJf traces_j.tar.xz traces_j compare && rm -rf traces_j compare)
# one file for the dispatch part's folder: what comes back from a device run is at most 8 files
[ -d "$OUT/dispatch" ] && (cd "$OUT" && tar -czf dispatch.tgz dispatch && rm -rf dispatch)
cp "$OUT/summary.txt" "$OUT/logs/"
say "done"
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
cat "$OUT/summary.txt"
