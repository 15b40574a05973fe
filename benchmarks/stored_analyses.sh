#!/usr/bin/env bash
# What the one rule says today of the stored sweep files (docs/results/*): `analyze` of each, as a reader would run
# it, into docs/results/cpu-2026-12-08/analyze-stored.txt. Usage: bash benchmarks/stored_analyses.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=docs/results/cpu-2026-12-08/analyze-stored.txt
{
  echo "# analyze of the stored sweep files, $(date -u +%Y-%m-%dT%H:%M:%SZ), Crossover at $(git rev-parse --short HEAD)"
  for f in docs/results/h200-2026-11-30/seed-blog-small.csv docs/results/h200-2026-11-30/seed-blog-wide.csv \
           docs/results/h200-2026-11-30/sweep-b128.csv docs/results/h200-2026-11-30/sweep-b32.csv \
           docs/results/h200-2026-11-30/sweep-b128-device.csv docs/results/cpu-2026-12-03/sweep.csv \
           docs/results/cpu-2026-12-03/refined.csv; do
    echo
    echo "\$ .venv/bin/python main.py analyze $f"
    .venv/bin/python main.py analyze "$f"
  done
} > "$out" 2>&1
echo "wrote $out"
