"""Serving at arrival rates: run --arrival-rate and sweep --arrival-rates on scripted lanes (the open loop on a virtual
clock), their files read back by analyze in the same words, the load analysis on made-up records, and refusals."""
from __future__ import annotations

import json
import math

import pytest

from helpers import ROOT, cli_in_process

from crossover_lab.core.analysis.serving_rates import RatePoint, faster_at, highest_held, rate_point
from crossover_lab.core.config import ConfigError, TrainSpec
from crossover_lab.core.records import BatchTiming, RunSummary


def call(step: int, start_s: float, ms: float, waits: tuple[float, ...], queued: int = 0, backlog: int = 0,
         warmup: bool = False) -> BatchTiming:
    return BatchTiming("r", "cpu", "CPU", 1, step, step, start_s, ms, len(waits) or 1, warmup, 0.0, task="predict",
                       requests=len(waits), queued=queued, backlog=backlog, waits_ms=waits)


def steady(n: int, gap_s: float, ms: float, wait: float = 0.0) -> list[BatchTiming]:
    return [call(i + 1, 1.0 + i * gap_s, ms, (wait,)) for i in range(n)]


def summary(ended: str = "done") -> RunSummary:
    return RunSummary("r", "cpu", "CPU", "completed", arrivals_ended=ended)


def test_a_point_counts_each_requests_latency_from_its_intended_arrival() -> None:
    train = TrainSpec(task="predict", batch_size=1, arrival_rate=100.0, max_steps=700)
    records = [call(0, 0.1, 50.0, (), warmup=True)] + steady(700, 0.01, 1.0, wait=2.0)
    p = rate_point("cpu", records, summary(), train)
    assert p.answered == 700 and p.scheduled == 700
    assert p.median_ms == pytest.approx(3.0)  # 2 ms in the queue + 1 ms of call
    assert p.p99_ms == pytest.approx(3.0) and p.held
    assert p.achieved == pytest.approx(700 / (6.99 + 0.003), rel=1e-3)
    assert p.service_ms == pytest.approx(1.0)
    # the warm-up call (50 ms) is no request's


def test_a_tail_from_too_few_requests_is_withheld_and_a_queue_that_only_grew_is_not_held() -> None:
    train = TrainSpec(task="predict", batch_size=1, arrival_rate=30.0, max_steps=200)  # 6.7 s: long enough to judge
    p = rate_point("cpu", steady(200, 1 / 30, 1.0), summary(), train)
    assert p.held and math.isnan(p.p99_ms) and not math.isnan(p.p90_ms)
    assert p.p99_within(50.0) is None  # not known, so never counted as under a bound
    # requests arriving every 10 ms, answered every 20 ms: the waits grow with each one
    grew = [call(i + 1, 1.0 + i * 0.02, 20.0, (i * 10.0,)) for i in range(200)]
    q = rate_point("cpu", grew, summary(), train)
    assert q.achieved < 0.6 * q.offered and not q.kept_pace and not q.held and q.p99_within(1e9) is False
    behind = rate_point("cpu", steady(50, 0.01, 1.0), summary("behind"), train)
    assert not behind.held


def test_the_faster_lane_at_a_rate_needs_a_difference_beyond_the_block_medians() -> None:
    def point(lane: str, low: float, high: float, ended: str = "done") -> RatePoint:
        return RatePoint(lane, 100.0, "poisson", 1, 1, 700, 700, 7.0, 7.0, (low + high) / 2, math.nan, math.nan,
                         low, high, 1.0, 0.5, 0.2, 3, 0.2, ended, "completed")

    assert faster_at(point("cpu", 1.0, 1.2), point("cpu1", 2.0, 2.5)) == "cpu"
    assert faster_at(point("cpu", 1.0, 2.1), point("cpu1", 2.0, 2.5)) is None  # overlapping: inside the noise
    # An overlap is no evidence of a difference, never a test of equality: said as no answer (issue 57 #5).
    from crossover_lab.core.words.rates import compare_words
    said = compare_words([point("cpu", 1.0, 2.1), point("cpu1", 2.0, 2.5)], 100.0)
    assert said.startswith("at 100 requests/s no answer for cpu and cpu1:") and "equal" not in said, said
    assert faster_at(point("cpu", 1.0, 1.2, "behind"), point("cpu1", 2.0, 2.5)) == "cpu1"
    assert faster_at(point("cpu", 1.0, 1.2, "behind"), point("cpu1", 2.0, 2.5, "behind")) is None
    points = [point("cpu", 1, 1.2), point("cpu1", 2, 3, "behind")]
    assert highest_held(points, "cpu") is points[0] and highest_held(points, "cpu1") is None


def test_run_at_a_rate_on_scripted_lanes_says_what_each_held(capsys, scripted, tmp_path) -> None:
    """cpu answers a call in 2 ms (500/s at most), cpu1 in 8 ms (125/s): at 200/s cpu holds it and cpu1 does not."""
    from scripted_lanes import cpu_like

    scripted.scripts.update(cpu=cpu_like(fixed_ms=2.0, gflops=1e6), cpu1=cpu_like(fixed_ms=8.0, gflops=1e6))
    out = cli_in_process(capsys, "run", "--task", "predict", "--arrival-rate", "200", "--lanes", "cpu,cpu1",
                         "--data", "synthetic", "--csv", str(tmp_path / "load.csv"))
    assert out.returncode == 0, out.stderr
    assert "Poisson arrivals at 200 requests/s, a request of 1 sample, one request per call:" in out.stdout
    assert "cpu holds 200 requests/s (over 5 s of arrivals): a request waits and is answered in " in out.stdout
    assert "from 1,000 requests" in out.stdout  # the default: enough for a p99
    assert "cpu1 does not hold 200 requests/s" in out.stdout
    assert "at 200 requests/s cpu serves and cpu1 falls behind" in out.stdout
    meta = json.loads((tmp_path / "load.json").read_text())
    assert meta["runs"][0]["config"]["train"]["arrival_rate"] == 200.0
    assert {lane["summary"]["arrivals_ended"] for lane in meta["runs"][0]["lanes"].values()} <= {"done", "behind"}
    header = (tmp_path / "load.csv").read_text().splitlines()[0].split(",")
    assert header[-4:] == ["requests", "queued", "backlog", "waits_ms"]


def test_a_rate_sweep_finds_where_the_faster_lane_changes_and_analyze_says_the_same(capsys, scripted, tmp_path):
    """Dynamic batching, up to 64 requests a call. cpu: 1 ms a call + 1 ms a request (1,000/s at most); gpu0:
    3 ms a call + 0.01 ms a request. At 50 and 200/s cpu answers sooner (2 ms against 3); at 2,000/s cpu falls
    behind and gpu0 holds it: the faster lane changes between 200 and 2,000 requests/s. analyze says the same."""
    from scripted_lanes import cpu_like, gpu_like

    mflop = 0.2035  # a request's forward pass of the default 784-128-10 model, batch 1
    scripted.scripts.update(cpu=cpu_like(fixed_ms=1.0, gflops=mflop, noise=0.05),
                            gpu0=gpu_like(fixed_ms=3.0, gflops=100 * mflop, noise=0.05, seed=2))
    path = tmp_path / "rates.csv"
    # By default each rate's schedule holds 1,000 requests or 5 s of arrivals, whichever is more (10,000 at
    # 2,000/s): the least from which a rate is judged held.
    out = cli_in_process(capsys, "sweep", "--task", "predict", "--arrival-rates", "50,2000,200", "--max-batch", "64",
                         "--lanes", "cpu,gpu0", "--data", "synthetic", "--p99-ms", "5",
                         "--csv", str(path))
    assert out.returncode == 0, out.stderr
    assert "rate sweep: model " in out.stderr and "at 50, 200, 2,000 requests/s" in out.stderr
    assert "1,000 to 10,000 per lane and rate" in out.stderr  # 5 s of arrivals at 2,000/s
    assert "expected length: about 1 min 0 s of arrivals (2 lanes × 3 rates)" in out.stderr
    assert "each call answers up to 64 that queued" in out.stdout
    assert "at 50 requests/s cpu answers sooner" in out.stdout
    assert "at 2,000 requests/s gpu0 serves and cpu falls behind" in out.stdout
    assert "the faster lane changes between 200 requests/s (cpu) and 2,000 requests/s (gpu0)" in out.stdout
    assert "cpu holds up to 200 requests/s of those asked" in out.stdout
    assert "gpu0 holds up to 2,000 requests/s of those asked" in out.stdout

    def answer(text: str) -> list[str]:
        return [line for line in text[text.rindex("\n\n"):].strip().splitlines() if not line.startswith("wrote ")]

    again = cli_in_process(capsys, "analyze", str(path), "--p99-ms", "5")
    assert again.returncode == 0, again.stderr
    assert answer(again.stdout) == answer(out.stdout)
    as_json = cli_in_process(capsys, "analyze", str(path), "--p99-ms", "5", "--json")
    data = json.loads(as_json.stdout)
    assert [line + "." for line in data["answer"]] == answer(out.stdout)
    assert {p["rate"] for p in data["rates"]} == {50.0, 200.0, 2000.0}
    # the rule answers "which lane for R requests a second at p99 ≤ B" from the same points, never beyond them
    rule = cli_in_process(capsys, "rule", str(path), "--rate", "1000", "--p99-ms", "5")
    assert rule.returncode == 0, rule.stderr
    assert rule.stdout.strip().splitlines()[:-1] == answer(out.stdout)  # the sweep's words, then the choice
    assert rule.stdout.strip().splitlines()[-1].startswith("for 1,000 requests/s with p99 at most 5 ms: no lane")
    looser = cli_in_process(capsys, "rule", str(path), "--rate", "1000", "--p99-ms", "10")
    assert looser.stdout.strip().splitlines()[-1].startswith(
        "for 1,000 requests/s with p99 at most 10 ms: use gpu0 (it held 2,000 requests/s")
    # and the report says the same answer, from the same file
    page = tmp_path / "load.md"
    made = cli_in_process(capsys, "report", str(path), "-o", str(page))
    assert made.returncode == 0, made.stderr
    text = page.read_text()
    assert "**Which of cpu, gpu0 serves these requests sooner, and which holds the rate?**" in text
    quoted = [line[2:] for line in text.splitlines() if line.startswith("> ")]
    bare = answer(cli_in_process(capsys, "analyze", str(path)).stdout)  # no bound: the report is asked none
    assert quoted == bare
    beyond = cli_in_process(capsys, "rule", str(path), "--rate", "5000")
    assert "for 5,000 requests/s: no lane: none held 5,000 requests/s or more" in beyond.stdout
    assert "does not extrapolate" in beyond.stdout


@pytest.mark.parametrize("args, words", [
    (["run", "--arrival-rate", "100"], "an arrival rate is for the predict task"),
    (["run", "--task", "predict", "--arrival-rate", "0"], "arrival rate 0.0: choose above 0"),
    (["run", "--task", "predict", "--arrival-rate", "nan"], "arrival rate nan"),
    (["run", "--task", "predict", "--max-batch", "8"], "give an arrival rate too"),
    (["run", "--task", "predict", "--requests", "10"], "--requests counts the requests that arrive at a rate"),
    (["run", "--task", "predict", "--arrival-rate", "100", "--schedule", "interleaved"], "one lane at a time"),
    (["sweep", "--task", "predict", "--arrival-rates", "100,-5"], "-5 is not a rate"),
    (["sweep", "--task", "predict", "--arrival-rates", "100", "--p99-ms", "0"], "--p99-ms 0.0"),
    (["sweep", "--task", "predict", "--arrival-rate", "100"], "sweep the arrival rate with --arrival-rates"),
    (["sweep", "--p99-ms", "5"], "--p99-ms bounds a rate's tail"),
    (["run", "--preset", "blog-small", "--model", "mine.py:build"], "give one of them"),  # issue 35 #16
])
def test_a_rate_run_refuses_what_it_cannot_measure(capsys, args, words) -> None:
    out = cli_in_process(capsys, *args, "--data", "synthetic")
    assert out.returncode == 2 and words in out.stderr, out.stderr


def test_a_train_spec_at_a_rate_counts_requests_within_its_time_limit() -> None:
    assert TrainSpec(task="predict", arrival_rate=100.0).rate_requests == 1000
    assert TrainSpec(task="predict", arrival_rate=100.0, max_steps=5000, max_seconds=3.0).rate_requests == 300
    with pytest.raises(ConfigError):
        TrainSpec(task="predict", arrival_rate=100.0, arrivals="bursty")


def test_every_option_of_every_command_says_what_it_does() -> None:
    """Issue 36: `run --help` left seven options without a word."""
    from crossover_lab.core.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if type(a).__name__ == "_SubParsersAction")
    silent = {name: [a.option_strings[-1] for a in p._actions if a.option_strings and not a.help]
              for name, p in sub.choices.items()}
    assert {name: options for name, options in silent.items() if options} == {}


def test_an_output_that_is_a_folder_is_refused_with_an_example_of_its_own_kind(capsys, tmp_path) -> None:
    """Issue 35 #16: `report -o DIR` suggested DIR/timings.csv."""
    (tmp_path / "x.csv").write_text("lane,width\n")
    out = cli_in_process(capsys, "report", str(tmp_path / "x.csv"), "-o", str(tmp_path))
    assert out.returncode == 2 and f"e.g. {tmp_path / 'report.html'}" in out.stderr, out.stderr


def test_a_rate_run_stopped_before_its_schedule_ended_is_not_said_to_be_held_or_not(capsys, scripted, tmp_path):
    """Ctrl-C mid-load: what was answered is kept in the files, and no lane is said to hold the rate or to fall
    behind on a schedule it did not finish ("neither lane keeps up" was said of two lanes stopped before they ran)."""
    import dataclasses
    import os
    import signal
    import threading

    from scripted_lanes import cpu_like

    scripted.scripts.update(cpu=dataclasses.replace(cpu_like(fixed_ms=2.0, gflops=1e6), min_sleep_s=0.01),
                            cpu1=cpu_like(fixed_ms=2.0, gflops=1e6))
    threading.Timer(3.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    out = cli_in_process(capsys, "run", "--task", "predict", "--arrival-rate", "100", "--requests", "5000",
                         "--lanes", "cpu,cpu1", "--data", "synthetic", "--csv", str(tmp_path / "l.csv"))
    assert out.returncode == 130, out.stderr
    assert "not compared: cpu and cpu1 were stopped before their schedule ended" in out.stdout \
        or "not compared: cpu was stopped" in out.stdout, out.stdout
    assert "keeps up" not in out.stdout and "holds 100" not in out.stdout
    rows = (tmp_path / "l.csv").read_text().splitlines()
    assert len(rows) > 10, out.stdout + out.stderr  # what cpu answered before the stop is in the file


def test_a_slow_rate_says_the_sweeps_length_and_how_to_shorten_it_before_its_first_request():
    """Issue 46 #3: `--arrival-rates 1,2` schedules 1,000 requests a rate, 25 minutes a lane: said before the
    first request, each long rate with how to shorten it."""
    from crossover_lab.core.cli.rate_sweep import rate_configs, schedule_lines
    from crossover_lab.core.config import RunConfig, TrainSpec

    base = RunConfig(train=TrainSpec(task="predict", arrival_rate=1.0, batch_size=1))
    first, *slow = schedule_lines(rate_configs(base, (1.0, 2.0)), lanes=2)
    assert first == "expected length: about 50 min 0 s of arrivals (2 lanes × 2 rates), plus each lane's start"
    assert [line.split(" its ")[0] for line in slow] == ["at 1 request/s", "at 2 requests/s"]
    assert all("--requests" in line for line in slow)
    assert schedule_lines(rate_configs(base, (200.0,)), lanes=1) == [
        "expected length: about 5 s of arrivals (1 lane × 1 rate), plus each lane's start"]


def test_a_stored_file_from_before_the_rename_reads_how_its_arrivals_ended():
    """Issue 59: "load" means how busy the machine is; the open loop's summary field is `arrivals_ended`. The stored
    rate sweep of 2026-12-03 wrote it as `load_ended`, and still reads with every lane's schedule ended as it did."""
    from crossover_lab.core.cli.analyze import read_rate_runs

    runs = read_rate_runs(str(ROOT / "docs" / "results" / "cpu-2026-12-03" / "load.csv"))
    assert runs
    ended = {lane.summary.arrivals_ended for run in runs for lane in run.lanes.values() if lane.summary}
    assert ended and ended <= {"done", "behind", "stopped"}
