"""The energy crossover by the one rule, the energy columns of a sweep CSV (older files read as missing), and the
sentences: joules per million samples total and above idle, or why not measured."""
from __future__ import annotations

import io
import math

import pytest

from helpers import two_lane_result
from crossover_lab.core.analysis.energy import energy_analysis, energy_curves
from crossover_lab.core.analysis.points import SweepPoint
from crossover_lab.core.cli.printing import print_groups_analysis, print_summary
from crossover_lab.core.files.sweeps.rows import COLUMNS, SweepRow, sweep_rows_text
from crossover_lab.core.files.sweeps.files import energy_info, read_sweep_rows
from crossover_lab.core.records import RunSummary
from crossover_lab.core.words.run import energy_lines, energy_words
from crossover_lab.core.words.sweep import describe_energy_pair

WIDTHS = (64, 128, 256, 512, 1024)


def cpu_energy(width: int) -> float:
    """cpu's joules per million samples: 2,000 at 200 units, growing with the cube of the width (2x apart from
    gpu0's flat 2,000 at 256 already: one pass of five widths, its leads said beyond its floor of noise)."""
    return 2000.0 * (width / 200) ** 3


def points() -> list[SweepPoint]:
    """cpu's energy per sample grows with the width; gpu0's stays flat: gpu0 uses less above about 200."""
    out = []
    for w in WIDTHS:
        out.append(SweepPoint("cpu", w, 1e6 * w, 2.0, 1.96, 2.04, batch_size=128, n_batches=200,
                              energy_j_per_msample=cpu_energy(w)))
        out.append(SweepPoint("gpu0", w, 1e6 * w, 1.0, 0.98, 1.02, batch_size=128, n_batches=200,
                              energy_j_per_msample=2000.0))
    return out


def test_energy_curves_take_the_step_times_relative_spread():
    curve = energy_curves(points())[0]
    e = cpu_energy(WIDTHS[0])
    assert (curve.value, curve.lo, curve.hi) == pytest.approx((e, e * 0.98, e * 1.02))
    # one counter reading per run: its interval rests on that, not on the 200 steps (issue 34)
    assert (curve.n, curve.runs) == (1, 1)
    import dataclasses
    twice = energy_curves([dataclasses.replace(points()[0], runs=2, between_runs=0.2)])[0]
    assert (twice.n, twice.runs, twice.between_runs) == (2, 2, 0.2)
    assert energy_curves([SweepPoint("cpu", 64, 1.0, 2.0)]) == []  # not measured: no point on the curve


def test_the_energy_crossover_is_worded_as_the_cost_one():
    line = describe_energy_pair(points(), "cpu", "gpu0")
    assert line.startswith("gpu0 uses less energy per sample above about 200 units")
    assert line.endswith("units (128–256)"), line
    analysis = energy_analysis(points())
    assert analysis.crossovers[0].faster_above == "gpu0" and analysis.measured
    assert analysis.to_json()["crossovers"][0]["less_energy_above"] == "gpu0"
    flat = [p for p in points() if p.lane == "gpu0"] + [SweepPoint("cpu", w, 1e6 * w, 2.0, 1.96, 2.04, batch_size=128,
                                                                   n_batches=200, energy_j_per_msample=5000.0)
                                                        for w in WIDTHS]
    assert describe_energy_pair(flat, "cpu", "gpu0").startswith("per sample, gpu0 uses less energy than cpu throughout")
    assert describe_energy_pair([p for p in points() if p.lane == "gpu0"], "cpu", "gpu0").startswith("too few points")


def test_analyze_prints_energy_only_where_it_was_measured():
    out = io.StringIO()
    print_groups_analysis({"all": points()}, out)
    assert "joules per million samples, by width" in out.getvalue() and "gpu0 uses less energy" in out.getvalue()
    out = io.StringIO()
    print_groups_analysis({"all": [SweepPoint(p.lane, p.width, p.flops_per_batch, p.median_ms, p.p10_ms, p.p90_ms)
                                   for p in points()]}, out)
    assert "energy" not in out.getvalue() and "joules" not in out.getvalue()


def _measured(lane: str = "cpu1") -> RunSummary:
    return RunSummary("r", lane, "CPU", "completed", n_batches=100, median_ms=2.0, energy_j=50.0, energy_steps=100,
                      energy_samples=100 * 64, energy_s=5.0, energy_counter="rapl-package",
                      energy_note="package energy: shared with anything else this CPU ran", idle_w=4.0)


def test_a_summary_gives_joules_per_step_per_million_samples_and_watts_total_and_above_idle():
    s = _measured()
    assert s.joules_per_step == 0.5 and s.mean_w == 10.0
    assert s.joules_per_msample == pytest.approx(1e6 * 50 / 6400)
    assert s.mean_w_above_idle == pytest.approx(6.0)
    assert s.joules_per_msample_above_idle == pytest.approx(1e6 * (50 - 20) / 6400)
    assert energy_words(s) == ("cpu1 uses 7.81 kJ per million samples (4.69 kJ above idle at 4 W; 10 W mean, "
                               "rapl-package; package energy: shared with anything else this CPU ran)")


def test_not_measured_is_the_reason_said_once_and_no_column_filled(tmp_path):
    note = "not measured on this machine: /sys/class/powercap has no RAPL counters (a VM, or a CPU without RAPL)"
    a = RunSummary("r", "cpu", "CPU", "completed", energy_note=note)
    b = RunSummary("r", "cpu1", "CPU", "completed", energy_note=note)
    assert energy_lines([a, b]) == [f"energy {note}"]
    assert energy_lines([_measured("gpu0"), b])[1] == f"cpu1's energy: {note}"
    assert not a.energy_measured and math.isnan(a.joules_per_msample)
    result = two_lane_result("r1", 64, 2.0, 1.0)
    result.lanes["cpu"].summary = RunSummary(**{**result.lanes["cpu"].summary.as_dict(), "energy_note": note})
    row = SweepRow.from_result(result, "cpu")
    assert row.energy_counter == "" and all(math.isnan(getattr(row, c)) for c in
                                            ("energy_j_per_step", "energy_j_per_msample", "mean_w", "idle_w"))
    out = io.StringIO()
    print_summary(result, out)
    assert f"cpu's energy: {note}." in out.getvalue()


def test_sweep_csv_round_trip_and_an_older_file_without_the_columns(tmp_path):
    at = COLUMNS.index("energy_j_per_step")  # the energy columns, together, after every older one
    assert COLUMNS[at:at + 5] == ("energy_j_per_step", "energy_j_per_msample", "mean_w", "idle_w", "energy_counter")
    rows = [SweepRow("gpu0", "GPU", 64, 0, 10**6, 128, 1.0, 0.98, 1.02, 200, energy_j_per_step=0.3,
                     energy_j_per_msample=2343.75, mean_w=300.0, idle_w=70.0, energy_counter="nvml-energy"),
            SweepRow("cpu", "CPU", 64, 0, 10**6, 128, 2.0, 1.9, 2.1, 200)]
    path = tmp_path / "sweep.csv"
    path.write_text(sweep_rows_text(rows))
    back, _ = read_sweep_rows(str(path))
    energy = ("energy_j_per_step", "energy_j_per_msample", "mean_w", "idle_w")
    assert [getattr(back[0], c) for c in energy] == [0.3, 2343.75, 300.0, 70.0]
    assert back[0].energy_counter == "nvml-energy" and back[0].point().energy_j_per_msample == 2343.75
    assert back[1].energy_counter == "" and all(math.isnan(getattr(back[1], c)) for c in energy)
    assert energy_info(back)["energy"]["counters"] == {"gpu0": "nvml-energy"}
    old = tmp_path / "old.csv"
    header = ",".join(COLUMNS[:at])
    old.write_text(header + "\n" + ",".join(rows[0].to_csv_row()[:at]) + "\n")
    (old_row,), _ = read_sweep_rows(str(old))
    assert old_row.energy_counter == "" and math.isnan(old_row.energy_j_per_msample) and math.isnan(old_row.idle_w)
    assert old_row.point().energy_j_per_msample != old_row.point().energy_j_per_msample  # NaN: not on a curve
    assert energy_info([old_row]) == {}


def test_two_lanes_whose_joules_cover_unlike_things_are_said_to(tmp_path):
    """Issue 34: a CPU lane is charged its whole package (other work's included), a GPU lane its board alone. The
    sweep CSV carries each reading's counter; analyze's words and its JSON say the scope wherever two differ."""
    import dataclasses
    import json

    from crossover_lab.core.analysis.energy import energy_scope
    from crossover_lab.core.words.sweep import energy_lines

    assert energy_scope("rapl-package") == "package" and energy_scope("nvml-power-samples") == "board"
    rows = [SweepRow(p.lane, "", p.width, 0, p.flops_per_batch, 128, p.median_ms, p.p10_ms, p.p90_ms, 200,
                     energy_j_per_msample=p.energy_j_per_msample,
                     energy_counter="rapl-package" if p.lane == "cpu" else "nvml-energy") for p in points()]
    path = tmp_path / "e.csv"
    path.write_text(sweep_rows_text(rows))
    back = [r.point() for r in read_sweep_rows(str(path))[0]]
    assert {p.lane: p.energy_scope for p in back} == {"cpu": "package", "gpu0": "board"}
    lines = energy_lines({"all": back})
    assert lines[0].startswith("gpu0 uses less energy per sample above about 200 units")
    assert lines[1] == ("unlike things: cpu is charged its whole CPU package (every core, other work's included), "
                        "gpu0 its GPU board alone (not the CPU that feeds it); the comparison is of what each counter "
                        "covers, not of the whole machine")
    assert energy_analysis(back).scope == {"cpu": "package", "gpu0": "board"}
    alike = [dataclasses.replace(p, energy_scope="package") for p in back]
    assert len(energy_lines({"all": alike})) == 1  # like things: no caveat
    out = io.StringIO()
    print_groups_analysis({"all": back}, out)
    assert "unlike things: cpu is charged its whole CPU package" in out.getvalue()
    assert json.loads(json.dumps(energy_analysis(back).to_json()))["scope"]["gpu0"] == "board"  # plain data


def test_a_runs_energy_of_a_package_beside_a_board_says_they_are_unlike():
    import dataclasses

    gpu = dataclasses.replace(_measured("gpu0"), energy_counter="nvml-energy", energy_note="")
    lines = energy_lines([_measured("cpu"), gpu])
    assert lines[-1].startswith("unlike things: cpu is charged its whole CPU package") and "gpu0 its GPU board" in lines[-1]
    assert not any(line.startswith("unlike") for line in energy_lines([_measured("cpu"), _measured("cpu1")]))
