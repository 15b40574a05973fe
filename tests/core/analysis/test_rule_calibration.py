"""The one rule's error rates on simulated sweeps (benchmarks/rule_calibration.py's simulator, a fixed seed, a few
hundred sweeps): two equal lanes on a shared machine rarely get a lead, and a true 30% lead is found. The rule of
2026-12-05 (a z-test at 1.96 per width and a pattern across ties) named a lead in about half of such sweeps."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "rule_calibration.py"


@pytest.fixture(scope="module")
def calibration():
    spec = importlib.util.spec_from_file_location("rule_calibration", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["rule_calibration"] = module
    spec.loader.exec_module(module)
    return module


def _tally(cal, machine, lead, sweeps, seed, widths=6, design="rechecks", files=1):
    rng = np.random.default_rng(seed)
    t = cal.Tally()
    for k in range(sweeps):
        t.add(cal.one_sweep(rng, machine, lead, f"s{k}", cal.widths_of(widths), design, files),
              "b" if lead < 1.0 else None)
    return t


def _machine(cal, name):
    return next(m for m in cal.MACHINES if m.name == name)


# 60 sweeps in the fast set, 150 in `make test`'s second set (marked `thorough`); the bound is the same: 5% by
# design, and 60 sweeps at a true 5% exceed 12% with a chance of 1% (150 exceed 10% with a chance of 0.4%).
# Issue 57: noise the rule does not model (a slow load one lane feels more than the other, a shared machine's swings),
# at the CLI's default design (6 widths, their rechecks), three passes, and two files measured apart. The rule of
# 2026-12-06 named a lead in 11-47% of such sweeps.
@pytest.mark.parametrize("sweeps, most", [pytest.param(60, 0.12, id="sample"),
                                          pytest.param(150, 0.10, id="thorough", marks=pytest.mark.thorough)])
@pytest.mark.parametrize("noise, design, files, widths", [
    ("unequal load", "rechecks", 1, 6), ("shared", "rechecks", 1, 6), ("unequal load", "3 passes", 1, 6),
    ("unequal load", "5 passes", 1, 6), ("AR(1) 0.8", "5 passes", 1, 6),
    ("shared", "one pass", 2, 6),
    # A run of one model (one width: `run`, the window's Start), and two such runs from files of their own: the
    # rule of 2026-12-07 morning named a lead in 9-16% of them on a shared machine.
    ("shared", "one pass", 1, 1), ("unequal batches", "one pass", 2, 1)])
def test_equal_lanes_rarely_get_a_lead_on_noise_the_rule_does_not_model(calibration, sweeps, most, noise, design,
                                                                        files, widths):
    t = _tally(calibration, _machine(calibration, noise), 1.0, sweeps, 11, widths=widths, design=design, files=files)
    assert t.share(t.lead) <= most, (noise, design, files, widths, t)
    assert t.share(t.crossing) <= 0.03, (noise, design, files, widths, t)


def test_a_true_30_percent_lead_is_found_under_an_unequal_load_and_the_other_lane_never_named(calibration):
    t = _tally(calibration, _machine(calibration, "unequal load"), 1 / 1.3, 40, 12, design="5 passes")
    assert t.share(t.found) >= 0.8 and t.wrong == 0, t


def test_the_default_design_finds_a_true_10_percent_lead_on_a_quiet_machine(calibration):
    """Issue 57's proof: at the CLI's and the Sweep tab's default design (six widths in DEFAULT_PASSES passes) a true
    10% lead on a quiet machine is found in at least 80% of sweeps. The default of 2026-12-07 (one pass and its
    rechecks) found it in none: a lead under about 30% needed passes to be said."""
    from crossover_lab.core.study.sweep import DEFAULT_PASSES
    t = _tally(calibration, _machine(calibration, "quiet"), 1 / 1.1, 40, 13, design=f"{DEFAULT_PASSES} passes")
    assert t.share(t.found) >= 0.8 and t.wrong == 0, t
