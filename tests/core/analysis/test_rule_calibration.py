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


def _tally(cal, machine, lead, sweeps, seed, paths=("sweep", "window", "analyze-1")):
    rng = np.random.default_rng(seed)
    tallies = {path: cal.Tally() for path in paths}
    for k in range(sweeps):
        sim = cal.simulate(rng, machine, lead, f"s{k}")
        plain = cal.simulate(rng, machine, lead, f"p{k}", recheck=False) if "no-recheck" in paths else sim
        for path in paths:
            tallies[path].add(cal.PATHS[path](sim, plain, sim), "a" if lead != 1.0 else None)
    return tallies


# 60 sweeps in the fast set, 150 in `make test`'s second set (marked `thorough`); the bound is the same: 5% by
# design, and 60 sweeps at a true 5% exceed 12% with a chance of 1% (150 exceed 10% with a chance of 0.4%).
@pytest.mark.parametrize("sweeps, most", [pytest.param(60, 0.12, id="sample"),
                                          pytest.param(150, 0.10, id="thorough", marks=pytest.mark.thorough)])
def test_equal_lanes_on_a_shared_machine_rarely_get_a_lead_in_any_view(calibration, sweeps, most):
    shared = next(m for m in calibration.MACHINES if m.name == "shared")
    tallies = _tally(calibration, shared, 1.0, sweeps, 11, ("sweep", "no-recheck", "window", "analyze-1"))
    for path, t in tallies.items():
        assert t.share(t.lead) <= most, (path, t)
        assert t.share(t.crossing) <= 0.03, (path, t)
    # The views judge one sweep alike: the same rows, the same answer.
    assert len({(t.lead, t.crossing) for path, t in tallies.items() if path != "no-recheck"}) == 1


def test_a_true_30_percent_lead_is_found_and_the_other_lane_never_named(calibration):
    quiet = next(m for m in calibration.MACHINES if m.name == "quiet")
    for path, t in _tally(calibration, quiet, 1.3, 40, 12).items():
        assert t.share(t.found) >= 0.9 and t.wrong == 0, (path, t)
