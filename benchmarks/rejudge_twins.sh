#!/usr/bin/env bash
# The rule of today on real twin (A/A) sweeps measured here: `analyze` of each stored twin sweep of a calibrate
# results folder (cpu1 against its own twin, two equal lanes; by default
# docs/results/cpu-2026-12-07/calibrate-busy, on a busy 2-core machine), and how many of them name a lead (a false
# one: the lanes are equal). Into that folder's rejudged.txt. Usage: bash benchmarks/rejudge_twins.sh [FOLDER]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-docs/results/cpu-2026-12-07/calibrate-busy}
out=$dir/rejudged.txt
leads=0
total=0
{
  echo "# analyze of each stored twin sweep, $(date -u +%Y-%m-%dT%H:%M:%SZ), Crossover at $(git rev-parse --short HEAD)"
  for f in $(ls "$dir"/sweeps/twin-*.csv | sort -V); do
    said=$(.venv/bin/python main.py analyze "$f" | grep -E "^(no answer|for cpu1|cpu1(#2)? is |cpu1 and cpu1#2 )" | head -1)
    total=$((total + 1))
    # A sentence naming a lane as faster anywhere ("cpu1 is faster ..."; "looked 2x faster" is no answer) is a lead.
    if grep -qE "cpu1(#2)? is faster" <<<"$said"; then leads=$((leads + 1)); mark="LEAD"; else mark="none"; fi
    echo "$mark  $(basename "$f"): $said"
  done
  echo
  echo "false leads: $leads of $total twin sweeps"
} > "$out" 2>&1
tail -1 "$out"
echo "wrote $out"
