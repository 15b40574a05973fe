"""One run says it is one run: a run's lead is bounded by this machine's run-to-run noise where a sweep here measured
it (core/files/noise.py), in the CLI, the window's history line and the report alike, from the run's own sidecar."""
from __future__ import annotations

import json
import math

from helpers import cli_in_process

from crossover_lab.core.analysis.points import SweepPoint
from crossover_lab.core.files.noise import LaneNoise, measured_noise, read_noise, record_noise
from crossover_lab.core.records import RunSummary
from crossover_lab.core.words.run import verdict


def summary(lane: str, median: float) -> RunSummary:
    return RunSummary("r", lane, "CPU", "completed", n_batches=200, median_ms=median, p10_ms=median * 0.98,
                      p90_ms=median * 1.02)


def test_a_lead_from_one_run_is_bounded_by_the_noise_a_sweep_measured() -> None:
    # 50% apart: beyond one run's floor of ±12%, inside a noise of ±20% and ±30%.
    a, b = summary("cpu", 1.0), summary("cpu1", 1.5)
    rests = "one run of each lane; at most a 5% chance of any false lead at this width, "
    assert verdict(a, b).startswith(f"cpu is 1.5x faster than cpu1 on this model ({rests}")  # a lead
    noisy = {"cpu": math.log(1.2), "cpu1": math.log(1.3)}
    assert verdict(a, b, noise=noisy).startswith(
        "cpu and cpu1 are too close to call on this model (medians 50% apart, inside this machine's "
        f"run-to-run noise: cpu ±20%, cpu1 ±30%; {rests}")
    quiet = {"cpu": 0.01, "cpu1": 0.01}  # less than the floor one run is judged with: the words say the floor
    assert verdict(a, b, noise=quiet).startswith(
        "cpu is 1.5x faster than cpu1 on this model, beyond what one run of each lane can show (the rule counts ±13% "
        f"of run-to-run noise a run, more than this machine measured: cpu ±1%, cpu1 ±1%) ({rests}")
    close = verdict(a, summary("cpu1", 1.25), noise=quiet)  # 25% apart is never "inside" a noise of ±1%
    assert close.startswith("cpu and cpu1 are too close to call on this model (medians 25% apart, inside what one "
                            "run of each lane can show: the rule counts ±13% of run-to-run noise a run, more than this "
                            "machine measured (cpu ±1%, cpu1 ±1%);"), close
    # One lane's noise unknown: no bound said, the lead as without one.
    assert verdict(a, b, noise={"cpu": 0.5}) == verdict(a, b)


def test_the_noise_file_keeps_each_lanes_latest_figure_and_a_damaged_one_is_no_bound(_own_noise_file) -> None:
    points = [SweepPoint("cpu", 64, 1e6, 1.0, runs=2, between_runs=0.1, load_avg=0.5),
              SweepPoint("cpu", 256, 4e6, 2.0, runs=2, between_runs=0.2),
              SweepPoint("cpu", 1024, 1.6e7, 5.0),
              SweepPoint("cpu1", 64, 1e6, 2.0)]  # measured once only: no figure
    measured = measured_noise(points, "2026-12-03T10:00:00Z", "/tmp/s.csv")
    assert [(n.lane, n.points) for n in measured] == [("cpu", 2)]
    assert measured[0].log_sd == math.sqrt((0.1 ** 2 + 0.2 ** 2) / 2)
    record_noise(measured)
    record_noise([LaneNoise("cpu1", 0.05, 1, "2026-12-03T11:00:00Z")])
    kept = read_noise()
    assert set(kept) == {"train:cpu", "train:cpu1"} and kept["train:cpu"].source == "/tmp/s.csv"
    _own_noise_file.write_text('{"format": "crossover-run-noise/1", "lanes": [{"lane": "cpu", "log_sd": "x"}]}')
    assert read_noise() == {}
    _own_noise_file.write_text("[" * 100_000)
    assert read_noise() == {}


def test_a_run_after_a_sweep_is_bounded_by_its_noise_in_every_view(capsys, scripted, tmp_path) -> None:
    """A sweep with a recheck measures cpu and cpu1 twice at a point; the next run records that noise in its
    sidecar and the CLI, the history line and the report say the same verdict from it."""
    from crossover_lab.core.files.run_files import read_runs
    from crossover_lab.core.report.document import run_answer
    from crossover_lab.gui.compare.history import run_summary_text
    from scripted_lanes import cpu_like

    scripted.scripts.update(cpu=cpu_like(fixed_ms=0.3, gflops=20, noise=0.15),
                            cpu1=cpu_like(fixed_ms=1.0, gflops=60, noise=0.15, seed=1))
    swept = cli_in_process(capsys, "sweep", "--widths", "16,256,1024", "--lanes", "cpu,cpu1", "--data", "synthetic",
                           "--no-calibrate", "--steady-steps", "30")
    assert swept.returncode == 0, swept.stderr
    assert set(read_noise()) == {"train:cpu", "train:cpu1"}
    out = cli_in_process(capsys, "run", "--lanes", "cpu,cpu1", "--widths", "64", "--samples", "6400", "--data",
                         "synthetic", "--csv", str(tmp_path / "run.csv"))
    assert out.returncode == 0, out.stderr
    assert "This verdict rests on one run of each lane, its interval widened by this machine's run-to-run noise" \
        in out.stdout and "as the sweep of 20" in out.stdout
    said = next(line for line in out.stdout.splitlines() if "run-to-run noise" in line and "cpu" in line)
    meta = json.loads((tmp_path / "run.json").read_text())
    assert set(meta["runs"][0]["run_noise"]) == {"cpu", "cpu1"}
    (back,) = read_runs(tmp_path / "run.csv")
    assert back.run_noise == meta["runs"][0]["run_noise"]
    lead, _, rest = said.rstrip(".").partition(" on this model")  # the report names the model where the CLI does not
    assert lead and rest.startswith((", beyond this machine's run-to-run noise (", " (one run of each lane;",
                                     ", beyond what one run of each lane can show (", " (medians "))
    # a lead beyond the noise measured, a lead, a lead beyond the floor one run is judged with, or a tie
    assert lead + " on this model" + rest in run_summary_text(back)  # the window's history line
    assert any(line.startswith(lead) and line.rstrip(".").endswith(rest) for line in run_answer(back)), \
        (said, run_answer(back))  # the report
