"""A predict run's figures: the tail of one call's latency on known numbers, and the words that carry it."""
from __future__ import annotations

import math

import pytest

from crossover_lab.core.analysis.stats import percentiles, robust_stats, summarize
from crossover_lab.core.records import BatchTiming
from crossover_lab.core.words.run import latency_lines, verdict


def calls(ms: list[float], lane: str = "cpu", warmup: int = 0) -> list[BatchTiming]:
    return [BatchTiming("r", lane, "CPU", 1, i + 1, i + 1, i / 1000, x, 8, i < warmup, math.nan, task="predict")
            for i, x in enumerate(ms)]


def test_the_p99_of_known_numbers_is_linear_between_ranks():
    values = [float(v) for v in range(1, 101)]  # 1 … 100
    assert percentiles(values, (50, 90, 99)) == pytest.approx([50.5, 90.1, 99.01])
    s = robust_stats(values)
    assert (s.median, s.p90, s.p99) == pytest.approx((50.5, 90.1, 99.01))
    assert math.isnan(robust_stats([]).p99) and percentiles([math.nan], (99,))[0] != percentiles([math.nan], (99,))[0]


def test_a_predict_summary_keeps_the_tail_and_leaves_out_warm_up():
    # 5 warm-up calls of 80 ms (the first compiles), then 98 calls of 1 ms and two of 9 ms: the median is
    # 1 ms and the p99 is pulled up by the two slow calls, which a median never shows.
    s = summarize(calls([80.0] * 5 + [1.0] * 98 + [9.0, 9.0], warmup=5), run_id="r", lane="cpu", device="CPU",
                  status="completed", flops_per_batch=1000, wall_s=1.0)
    assert s.n_batches == 100 and s.n_warmup == 5
    assert s.median_ms == 1.0 and s.p90_ms == 1.0 and s.p99_ms == pytest.approx(9.0)
    assert s.requests_per_s == pytest.approx(1000.0)
    line, tail = latency_lines([s], batch=8)
    assert line == "cpu answers a batch of 8 in 1 ms (p90 1 ms, p99 9 ms; 1,000 calls/s)"
    assert tail.startswith("the slowest call in a hundred on cpu takes 9x its median")


def test_the_predict_verdict_speaks_in_latency_and_calls_noise_noise():
    fast = summarize(calls([1.0 + 0.01 * (i % 5) for i in range(200)]), run_id="r", lane="cpu", device="CPU",
                     status="completed", flops_per_batch=1000, wall_s=1.0)
    slow = summarize(calls([2.0 + 0.01 * (i % 5) for i in range(200)], lane="cpu1"), run_id="r", lane="cpu1",
                     device="CPU", status="completed", flops_per_batch=1000, wall_s=1.0)
    assert verdict(fast, slow, task="predict") == \
        "cpu answers 2.0x faster than cpu1 on this model (median latency of one call)"
    same = summarize(calls([1.0 + 0.3 * (i % 7) for i in range(200)], lane="cpu1"), run_id="r", lane="cpu1",
                     device="CPU", status="completed", flops_per_batch=1000, wall_s=1.0)
    noisy = summarize(calls([1.02 + 0.3 * (i % 7) for i in range(200)]), run_id="r", lane="cpu", device="CPU",
                      status="completed", flops_per_batch=1000, wall_s=1.0)
    assert "too close to call" in verdict(noisy, same, task="predict")
