"""Cross-check the anatomy's floor against the profiler: the device_loop rung (ms per step of K steps in one compiled
call) against the sum of GPU kernel times the backend's profiler records for the same calls. They must agree
within 20%. JAX: jax.profiler's trace (the Chrome-trace JSON beside its xplane), summing the events on GPU
stream threads; PyTorch: torch.profiler's CUDA kernel times (the CUDA graph's replays).

Runs in this process, set up as the lane's process would be (core/lane/backends.py), on one model:
    python benchmarks/kernel_check.py --lane jax:gpu0 --widths 750,150,50,50 [--batch-size 128]
Prints the figures and `kernel_check ok|DISAGREE|skipped` last; exit 1 when they disagree. On a CPU lane there is
no kernel stream to sum: it says so and exits 0 (a dry run of everything but the comparison).
"""
from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any

TOLERANCE = 0.20


def jax_kernel_ms(run: Any, calls: int) -> tuple[float, str]:
    """Sum of event durations on GPU stream threads while `run()` is called `calls` times, in ms; and what was found."""
    import jax

    folder = tempfile.mkdtemp(prefix="crossover-trace-")
    with jax.profiler.trace(folder):
        for _ in range(calls):
            run()
    found = glob.glob(os.path.join(folder, "**", "*.trace.json.gz"), recursive=True)
    if not found:
        return float("nan"), f"no Chrome-trace JSON under {folder}"
    with gzip.open(found[0]) as fh:
        data = json.load(fh)
    events = data["traceEvents"] if isinstance(data, dict) else data
    processes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e.get("ph") == "M" and e.get("name") == "thread_name"}
    streams = {key for key, name in threads.items()
               if "GPU" in processes.get(key[0], "") and name.lower().startswith("stream")}
    if not streams:
        names = sorted({f"{processes.get(p, p)}/{n}" for (p, _t), n in threads.items()})
        return float("nan"), "no GPU stream thread in the trace; threads: " + ", ".join(names[:12])
    total_us = sum(e.get("dur", 0.0) for e in events if e.get("ph") == "X" and (e.get("pid"), e.get("tid")) in streams)
    return total_us / 1000.0, f"{len(streams)} GPU stream thread(s) in {found[0]}"


def torch_kernel_ms(run: Any, calls: int) -> tuple[float, str]:
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            run()
        torch.cuda.synchronize()
    total_us = 0.0
    kernels = 0
    for event in prof.events():
        if str(getattr(event, "device_type", "")).endswith("CUDA"):
            total_us += float(getattr(event, "device_time", None) or getattr(event, "cuda_time", 0.0))
            kernels += 1
    if not kernels:
        return float("nan"), "torch.profiler recorded no CUDA kernel (a CUDA graph replay may hide them)"
    return total_us / 1000.0, f"{kernels} CUDA kernel event(s)"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lane", default="jax:gpu0")
    parser.add_argument("--widths", default="750,150,50,50")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--calls", type=int, default=20, help="loop calls profiled")
    args = parser.parse_args()

    from crossover_lab.core.analysis.anatomy import window_plan
    from crossover_lab.core.lane.steps import steps_for
    from crossover_lab.core.lane.anatomy import Anatomy
    from crossover_lab.core.lane.backends import DEFAULT_JIT, configure_process, import_keras, keras_device
    from crossover_lab.core.config import LaneSpec, ModelSpec, TrainSpec, parse_widths
    from crossover_lab.core.lane.data import load
    from crossover_lab.core.lane.feeding import make_input
    from crossover_lab.core.lane.model import build_model

    spec = LaneSpec.parse(args.lane)
    settings = configure_process(spec)
    keras, _ = import_keras(spec, settings["threads"])
    train = TrainSpec(batch_size=args.batch_size, data="synthetic", samples=64 * args.batch_size)
    data = load("synthetic", train.samples)
    bs = train.batch_size
    with keras.device(keras_device(spec)):
        model = build_model(keras, ModelSpec(parse_widths(args.widths)), train, jit=DEFAULT_JIT[spec.backend])
        anatomy = Anatomy(keras, model, steps_for(keras, model, spec),
                          lambda: make_input(data.x, data.y, bs, spec, "host")[0],
                          [(data.x[i * bs:(i + 1) * bs], data.y[i * bs:(i + 1) * bs]) for i in range(64)],
                          spec.name, spec.name)
        first = anatomy.fit(2, warmup=5)
        anatomy.k, windows = window_plan(statistics.median(first) / 1000.0, 0.5)
        loop_ms = statistics.median(anatomy.device_loop(max(windows, 5)))
        s, k = anatomy.steps, anatomy.k
        loop, (xs, ys) = anatomy.loop(), anatomy.stacked()
        box = {"state": s.begin()}

        def run() -> None:
            loss, box["state"] = loop(box["state"], xs, ys, k)
            s.read(loss)

        t0 = time.perf_counter()
        if spec.backend == "jax":  # on a CPU lane too: a dry run of the trace's parsing (it finds no GPU stream)
            kernel_ms, found = jax_kernel_ms(run, args.calls)
        elif spec.kind == "gpu":
            kernel_ms, found = torch_kernel_ms(run, args.calls)
        else:
            kernel_ms, found = float("nan"), "a CPU lane: no GPU kernels to sum"
        wall_ms = (time.perf_counter() - t0) * 1000.0 / (args.calls * k)
        s.end(box["state"])
    per_step = kernel_ms / (args.calls * k)
    print(f"{spec.name} {args.widths} batch {bs}: K={k}; device_loop {loop_ms:.4g} ms per step; profiled calls "
          f"{wall_ms:.4g} ms per step of wall time; kernels {per_step:.4g} ms per step ({found})")
    if per_step != per_step:  # NaN: nothing to compare
        print("kernel_check skipped")
        return 0
    ratio = per_step / loop_ms
    verdict = "ok" if abs(ratio - 1.0) <= TOLERANCE else "DISAGREE"
    print(f"kernels / device_loop = {ratio:.3f} (must be within ±{TOLERANCE:.0%})")
    print(f"kernel_check {verdict}")
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
