"""A lane against its twin (cpu1,cpu1: cpu1 and cpu1#2, two processes taking turns) and `calibrate`, which runs K such
sweeps and keeps this machine's false-lead rate: twins named apart in every file and answer, the rate written with
its count, interval and design, a stop keeping what finished; on scripted lanes of equal cost, and once on real ones."""
from __future__ import annotations

import re

import csv
import json

import pytest
from helpers import cli, cli_in_process

# Short sweeps: three widths, few steps a point (a scripted step takes no real time at pace 0).
QUICK = ("--widths", "16,64,256", "--steady-steps", "20", "--samples", "6400", "--data", "synthetic")


def _lanes_of(path) -> list[str]:
    with open(path, encoding="utf-8") as fh:
        return [row["lane"] for row in csv.DictReader(fh)]


def _equal_twins(scripted, noise: float = 0.02) -> None:
    from scripted_lanes import cpu_like

    # One cost model, two seeds: equal lanes whose batches differ as two processes' do.
    scripted.scripts.update({"cpu1": cpu_like(fixed_ms=1.0, gflops=40, noise=noise, seed=1),
                             "cpu1#2": cpu_like(fixed_ms=1.0, gflops=40, noise=noise, seed=2)})


def test_a_twin_sweep_names_the_twins_apart_in_its_csv_and_its_answer(capsys, scripted, tmp_path):
    from crossover_lab.core.files.findings import Findings
    from crossover_lab.core.files.sweeps.files import read_sweep_rows, sweep_paths

    _equal_twins(scripted)
    out = tmp_path / "twins.csv"
    r = cli_in_process(capsys, "sweep", "--lanes", "cpu1,cpu1", *QUICK, "--csv", str(out))
    assert r.returncode == 0, r.stderr
    lanes = _lanes_of(out)
    assert set(lanes) == {"cpu1", "cpu1#2"} and lanes.count("cpu1") == lanes.count("cpu1#2") >= 3
    # Two processes: each twin a lane of its own, started once.
    assert scripted.started("cpu1") == 1 and scripted.started("cpu1#2") == 1
    _, batches, sidecar = sweep_paths(out)
    assert set(_lanes_of(batches)) == {"cpu1", "cpu1#2"}  # every batch of each twin, under its own name
    assert "cpu1#2" in sidecar.read_text(encoding="utf-8")
    rows, _ = read_sweep_rows(str(out))
    answers = Findings(rows).answers()
    assert [a.verdict.lanes for a in answers] == [("cpu1", "cpu1#2")]
    assert "cpu1#2" in r.stdout  # the sweep's own report names the twin


def test_calibrate_on_equal_scripted_twins_writes_the_rate_with_its_count_interval_and_design(capsys, scripted,
                                                                                                tmp_path, monkeypatch):
    from crossover_lab.core.files.rule_here import here_calibration, here_calibration_problem, here_path

    monkeypatch.setenv("CROSSOVER_HOME", str(tmp_path))
    _equal_twins(scripted)
    r = cli_in_process(capsys, "calibrate", "--sweeps", "3", *QUICK)
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stdout.splitlines() if x.startswith("twin sweep ")]
    assert [x.split(":")[0] for x in lines] == [f"twin sweep {i} of 3" for i in (1, 2, 3)], r.stdout
    said = r.stdout + r.stderr  # each sweep after the first says how long is left, from the sweeps measured
    assert "calibrate: twin sweep 1 of 3\n" in said and re.search(r"calibrate: twin sweep 3 of 3, about \S+", said)
    found = here_calibration()
    assert found is not None, here_calibration_problem()
    assert (found.rate.trials, found.asked) == (3, 3) and 0 <= found.rate.count <= 3
    assert found.rate.count == sum(s.false_lead for s in found.sweeps)
    assert found.rate.low <= found.rate.rate <= found.rate.high and found.rate.level == 0.95
    if found.rate.count == 0:  # Clopper-Pearson's exact bound for 0 of 3: 1 - 0.025^(1/3)
        assert found.rate.high == pytest.approx(0.7076, abs=1e-4)
        assert "0 false leads in 3 twin sweeps of cpu1 (95%: 0–71%)" in r.stdout
    design = found.design
    assert (design.lane, design.twin, design.widths, design.layers) == ("cpu1", "cpu1#2", (16, 64, 256), 2)
    # The sweep's default design: every width in five passes, so no recheck beside them (issue 57).
    assert design.passes == 5 and design.rechecks == 0
    assert design.steady_steps == 20 and design.batch_sizes == (128,)
    # Every sweep's files kept in the calibration's own folder beside the file, each with both twins' points.
    assert here_path() == tmp_path / "rule-here.json"
    files = sorted(p.name for p in (tmp_path / "rule-here-sweeps").rglob("twin-?.csv"))
    assert files == ["twin-1.csv", "twin-2.csv", "twin-3.csv"]
    for sweep in found.sweeps:
        assert set(_lanes_of(sweep.file)) == {"cpu1", "cpu1#2"}
    assert json.loads(here_path().read_text())["format"] == "crossover-rule-here/1"


def test_a_twin_that_is_not_equal_is_counted_as_a_false_lead_every_sweep(capsys, scripted, tmp_path, monkeypatch):
    """A twin 40% slower per FLOP (a machine that favours one process): every sweep names a lead, and the rate says
    so; what the count rests on is the answer `analyze` gives the file, not a count that is always 0."""
    from scripted_lanes import cpu_like
    from crossover_lab.core.files.rule_here import here_calibration

    monkeypatch.setenv("CROSSOVER_HOME", str(tmp_path))
    scripted.scripts.update({"cpu1": cpu_like(fixed_ms=1.0, gflops=40, noise=0.01, seed=1),
                             "cpu1#2": cpu_like(fixed_ms=1.4, gflops=28, noise=0.01, seed=2)})
    r = cli_in_process(capsys, "calibrate", "--sweeps", "2", *QUICK)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("a false lead: cpu1 named faster, of two equal lanes") == 2, r.stdout
    found = here_calibration()
    assert found is not None and (found.rate.count, found.rate.trials) == (2, 2)
    assert all(s.false_lead and s.leaders == ("cpu1",) for s in found.sweeps)
    assert "2 false leads in 2 twin sweeps of cpu1 (95%: 16–100%)" in r.stdout


def test_calibrate_refuses_two_lanes_and_a_tensorflow_gpu_twin_before_any_lane_starts(capsys, scripted):
    r = cli_in_process(capsys, "calibrate", "--lanes", "cpu,cpu1")
    assert r.returncode == 2 and "calibrate sweeps one lane against its twin: name one lane" in r.stderr
    r = cli_in_process(capsys, "calibrate", "--lanes", "gpu0")
    assert r.returncode == 2 and "two TensorFlow processes do not share one GPU evenly" in r.stderr
    r = cli_in_process(capsys, "calibrate", "--sweeps", "0")
    assert r.returncode == 2 and "--sweeps 0: choose 1 to 1000" in r.stderr
    assert scripted.channels == []


def test_a_lane_that_cannot_run_here_is_said_and_no_rate_is_written(capsys, scripted, tmp_path, monkeypatch):
    monkeypatch.setenv("CROSSOVER_HOME", str(tmp_path))  # scripted jax:gpu0 finds no GPU: its script names none
    r = cli_in_process(capsys, "calibrate", "--lanes", "jax:gpu0", "--sweeps", "2", *QUICK)
    assert r.returncode == 2, r.stderr
    assert "jax:gpu0: " in r.stderr and "twin sweep 1 did not finish, so it is not counted" in r.stderr
    assert "calibrate: no twin sweep was judged, so nothing was written" in r.stderr
    assert not (tmp_path / "rule-here.json").exists() and "twin sweep 2" not in r.stderr


def test_a_stop_during_calibration_keeps_and_counts_the_sweeps_that_finished(capsys, scripted, monkeypatch,
                                                                             tmp_path):
    """A stop in the second sweep: the first is counted and written, the second's files are kept, not counted."""
    from crossover_lab.core.cli import calibrate, sweep
    from crossover_lab.core.files.rule_here import here_calibration

    monkeypatch.setenv("CROSSOVER_HOME", str(tmp_path))
    _equal_twins(scripted)
    real = sweep.cmd_sweep
    calls = []

    def stopped_second(args):
        calls.append(args.csv)
        if len(calls) == 2:
            return 130  # as cmd_sweep returns after Ctrl-C, its points written
        return real(args)

    monkeypatch.setattr(calibrate.cli_sweep, "cmd_sweep", stopped_second)
    r = cli_in_process(capsys, "calibrate", "--sweeps", "4", *QUICK)
    assert r.returncode == 130 and len(calls) == 2, r.stderr
    assert "twin sweep 2 did not finish, so it is not counted" in r.stderr
    found = here_calibration()
    assert found is not None and (found.rate.trials, found.asked) == (1, 4)
    assert "1 of the 4 sweeps asked for was judged: the rate is of that one." in r.stdout


@pytest.mark.lanes
def test_a_twin_sweep_on_real_lanes_writes_both_lanes_points(tmp_path):
    out = tmp_path / "twins.csv"
    r = cli("sweep", "--lanes", "cpu1,cpu1", "--widths", "16,64", "--layers", "1", "--steady-steps", "10",
            "--seconds-per-point", "0.5", "--samples", "2000", "--batch-size", "50", "--data", "synthetic",
            "--no-calibrate", "--no-recheck", "--csv", str(out))
    assert r.returncode == 0, r.stderr
    with open(out, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert sorted((row["lane"], row["width"]) for row in rows) == [
        ("cpu1", "16"), ("cpu1", "64"), ("cpu1#2", "16"), ("cpu1#2", "64")]
    assert all(row["status"] == "completed" and float(row["median_ms"]) > 0 for row in rows)
    assert "cpu1#2" in r.stdout


def test_the_words_say_each_sweep_the_total_and_a_busy_machine():
    from crossover_lab.core.analysis.rates import counted_rate
    from crossover_lab.core.files.rule_here import HereCalibration, TwinDesign, TwinSweep
    from crossover_lab.core.machine import HostInfo
    from crossover_lab.core.words.rule_here import calibration_lines, twin_sweep_line

    design = TwinDesign("cpu1", "cpu1#2", (16, 256), 1, (128,), 1, 60, 1.0)
    quiet = TwinSweep("a.csv", ("too close",), (), 1.026, 0.03)
    led = TwinSweep("b.csv", ("leads",), ("cpu1#2",), 1.5, 0.39)
    crossed = TwinSweep("c.csv", ("crosses",), ("cpu1", "cpu1#2"), 1.2)
    short = TwinSweep("d.csv", ("not enough",), (), float("nan"))
    assert twin_sweep_line(1, 6, quiet, design) == \
        "twin sweep 1 of 6: no lead between cpu1 and cpu1#2 (too close to call; the widest gap between them 2.6%)."
    assert twin_sweep_line(2, 6, led, design) == ("twin sweep 2 of 6: a false lead: cpu1#2 named faster, of two "
                                                  "equal lanes; the widest gap between them 50%; other work used up "
                                                  "to 39% of their cores.")
    assert "the lead changes hands between cpu1 and cpu1#2" in twin_sweep_line(3, 6, crossed, design)
    assert "not counted" in twin_sweep_line(4, 6, short, design) and not short.judged and not short.false_lead
    lines = calibration_lines(HereCalibration(design, counted_rate(2, 3), (quiet, led, crossed), 6, "2026-12-07",
                                              HostInfo(), "/data"), "/home/rule-here.json")
    assert lines[0].startswith("2 false leads in 3 twin sweeps of cpu1 (95%: 9.4–99%)")
    assert lines[1] == "3 of the 6 sweeps asked for were judged: the rate is of those."
    assert lines[2].startswith("1 of the 3 sweeps ran beside other work (up to 39% of the lanes' cores)")
    assert "widths 16, 256, 1 layer, batch 128, 1 point measured twice" in lines[3]
