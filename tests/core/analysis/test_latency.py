"""A predict run's figures: the tail of one call's latency on known numbers, and the words that carry it."""
from __future__ import annotations

import math

import pytest

from crossover_lab.core.run_stats import percentiles, robust_stats, summarize
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


def calls_at(ms: list[float], gap_ms: float = 0.0, lane: str = "cpu", warmup: int = 0) -> list[BatchTiming]:
    """Calls one after another, each begun `gap_ms` after the one before ended (the client's own loop)."""
    out, t = [], 0.0
    for i, x in enumerate(ms):
        out.append(BatchTiming("r", lane, "CPU", 1, i + 1, i + 1, t / 1000, x, 8, i < warmup, math.nan,
                               task="predict"))
        t += x + gap_ms
    return out


def test_a_predict_summary_keeps_the_tail_from_enough_calls_and_leaves_out_warm_up():
    # 5 warm-up calls of 80 ms (the first compiles), then 980 calls of 1 ms and twenty of 9 ms: the median is 1 ms and
    # the p99 is pulled up by the slow calls, which a median never shows. 0.25 ms between calls: the client's loop.
    ms = [80.0] * 5 + [1.0] * 980 + [9.0] * 20
    s = summarize(calls_at(ms, gap_ms=0.25, warmup=5), run_id="r", lane="cpu", device="CPU", status="completed",
                  flops_per_batch=1000, wall_s=1.0)
    assert s.n_batches == 1000 and s.n_warmup == 5
    assert s.median_ms == 1.0 and s.p90_ms == 1.0 and s.p99_ms == pytest.approx(9.0)
    # Calls per second measured over the steady calls' wall time, gaps included: 1,000 calls in 1.33 s, not
    # 1000 / the median (1,000).
    assert s.requests_per_s == pytest.approx(1000 / (980 * 1.25 + 20 * 9.25 - 0.25) * 1000, rel=1e-6)
    line, tail = latency_lines([s], batch=8)
    assert line == ("cpu answers a batch of 8 in 1 ms (p90 ≈ 1 ms, p99 ≈ 9 ms, from 1,000 calls; 709 calls/s "
                    "measured, one call at a time)")
    assert tail.startswith("the slowest call in a hundred on cpu takes 9x its median")


def test_a_tail_from_too_few_calls_is_withheld_and_says_how_many_it_needs():
    # The case: 59 calls, one of them slow. Its p99 is that one call: no p99, and the words say why.
    s = summarize(calls_at([1.0] * 58 + [5.4]), run_id="r", lane="cpu1", device="CPU", status="completed",
                  flops_per_batch=1000, wall_s=1.0)
    assert s.n_batches == 59 and math.isnan(s.p99_ms)
    (line,) = latency_lines([s], batch=8)  # no "slowest call in a hundred" line
    assert "p90 needs ≥ 64 calls (have 59), p99 needs ≥ 662 calls (have 59), from 59 calls" in line
    enough_for_p90 = summarize(calls_at([1.0] * 100), run_id="r", lane="cpu", device="CPU", status="completed",
                               flops_per_batch=1000, wall_s=1.0)
    (line,) = latency_lines([enough_for_p90])
    assert "(p90 ≈ 1 ms, p99 needs ≥ 662 calls (have 100), from 100 calls;" in line


def test_the_predict_verdict_speaks_in_latency_and_calls_noise_noise():
    fast = summarize(calls([1.0 + 0.01 * (i % 5) for i in range(200)]), run_id="r", lane="cpu", device="CPU",
                     status="completed", flops_per_batch=1000, wall_s=1.0)
    slow = summarize(calls([2.0 + 0.01 * (i % 5) for i in range(200)], lane="cpu1"), run_id="r", lane="cpu1",
                     device="CPU", status="completed", flops_per_batch=1000, wall_s=1.0)
    assert verdict(fast, slow, task="predict").startswith(
        "cpu answers 2.0x faster than cpu1 on this model (median latency of one call) (one run of each "
        "lane; at most a 5% chance of any false lead at this width")
    same = summarize(calls([1.0 + 0.3 * (i % 7) for i in range(200)], lane="cpu1"), run_id="r", lane="cpu1",
                     device="CPU", status="completed", flops_per_batch=1000, wall_s=1.0)
    noisy = summarize(calls([1.02 + 0.3 * (i % 7) for i in range(200)]), run_id="r", lane="cpu", device="CPU",
                      status="completed", flops_per_batch=1000, wall_s=1.0)
    assert "too close to call" in verdict(noisy, same, task="predict")
