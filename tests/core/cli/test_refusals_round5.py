"""Issue 49 #5, on the command line: a load's schedule longer than MAX_SCHEDULE_S is refused with its length and how
to shorten it."""
from __future__ import annotations

import dataclasses

import pytest
from helpers import ROOT, cli_in_process

from crossover_lab.core.config import MAX_SCHEDULE_S, RunConfig, TrainSpec

LOAD_FILE = ROOT / "docs" / "results" / "cpu-2026-12-03" / "load.csv"


@pytest.mark.parametrize("args, words", [
    (["run", "--task", "predict", "--arrival-rate", "1e-300"],
     "--arrival-rate: 1,000 requests at 1.00e-300 requests/s arrive over more than 100 days a lane, longer than "
     "the 1 h a load's schedule may run: give a higher rate, fewer requests (--requests; a rate is judged held "
     "from 5 s of arrivals), or a time limit (--time-limit)"),
    (["run", "--task", "predict", "--arrival-rate", "0.001", "--requests", "20"],
     "20 requests at 0.001 requests/s arrive over 5 h 33 min a lane"),
    (["sweep", "--task", "predict", "--arrival-rates", "50,0.001", "--requests", "20"],
     "--arrival-rates: 20 requests at 0.001 requests/s arrive over 5 h 33 min a lane, longer than the 1 h a "
     "load's schedule may run: give a higher rate or fewer requests"),
], ids=["rate 1e-300", "0.001 with 20 requests", "a sweep's slowest rate"])
def test_a_schedule_longer_than_an_hour_is_refused_with_its_length_and_how_to_shorten_it(capsys, args, words):
    out = cli_in_process(capsys, *args, "--data", "synthetic")
    assert out.returncode == 2 and words in out.stderr, out.stderr


def test_a_time_limit_bounds_a_schedule_so_it_is_not_refused():
    from crossover_lab.core.cli.common import check_schedule

    slow = TrainSpec(task="predict", arrival_rate=0.001, max_steps=20, batch_size=1)
    check_schedule(RunConfig(train=dataclasses.replace(slow, max_seconds=60.0)))  # 60 s: within the bound
    assert MAX_SCHEDULE_S == 3600.0
