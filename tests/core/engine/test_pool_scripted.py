"""What the pool asks of scripted lanes before a study: every lane's data at once, then each lane's idle power one
lane after another (issue 34: idle read while no lane of the run trains)."""
from __future__ import annotations

import threading

from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, TrainSpec
from crossover_lab.core.messages import PrepareJob


def test_idle_power_is_read_one_lane_after_another_once_every_lane_has_its_data(scripted_pool, scripted):
    config = RunConfig(ModelSpec((16,)), TrainSpec(data="synthetic", samples=1024))
    lanes = [LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")]
    answered: list[tuple[str, bool]] = []
    original = type(scripted_pool.get(lanes[0])).request
    lock = threading.Lock()

    def request(lane, job, answer, *args, **kwargs):  # each reply's end, in order, as the pool waits for it
        reply = original(lane, job, answer, *args, **kwargs)
        if isinstance(job, PrepareJob):
            with lock:
                answered.append((lane.name, job.idle))
        return reply

    type(scripted_pool.get(lanes[0])).request = request
    try:
        scripted_pool.ready(lanes, data_of=config)
    finally:
        type(scripted_pool.get(lanes[0])).request = original
    prepares = [(lane, job.idle) for lane, job in scripted.jobs if isinstance(job, PrepareJob)]
    assert sorted(prepares[:2]) == [("cpu", False), ("cpu1", False)]  # data: both lanes at once
    assert prepares[2:] == [("cpu", True), ("cpu1", True)]  # idle: one lane, then the other
    # every lane had its data before the first idle reading began, and each reading ended before the next was asked
    assert [idle for _, idle in answered] == [False, False, True, True]
