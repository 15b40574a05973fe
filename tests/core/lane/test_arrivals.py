"""The open-loop load's schedule and queue on a fake clock: the queueing it produces is what theory predicts."""
from __future__ import annotations

import numpy as np
import pytest

from core.lane.arrivals import BEHIND_S, OpenLoop, arrival_times, mean_wait_pk


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        assert s >= 0
        self.now += s


def drive(loop: OpenLoop, clock: FakeClock, service: callable) -> tuple[list[float], list[int]]:
    """Serve until the loop ends; each call takes service(k) seconds of the fake clock. Returns each request's
    wait (call start − intended arrival) and each call's size."""
    waits: list[float] = []
    sizes: list[int] = []
    while (take := loop.take()) is not None:
        start = clock()
        waits += [start - a for a in take.arrivals]
        sizes.append(len(take.arrivals))
        clock.now += service(len(take.arrivals))
        loop.answered(clock())
    return waits, sizes


def test_poisson_schedule_has_the_rate_and_exponential_gaps() -> None:
    t = arrival_times(200.0, 20000, "poisson", seed=3)
    gaps = np.diff(t)
    assert t[0] == 0 and np.all(gaps >= 0)
    assert abs(gaps.mean() - 1 / 200) < 0.03 / 200
    assert abs(gaps.std() / gaps.mean() - 1) < 0.03  # exponential: coefficient of variation 1
    assert np.array_equal(t, arrival_times(200.0, 20000, "poisson", seed=3))  # seeded
    c = arrival_times(50.0, 5, "constant")
    assert np.allclose(c, [0, 0.02, 0.04, 0.06, 0.08])


@pytest.mark.parametrize("rho", [0.3, 0.7])
def test_mean_wait_is_pollaczek_khinchine(rho: float) -> None:
    """M/G/1: lognormal service times of mean 2 ms; the simulated mean wait agrees with λE[S²]/2(1−ρ)."""
    rng = np.random.default_rng(7)
    mean_s = 0.002
    draws = rng.lognormal(np.log(mean_s) - 0.5 * 0.6 ** 2, 0.6, 200_000)
    rate = rho / mean_s
    clock = FakeClock()
    it = iter(draws)
    loop = OpenLoop(arrival_times(rate, 60_000, "poisson", seed=11), clock=clock, sleep=clock.sleep)
    waits, sizes = drive(loop, clock, lambda k: next(it))
    assert loop.ended == "done" and loop.answered_count == 60_000 and set(sizes) == {1}
    predicted = mean_wait_pk(rate, draws)
    assert predicted == pytest.approx(np.mean(waits), rel=0.1)
    # and it is no artefact of the formula: a closed loop would have waited nothing at all
    assert np.mean(waits) > 0.1 * mean_s


def test_a_rate_above_what_the_lane_holds_ends_behind_not_with_a_huge_tail() -> None:
    clock = FakeClock()
    loop = OpenLoop(arrival_times(1000.0, 100_000, "constant"), clock=clock, sleep=clock.sleep)
    waits, _ = drive(loop, clock, lambda k: 0.002)  # 500 calls/s at most, asked 1000
    assert loop.ended == "behind"
    assert loop.answered_count < 100_000
    assert max(waits) < BEHIND_S + 0.01  # it stopped when the oldest request had waited BEHIND_S
    assert mean_wait_pk(1000.0, np.full(10, 0.002)) == float("inf")


def test_dynamic_batching_answers_what_queued_in_one_call_and_holds_a_higher_rate() -> None:
    """A call costs 1 ms + 0.1 ms per request: one at a time it holds under 909 requests/s, batched far more."""
    cost = lambda k: 0.001 + 0.0001 * k  # noqa: E731
    clock = FakeClock()
    single = OpenLoop(arrival_times(1500.0, 20_000, "poisson", seed=1), clock=clock, sleep=clock.sleep)
    drive(single, clock, cost)
    assert single.ended == "behind"
    clock = FakeClock()
    batched = OpenLoop(arrival_times(1500.0, 20_000, "poisson", seed=1), max_batch=32, clock=clock, sleep=clock.sleep)
    waits, sizes = drive(batched, clock, cost)
    assert batched.ended == "done" and max(sizes) > 1 and max(sizes) <= 32
    assert sum(sizes) == 20_000


def test_queued_counts_only_requests_that_arrived_while_the_server_was_busy() -> None:
    clock = FakeClock()
    # arrivals at 0, 1, 1.5 ms; each call 2 ms: the first finds the server idle, the next two arrive while busy
    loop = OpenLoop(np.array([0.0, 0.001, 0.0015]), max_batch=8, clock=clock, sleep=clock.sleep)
    first = loop.take()
    assert first is not None and first.queued == 0 and first.backlog == 0
    clock.now += 0.002
    loop.answered(clock())
    second = loop.take()
    assert second is not None and len(second.arrivals) == 2 and second.queued == 2 and second.backlog == 0
    loop.answered(clock())
    assert loop.take() is None and loop.ended == "done"


def test_a_stop_ends_the_wait_for_the_next_request() -> None:
    clock = FakeClock()
    stops = iter([False, False, True])
    loop = OpenLoop(np.array([0.0, 60.0]), clock=clock, sleep=clock.sleep, stop=lambda: next(stops))
    assert loop.take() is not None
    loop.answered(clock())
    assert loop.take() is None and loop.ended == "stopped"
    assert clock() - 100.0 < 1.0  # it did not sleep out the minute


@pytest.mark.parametrize("args", [(0.0, 5, "poisson"), (10.0, 0, "poisson"), (10.0, 5, "bursty"), (1e9, 5, "constant")])
def test_schedules_refuse_what_they_cannot_be(args: tuple) -> None:
    with pytest.raises(ValueError):
        arrival_times(*args)
