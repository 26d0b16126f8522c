#!/usr/bin/env bash
# Records one `warpscope trace` per line of a job list (NAME<TAB>trace arguments) on the GPU, each
# under its own timeout, and packs the traces, their logs and commands.tsv into one archive.
# Trace only: `compare` runs afterwards on the CPU.
#
#   bash benchmarks/trace_jobs.sh JOBS.tsv OUT_DIR NAME     # on the GPU, from the repo root
# Comes back as OUT_DIR/NAME.tar.xz; TRACE_BUDGET_S (default 170) bounds the whole list, and a job
# that has under 12 s left is written "not run".
set -u
JOBS_FILE=${1:?usage: trace_jobs.sh JOBS.tsv OUT_DIR NAME}
OUT=${2:?usage: trace_jobs.sh JOBS.tsv OUT_DIR NAME}
NAME=${3:?usage: trace_jobs.sh JOBS.tsv OUT_DIR NAME}
PY=${PYTHON:-python3}
BUDGET_S=${TRACE_BUDGET_S:-170}
export PYTHONUNBUFFERED=1
D="$OUT/$NAME"; mkdir -p "$D/traces" "$D/logs"
T0=$(date +%s)
left() { echo $(( BUDGET_S - ($(date +%s) - T0) )); }
: > "$D/commands.tsv"
while IFS=$'\t' read -r name args; do
  case "$name" in ''|'#'*) continue ;; esac
  secs=$(left); [ "$secs" -gt 60 ] && secs=60
  if [ "$secs" -lt 12 ]; then printf '%s\tnot run\t%s\n' "$name" "$args" >> "$D/commands.tsv"; continue; fi
  # shellcheck disable=SC2086 - the job's arguments are words
  timeout --kill-after=5 "$secs" $PY main.py trace $args --out "$D/traces/$name.json" \
    > "$D/logs/$name.log" 2>&1
  rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "warpscope trace $args --out TRACE.json" >> "$D/commands.tsv"
  echo "[$NAME $(( $(date +%s) - T0 )) s] $name exit $rc" >&2
done < "$JOBS_FILE"
(cd "$OUT" && XZ_OPT="-1 -T0" tar -cJf "$NAME.tar.xz" "$NAME" && rm -rf "$NAME")
