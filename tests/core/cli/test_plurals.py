"""Issue 46 #4: counts and rates said with one plural rule (core/words/numbers.py), on the arrival rate's own path: "1
request/s" and "a request of 1 sample", never "1 requests/s" or "sample(s)"."""
from __future__ import annotations

from helpers import cli_in_process

from crossover_lab.core.words.numbers import fmt_count, fmt_rate, fmt_rates, plural


def test_one_plural_rule():
    assert fmt_count(1, "sample") == "1 sample" and fmt_count(1000, "request") == "1,000 requests"
    assert fmt_count(0, "request") == "0 requests" and plural(2, "batch", "batches") == "batches"
    assert fmt_rate(1) == "1 request/s" and fmt_rate(1.0004) == "1 request/s" and fmt_rate(1.5) == "1.5 requests/s"
    assert fmt_rates([1]) == "1 request/s" and fmt_rates([1, 2]) == "1, 2 requests/s"


def test_a_rate_of_one_request_a_second_is_said_in_the_singular(capsys, scripted):
    from scripted_lanes import cpu_like

    scripted.scripts["cpu1"] = cpu_like(fixed_ms=2.0, gflops=1e6)
    out = cli_in_process(capsys, "run", "--task", "predict", "--arrival-rate", "1", "--requests", "3", "--lanes",
                         "cpu1", "--data", "synthetic")
    assert out.returncode == 0, out.stderr
    said = out.stdout + out.stderr
    assert "Poisson arrivals at 1 request/s, a request of 1 sample, one request per call" in said, said
    assert "from 3 requests" in said and "1 requests" not in said and "(s)" not in said
    out = cli_in_process(capsys, "sweep", "--task", "predict", "--arrival-rates", "1,2", "--requests", "3",
                         "--lanes", "cpu1", "--data", "synthetic")
    assert out.returncode == 0, out.stderr
    said = out.stdout + out.stderr
    assert "requests of 1 sample," in said and "at 1, 2 requests/s;" in said, said
    assert "sample(s)" not in said and "1 requests/s" not in said
