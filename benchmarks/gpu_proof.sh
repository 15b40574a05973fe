#!/usr/bin/env bash
# The GPU proof (issue 5): the seeds' models and width sweeps on jax:cpu and jax:gpu, headless.
# Writes sweep CSVs, per-batch CSVs and JSON sidecars into $1 (default docs/results/NAME).
# Dry run on a machine without a GPU: GPU_LANE=jax:cpu1 bash benchmarks/gpu_proof.sh /tmp/proof
set -uo pipefail
out=${1:-docs/results/gpu-proof}
cpu=${CPU_LANE:-jax:cpu}
gpu=${GPU_LANE:-jax:gpu}
py=${PYTHON:-python3}
quick=${QUICK:-}  # set for a dry run: fewer samples and points
mkdir -p "$out"
log() { echo "== $(date -u +%H:%M:%S) $*"; }

samples=()
[ -n "$quick" ] && samples=(--samples 4000)
widths=16,32,64,128,256,512,1024,2048,4096,8192
[ -n "$quick" ] && widths=16,256

log devices
$py main.py devices | tee "$out/devices.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/nvidia-smi.csv" 2>/dev/null || true

for preset in qa qa-100 blog-small blog-wide; do
  log "seed $preset"
  $py main.py run --preset "$preset" --lanes "$cpu,$gpu" --epochs 1 --data synthetic "${samples[@]}" \
      --csv "$out/seed-$preset.csv" | tee "$out/seed-$preset.txt"
done

for batch in 128 32; do
  log "sweep batch $batch"
  $py main.py sweep --widths $widths --layers 2 --batch-size $batch --lanes "$cpu,$gpu" --data synthetic \
      --steady-steps 100 --seconds-per-point 1.5 "${samples[@]}" --csv "$out/sweep-b$batch.csv" | tee "$out/sweep-b$batch.txt"
done

log "sweep batch 128, whole data set resident on the device"
$py main.py sweep --widths $widths --layers 2 --batch-size 128 --lanes "$cpu,$gpu" --data synthetic --feeding device \
    --steady-steps 100 --seconds-per-point 1.5 --no-calibrate "${samples[@]}" --csv "$out/sweep-b128-device.csv" \
    | tee "$out/sweep-b128-device.txt"
log done
tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")" && log "packed $out.tgz"
