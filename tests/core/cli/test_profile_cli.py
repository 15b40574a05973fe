"""`profile` and `predict` as a user types them: the shipped profiles listed with their age and versions, a profile
built from sweep files, a prediction with its interval, an extrapolation said as one, a crossing along widths, a
profile measured on (scripted) lanes and a prediction checked against a run here; damaged input refused."""
from __future__ import annotations

import json
import re

from helpers import ROOT, cli_in_process

H200 = ROOT / "docs" / "results" / "h200-2026-11-30"


def test_the_shipped_profiles_are_listed_with_their_machine_age_and_versions(capsys):
    out = cli_in_process(capsys, "profile", "--list")
    assert out.returncode == 0, out.stderr
    assert "h200-2026-11-30: NVIDIA H200 and Intel(R) Xeon(R) Processor (16 cores), measured 2026-11-30" in out.stdout
    assert "Keras 3.15.1, jax 0.11.2" in out.stdout and "cpu-2026-12-03" in out.stdout


def test_a_seed_on_the_h200_profile_is_predicted_with_an_interval_and_an_lstm_as_an_extrapolation(capsys):
    out = cli_in_process(capsys, "predict", "--profile", "h200-2026-11-30", "--preset", "qa")
    assert out.returncode == 0, out.stderr
    lines = [x for x in out.stdout.splitlines() if x.strip().startswith(("jax:cpu on", "jax:gpu0 on"))]
    assert len(lines) == 2 and all(re.search(r"ms per step \(95%: [\d.]+–[\d.]+ ms\)", x) for x in lines), lines
    assert "from 12 points at batch 128 (1/2/4 layers" in out.stdout
    assert "other machines than this one" in out.stdout  # no run here would check an H200
    lstm = cli_in_process(capsys, "predict", "--profile", "h200-2026-11-30", "--preset", "lstm")
    assert lstm.returncode == 0, lstm.stderr
    assert lstm.stdout.count("an extrapolation (this profile never measured an lstm: its mlp line stands in)") == 2
    assert "95%" not in lstm.stdout


def test_along_widths_says_where_the_predicted_faster_lane_changes(capsys):
    out = cli_in_process(capsys, "predict", "--profile", "h200-2026-11-30", "--preset", "blog-small", "--along",
                         "16,64,256,1024,4096", "--layers", "2")
    assert out.returncode == 0, out.stderr
    assert "predicted (from profiles, not measured):" in out.stdout and "their times meet near width" in out.stdout
    assert re.search(r"^4096 ", out.stdout, re.M)


def test_a_profile_from_sweep_files_is_written_and_predicts(capsys, tmp_path):
    path = tmp_path / "mine.json"
    out = cli_in_process(capsys, "profile", "--from", str(H200 / "sweep-b128.csv"), "-o", str(path))
    assert out.returncode == 0, out.stderr
    data = json.loads(path.read_text())
    assert data["format"] == "crossover-profile/1" and data["name"] == "mine"
    again = cli_in_process(capsys, "predict", "--profile", str(path), "--preset", "qa-100", "--lanes", "jax:gpu0")
    assert again.returncode == 0 and "jax:gpu0 on mine" in again.stdout and "jax:cpu on" not in again.stdout


def test_damaged_or_unknown_profiles_and_wrong_arguments_are_refused(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "crossover-profile/1", "lanes": [{"lane": "cpu", "noise_log_sd": 4.99}]}))
    for args, words in ((("predict", "--profile", str(bad), "--preset", "qa"), "noise_log_sd"),
                        (("predict", "--profile", "nowhere", "--preset", "qa"), "no profile 'nowhere'"),
                        (("predict", "--profile", "h200-2026-11-30", "--preset", "qa", "--lanes", "gpu7"),
                         "none of the profiles has such a lane"),
                        (("predict", "--profile", "h200-2026-11-30", "--preset", "qa", "--layers", "3"),
                         "add --along"),
                        (("profile", "--from", str(H200 / "sweep-b128.csv"), "-o", str(tmp_path / "x.txt")),
                         "a profile is a .json file")):
        out = cli_in_process(capsys, *args)
        assert out.returncode == 2 and words in out.stderr, (args, out.stderr)
        assert "Traceback" not in out.stderr


def test_a_profile_measured_on_lanes_here_predicts_a_model_it_was_not_built_from_and_checks_it(capsys, scripted,
                                                                                                 tmp_path):
    """Scripted lanes (a known cost model): `profile` runs its CNN sweep as a sweep runs, writes the sweep's files
    and the profile; `predict --measure` on this machine's profile runs the model here and says how far it was."""
    from scripted_lanes import cpu_like

    scripted.scripts.update(cpu=cpu_like(fixed_ms=1.0, gflops=20, noise=0.02),
                            cpu1=cpu_like(fixed_ms=0.5, gflops=8, noise=0.02, seed=1))
    path = tmp_path / "here.json"
    out = cli_in_process(capsys, "profile", "--lanes", "cpu,cpu1", "--families", "cnn", "-o", str(path))
    assert out.returncode == 0, out.stderr
    assert re.search(r"expected length: about \d", out.stderr) and "sweep 1 of 1, cnn (5 points)" in out.stderr
    assert (tmp_path / "here-sweeps" / "cnn.csv").is_file() and path.is_file()
    predicted = cli_in_process(capsys, "predict", "--profile", str(path), "--family", "cnn", "--widths", "20,20",
                               "--batch-size", "64", "--measure", "--csv", str(tmp_path / "check.csv"))
    assert predicted.returncode == 0, predicted.stderr
    assert "cpu on here: " in predicted.stdout and "95%" in predicted.stdout
    checks = [x for x in predicted.stdout.splitlines() if re.match(r"\s+cpu1? \(here\): measured", x)]
    assert len(checks) == 2, predicted.stdout  # what the run measured, beside each prediction
    assert all(re.search(r"the prediction was [\d.]+% (high|low), (inside|outside) its interval", x) for x in checks)
    assert (tmp_path / "check.csv").is_file()  # nothing measured is lost
    # Measured one lane after another, as the profile's sweeps measured: taking turns costs a lane each turn.
    assert "--schedule sequential" in predicted.stderr and "(sequential)" in predicted.stderr
