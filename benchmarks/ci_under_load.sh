#!/usr/bin/env bash
# The suite on a busy machine: fresh clones of one commit, each run through `bash .ci/run` (CI=true) while other
# processes keep some of the cores busy (`yes`, one pinned to each busy core), one run after another. Prints, per
# run, PASS or FAIL (the exit code), the wall time, the busy cores and the load (before, the mean and peak during,
# after), and the suite's own summary lines; then how many passed. The logs stay in the folder given.
#
# Run from the repository root:  bash benchmarks/ci_under_load.sh [COMMIT] [PLAN] [FOLDER]
#   COMMIT  what to clone (default HEAD)
#   PLAN    the busy cores of each run, comma-separated (default 1,1,1,2: three runs in a row with one core kept busy,
#           then one with both cores of a 2-core machine kept busy); a bare number N, as before, is N runs with one
#           core kept busy. 0 is a quiet run.
#   FOLDER  where the clone and the logs go (default /tmp/crossover-ci-under-load)
set -uo pipefail
commit=${1:-$(git rev-parse HEAD)}
plan=${2:-1,1,1,2}
out=${3:-/tmp/crossover-ci-under-load}
repo=$(pwd)
if [[ $plan =~ ^[0-9]+$ ]]; then  # the old form: RUNS, each with one core kept busy
  ((plan >= 1)) || { echo "error: $plan runs: give at least 1, or a PLAN such as 0,1,2" >&2; exit 2; }
  runs=$plan plan=1
  for ((n = 1; n < runs; n++)); do plan+=",1"; done
fi
IFS=',' read -r -a busy_plan <<< "$plan"
for cores in "${busy_plan[@]}"; do
  [[ $cores =~ ^[0-9]+$ ]] || { echo "error: PLAN $plan: give busy cores per run as whole numbers, e.g. 1,1,1,2" >&2; exit 2; }
done
git rev-parse -q --verify "$commit^{commit}" > /dev/null || { echo "error: $commit is not a commit here" >&2; exit 2; }
command -v taskset > /dev/null || echo "note: no taskset: the busy processes run unpinned" >&2
mkdir -p "$out"
ncores=$(nproc)
busy_pids=()
sampler=""

stop_busy() {
  for pid in ${busy_pids[@]+"${busy_pids[@]}"}; do kill "$pid" 2> /dev/null; done
  busy_pids=()
  [[ -n $sampler ]] && kill "$sampler" 2> /dev/null
  sampler=""
}
trap stop_busy EXIT
trap 'stop_busy; exit 130' INT TERM

keep_busy() {  # $1 cores, each kept busy by a `yes` pinned to it (unpinned past this machine's cores)
  local core
  for ((core = 0; core < $1; core++)); do
    if command -v taskset > /dev/null && ((core < ncores)); then
      taskset -c "$core" yes > /dev/null &
    else
      yes > /dev/null &
    fi
    busy_pids+=("$!")
  done
}

load1() { cut -d' ' -f1 /proc/loadavg; }
passed=0
for i in "${!busy_plan[@]}"; do
  run=$((i + 1))
  cores=${busy_plan[$i]}
  clone="$out/clone"
  log="$out/run-$run.log"
  samples="$out/run-$run.load"
  rm -rf "$clone" && git clone -q "$repo" "$clone" && git -C "$clone" checkout -q "$commit" || {
    echo "error: could not clone $commit into $clone" >&2; exit 1; }
  keep_busy "$cores"
  before=$(load1)
  : > "$samples"
  (while true; do load1 >> "$samples"; sleep 10; done) &
  sampler=$!
  start=$SECONDS
  (cd "$clone" && CI=true bash .ci/run) > "$log" 2>&1
  rc=$?
  wall=$((SECONDS - start))
  stop_busy
  during=$(awk '{ s += $1; if ($1 > m) m = $1 } END { if (NR) printf "mean %.1f, peak %.1f", s / NR, m; else print "not sampled" }' "$samples")
  verdict=FAIL
  ((rc == 0)) && verdict=PASS && passed=$((passed + 1))
  printf 'run %s of %s\t%s (exit %s)\t%dm %02ds\tcommit %s\t%s of %s cores kept busy\tload before %s, during %s, after %s\t%s\n' \
    "$run" "${#busy_plan[@]}" "$verdict" "$rc" $((wall / 60)) $((wall % 60)) "$commit" "$cores" "$ncores" \
    "$before" "$during" "$(load1)" "$(grep -E '(passed|failed).* in ' "$log" | tr '\n' ' ')"
done
echo "$passed of ${#busy_plan[@]} runs passed (logs in $out)"
((passed == ${#busy_plan[@]}))
