#!/usr/bin/env bash
# The GPU proof (issues 5 and 10): the seeds' models and width sweeps on jax:cpu and jax:gpu, and why the GPU
# loses where it does: the anatomy of the seeds' steps on jax:cpu, jax:gpu0 and torch:gpu0, the floor crossover
# of the width sweep, the knob ladder, JAX against PyTorch (gpu_backends.sh), and the floor against the
# profilers' kernel times (kernel_check.py). Headless; writes into $1 (default docs/results/NAME).
#
# PARTS picks sections (default: all, about 13 min on an H200 with 16 cores); the seeds and sweeps of issue 5 are
# already in docs/results/h200-2026-11-30, so a short lease can run PARTS="anatomy floor ladder backends kernels".
# Dry run on a machine without a GPU (no torch here):
#   QUICK=1 GPU_LANE=jax:cpu1 TORCH_LANE= TORCH_KERNEL_LANE= GPU_KERNEL_LANE=jax:cpu1 \
#     BACKENDS_A=jax:cpu BACKENDS_B=cpu bash benchmarks/gpu_proof.sh /tmp/proof
set -uo pipefail
out=${1:-docs/results/gpu-proof}
cpu=${CPU_LANE:-jax:cpu}
gpu=${GPU_LANE:-jax:gpu}
torch_lane=${TORCH_LANE-torch:gpu0}  # the anatomy's third lane; empty to leave it out
py=${PYTHON:-python3}
quick=${QUICK:-}  # set for a dry run: fewer samples and points
parts=${PARTS:-seeds sweeps anatomy floor ladder backends kernels}
mkdir -p "$out"
log() { echo "== $(date -u +%H:%M:%S) $*"; }
want() { [[ " $parts " == *" $1 "* ]]; }

samples=()
[ -n "$quick" ] && samples=(--samples 4000)
widths=16,32,64,128,256,512,1024,2048,4096,8192
[ -n "$quick" ] && widths=16,256
ladder_widths=16,128,1024,4096
[ -n "$quick" ] && ladder_widths=16,256

log devices
$py main.py devices | tee "$out/devices.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/nvidia-smi.csv" 2>/dev/null || true

if want seeds; then
  for preset in qa qa-100 blog-small blog-wide; do
    log "seed $preset"
    $py main.py run --preset "$preset" --lanes "$cpu,$gpu" --epochs 1 --data synthetic "${samples[@]}" \
        --csv "$out/seed-$preset.csv" | tee "$out/seed-$preset.txt"
  done
fi

if want sweeps; then
  for batch in 128 32; do
    log "sweep batch $batch"
    $py main.py sweep --widths $widths --layers 2 --batch-size $batch --lanes "$cpu,$gpu" --data synthetic \
        --steady-steps 100 --seconds-per-point 1.5 "${samples[@]}" --csv "$out/sweep-b$batch.csv" | tee "$out/sweep-b$batch.txt"
  done
  log "sweep batch 128, whole data set resident on the device"
  $py main.py sweep --widths $widths --layers 2 --batch-size 128 --lanes "$cpu,$gpu" --data synthetic --feeding device \
      --steady-steps 100 --seconds-per-point 1.5 --no-calibrate "${samples[@]}" --csv "$out/sweep-b128-device.csv" \
      | tee "$out/sweep-b128-device.txt"
fi

if want anatomy; then
  anatomy_lanes="$cpu,$gpu${torch_lane:+,$torch_lane}"
  for preset in qa qa-100 blog-small blog-wide; do
    log "anatomy of seed $preset on $anatomy_lanes"
    $py main.py anatomy --preset "$preset" --lanes "$anatomy_lanes" --data synthetic "${samples[@]}" --check-loss \
        --json-file "$out/anatomy-$preset.json" | tee "$out/anatomy-$preset.txt"
  done
  QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen} $py -m crossover_lab.gui.why.bars "$out"/anatomy-*.json "$out/anatomy-seeds.png" \
      --title "The seeds' models: each lane's step in parts (ms per step)" || log "picture failed"
fi

if want floor; then
  log "sweep batch 128 with the floor (an on-device loop at every point)"
  $py main.py sweep --widths $widths --layers 2 --batch-size 128 --lanes "$cpu,$gpu" --data synthetic --floor \
      --steady-steps 100 --seconds-per-point 1.5 --no-calibrate "${samples[@]}" --csv "$out/sweep-b128-floor.csv" \
      | tee "$out/sweep-b128-floor.txt"
  QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen} $py -m crossover_lab.gui.sweep.plot "$out/sweep-b128-floor.csv" "$out/sweep-b128-floor.png" \
      --title "ms per step and its floor (dashed), batch 128" || log "picture failed"
fi

if want ladder; then
  log "what would make the GPU win sooner: the knob ladder"
  $py main.py sweep --widths $ladder_widths --layers 2 --batch-size 128 --lanes "$cpu,$gpu" --data synthetic --ladder \
      --steady-steps 60 --seconds-per-point 1 "${samples[@]}" --csv "$out/ladder.csv" | tee "$out/ladder.txt"
fi

if want backends; then
  log "JAX against PyTorch on one GPU, and mixed precision (gpu_backends.sh)"
  GPU_A=${BACKENDS_A:-jax:gpu} GPU_B=${BACKENDS_B:-torch:gpu} PYTHON=$py bash benchmarks/gpu_backends.sh "$out/backends"
fi

if want kernels; then
  for lane in ${GPU_KERNEL_LANE-jax:gpu0} ${TORCH_KERNEL_LANE-torch:gpu0}; do
    for model in 750,150,50,50 128 1000,1000; do
      log "floor against the profiler's kernel times: $lane $model"
      $py benchmarks/kernel_check.py --lane "$lane" --widths "$model" | tee -a "$out/kernel-check.txt"
    done
  done
fi
log done
tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")" && log "packed $out.tgz"
