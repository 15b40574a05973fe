"""MLPerf loadgen's early-stopping estimate (core/analysis/tails.py early_stopping), an upper bound on the percentile
at 99% confidence for independent values, which a rate's tail counts its requests by (tails.queue_tail); and a rate
point says its lane held a rate only from at least MIN_HOLD_S of arrivals (core/analysis/serving_rates.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from crossover_lab.core.analysis import tails
from crossover_lab.core import run_stats
from crossover_lab.core.analysis.serving_rates import MIN_HOLD_S, highest_held, lane_for_rate, rate_point
from crossover_lab.core.config import TrainSpec
from crossover_lab.core.records import BatchTiming, RunSummary
from crossover_lab.core.words.rates import rate_row, point_words, sweep_lines


def test_the_estimate_is_the_order_statistic_the_binomial_rule_names() -> None:
    values = np.arange(1, 1001, dtype=float)[::-1]  # 1..1000, given out of order
    got = tails.early_stopping(99, values)
    k = next(k for k in range(1, 1001) if binom.cdf(k - 1, 1000, 0.99) >= 0.99)  # the rule, counted here
    assert got == float(k)
    assert got in set(values) and got >= np.percentile(values, 99)
    assert tails.early_stopping(90, values) >= np.percentile(values, 90)
    assert math.isnan(tails.early_stopping(99, np.arange(1, 101)))  # 100 values cannot bound a p99
    assert math.isnan(tails.early_stopping(99, []))


def test_the_tail_rules_minimums_are_enough_for_the_estimate() -> None:
    """At 0.99 the estimate exists from 44 values (p90) and 459 (p99); MIN_CALLS, MLPerf's 64 and 662, gate it."""
    for q in (90, 99):
        fewest = tails.fewest_for_early_stopping(q)
        assert fewest == {90: 44, 99: 459}[q]
        assert not math.isnan(tails.early_stopping(q, np.arange(fewest)))
        assert math.isnan(tails.early_stopping(q, np.arange(fewest - 1)))
        assert run_stats.MIN_CALLS[q] >= fewest
        assert not math.isnan(tails.early_stopping(q, np.arange(run_stats.MIN_CALLS[q])))
        assert math.isnan(tails.early_stopping(q, np.arange(run_stats.MIN_CALLS[q] // 4)))


def test_the_estimate_is_under_the_true_p99_in_about_one_sample_in_a_hundred() -> None:
    """2,000 samples of 700 exponential latencies (true p99 = -ln 0.01): the estimate falls under it in at most 2%
    (the rule's own probability is under 1%), where the plain percentile falls under it about half the time."""
    rng = np.random.default_rng(45)
    true_p99 = -math.log(0.01)
    samples = rng.exponential(1.0, size=(2000, 700))
    under = np.mean([tails.early_stopping(99, s) < true_p99 for s in samples])
    plain = np.mean([np.percentile(s, 99) < true_p99 for s in samples])
    assert under <= 0.02
    assert plain > 0.3


def call(step: int, start_s: float, ms: float, wait: float) -> BatchTiming:
    return BatchTiming("r", "cpu", "CPU", 1, step, step, start_s, ms, 1, False, 0.0, task="predict",
                       requests=1, queued=0, backlog=0, waits_ms=(wait,))


def kept_pace(n: int, rate: float) -> list[BatchTiming]:
    """n requests at `rate`, each answered in 1-3 ms (so a tail differs from the median)."""
    return [call(i + 1, 1.0 + i / rate, 1.0 + (i * 7 % 100) / 50.0, 0.0) for i in range(n)]


def test_a_point_with_under_5_s_of_arrivals_does_not_say_it_held_and_one_with_more_does() -> None:
    done = RunSummary("r", "cpu", "CPU", "completed", arrivals_ended="done")
    short = rate_point("cpu", kept_pace(800, 200.0), done, TrainSpec(task="predict", batch_size=1,
                                                                       arrival_rate=200.0, max_steps=800))
    assert short.kept_up and short.schedule_s == pytest.approx(4.0) and short.schedule_s < MIN_HOLD_S
    assert not short.held and short.p99_within(1e9) is False
    assert short.hold_unknown_why.startswith("its arrivals lasted 4 s; a rate is judged held from at least 5 s")
    assert highest_held([short], "cpu") is None
    choice = lane_for_rate([short], 100.0)
    assert choice.lane is None and short.hold_unknown_why in choice.reason
    assert "not judged" in rate_row(short)[-1] and rate_row(short)[4] != "–"  # its latencies are still shown
    assert "not judged held (its arrivals lasted 4 s" in point_words(short)
    assert "not judged at 200 requests/s: its arrivals lasted 4 s" in sweep_lines([short])[0]

    long = rate_point("cpu", kept_pace(1200, 200.0), done, TrainSpec(task="predict", batch_size=1,
                                                                       arrival_rate=200.0, max_steps=1200))
    assert long.held and long.hold_unknown_why == "" and long.schedule_s == pytest.approx(6.0)
    latencies = [1.0 + (i * 7 % 100) / 50.0 for i in range(1200)]
    assert long.p99_ms == tails.queue_tail(99, latencies).value >= np.percentile(latencies, 99)
    assert long.p99_within(long.p99_ms) is True and long.p99_within(long.p99_ms - 1e-9) is False
    assert highest_held([long], "cpu") is long and lane_for_rate([long], 100.0).lane == "cpu"
    words = point_words(long)
    assert "cpu holds 200 requests/s" in words
    assert f"99% bounds from 1,200 requests worth {long.worth:,.0f} independent ones" in words
