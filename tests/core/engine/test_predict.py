"""The predict task on real lanes: one call timed at a time, host to host, on the same segments as training."""
from __future__ import annotations

import csv
import math

import pytest
from helpers import cli_in_process

from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, TrainSpec
from crossover_lab.core.engine.conductor import RunControl
from crossover_lab.core.engine.pool import run_comparison
from crossover_lab.core.records import BatchTiming

PREDICT = RunConfig(ModelSpec((16,)), TrainSpec(batch_size=32, epochs=400, samples=2048, data="synthetic",
                                               task="predict"))
CPU1 = LaneSpec.parse("cpu1")


@pytest.mark.lanes
def test_a_predict_run_times_each_call_and_switches_model_mid_run(pool):
    control = RunControl()
    seen: list[BatchTiming] = []
    bigger = RunConfig(ModelSpec((1024, 1024)), PREDICT.train)

    def on_event(event):
        if isinstance(event, BatchTiming):
            seen.append(event)
            if len(seen) == 40:
                control.switch(bigger)
            # The lane runs ahead of what the app has seen: count the new segment's own calls, not the run's steps.
            if event.segment == 2 and sum(1 for e in seen if e.segment == 2) >= 5 + 40:
                control.cancel.set()

    result = run_comparison(pool, [CPU1], PREDICT, control=control, on_event=on_event)
    lane = result.lanes["cpu1"]
    settings = lane.started.settings.to_json()  # as the sidecar keeps it
    assert settings["task"] == "predict" and settings["serve"] == "keras"
    assert settings["weights"].startswith("trained 3 steps before the first call (not timed)")
    assert settings["feeding"].startswith("host: each call takes a NumPy slice")
    assert [s.label for s in lane.segments] == ["16", "1024-1024"]
    one = [r for r in lane.records if r.segment == 1]
    two = [r for r in lane.records if r.segment == 2]
    assert {r.task for r in lane.records} == {"predict"} and all(math.isnan(r.loss) for r in lane.records)
    assert [r.warmup for r in two[:6]] == [True] * 5 + [False]  # warm-up again on the new model
    # Each record is its own call, begin to end: it ends before the next begins (the loop is no call's time).
    for a, b in zip(one, one[1:]):
        assert a.start_s + a.ms / 1000 <= b.start_s + 1e-6
    first, second = (s.ended.summary for s in lane.segments)
    assert first.status == "switched" and second.n_batches >= 30
    assert first.median_ms <= first.p90_ms
    assert math.isnan(first.p99_ms) or first.n_batches >= 662  # a p99 only from the calls it needs
    # A forward call's FLOPs: 2·a·b per sample per layer, a third of a training step's past the first layer.
    assert lane.segments[1].started.flops_per_batch == 32 * 2 * (784 * 1024 + 1024 * 1024 + 1024 * 10)
    assert second.median_ms > first.median_ms  # 2.4 GFLOP-class calls against 50 kFLOP ones


def test_predict_from_the_cli_says_latency_and_its_tail_and_writes_the_task(tmp_path, capsys, scripted_pool):
    path = tmp_path / "p.csv"
    out = cli_in_process(capsys, "run", "--task", "predict", "--serve", "compiled", "--lanes", "cpu,cpu1", "--widths", "64",
              "--batch-size", "16", "--samples", "1024", "--data", "synthetic", "--csv", str(path))
    assert out.returncode == 0, out.stderr[-2000:]
    assert "p99 ms" in out.stdout and "calls/s" in out.stdout
    assert "cpu answers a batch of 16 in " in out.stdout and "cpu1 answers a batch of 16 in " in out.stdout
    assert "Per predict call, " in out.stdout
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and {r["task"] for r in rows} == {"predict"}
    refused = cli_in_process(capsys, "run", "--task", "predict", "--feeding", "device", "--lanes", "cpu", "--data", "synthetic")
    assert refused.returncode != 0 and "a predict call takes its input from host memory" in refused.stderr


@pytest.mark.lanes
@pytest.mark.parametrize("family, kind", [("cnn", "cnn"), ("rnn", "lstm")])
def test_a_compiled_call_serves_every_family_on_tensorflow(pool, family, kind):
    """TensorFlow's compiled call is a tf.function with a fixed input signature, taken from the model's own
    input: a CNN and an RNN are served by it (each family reshapes the 784 pixels inside the model)."""
    config = RunConfig(ModelSpec((8,), family=family), TrainSpec(batch_size=16, samples=256, data="synthetic",
                                                                 task="predict", serve="compiled", max_steps=20))
    result = run_comparison(pool, [LaneSpec("cpu", threads=1, backend="tensorflow")], config)
    lane = next(iter(result.lanes.values()))
    assert lane.summary is not None and lane.summary.status == "completed", (lane.failure, lane.summary)
    assert {r.task for r in lane.records} == {"predict"} and {r.family for r in lane.records} == {kind}
