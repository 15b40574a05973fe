"""Real lanes on tiny models: devices as labelled, cancel, crash recovery, recycling, no leftovers."""
from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest
from helpers import load_words, wall_limit

from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, Schedule, TrainSpec
from crossover_lab.core.engine.lanes import Lane
from crossover_lab.core.records import BatchTiming, LaneEnded
from crossover_lab.core.results import LaneResult
from crossover_lab.core.engine.pool import LanePool, run_comparison

pytestmark = pytest.mark.lanes
TINY = RunConfig(ModelSpec((32,)), TrainSpec(batch_size=64, epochs=1, samples=2000, data="synthetic"))
LONG = TINY.replace(epochs=200)


def test_cpu_and_cpu1_side_by_side(pool):
    result = run_comparison(pool, [LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")], TINY, schedule=Schedule.SIDE_BY_SIDE)
    cores = len(os.sched_getaffinity(0))
    for name, threads in (("cpu", cores), ("cpu1", 1)):
        lane = result.lanes[name]
        assert lane.status == "completed", lane.failure
        assert lane.started.device.startswith("CPU (") and f"{threads} thread" in lane.started.device
        assert "CPU:0" in lane.started.settings.placement
        assert lane.started.settings.threads == threads
        assert lane.started.settings.jit_compile is False and lane.started.settings.jit_source == "tensorflow default"
        # The framework's once-a-process costs were paid as the lane started (issue 55), and that is recorded.
        assert 0 < lane.started.settings.framework_warmed_s < 120, lane.started.settings
        steps = 2000 // 64
        assert [r.step for r in lane.records] == list(range(1, steps + 1))
        assert [r.warmup for r in lane.records[:6]] == [True] * 5 + [False]
        assert all(r.ms > 0 and r.samples == 64 and r.device == lane.started.device for r in lane.records)
        s = lane.summary
        assert s.n_batches == steps - 5 and s.n_warmup == 5
        assert 0 < s.p10_ms <= s.median_ms <= s.p90_ms
        assert s.gflops == pytest.approx(TINY.flops_per_batch / (s.median_ms / 1000) / 1e9)
    assert result.lanes["cpu1"].started.settings.cpu_affinity == tuple(sorted(os.sched_getaffinity(0))[-1:])
    # The parent never imported a framework: the lanes did.
    assert "tensorflow" not in sys.modules and "keras" not in sys.modules


def test_steps_per_execution_record_covers_n_batches(pool):
    cfg = TINY.replace(steps_per_execution=4)
    lane = run_comparison(pool, [LaneSpec.parse("cpu")], cfg).lanes["cpu"]
    assert lane.status == "completed", lane.failure
    assert lane.started.settings.steps_per_execution == 4
    assert all(r.batches == 4 and r.samples == 4 * 64 for r in lane.records)
    # Keras runs whole executions, past an epoch's end if need be: the lane makes the epoch a whole
    # number of them (31 steps → 28), so the records count exactly the steps trained.
    assert lane.started.settings.steps_per_epoch == 28 == lane.started.settings.total_steps
    assert lane.records[-1].step == sum(r.batches for r in lane.records) == 28
    assert lane.summary.n_batches + lane.summary.n_warmup == 28


def test_gpu_lane_without_gpu_fails_clearly(pool):
    result = run_comparison(pool, [LaneSpec.parse("gpu")], TINY)
    assert result.lanes["gpu0"].status == "failed"
    assert result.lanes["gpu0"].failure.startswith("No GPU is visible to TensorFlow (")
    assert result.lanes["gpu0"].records == []


def test_cancel_returns_quickly_and_keeps_records(pool):
    cancel = threading.Event()
    seen: list[BatchTiming] = []

    def on_event(e):
        if isinstance(e, BatchTiming):
            seen.append(e)
            if len(seen) == 40:
                cancel.set()
                stop_at.append(time.monotonic())

    stop_at: list[float] = []
    result = run_comparison(pool, [LaneSpec.parse("cpu")], LONG, on_event=on_event, cancel=cancel)
    elapsed = time.monotonic() - stop_at[0]
    lane = result.lanes["cpu"]
    assert elapsed < 1.5
    assert lane.status == "cancelled"
    assert len(lane.records) >= 40
    assert lane.summary.n_batches + lane.summary.n_warmup == len(lane.records)


def test_a_killed_lane_fails_keeps_records_and_the_next_job_works(pool):
    lane = pool.get(LaneSpec.parse("cpu1"))
    killed = []

    def on_event(e):
        if isinstance(e, BatchTiming) and e.step >= 20 and not killed:
            killed.append(lane.pid)
            os.kill(lane.pid, signal.SIGKILL)

    result = run_comparison(pool, [LaneSpec.parse("cpu1")], LONG, on_event=on_event)
    lr = result.lanes["cpu1"]
    assert lr.status == "failed"
    assert "killed (signal 9)" in lr.failure
    assert len(lr.records) >= 20
    assert lr.summary is not None and lr.summary.n_batches + lr.summary.n_warmup >= 20
    again = run_comparison(pool, [LaneSpec.parse("cpu1")], TINY).lanes["cpu1"]
    assert again.status == "completed" and again.started.settings.extra["pid"] != killed[0]


def test_lane_reused_without_recycling(pool):
    lane = pool.get(LaneSpec.parse("cpu"))
    first = run_comparison(pool, [lane.spec], TINY).lanes["cpu"]
    before = lane.processes_started
    second = run_comparison(pool, [lane.spec], TINY).lanes["cpu"]
    assert lane.processes_started == before
    assert first.started.settings.extra["pid"] == second.started.settings.extra["pid"]


def test_every_lane_makes_its_data_at_once_before_a_study_and_its_runs_use_it(tmp_path):
    """pool.ready(data_of=…): each lane loads the data that config trains on, all lanes at once, and keeps it for
    its runs (asked again, it has it); data it cannot load is a sentence, and the lane lives on."""
    config = RunConfig(ModelSpec((16,)), TrainSpec(batch_size=64, samples=30_000, data="synthetic", max_steps=8))
    lanes = [LaneSpec.parse("cpu1"), LaneSpec.parse("jax:cpu1")]
    pool = LanePool()
    try:
        pool.ready(lanes, data_of=config)
        for spec in lanes:
            again = pool.get(spec).prepare(config)
            assert not again.error and again.seconds < wall_limit(0.05), (spec.name, again)  # made by ready()
        lane = pool.get(lanes[0])
        fresh = lane.prepare(config.replace(seed=1))  # another data set: made now
        assert not fresh.error and fresh.seconds > 5 * lane.prepare(config.replace(seed=1)).seconds
        missing = lane.prepare(config.replace(data=str(tmp_path / "none.npz")))
        assert "none.npz" in missing.error and lane.up
        result = run_comparison(pool, lanes, config)
        for name, got in result.lanes.items():
            assert got.status == "completed", (name, got.failure)
            assert got.started.settings.samples == 30_000
    finally:
        pool.close()


class SilentChannel:
    """A lane process that takes jobs and never answers; the test decides when it dies."""

    def __init__(self, spec) -> None:
        self.sent, self._alive, self.closed = [], True, False

    pid = 4242

    @property
    def alive(self) -> bool:
        return self._alive

    def exit_reason(self) -> str:
        return "killed by signal 9"

    def send(self, job) -> bool:
        self.sent.append(job)
        return True

    def receive(self, timeout: float):
        time.sleep(min(timeout, 0.01))
        return None

    def set_cancel(self, on: bool) -> None:
        pass

    def join(self, timeout: float) -> bool:
        return True

    def kill(self) -> None:
        self._alive = False

    def close(self) -> None:
        self.closed = True


def test_a_request_says_why_no_answer_came_cancel_close_death_or_time():
    from crossover_lab.core.messages import LaneClosed, LaneDied, NoAnswer, Probed, ProbeJob, RequestCancelled

    lane = Lane(LaneSpec.parse("cpu1"), channel_factory=SilentChannel)
    assert isinstance(lane.request(ProbeJob(), Probed, timeout=0.2), NoAnswer)
    cancel = threading.Event()
    threading.Timer(0.1, cancel.set).start()
    assert isinstance(lane.request(ProbeJob(), Probed, timeout=5.0, cancel=cancel), RequestCancelled)
    threading.Timer(0.1, lane.close).start()  # another thread closes the lane while this one waits
    assert isinstance(lane.request(ProbeJob(), Probed, timeout=5.0), LaneClosed)
    lane.start()
    threading.Timer(0.1, lane._channel.kill).start()  # the process dies
    died = lane.request(ProbeJob(), Probed, timeout=5.0)
    assert isinstance(died, LaneDied) and died.reason == "killed by signal 9"
