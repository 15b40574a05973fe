"""How the app watches a lane's process (core/engine/lanes.py): a stop that is not heard ends in a kill after the
grace period, a process that grew past its bound is replaced before the next run, and a lane that freezes while it
starts is killed by the watchdog, not waited for. The Lane's logic, on scripted lanes (tests/scripted_lanes.py):
that a real process is killed is tests/core/engine/test_lanes.py's (a killed lane keeps its records)."""
from __future__ import annotations

import time

from helpers import wall_limit
from scripted_lanes import LaneScript, ScriptedMachine

from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, TrainSpec
from crossover_lab.core.engine.lanes import Lane
from crossover_lab.core.engine.pool import LanePool, run_comparison
from crossover_lab.core.messages import LaneDied, Probed
from crossover_lab.core.records import BatchTiming, LaneEnded
from crossover_lab.core.results import LaneResult

TINY = RunConfig(ModelSpec((32,)), TrainSpec(batch_size=64, epochs=1, samples=2000, data="synthetic"))
LONG = RunConfig(ModelSpec((32,)), TrainSpec(batch_size=64, epochs=100, samples=6400, data="synthetic"))


def test_a_lane_that_does_not_hear_the_stop_is_killed_after_the_grace_and_its_records_are_kept():
    machine = ScriptedMachine({"cpu": LaneScript(ignore_cancel=True, min_sleep_s=0.005)})
    lane = Lane(LaneSpec.parse("cpu"), cancel_grace_s=0.2, channel_factory=machine.channel)
    try:
        lane.submit("stuck", LONG)
        events = []
        deadline = time.monotonic() + 10
        while sum(isinstance(e, BatchTiming) for e in events) < 20 and time.monotonic() < deadline:
            events += lane.poll(0.05)
        assert sum(isinstance(e, BatchTiming) for e in events) >= 20
        t0 = time.monotonic()
        lane.cancel()
        while lane.busy and time.monotonic() - t0 < 5:
            events += lane.poll(0.05)
        assert time.monotonic() - t0 < wall_limit(1.5)
        end = events[-1]  # the app ended it: the records are summarised where they are folded
        assert isinstance(end, LaneEnded) and end.status == "cancelled" and "killing the lane" in end.reason
        assert not lane.alive and machine.channels[0].exit_reason().startswith("the lane process was killed")
        folded = LaneResult("cpu")
        for event in events:
            folded.apply(event)
        assert folded.status == "cancelled" and "killing the lane" in folded.summary.reason
        assert folded.summary.n_batches + folded.summary.n_warmup == len(folded.records) >= 20
    finally:
        lane.close()


def test_a_lane_is_recycled_past_its_memory_bound_and_reused_below_it():
    # Each job leaves the process 300 MB larger (a framework that never frees a trained model's state).
    machine = ScriptedMachine({"cpu1": LaneScript(rss_growth_mb=300.0)})
    pool = LanePool(channels=machine.channel)
    lane = pool.get(LaneSpec.parse("cpu1"))
    lane.memory_limit_mb = 500.0
    try:
        pids = []
        for _ in range(4):
            run = run_comparison(pool, [lane.spec], TINY).lanes["cpu1"]
            assert run.status == "completed"
            pids.append(run.started.settings.extra["pid"])
            lane.poll(0.2)  # the status message with the process's size follows the run's end
        # The first run sets the baseline (800 MB); the second leaves it 300 MB past it, the third 600: past the
        # 500 MB bound, so the fourth run starts a fresh process.
        assert pids[0] == pids[1] == pids[2] != pids[3]
        assert lane.processes_started == 2 and machine.started("cpu1") == 2
    finally:
        pool.close()


def test_a_lane_that_freezes_while_it_starts_is_killed_by_the_watchdog_and_starts_again():
    """A lane that sends no heartbeat while it imports its framework: a request to it ends after the start's limit
    of silence with a sentence, not after the request's own two minutes; a fresh process then answers."""
    machine = ScriptedMachine({"cpu1": [LaneScript(start_hangs=True), LaneScript()]})
    lane = Lane(LaneSpec.parse("cpu1"), watchdog_s=0.2, start_silence_s=0.5, channel_factory=machine.channel)
    try:
        t0 = time.monotonic()
        reply = lane.probe()
        took = time.monotonic() - t0
        assert isinstance(reply, LaneDied) and "stopped responding while it started" in reply.reason, reply
        assert 0.5 <= took < wall_limit(3.0), took
        assert not machine.channels[0].alive  # killed, not left
        assert isinstance(lane.probe(), Probed) and lane.up and machine.started("cpu1") == 2
    finally:
        lane.close()


def test_a_run_on_a_lane_still_starting_waits_past_the_watchdog_and_a_frozen_start_is_ended_with_a_sentence():
    """The watchdog is armed once a lane is ready (issue 49 #4): a lane that takes longer than the watchdog to come
    up, silent, trains its run; one that never comes up is ended after the start's own limit, saying so."""
    machine = ScriptedMachine({"cpu1": LaneScript(start_s=1.0), "cpu": LaneScript(start_hangs=True)})
    slow = Lane(LaneSpec.parse("cpu1"), watchdog_s=0.2, start_silence_s=30.0, channel_factory=machine.channel)
    frozen = Lane(LaneSpec.parse("cpu"), watchdog_s=0.2, start_silence_s=0.8, channel_factory=machine.channel)
    try:
        events: dict[str, list] = {"cpu1": [], "cpu": []}
        for lane in (slow, frozen):
            lane.submit(f"run-{lane.name}", TINY)
        deadline = time.monotonic() + wall_limit(20)
        while (slow.busy or frozen.busy) and time.monotonic() < deadline:
            for lane in (slow, frozen):
                events[lane.name] += lane.poll(0.05)
        folded = {name: LaneResult(name) for name in events}
        for name, got in events.items():
            for event in got:
                folded[name].apply(event)
        assert folded["cpu1"].status == "completed" and len(folded["cpu1"].records) > 0, folded["cpu1"].failure
        assert machine.started("cpu1") == 1  # never killed and started again
        assert folded["cpu"].status == "failed" and folded["cpu"].records == []
        assert "stopped responding while it started" in folded["cpu"].failure
        assert "more than the 0.8 s a starting lane is given" in folded["cpu"].failure, folded["cpu"].failure
        assert not frozen.alive
    finally:
        slow.close()
        frozen.close()
