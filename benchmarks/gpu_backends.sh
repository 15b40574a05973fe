#!/usr/bin/env bash
# The same model on the same GPU under two Keras backends (JAX and PyTorch), and what mixed
# precision moves. Writes CSVs and JSON sidecars into $1 (default docs/results/gpu-backends).
# Dry run without a GPU: GPU_A=jax:cpu GPU_B=torch:cpu QUICK=1 bash benchmarks/gpu_backends.sh /tmp/b
set -uo pipefail
out=${1:-docs/results/gpu-backends}
a=${GPU_A:-jax:gpu}
b=${GPU_B:-torch:gpu}
py=${PYTHON:-python3}
samples=20000
widths=64,256,1024,4096
[ -n "${QUICK:-}" ] && samples=3000 && widths=64,512
mp=(--compare mixed_precision=on)
[ -n "${QUICK:-}" ] && mp=()
mkdir -p "$out"
log() { echo "== $(date -u +%H:%M:%S) $*"; }

log "seed qa on $a, $b and ${b%%:*}:cpu"
$py main.py run --preset qa --lanes "$a,$b,${b%%:*}:cpu" --epochs 1 --data synthetic --samples $samples \
    --csv "$out/seed-qa-backends.csv" | tee "$out/seed-qa-backends.txt"
log "sweep $a against $b, and again in mixed precision"
$py main.py sweep --widths $widths --layers 2 --batch-size 128 --lanes "$a,$b" --data synthetic --samples $samples \
    --steady-steps 60 --seconds-per-point 1 "${mp[@]}" --csv "$out/sweep-backends.csv" | tee "$out/sweep-backends.txt"
log done
