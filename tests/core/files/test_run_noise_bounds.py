"""A planted or damaged run-noise file bounds nothing (issue 49 item 3): every field is held to what a sweep can write,
text is capped, a file that is not a regular file is no bound and a sweep says when it cannot keep its figures, and a
run cites a sweep file that is gone as gone."""
from __future__ import annotations

import json
import os

from helpers import cli_in_process

from crossover_lab.core.files.noise import FORMAT, LaneNoise, read_noise, record_noise


def _plant(path, **entry) -> None:
    base = {"lane": "cpu", "task": "train", "log_sd": 0.05, "points": 2, "measured_at": "2026-12-06T10:00:00Z",
            "source": "", "load_avg": 0.5}
    path.write_text(json.dumps({"format": FORMAT, "lanes": [{**base, **entry}]}))


def test_each_field_is_held_to_what_a_sweep_can_write(_own_noise_file) -> None:
    _plant(_own_noise_file)
    assert set(read_noise()) == {"train:cpu"}  # the plain entry is read
    for bad in ({"log_sd": 4.99}, {"log_sd": -0.1}, {"points": 10 ** 400}, {"points": 0}, {"source": "x" * 900_000},
                {"measured_at": "9" * 500}, {"load_avg": "inf"}, {"load_avg": -3}):
        _plant(_own_noise_file, **bad)
        assert read_noise() == {}, bad
    _own_noise_file.write_text(_own_noise_file.read_text().replace('"load_avg": -3', '"load_avg": Infinity'))
    assert read_noise() == {}


def test_a_folder_or_fifo_in_its_place_is_no_bound_and_a_sweep_says_it_cannot_keep_its_figures(_own_noise_file):
    noise = [LaneNoise("cpu", 0.05, 2, "2026-12-06T10:00:00Z")]
    os.mkfifo(_own_noise_file)
    assert read_noise() == {}  # a FIFO never blocks the reader
    written, why_not = record_noise(noise)  # Crossover replaces only regular files, and says so
    assert written is None and "was not kept for later runs" in why_not and "named pipe" in why_not
    _own_noise_file.unlink()
    _own_noise_file.mkdir()
    written, why_not = record_noise(noise)
    assert written is None and "was not kept for later runs" in why_not and str(_own_noise_file) in why_not


def test_a_planted_spread_does_not_turn_a_run_into_a_tie_and_a_gone_sweep_is_said_gone(capsys, scripted, tmp_path,
                                                                                        _own_noise_file) -> None:
    from scripted_lanes import cpu_like

    scripted.scripts.update(cpu=cpu_like(fixed_ms=0.3, gflops=20, noise=0.05),
                            cpu1=cpu_like(fixed_ms=3.0, gflops=60, noise=0.05, seed=1))
    _plant(_own_noise_file, log_sd=4.99, source=str(tmp_path / "gone.csv"))
    out = cli_in_process(capsys, "run", "--lanes", "cpu,cpu1", "--widths", "64", "--samples", "6400", "--data",
                         "synthetic")
    assert out.returncode == 0, out.stderr
    assert "15,000%" not in out.stdout and "run-to-run noise: cpu" not in out.stdout
    for lane in ("cpu", "cpu1"):
        _plant(_own_noise_file, lane=lane, log_sd=0.02, source=str(tmp_path / "gone.csv"))
        kept = {**read_noise()}
        assert kept, lane
    both = {"format": FORMAT, "lanes": [
        {"lane": lane, "task": "train", "log_sd": 0.02, "points": 2, "measured_at": "2026-12-06T10:00:00Z",
         "source": str(tmp_path / "gone.csv"), "load_avg": 0.5} for lane in ("cpu", "cpu1")]}
    _own_noise_file.write_text(json.dumps(both))
    out = cli_in_process(capsys, "run", "--lanes", "cpu,cpu1", "--widths", "64", "--samples", "6400", "--data",
                         "synthetic")
    assert out.returncode == 0, out.stderr
    assert "gone.csv, no longer on disk" in out.stdout, out.stdout
