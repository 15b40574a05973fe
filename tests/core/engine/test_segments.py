"""Segments: a model changed while it trains, ramps, lanes taking turns, and what the files say of them."""
from __future__ import annotations

import csv
import dataclasses
import json
import os
import subprocess
import sys
import time

import pytest

from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, Schedule, TrainSpec
from crossover_lab.core.analysis.contention import contended
from crossover_lab.core.files.run_files import export_runs, read_runs
from crossover_lab.core.records import BatchTiming, RunStarted, RunSummary, SegmentEnded, SegmentStarted
from crossover_lab.core.results import LaneResult, RunResult, Segment
from crossover_lab.core.engine.pool import run_comparison
from crossover_lab.core.engine.conductor import RunControl, default_schedule, schedule_named
from crossover_lab.core.study.sweep import ramp_plan
from crossover_lab.core.files.sweeps.files import run_rows
from crossover_lab.core.files.sweeps.rows import group_rows
from crossover_lab.core.words.run import verdict_lines

BASE = RunConfig(ModelSpec((16,)), TrainSpec(batch_size=64, epochs=400, samples=2048, data="synthetic"))
CPU, CPU1 = LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")


@pytest.mark.lanes
def test_a_width_changed_mid_run_starts_a_new_segment_on_the_same_lane(pool):
    control = RunControl()
    seen: list[BatchTiming] = []
    switched: list[float] = []
    # 1,024 units: about 64 times the FLOPs of 16, so "slower" is beyond this machine's noise (at 256 a quiet CI once
    # measured 1.68 ms against 1.83 ms at 16: batch 64 of either is mostly the fixed cost of a step).
    new_width = RunConfig(ModelSpec((1024,)), BASE.train)

    def on_event(event):
        if isinstance(event, BatchTiming):
            seen.append(event)
            if len(seen) == 30 and not switched:
                switched.append(time.monotonic())
                control.switch(new_width)
            if event.segment == 2 and event.step >= 30 + 5 + 20:
                control.cancel.set()

    lane = pool.get(CPU1)
    pool.ready([CPU1])
    started = lane.processes_started
    result = run_comparison(pool, [CPU1], BASE, control=control, on_event=on_event)
    cpu1 = result.lanes["cpu1"]
    assert lane.processes_started == started  # the lane stayed up: no process restart
    assert [s.label for s in cpu1.segments] == ["16", "1024"]
    first, second = cpu1.segments
    assert first.ended.summary.status == "switched" and second.ended.summary.status == "cancelled"
    assert cpu1.status == "cancelled"  # stopped by the test, after enough of the new width
    one = [r for r in cpu1.records if r.segment == 1]
    two = [r for r in cpu1.records if r.segment == 2]
    assert len(one) >= 30 and {r.widths for r in one} == {(16,)} and {r.widths for r in two} == {(1024,)}
    assert [r.warmup for r in two[:6]] == [True] * 5 + [False]  # warm-up again on the new model
    assert two[0].step == one[-1].step + 1  # steps count on across segments
    assert second.started.first_step == one[-1].step
    assert second.started.flops_per_batch == new_width.flops_per_batch
    assert second.ended.summary.median_ms > first.ended.summary.median_ms  # a bigger model, slower steps
    assert {r.batch_size for r in cpu1.records} == {64}


# In a child process, as in a lane: the test process never imports a framework.
TRACES = """
from crossover_lab.core.lane.backends import configure_process, import_keras
from crossover_lab.core.config import LaneSpec, ModelSpec, TrainSpec
from crossover_lab.core.lane.model import build_model
spec = LaneSpec.parse("cpu1")
keras, _ = import_keras(spec, configure_process(spec)["threads"])
model = build_model(keras, ModelSpec((32,)), TrainSpec(), jit=False)
traced, step = [], model.train_step
model.train_step = lambda data: traced.append(1) or step(data)
x, y = keras.ops.zeros((256, 784)), keras.ops.zeros((256,), dtype="int32")
model.fit(x, y, batch_size=64, epochs=2, verbose=0)
print("traced", len(traced))
"""


@pytest.mark.lanes
def test_a_new_model_traces_its_training_step_once():
    # Variables made while tracing (Keras' optimizer slots and metric totals, left to the first step
    # on TensorFlow) make tf.function trace the step again: a switched width's first batch waited for both.
    out = subprocess.run([sys.executable, "-c", TRACES], text=True, capture_output=True, timeout=120,
                         env={**os.environ, "KERAS_BACKEND": "tensorflow"})
    assert "traced 1" in out.stdout.splitlines(), out.stdout + out.stderr[-2000:]


SHELF = """
import numpy as np
from crossover_lab.core.lane.backends import configure_process, import_keras
from crossover_lab.core.config import LaneSpec, ModelSpec, TrainSpec
from crossover_lab.core.lane.model import ModelShelf
spec = LaneSpec.parse("cpu1")
keras, _ = import_keras(spec, configure_process(spec)["threads"])
shelf, train = ModelShelf(keras, max_models=2), TrainSpec(batch_size=64)
rng = np.random.default_rng(0)
x, y = rng.random((256, 784), dtype=np.float32), rng.integers(0, 10, 256)
traced = []
def fit(model):
    return model.fit(x, y, batch_size=64, epochs=1, verbose=0, shuffle=False).history["loss"][-1]
a, reused_a = shelf.get(ModelSpec((32,)), train, jit=False)
step = a.train_step
a.train_step = lambda data: traced.append(1) or step(data)
loss_a = fit(a)
b, reused_b = shelf.get(ModelSpec((32,)), train, jit=False)
loss_b = fit(b)
for width in (64, 16):  # two more models: the shelf keeps two, the oldest (32) goes
    shelf.get(ModelSpec((width,)), train, jit=False)
_, reused_c = shelf.get(ModelSpec((32,)), train, jit=False)
print("shelf", reused_a, reused_b, a is b, loss_a == loss_b, len(traced), reused_c, len(shelf))
"""


@pytest.mark.lanes
def test_a_model_from_the_shelf_trains_as_a_new_one_without_tracing_again():
    out = subprocess.run([sys.executable, "-c", SHELF], text=True, capture_output=True, timeout=120,
                         env={**os.environ, "KERAS_BACKEND": "tensorflow"})
    # Reused, reset to its first weights (the same loss to the last bit), its step not traced again; evicted
    # when two newer models came.
    assert "shelf False True True True 1 False 2" in out.stdout.splitlines(), out.stdout + out.stderr[-2000:]


def test_an_interleaved_ramp_takes_turns_and_no_two_cpu_segments_overlap(scripted_pool):
    pool = scripted_pool
    plan = ramp_plan(BASE, (8, 256), layers=1, steady_steps=10, seconds=1.0)
    result = run_comparison(pool, [CPU, CPU1], BASE, schedule=Schedule.INTERLEAVED, plan=plan)
    for name in ("cpu", "cpu1"):
        lane = result.lanes[name]
        assert lane.status == "completed", lane.failure
        assert [s.label for s in lane.segments] == ["8", "256"]
        assert all(s.ended.summary.status == "completed" and s.ended.summary.n_batches == 10 for s in lane.segments)
    spans = sorted((s.started.at, s.ended.at, name) for name, lane in result.lanes.items() for s in lane.segments)
    assert [name for *_, name in spans] == ["cpu", "cpu1", "cpu", "cpu1"]  # turns by segment
    assert all(a_end <= b_start for (_, a_end, _), (b_start, _, _) in zip(spans, spans[1:]))
    assert contended(result) == set()
    rows = run_rows(result)
    assert sorted((r.lane, r.width, r.stage) for r in rows) == [
        ("cpu", 8, "ramp"), ("cpu", 256, "ramp"), ("cpu1", 8, "ramp"), ("cpu1", 256, "ramp")]
    assert len(group_rows(rows)["all"]) == 4  # a ramp reads as a sweep


def test_side_by_side_cpu_lanes_are_contended_and_the_verdict_says_so(scripted, scripted_pool):
    pool = scripted_pool
    for name, script in scripted.scripts.items():  # each lane trains for a second or so: long enough to overlap
        scripted.scripts[name] = dataclasses.replace(script, min_sleep_s=0.001)
    config = RunConfig(ModelSpec((32,)), TrainSpec(batch_size=64, epochs=40, samples=2048, data="synthetic"))
    result = run_comparison(pool, [CPU, CPU1], config, schedule=Schedule.SIDE_BY_SIDE)
    assert contended(result) == {("cpu", 1), ("cpu1", 1)}, [(n, [(s.started.at, s.ended.at if s.ended else None) for s in lane.segments]) for n, lane in result.lanes.items()]
    lines = verdict_lines([lane.summary for lane in result.lanes.values()], {"cpu", "cpu1"})
    assert lines and lines[0].endswith("(contended: both trained at once on the same CPU cores)")


def test_schedules_by_name_and_default():
    assert schedule_named("concurrent") == "side-by-side"  # the old name
    assert default_schedule([CPU, CPU1]) == "interleaved"
    assert default_schedule([CPU, LaneSpec.parse("gpu0")]) == "side-by-side"
    assert default_schedule([CPU1, LaneSpec.parse("ssh://lab/cpu")]) == "side-by-side"
    # A lane and its twin share their device, whatever it is: they take turns, as lanes sharing cores do.
    assert default_schedule([CPU1, LaneSpec.parse("cpu1#2")]) == "interleaved"
    assert default_schedule([LaneSpec.parse("jax:gpu0"), LaneSpec.parse("jax:gpu0#2")]) == "interleaved"
    assert default_schedule([LaneSpec.parse("ssh://lab/cpu"), LaneSpec.parse("ssh://lab/cpu#2")]) == "interleaved"
    assert default_schedule([LaneSpec.parse("jax:gpu0"), LaneSpec.parse("jax:gpu1#2")]) == "side-by-side"


def _segmented_result() -> RunResult:
    config = BASE
    records = [BatchTiming("r", "cpu1", "CPU", 1, i, i, i * 0.01, 1.0 + (i > 10), 64, i in (1, 11), 2.0,
                           widths=(16,) if i <= 10 else (512, 512), batch_size=64, segment=1 if i <= 10 else 2)
               for i in range(1, 21)]
    summary = RunSummary("r", "cpu1", "CPU", "completed", n_batches=9, median_ms=1.0)
    segments = [Segment(SegmentStarted("r", "cpu1", 1, (16,), 64, 1000, 0, 100.0),
                        SegmentEnded("r", "cpu1", 1, RunSummary("r", "cpu1", "CPU", "switched", median_ms=1.0), 101.0)),
                Segment(SegmentStarted("r", "cpu1", 2, (512, 512), 64, 9000, 10, 101.0),
                        SegmentEnded("r", "cpu1", 2, summary, 102.0))]
    lane = LaneResult("cpu1", RunStarted("r", "cpu1", "CPU"), records, summary, segments=segments)
    return RunResult("r", config, Schedule.INTERLEAVED, "2026-01-01T00:00:00+00:00", {"cpu1": lane})


def test_the_per_batch_csv_describes_itself_and_the_sidecar_lists_segments(tmp_path):
    csv_path, _ = export_runs(tmp_path / "t.csv", [_segmented_result()], {})
    with open(csv_path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    header = list(rows[0])
    assert header[:11] == ["run_id", "lane", "device", "epoch", "batch", "step", "start_s", "ms", "samples",
                           "warmup", "loss"]  # the present columns keep their order
    assert header[-10:] == ["widths", "batch_size", "segment", "resumed", "task", "family",  # then a rate's
                            "requests", "queued", "backlog", "waits_ms"]
    assert {(r["widths"], r["segment"]) for r in rows} == {("16", "1"), ("512-512", "2")}
    (back,) = read_runs(csv_path)
    segments = back.lanes["cpu1"].segments
    assert [(s.label, s.started.first_step, s.ended.summary.status) for s in segments] == [
        ("16", 0, "switched"), ("512-512", 10, "completed")]
    assert [r.widths for r in back.lanes["cpu1"].records][9:11] == [(16,), (512, 512)]


def test_contention_is_about_overlap_in_time_on_shared_cores():
    def lane(name, spans):
        segments = [Segment(SegmentStarted("r", name, i + 1, (8,), 8, 1, 0, a),
                            SegmentEnded("r", name, i + 1, RunSummary("r", name, "", "completed"), b))
                    for i, (a, b) in enumerate(spans)]
        return LaneResult(name, segments=segments)

    turns = RunResult("r", BASE, Schedule.INTERLEAVED, "", {"cpu": lane("cpu", [(0, 1), (2, 3)]),
                                                     "cpu1": lane("cpu1", [(1, 2), (3, 4)])})
    assert contended(turns) == set()
    overlapping = RunResult("r", BASE, Schedule.SIDE_BY_SIDE, "", {"cpu": lane("cpu", [(0, 2)]),
                                                            "cpu1": lane("cpu1", [(1, 3)]),
                                                            "gpu0": lane("gpu0", [(0, 3)])})
    assert contended(overlapping) == {("cpu", 1), ("cpu1", 1)}  # the GPU lane's work is on the GPU


def test_cancel_while_a_paced_lane_waits_for_its_turn_ends_it_at_once(scripted_pool):
    pool = scripted_pool
    plan = ramp_plan(BASE, (8, 16, 32), layers=1, steady_steps=10, seconds=5.0)
    control = RunControl()
    ends: list[str] = []

    def on_event(event):
        if isinstance(event, SegmentEnded):
            ends.append(event.lane)
            if len(ends) == 1:
                control.cancel.set()  # before cpu1's turn comes

    t0 = time.monotonic()
    result = run_comparison(pool, [CPU, CPU1], BASE, schedule=Schedule.INTERLEAVED, plan=plan, control=control,
                            on_event=on_event)
    assert time.monotonic() - t0 < 60
    assert result.lanes["cpu"].status == "cancelled"
    assert result.lanes["cpu1"].status == "cancelled" and result.lanes["cpu1"].failure == "stopped before its turn"
    assert len(result.lanes["cpu"].segments) == 1


@pytest.mark.lanes
def test_a_run_of_a_model_the_lane_has_trained_reuses_it_and_says_so(pool):
    config = dataclasses.replace(BASE, model=ModelSpec((24,)),
                                 train=dataclasses.replace(BASE.train, epochs=1, samples=640))
    first = run_comparison(pool, [CPU1], config)
    second = run_comparison(pool, [CPU1], config)
    reused = [run.lanes["cpu1"].started.settings.model_reused for run in (first, second)]
    assert reused == [False, True]
    assert [run.lanes["cpu1"].status for run in (first, second)] == ["completed", "completed"]
    warm = [r for r in second.lanes["cpu1"].records if r.warmup]
    assert len(warm) == config.train.warmup_steps  # its first batches are still warm-up, kept apart


def test_a_ramp_through_batch_sizes_keeps_the_model_and_refuses_what_it_cannot_ramp():
    from crossover_lab.core.config import ConfigError

    plan = ramp_plan(RunConfig(ModelSpec((64, 64)), BASE.train), (), batch_sizes=(8, 64, 512))
    assert [(c.model.widths, c.train.batch_size) for c in plan] == [((64, 64), 8), ((64, 64), 64), ((64, 64), 512)]
    with pytest.raises(ConfigError, match="at least two"):
        ramp_plan(BASE, (), batch_sizes=(8,))
    with pytest.raises(ConfigError, match="not both"):
        ramp_plan(BASE, (8, 16), batch_sizes=(8, 16))
    with pytest.raises(ConfigError, match="layers of different widths"):
        ramp_plan(RunConfig(ModelSpec((64, 32)), BASE.train), (), batch_sizes=(8, 16))


def test_a_ramp_through_batch_sizes_reads_as_a_sweep_along_batch_size(tmp_path, capsys, scripted_pool):
    """`run --ramp-batch-sizes`: one run, each lane through the batch sizes at one width, its answer in samples
    per batch, and `analyze` of its per-batch CSV says the same (a sweep's old sidecar of that name is not read)."""
    from helpers import cli_in_process

    csv_path = tmp_path / "ramp.csv"
    stale = {"refinement": {"tolerance": 0.3, "budget_s": 30.0, "stopped": "tight", "spent_s": 14.9,
                            "widths_measured": [1, 512, 260], "unit": "samples per batch", "ties": []},
             "crossovers": [{"lanes": ["cpu", "cpu1"], "width": 412.7, "width_lo": 293, "width_hi": 512,
                             "flops_per_batch": 1.6e8, "faster_above": "cpu", "stopped": "tight"}]}
    (tmp_path / "ramp-batches.json").write_text(json.dumps({"sweep": {"variants": {"base": {"analysis": stale}}}}))
    from crossover_lab.core.analysis.refinement import refinement_of_sidecar
    assert refinement_of_sidecar(json.loads((tmp_path / "ramp-batches.json").read_text())) is not None  # it reads
    r = cli_in_process(capsys, "run", "--widths", "64", "--ramp-batch-sizes", "4,256", "--lanes", "cpu,cpu1", "--data", "synthetic",
            "--samples", "1024", "--steady-steps", "10", "--seconds-per-point", "1", "--csv", str(csv_path))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "through batch sizes 4, 256" in r.stderr
    answer = [line for line in r.stdout.splitlines() if "samples per batch" in line]
    assert answer, r.stdout
    rows = list(csv.DictReader(open(csv_path)))
    assert {(row["lane"], row["batch_size"]) for row in rows} >= {("cpu", "4"), ("cpu", "256"), ("cpu1", "4"),
                                                                   ("cpu1", "256")}
    again = cli_in_process(capsys, "analyze", str(csv_path))
    assert again.returncode == 0 and answer[0] in again.stdout, again.stdout
    assert "Refinement" not in again.stdout  # the stale sweep sidecar beside it is not this run's
