#!/usr/bin/env bash
# The device profiles Crossover ships (resources/profiles/), built from the stored results' files with
# `profile --from`, as a user builds one from sweeps of their own. Usage: bash benchmarks/ship_profiles.sh
#   h200-2026-11-30: the H200 proof's width sweeps (batch 32 and 128, data from the host and on the device) and the
#                    seeds' four runs (1, 2 and 4 layers), jax:cpu (16 cores) and jax:gpu0
#   cpu-2026-12-03:  that day's 2-core Xeon sweeps (cpu and cpu1, batch 128), its refinement, the blog seed's
#                    run (batch 32) and the predict sweep along batch size
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
h=docs/results/h200-2026-11-30
c=docs/results/cpu-2026-12-03
mkdir -p resources/profiles
$py main.py profile --name h200-2026-11-30 -o resources/profiles/h200-2026-11-30.json --from \
  $h/sweep-b32.csv $h/sweep-b128.csv $h/sweep-b128-device.csv \
  $h/seed-qa.csv $h/seed-qa-100.csv $h/seed-blog-small.csv $h/seed-blog-wide.csv
$py main.py profile --name cpu-2026-12-03 -o resources/profiles/cpu-2026-12-03.json --from \
  $c/sweep.csv $c/refined.csv $c/seed-blog-small.csv $c/serve.csv
