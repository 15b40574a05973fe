"""Issue 49 #5 and #6, on the command line: an arrival schedule longer than MAX_SCHEDULE_S is refused with its length
and how to shorten it; `rule --rate` refuses what is no rate; `--arrival-rates` names an empty entry and never
echoes a long argument whole; a stop before anything was measured says so instead of promising a file."""
from __future__ import annotations

import dataclasses
import os
import signal
import threading

import pytest
from helpers import ROOT, cli_in_process

from crossover_lab.core.config import MAX_SCHEDULE_S, RunConfig, TrainSpec

LOAD_FILE = ROOT / "docs" / "results" / "cpu-2026-12-03" / "load.csv"


@pytest.mark.parametrize("args, words", [
    (["run", "--task", "predict", "--arrival-rate", "1e-300"],
     "--arrival-rate: 1,000 requests at 1.00e-300 requests/s arrive over more than 100 days a lane, longer than "
     "the 1 h an arrival schedule may run: give a higher rate, fewer requests (--requests; a rate is judged held "
     "from 5 s of arrivals), or a time limit (--time-limit)"),
    (["run", "--task", "predict", "--arrival-rate", "0.001", "--requests", "20"],
     "20 requests at 0.001 requests/s arrive over 5 h 33 min a lane"),
    (["sweep", "--task", "predict", "--arrival-rates", "50,0.001", "--requests", "20"],
     "--arrival-rates: 20 requests at 0.001 requests/s arrive over 5 h 33 min a lane, longer than the 1 h an "
     "arrival schedule may run: give a higher rate or fewer requests"),
], ids=["rate 1e-300", "0.001 with 20 requests", "a sweep's slowest rate"])
def test_a_schedule_longer_than_an_hour_is_refused_with_its_length_and_how_to_shorten_it(capsys, args, words):
    out = cli_in_process(capsys, *args, "--data", "synthetic")
    assert out.returncode == 2 and words in out.stderr, out.stderr


def test_a_time_limit_bounds_a_schedule_so_it_is_not_refused():
    from crossover_lab.core.cli.common import check_schedule

    slow = TrainSpec(task="predict", arrival_rate=0.001, max_steps=20, batch_size=1)
    check_schedule(RunConfig(train=dataclasses.replace(slow, max_seconds=60.0)))  # 60 s: within the bound
    assert MAX_SCHEDULE_S == 3600.0


@pytest.mark.parametrize("rate", ["nan", "-1", "0", "inf", "1e300"])
def test_rule_refuses_a_rate_that_is_no_rate(capsys, rate):
    out = cli_in_process(capsys, "rule", str(LOAD_FILE), f"--rate={rate}")
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "give the requests per second to choose a lane for, above 0 and at most 100,000" in out.stderr
    assert out.stdout == ""


def test_arrival_rates_name_an_empty_entry_and_never_echo_a_long_argument_whole(capsys):
    out = cli_in_process(capsys, "sweep", "--task", "predict", "--arrival-rates", "50,,100", "--data", "synthetic")
    assert out.returncode == 2
    assert "--arrival-rates '50,,100': entry 2 is empty; give requests per second separated by commas" in out.stderr
    many = ",".join(str(r) for r in range(1, 5001))  # 23,892 characters
    out = cli_in_process(capsys, "sweep", "--task", "predict", "--arrival-rates", many, "--data", "synthetic")
    assert out.returncode == 2 and "give 1 to 32 rates, not 5,000" in out.stderr, out.stderr[:300]
    assert f"({len(many):,} characters)" in out.stderr and len(out.stderr) < 400
    word = "x" * 10_000
    out = cli_in_process(capsys, "sweep", "--task", "predict", "--arrival-rates", f"50,{word}", "--data", "synthetic")
    assert out.returncode == 2 and "is not a number" in out.stderr and len(out.stderr) < 400, out.stderr[:300]


def test_a_stop_before_any_rate_was_measured_says_nothing_was_written(capsys, scripted, tmp_path):
    """Ctrl-C while the lanes still start: it promised 'what was measured will be written…', then wrote nothing
    and said nothing."""
    from scripted_lanes import cpu_like

    scripted.scripts.update(cpu=dataclasses.replace(cpu_like(fixed_ms=2.0, gflops=1e6), start_s=4.0),
                            cpu1=dataclasses.replace(cpu_like(fixed_ms=2.0, gflops=1e6), start_s=4.0))
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    path = tmp_path / "rates.csv"
    try:
        out = cli_in_process(capsys, "sweep", "--task", "predict", "--arrival-rates", "50,100", "--lanes",
                             "cpu,cpu1", "--data", "synthetic", "--csv", str(path))
    finally:
        timer.cancel()
    assert out.returncode == 130, out.stderr
    assert "stopping (Ctrl-C): nothing was measured yet, so nothing will be written" in out.stderr, out.stderr
    assert "will be written…" not in out.stderr
    assert f"stopped before any rate was measured: nothing was written to {path}" in out.stderr
    assert not path.exists()
