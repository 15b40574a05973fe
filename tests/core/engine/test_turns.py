"""Lanes taking turns: turns of bounded length, each lane going on where it stopped, both lines growing from
the start, and a model changed mid-run reaching every lane within one turn."""
from __future__ import annotations

import dataclasses
import threading
import time

import pytest

from crossover_lab.core.analysis.contention import contended
from crossover_lab.core.config import LaneSpec, Schedule
from crossover_lab.core.engine.conductor import TURN_S, RunControl
from crossover_lab.core.engine.pool import run_comparison
from crossover_lab.core.presets import PRESETS
from crossover_lab.core.records import BatchTiming, SegmentStarted, TurnEnded, TurnResumed

CPU, CPU1 = LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")
# The blog seed's small preset (784-128-10, Adam, batch 32, 10 epochs), on synthetic data: one lane
# alone would train for minutes.
BLOG = PRESETS["blog-small"].config.replace(samples=6000, data="synthetic")


@pytest.mark.lanes
def test_real_lanes_take_turns_and_a_drag_reaches_both(pool):
    pool.ready([CPU, CPU1])  # the frameworks are imported: the run's own time is what is measured
    control = RunControl()
    t0 = time.monotonic()
    first_steady: dict[str, float] = {}
    switched_at: list[float] = []
    new_model_at: dict[str, float] = {}
    wide = dataclasses.replace(BLOG, model=dataclasses.replace(BLOG.model, widths=(512,)))
    order: list[tuple[str, str]] = []

    def on_event(event):
        now = time.monotonic()
        if isinstance(event, BatchTiming) and not event.warmup:
            first_steady.setdefault(event.lane, now)
            if len(first_steady) == 2 and not switched_at and now - t0 > 3.0:
                control.switch(wide)  # a width dragged while both lanes take turns
                switched_at.append(now)
        if isinstance(event, SegmentStarted) and event.widths == (512,):
            new_model_at.setdefault(event.lane, now)
            if len(new_model_at) == 2:
                threading.Timer(1.0, control.cancel.set).start()
        if isinstance(event, (TurnEnded, TurnResumed)):
            order.append((event.lane, type(event).__name__))

    result = run_comparison(pool, [CPU, CPU1], BLOG, schedule=Schedule.INTERLEAVED, control=control, on_event=on_event)
    # How soon both lines show and a drag reaches both lanes is the demo's speed (benchmarks/segment_switch.py);
    # that a switch reaches the waiting lane after a short turn is test_a_model_changed_mid_turn_…'s, on scripted
    # lanes. Here, on real lanes: both trained, both switched, turns were taken and nothing overlapped.
    assert set(first_steady) == {"cpu", "cpu1"}
    assert switched_at and set(new_model_at) == {"cpu", "cpu1"}, (switched_at, new_model_at)
    for name in ("cpu", "cpu1"):
        lane = result.lanes[name]
        assert [s.label for s in lane.segments] == ["128", "512"], lane.segments
        # Every pause ended with the lane's turn coming back (going on where it stopped, or on the new model),
        # but one the stop came in.
        pauses = [resumed for s in lane.segments for _, resumed in s.pauses]
        assert None not in pauses[:-1], lane.segments
    assert ("cpu", "TurnEnded") in order and ("cpu1", "TurnEnded") in order
    assert contended(result) == set()  # no step of one lane was measured while the other trained


def test_a_resumed_step_slower_than_the_steady_median_is_left_out_and_the_wait_is_no_training_time():
    from crossover_lab.core.run_stats import summarize

    def rec(step: int, start: float, ms: float, resumed: bool = False) -> BatchTiming:
        return BatchTiming("r", "cpu", "CPU", 1, step, step, start, ms, 32, False, 0.1, resumed=resumed)

    records = [rec(i, i * 0.001, 1.0) for i in range(1, 11)]  # 10 steps of 1 ms, back to back
    records.append(rec(11, 5.0, 3.0, resumed=True))  # after a 5 s turn of another lane: slower
    records += [rec(i, 5.003 + (i - 12) * 0.001, 1.0) for i in range(12, 22)]
    s = summarize(records, run_id="r", lane="cpu", device="CPU", status="completed", flops_per_batch=1, wall_s=6)
    assert s.n_batches == 20 and s.median_ms == 1.0  # the slow first step after the resume is left out
    assert s.mean_wall_ms == pytest.approx(1000 * (0.010 + 0.010 + 0.003) / 21, rel=0.02)  # no 5 s wait in it
    records[10] = rec(11, 5.0, 0.9, resumed=True)  # as fast as the rest: it counts
    s = summarize(records, run_id="r", lane="cpu", device="CPU", status="completed", flops_per_batch=1, wall_s=6)
    assert s.n_batches == 21


def test_a_model_changed_mid_turn_reaches_the_waiting_lane_after_a_short_turn(scripted, scripted_pool):
    """On scripted lanes (10 ms a step on their own clock): the lane training when the width moves switches at its
    next step and trains a short turn on the new model (FIRST_TURN_S of steady steps, not TURN_S), so the lane
    waiting for its turn starts on the new model soon: about a second and a half from the drag on the defaults."""
    from crossover_lab.core.engine.conductor import FIRST_TURN_S

    from scripted_lanes import LaneScript

    pool = scripted_pool
    # Each step takes its 10 ms in real time too: the app hears of steps about as a lane's process tells them.
    scripted.scripts.update(cpu=LaneScript(fixed_ms=10.0, gflops=1e9, pace=1.0),
                            cpu1=LaneScript(fixed_ms=10.0, gflops=1e9, pace=1.0))
    control = RunControl()
    wide = dataclasses.replace(BLOG, model=dataclasses.replace(BLOG.model, widths=(512,)))
    steady_after_switch: dict[str, float] = {}
    started_new: list[str] = []
    turns_seen: list[str] = []

    def on_event(event):
        if isinstance(event, TurnEnded):
            turns_seen.append(event.lane)
            if len(turns_seen) == 3 and not control_switched:
                control.switch(wide)
                control_switched.append(True)
        if isinstance(event, SegmentStarted) and event.widths == (512,):
            started_new.append(event.lane)
            if len(started_new) == 2:
                control.cancel.set()
        if isinstance(event, BatchTiming) and not event.warmup and event.widths == (512,) and len(started_new) == 1:
            steady_after_switch[event.lane] = steady_after_switch.get(event.lane, 0.0) + event.ms / 1000

    control_switched: list[bool] = []
    run_comparison(pool, [CPU, CPU1], BLOG, schedule=Schedule.INTERLEAVED, control=control, on_event=on_event)
    assert len(started_new) == 2, started_new
    first = started_new[0]
    # The first lane on the new model trained a short turn on it (one step past the limit at most), then the other
    # lane had its turn: not a whole TURN_S.
    assert steady_after_switch.get(first, 0.0) <= FIRST_TURN_S + 0.05, steady_after_switch
    assert FIRST_TURN_S < TURN_S


def test_lanes_taking_turns_are_not_timed_while_another_still_loads_its_framework():
    """Issue 55: a lane importing TensorFlow takes the cores a lane being timed needs, and no load meter sees it
    (it is one of ours). Taking turns, the first turn starts once every lane of the run is up; the lane that comes
    up first is not timed meanwhile. Side by side, each starts at once as before."""
    from scripted_lanes import LaneScript, ScriptedMachine

    from crossover_lab.core.engine.pool import LanePool

    tiny = BLOG.replace(samples=512, epochs=1)
    for schedule in (Schedule.INTERLEAVED, Schedule.SIDE_BY_SIDE):
        machine = ScriptedMachine({"cpu1": LaneScript(start_s=1.5), "cpu": LaneScript(start_s=0.0)})
        pool = LanePool(channels=machine.channel)
        began, first_batch = time.monotonic(), {}

        def on_event(event, first_batch=first_batch, began=began):
            if isinstance(event, BatchTiming):
                first_batch.setdefault(event.lane, time.monotonic() - began)

        try:
            run_comparison(pool, [CPU, CPU1], tiny, schedule=schedule, on_event=on_event)
        finally:
            pool.close()
            machine.close()
        if schedule is Schedule.INTERLEAVED:
            assert first_batch["cpu"] >= 1.5, first_batch  # cpu waited for cpu1 to come up
        else:
            assert first_batch["cpu"] < 1.5, first_batch  # side by side: nobody waits
