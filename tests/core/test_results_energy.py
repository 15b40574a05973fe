"""Issue 45, "withheld means absent": a lane's energy reading over a window too short to give joules is withheld by
every view, so its sidecar holds it null under its own names, kept only as a raw reading (energy_j_raw), which a
later pooling of runs reads back; a reading long enough is kept as it is."""
from __future__ import annotations

import json

from crossover_lab.core.json_data import json_clean
from crossover_lab.core.records import RunSummary
from crossover_lab.core.results import LaneResult


def _lane(energy_j: float, energy_s: float) -> LaneResult:
    summary = RunSummary("r", "cpu", "CPU", "completed", n_batches=40, median_ms=1.0, energy_j=energy_j,
                         energy_steps=40, energy_samples=40 * 128, energy_s=energy_s, energy_counter="rapl-package")
    return LaneResult("cpu", summary=summary)


def test_a_short_energy_window_is_null_in_the_sidecar_and_kept_raw():
    entry = json.loads(json.dumps(json_clean(_lane(1.0, 0.04).to_json())))  # as the sidecar is written
    summary = entry["summary"]
    assert summary["energy_j"] is None and summary["energy_s"] is None  # withheld in the words: absent here
    assert summary["energy_j_raw"] == 1.0 and summary["energy_s_raw"] == 0.04
    back = LaneResult.from_json("r", "cpu", entry).summary
    assert back is not None and back.energy_j == 1.0 and back.energy_s == 0.04
    assert back.energy_read and not back.energy_measured  # pooled runs may add it up; no view gives joules from it


def test_a_long_enough_energy_window_is_kept_under_its_own_names():
    entry = json.loads(json.dumps(json_clean(_lane(30.0, 3.0).to_json())))
    summary = entry["summary"]
    assert summary["energy_j"] == 30.0 and summary["energy_s"] == 3.0 and "energy_j_raw" not in summary
    back = LaneResult.from_json("r", "cpu", entry).summary
    assert back is not None and back.energy_measured and back.joules_per_step == 30.0 / 40


def test_a_served_p90_from_too_few_calls_is_null_in_the_sidecar_and_a_trained_spread_is_kept():
    from crossover_lab.core.config import ModelSpec, RunConfig, Schedule, TrainSpec
    from crossover_lab.core.results import RunResult

    summary = RunSummary("r", "cpu", "CPU", "completed", n_batches=10, median_ms=2.0, p10_ms=1.0, p90_ms=3.0)
    served = RunConfig(ModelSpec((16,)), TrainSpec(task="predict", batch_size=8))
    run = RunResult("r", served, Schedule.SEQUENTIAL, "2026-12-06T00:00:00+00:00",
                    lanes={"cpu": LaneResult("cpu", summary=summary)})
    entry = json.loads(json.dumps(json_clean(run.to_json())))["lanes"]["cpu"]["summary"]
    assert entry["p90_ms"] is None and entry["p90_ms_raw"] == 3.0  # "p90 needs ≥ 64 calls (have 10)" in the words
    assert entry["median_ms"] == 2.0
    trained = RunResult("r", RunConfig(ModelSpec((16,)), TrainSpec()), Schedule.SEQUENTIAL, "2026-12-06T00:00:00+00:00",
                        lanes={"cpu": LaneResult("cpu", summary=summary)})
    assert json_clean(trained.to_json())["lanes"]["cpu"]["summary"]["p90_ms"] == 3.0
