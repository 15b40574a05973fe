"""The findings: one answer per pair of lanes and kind of model, from every completed point of every run, pooled where
a width was measured more than once, and judged once (core/files/findings.py)."""
from __future__ import annotations

import math

from helpers import cli_in_process

from crossover_lab.core.analysis.significance import UNMEASURED_FLOOR
from crossover_lab.core.files.findings import Findings, pool
from crossover_lab.core.files.sweeps.rows import SweepRow, sweep_rows_text
from crossover_lab.core.records import Status
from crossover_lab.core.words.sweep import answer_lines, answer_words

WIDTHS = (16, 64, 256, 1024)


def rows(run_id: str, cpu: list[float], cpu1: list[float], batch: int = 128, **kw: object) -> list[SweepRow]:
    return [SweepRow(lane, "CPU", w, 0, 1000 * w, batch, ms, ms * 0.97, ms * 1.03, 100, layers=1, run_id=run_id, **kw)
            for lane, series in (("cpu", cpu), ("cpu1", cpu1)) for w, ms in zip(WIDTHS, series)]


def test_a_width_measured_by_two_runs_is_pooled_with_their_scatter_not_replaced():
    first, second = rows("r1", [1.0] * 4, [2.0, 1.5, 0.8, 0.4]), rows("r2", [1.2] * 4, [2.4, 1.8, 0.96, 0.48])
    findings = Findings(first)
    assert findings.put(second) and not findings.put(second)  # putting the same rows again changes nothing
    pooled = {(r.lane, r.width): r for r in findings.rows()}
    cpu16 = pooled[("cpu", 16)]
    assert cpu16.runs == 2 and cpu16.n_batches == 200 and cpu16.stage == "pooled"
    assert math.isclose(cpu16.median_ms, math.sqrt(1.0 * 1.2))  # the logs' mean, both runs 100 batches
    assert math.isclose(cpu16.between_runs, abs(math.log(1.2)) / math.sqrt(2))
    assert math.isnan(cpu16.p99_ms)  # a tail is not pooled without its batches
    assert cpu16.run_medians == (1.0, 1.2) and pooled[("cpu1", 16)].run_medians == (2.0, 2.4)  # each run's, in order
    (answer,) = findings.answers()
    # The second run was 20% slower on both lanes (the load moved them together): their ratio did not move, so
    # the pair's noise from its four widths measured twice is nil, the floor stands (four repeats are too few to
    # lower it below the unmeasured one; issue 57), and each lane's ±13% does not wipe out the leads.
    noise = answer.verdict.noise
    assert answer.runs == 2 and answer.verdict.runs == 2
    assert noise is not None and noise.repeat_widths == 4 and noise.repeat_dof == 4 and noise.tau == UNMEASURED_FLOOR
    assert noise.dof == max(noise.repeat_dof, noise.prior_dof)
    said = answer_words(answer)
    assert said.startswith("cpu is faster up to 64 units and cpu1 from 1,024 units"), said
    assert answer_lines(findings.answers(), fits=False) == [said]
    # A run dropped (removed from the history) leaves the other's points alone.
    assert findings.drop(["r2"]) and {r.runs for r in findings.rows()} == {1}
    # Where the second run slowed cpu alone, the ratio moved 20% between the runs: that is the pair's noise (beyond
    # the floor, on its own 4 degrees of freedom), and the widths nearest the crossing become a range within it.
    moved = Findings(first)
    moved.put(rows("r2", [1.2] * 4, [2.0, 1.5, 0.8, 0.4]))
    (shaken,) = moved.answers()
    assert shaken.verdict.noise is not None and shaken.verdict.noise.tau > UNMEASURED_FLOOR and not shaken.verdict.noise.floored
    assert shaken.verdict.noise.dof == 4 and shaken.verdict.noise.repeat_widths == 4
    assert [c.width for c in shaken.verdict.changes] == [None], answer_words(shaken)


def test_a_row_that_pools_runs_stands_for_their_rows_in_whatever_order_they_are_read():
    """A refinement measuring a width again writes, each time, a row over every run there (a ramp's lent, then its
    own): read beside the ramp's file, each run counts once, in the latest row that holds it, whichever file comes
    first (the window once said "up to 7 runs per width" where 4 were measured, and analyze of its files said 5)."""
    one = rows("ramp", [1.0] * 4, [2.0] * 4)
    two = rows("r2", [1.02] * 4, [2.04] * 4, runs=2, run_medians_ms="1;1.02", pooled_run_ids="ramp;r2")
    three = rows("r3", [1.01] * 4, [2.02] * 4, runs=3, run_medians_ms="1;1.02;1.01", pooled_run_ids="ramp;r2;r3")
    for order in ((one, two, three), (three, two, one), (two, one, three)):
        findings = Findings([r for part in order for r in part])
        assert {(r.runs, r.run_id) for r in findings.rows()} == {(3, "r3")}, order
        (answer,) = findings.answers()
        assert answer.verdict.runs == 3
    # And a sweep's row of its own beside them pools with it, four runs in all.
    findings = Findings([r for part in (one, two, three, rows("sweep", [1.0] * 4, [2.0] * 4)) for r in part])
    assert {r.runs for r in findings.rows()} == {4}
    assert {r.pooled_runs for r in findings.rows()} == {frozenset({"ramp", "r2", "r3", "sweep"})}


def test_a_runs_row_replaces_its_own_earlier_row_and_only_completed_rows_count():
    findings = Findings(rows("r1", [1.0] * 4, [2.0] * 4))
    findings.put(rows("r1", [1.0] * 4, [0.5] * 4))  # the same run's point firmed up
    assert {r.median_ms for r in findings.rows() if r.lane == "cpu1"} == {0.5} and {r.runs for r in findings.rows()} == {1}
    cut = [SweepRow("cpu", "CPU", 4096, 0, 4096000, 128, 9.0, 8.0, 10.0, 3, layers=1, run_id="r3",
                    status=Status.CANCELLED)]
    assert not findings.put(cut)  # cut short: shown where it is, never part of an answer


def test_answers_about_a_kind_of_model_cover_every_width_of_that_kind():
    """The Sweep tab shows a sweep of two widths; its answer is the findings' over every width of that kind (the
    ramp's too), and another batch size is another answer."""
    findings = Findings(rows("ramp", [1.0] * 4, [2.0, 1.5, 0.8, 0.4]) + rows("other", [1.0] * 4, [0.5] * 4, batch=32))
    sweep = [r for r in rows("sweep", [1.0] * 4, [2.0, 1.5, 0.8, 0.4]) if r.width in (64, 256)]
    findings.put(sweep)
    about = findings.answers_about(sweep)
    assert len(about) == 1 and about[0].batch_size == 128 and about[0].verdict.widths == WIDTHS
    assert len(findings.answers()) == 2


def test_analyze_of_several_files_pools_them_as_the_window_does(tmp_path, capsys):
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text(sweep_rows_text(rows("r1", [1.0] * 4, [2.0, 1.5, 0.8, 0.4])))
    second.write_text(sweep_rows_text(rows("r2", [1.2] * 4, [2.4, 1.8, 0.96, 0.48])))
    # Two files of one machine (named so here; an export's sidecar names its machine): one set of lanes.
    out = cli_in_process(capsys, "analyze", str(first), str(second), "--label", "first.csv=lab",
                         "--label", "second.csv=lab")
    assert out.returncode == 0, out.stderr
    findings = Findings([*rows("r1", [1.0] * 4, [2.0, 1.5, 0.8, 0.4]), *rows("r2", [1.2] * 4, [2.4, 1.8, 0.96, 0.48])])
    assert answer_words(findings.answers()[0]) + "." in out.stdout.splitlines(), out.stdout


def test_pooling_withholds_energy_unless_every_run_measured_it_with_one_counter():
    a = SweepRow("cpu", "CPU", 16, 0, 16000, 128, 1.0, 0.9, 1.1, 100, run_id="a", energy_j_per_msample=10.0,
                 energy_counter="rapl")
    b = SweepRow("cpu", "CPU", 16, 0, 16000, 128, 1.0, 0.9, 1.1, 300, run_id="b", energy_j_per_msample=20.0,
                 energy_counter="rapl")
    assert pool([a, b]).energy_j_per_msample == 17.5
    assert math.isnan(pool([a, SweepRow("cpu", "CPU", 16, 0, 16000, 128, 1.0, 0.9, 1.1, 100, run_id="c")])
                      .energy_j_per_msample)


def test_a_recheck_pooled_with_its_first_pass_is_kept_whichever_row_is_read_first():
    """Issue 57 #8: a sweep's recheck pools its point's first pass under the same run id; read before that first pass
    (files and views do not promise an order), the pooled row used to be replaced by the first pass's 60 batches."""
    def row(lane: str, ms: float, n: int, runs: int = 1, medians: str = "") -> SweepRow:
        return SweepRow(lane, "CPU", 64, 0, 64_000, 128, ms, ms * 0.97, ms * 1.03, n, layers=1, run_id="r1",
                        runs=runs, run_medians_ms=medians)

    first = [row("cpu", 1.0, 60), row("cpu1", 2.0, 60)]
    pooled = [row("cpu", 1.1, 120, 2, "1.0;1.2"), row("cpu1", 2.1, 120, 2, "2.0;2.2")]
    for order in ((first, pooled), (pooled, first)):
        findings = Findings()
        for rows_ in order:
            findings.put(rows_)
        assert sorted((r.lane, r.runs, r.n_batches) for r in findings.rows()) == [("cpu", 2, 120), ("cpu1", 2, 120)]
