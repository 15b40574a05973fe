#!/usr/bin/env bash
# The suite on a busy machine: fresh clones of one commit, each run through `bash .ci/run` (CI=true) with one core
# kept busy by `yes` pinned to core 0, one run after another. Prints each run's exit code, seconds and the load
# before and after; the logs stay in the folder given.
# Run from the repository root:  bash benchmarks/ci_under_load.sh [COMMIT] [RUNS] [FOLDER]
set -uo pipefail
commit=${1:-$(git rev-parse HEAD)}
runs=${2:-3}
out=${3:-/tmp/crossover-ci-under-load}
repo=$(pwd)
mkdir -p "$out"
load() { cut -d' ' -f1-3 /proc/loadavg; }
for i in $(seq 1 "$runs"); do
  clone="$out/clone"
  rm -rf "$clone" && git clone -q "$repo" "$clone" && git -C "$clone" checkout -q "$commit"
  taskset -c 0 yes > /dev/null &
  busy=$!
  before=$(load)
  start=$SECONDS
  (cd "$clone" && CI=true bash .ci/run) > "$out/run-$i.log" 2>&1
  rc=$?
  kill "$busy"
  printf 'run %s\tcommit %s\texit %s\t%ss\tload before %s\tafter %s\t%s\n' "$i" "$commit" "$rc" \
    "$((SECONDS - start))" "$before" "$(load)" "$(grep -E '(passed|failed).* in ' "$out/run-$i.log" | tr '\n' ' ')"
done
