"""Issue 57: the rate an answer quotes is the rate measured for its own design (its widths, passes and files),
never another design's; a design the calibration did not simulate says so; and once `calibrate` has measured this
machine's own false-lead rate on twin lanes, every answer quotes it beside the simulated one."""
from __future__ import annotations

import json

import pytest

from crossover_lab.core.analysis.points import SweepPoint
from crossover_lab.core.analysis.rates import counted_rate
from crossover_lab.core.analysis.verdict import pair_verdict
from crossover_lab.core.files import rule_calibration
from crossover_lab.core.files.rule_here import HereCalibration, TwinDesign, TwinSweep, write_here_calibration
from crossover_lab.core.machine import HostInfo
from crossover_lab.core.words.verdict import error_words

WIDTHS = (16, 64, 256, 1024, 4096)


def _points(passes: int = 1, apart: bool = False) -> list[SweepPoint]:
    out = []
    for lane, factor in (("cpu", 1.0), ("cpu1", 2.0)):
        for w in WIDTHS:
            ms = factor * (1 + w / 1000)
            out.append(SweepPoint(lane, w, 1000.0 * w, ms, ms * 0.97, ms * 1.03, n_batches=100, runs=passes,
                                  run_medians=tuple(ms * (1 + 0.01 * k) for k in range(passes)) if passes > 1 else (),
                                  session=f"{lane}-session" if apart else "r1"))
    return out


@pytest.fixture
def calibration_file(tmp_path, monkeypatch):
    rows = [{"widths": 5, "design": design, "files": files, "sweeps": 200, "false_lead": rate, "false_lead_lo": 0.01,
             "false_lead_hi": 0.09, "worst_noise": "unequal load", "found": {}}
            for design, files, rate in (("one pass", 1, 0.025), ("3 passes", 1, 0.04), ("one pass", 2, 0.03))]
    path = tmp_path / "rule-calibration.json"
    path.write_text(json.dumps({"format": rule_calibration.FORMAT, "date": "2026-12-07", "worst_false_lead": 0.04,
                                "designs": rows}))
    monkeypatch.setattr(rule_calibration, "calibration_path", lambda: path)
    monkeypatch.setenv("CROSSOVER_HOME", str(tmp_path / "home"))
    return path


def test_each_design_quotes_its_own_row(calibration_file):
    one = error_words(pair_verdict(_points(), "cpu", "cpu1"))
    assert "2.5% measured for this design (95%: 1–9%" in one and "unequal load" in one, one
    three = error_words(pair_verdict(_points(passes=3), "cpu", "cpu1"))
    assert "4% measured for this design" in three, three
    apart = error_words(pair_verdict(_points(apart=True), "cpu", "cpu1"))
    assert "3% measured for this design" in apart, apart
    ten = error_words(pair_verdict(_points()[:2] + _points()[5:7], "cpu", "cpu1"))  # two widths: not simulated
    assert "this design (2 widths, one pass, one file) is outside the rule's calibration" in ten, ten
    assert "measured for this design" not in ten


def test_this_machines_twin_rate_is_quoted_once_measured(calibration_file, tmp_path):
    before = error_words(pair_verdict(_points(), "cpu", "cpu1"))
    assert "on this machine" not in before
    design = TwinDesign("cpu1", "cpu1#2", (16, 256), 2, (128,), 1, 60, 1.0)
    home = tmp_path / "home"
    home.mkdir()
    sweeps = tuple(TwinSweep(f"twin-{k}.csv", ("too close",), (), 1.03) for k in range(6))
    write_here_calibration(HereCalibration(design, counted_rate(0, 6), sweeps, 6, "2026-12-07T11:00:00+00:00",
                                           HostInfo(), str(home)))
    from crossover_lab.core.files.rule_here import here_calibration_problem
    assert here_calibration_problem() == ""
    after = error_words(pair_verdict(_points(), "cpu", "cpu1"))
    assert "; on this machine, 0 false leads in 6 twin sweeps of cpu1 (95%: 0–" in after, after
    assert after.endswith("; calibrate, 2026-12-07)"), after
