"""This machine's calibration file (rule-here.json, core/files/rule_here.py): written whole and read back as written;
a damaged, foreign or unreadable one is a sentence naming it, never a traceback, and no figure is made up."""
from __future__ import annotations

import json

import pytest

from crossover_lab.core.analysis.rates import counted_rate
from crossover_lab.core.files.rule_here import (HereCalibration, TwinDesign, TwinSweep, here_calibration,
                                                here_calibration_problem, write_here_calibration)
from crossover_lab.core.machine import HostInfo


def _calibration(count: int = 1, trials: int = 6) -> HereCalibration:
    design = TwinDesign("cpu1", "cpu1#2", (16, 48, 152, 464, 1448, 4096), 2, (128,), 2, 60, 3.0)
    sweeps = tuple(TwinSweep(f"/data/twin-{i}.csv", ("leads" if i <= count else "too close",),
                             ("cpu1#2",) if i <= count else (), 1.04, 0.02 * i) for i in range(1, trials + 1))
    return HereCalibration(design, counted_rate(count, trials), sweeps, trials, "2026-12-07T10:00:00.000+00:00",
                           HostInfo(machine="vm", cpu="AMD EPYC", cpu_cores=2), "/data")


def test_the_calibration_reads_back_as_written(tmp_path):
    path = tmp_path / "rule-here.json"
    written = _calibration()
    write_here_calibration(written, path)
    found = here_calibration(path)
    assert found == written and here_calibration_problem(path) == ""
    assert (found.rate.count, found.rate.trials) == (1, 6)
    assert found.rate.low == pytest.approx(0.00421, abs=1e-5) and found.rate.high == pytest.approx(0.6412, abs=1e-4)
    assert found.design.widths[-1] == 4096 and found.machine.cpu == "AMD EPYC"
    assert [s.others_cpu for s in found.sweeps] == pytest.approx([0.02, 0.04, 0.06, 0.08, 0.10, 0.12])
    # A calibration written again is read again (the cache is keyed by the file's change).
    write_here_calibration(_calibration(0, 6), path)
    assert here_calibration(path).rate.count == 0


def test_no_calibration_here_is_no_figure_and_no_problem(tmp_path):
    assert here_calibration(tmp_path / "rule-here.json") is None
    assert here_calibration_problem(tmp_path / "rule-here.json") == ""


def _damaged(tmp_path, data) -> str:
    path = tmp_path / "rule-here.json"
    path.write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())
    assert here_calibration(path) is None
    problem = here_calibration_problem(path)
    assert str(path) in problem, problem
    return problem


def test_a_damaged_calibration_is_a_sentence_naming_the_file(tmp_path):
    good = _calibration().to_json()
    assert "is not a calibration `calibrate` wrote (its format is not crossover-rule-here/1): it is damaged" in \
        _damaged(tmp_path, {**good, "format": "crossover-rule-calibration/1"})
    assert "its count of false leads is not a whole number from 0 to 6" in \
        _damaged(tmp_path, {**good, "false_leads": 7})
    assert "its 6 sweeps and 2 false leads are not the sweeps it lists" in \
        _damaged(tmp_path, {**good, "false_leads": 2, "high": 0.8})
    assert "does not hold its rate 1 of 6" in _damaged(tmp_path, {**good, "high": 0.1})
    assert "its low is not a share between 0 and 1" in _damaged(tmp_path, {**good, "low": "nan"})
    assert "its design holds no widths" in _damaged(tmp_path, {**good, "design": {**good["design"], "widths": []}})
    assert "a sweep's state is not one of" in _damaged(tmp_path, {**good, "each": [{"file": "x", "states": ["won"]}]})
    assert "is not UTF-8 text" in _damaged(tmp_path, b"\xff\xfe{")
    _damaged(tmp_path, b"{not json")
    _damaged(tmp_path, [1, 2, 3])
    assert "nests" in _damaged(tmp_path, b"[" * 200 + b"]" * 200)
    assert "longer than 1 MB" in _damaged(tmp_path, b" " * ((1 << 20) + 1))


def test_a_folder_in_the_calibrations_place_is_a_sentence(tmp_path):
    path = tmp_path / "rule-here.json"
    path.mkdir()
    assert here_calibration(path) is None and str(path) in here_calibration_problem(path)
