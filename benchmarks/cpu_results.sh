#!/usr/bin/env bash
# The figures the README and docs/ quote as measured on a machine without a GPU: every command, its output and its
# files in one folder, with the versions and the machine's load before and after each command (results.log).
# Run from the repository root, on a machine left otherwise quiet (about 6 min on 2 cores):
#   bash benchmarks/cpu_results.sh docs/results/cpu-$(date -u +%F)
# Lanes are cpu (all cores) and cpu1 (one thread), TensorFlow, synthetic MNIST-shaped data (no download).
set -uo pipefail
out=${1:?usage: bash benchmarks/cpu_results.sh FOLDER}
py=${PYTHON:-.venv/bin/python}
mkdir -p "$out"
log="$out/results.log"
: > "$log"
load() { cut -d' ' -f1-3 /proc/loadavg; }
step() {  # step NAME COMMAND…: runs the command, its output in NAME.txt, its time and the load in results.log
  local name=$1; shift
  local before; before=$(load)
  local t0=$SECONDS
  "$@" > "$out/$name.txt" 2> "$out/$name.err"
  local rc=$?
  printf '%s\texit %s\t%ss\tload before %s\tafter %s\t%s\n' "$name" "$rc" "$((SECONDS - t0))" "$before" "$(load)" \
    "$*" | tee -a "$log"
  [ -s "$out/$name.err" ] || rm -f "$out/$name.err"
}

{
  echo "date: $(date -u +%FT%TZ)"
  echo "machine: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
  echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null)"
  $py -c 'import sys; print("python:", sys.version.split()[0])'
  $py -m pip list 2>/dev/null | grep -iE '^(tensorflow|keras|jax|jaxlib|numpy|PySide6-Essentials|pyqtgraph) '
} > "$out/versions.txt"

step devices $py main.py devices
step seed-blog-small $py main.py run --preset blog-small --lanes cpu,cpu1 --epochs 1 --samples 6000 \
    --data synthetic --csv "$out/seed-blog-small.csv"
step sweep $py main.py sweep --widths 16,64,256,1024,4096 --layers 2 --lanes cpu,cpu1 --data synthetic \
    --csv "$out/sweep.csv"
step refined $py main.py sweep --widths 16,256,4096 --layers 2 --lanes cpu,cpu1 --data synthetic --refine 0.3 \
    --budget-s 60 --csv "$out/refined.csv"
step serve $py main.py sweep --task predict --widths 256 --layers 1 --batch-sizes 1,8,64,512 --lanes cpu,cpu1 \
    --data synthetic --csv "$out/serve.csv"
step load $py main.py sweep --task predict --arrival-rates 100,400,1600 --lanes cpu,cpu1 --data synthetic \
    --p99-ms 20 --csv "$out/load.csv"
step load-queueing $py benchmarks/arrival_queueing.py
step anatomy $py main.py anatomy --widths 16,1024 --layers 1 --lanes cpu,cpu1 --data synthetic
step analyze $py main.py analyze "$out/sweep.csv" "$out/serve.csv"
step report $py main.py report "$out/sweep.csv" "$out/serve.csv" -o "$out/report.html"
step window-start $py benchmarks/window_start.py --runs 3
echo "wrote $out"
