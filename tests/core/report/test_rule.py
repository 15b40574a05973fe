"""The decision rule: made by the one crossing rule, so it agrees with `analyze` on the same file; outside the
measured range, and where the lanes are too close to call, it answers None with the reason."""
from __future__ import annotations

import json

from helpers import H200_SWEEP_CSV, cli, cli_in_process

from crossover_lab.core.analysis.crossings import analyze_groups
from crossover_lab.core.files.sweeps.rows import SweepRow, group_rows, sweep_rows_text
from crossover_lab.core.files.sweeps.files import iter_sweep_rows
from crossover_lab.core.report.rule import choose, decide, load_rule, make_rule


def flops_at(width: int) -> float:
    points = next(iter(group_rows(iter_sweep_rows(str(H200_SWEEP_CSV))).values()))
    return next(p.flops_per_batch for p in points if p.width == width)


def test_choose_agrees_with_analyze_on_the_h200_sweep(tmp_path, capsys):
    """One run per width: `analyze` says jax:cpu leads up to 32 units and jax:gpu0 from 512, equal within noise
    between; the rule chooses each where it leads and no lane between, with that reason."""
    analysis = analyze_groups(group_rows(iter_sweep_rows(str(H200_SWEEP_CSV))))
    assert analysis.crossovers == ()  # a tie between the two leads: no crossing width is made up
    out = cli_in_process(capsys, "rule", str(H200_SWEEP_CSV), "--json", str(tmp_path / "rule.json"))
    assert out.returncode == 0, out.stderr
    rule = json.loads((tmp_path / "rule.json").read_text())
    assert choose(rule, flops_at(16)) == choose(rule, flops_at(32)) == "jax:cpu"
    assert choose(rule, flops_at(512)) == choose(str(tmp_path / "rule.json"), flops_at(8192)) == "jax:gpu0"
    between = decide(rule, flops_at(128))
    assert between.lane is None and "too close to call" in between.reason
    (line,) = [l for l in out.stdout.splitlines() if l.startswith("2 hidden layers · batch 128: ")]
    assert ": use jax:cpu;" in line and ": use jax:gpu0;" in line
    analyze = cli_in_process(capsys, "analyze", str(H200_SWEEP_CSV))  # a process of its own: its printing binds its own stdout
    kind = load_rule(rule).kinds[0]
    assert kind.pairs[0].verdict + "." in analyze.stdout  # the verdict in the rule is analyze's sentence
    assert kind.pairs[0].fits["jax:gpu0"].gflops == analysis.lanes["jax:gpu0"].gflops
    # Typed inside (issue 59): the pair's changes and fits are types of their own, written by their own to_json and
    # read back to the same values; the file keeps the keys it always had.
    pair = kind.pairs[0]
    (change,) = pair.changes
    assert (change.faster_below, change.faster_above, change.width) == ("jax:cpu", "jax:gpu0", None)
    assert change.flops_lo == flops_at(32) and change.flops_hi == flops_at(512)
    written = rule["kinds"][0]["pairs"][0]
    assert set(written["changes"][0]) == {"faster_below", "faster_above", "width", "width_lo", "width_hi",
                                          "flops_per_batch", "flops_lo", "flops_hi"}
    assert set(written["fits"]["jax:cpu"]) == {"overhead_ms", "gflops", "n_points", "residuals", "fit_ok"}
    from crossover_lab.core.report.rule import PairRule
    assert PairRule.from_json(json.loads(json.dumps(pair.to_json()))) == pair


def test_outside_the_measured_range_it_says_so_rather_than_extrapolate():
    rule = make_rule([str(H200_SWEEP_CSV)])
    low, high = decide(rule, 1e3), decide(rule, 1e15)
    assert low.lane is None and high.lane is None
    assert "outside the measured range" in low.reason and "does not extrapolate" in high.reason
    assert choose(rule, float("nan")) is None
    assert decide(rule, 1e9, batch_size=32).lane is None and "no kind" in decide(rule, 1e9, batch_size=32).reason


def test_a_range_too_close_to_call_answers_none_with_that_reason(tmp_path):
    widths = [16, 64, 256, 1024]
    rows = [SweepRow(lane, "CPU", w, 0, 1000 * w, 64, ms, ms * 0.8, ms * 1.2, 50, layers=1)
            for lane, series in (("cpu", [1.0, 1.0, 1.0, 3.0]), ("cpu1", [1.01, 1.0, 1.0, 1.0]))
            for w, ms in zip(widths, series)]
    path = tmp_path / "tie.csv"
    path.write_text(sweep_rows_text(rows))
    rule = make_rule([str(path)])
    tie = decide(rule, 64_000)
    assert tie.lane is None and "too close to call" in tie.reason and "a difference of up to" in tie.reason
    assert choose(rule, 1_024_000) == "cpu1"  # measured faster at the last width
    gap = decide(rule, 500_000)
    assert gap.lane is None and "not measured between 256 and 1,024 units" in gap.reason


def test_several_machines_make_one_rule_of_several_kinds(tmp_path):
    paths = []
    for name, batch, gpu_ms in (("laptop", 32, 2.0), ("lab", 128, 1.5)):
        widths = [16, 64, 256, 1024, 4096]
        rows = [SweepRow(lane, lane.upper(), w, 0, 2000 * w * batch, batch, ms, ms * 0.97, ms * 1.03, 100, layers=2)
                for lane, series in (("cpu", [0.3, 0.5, 2.0, 8.0, 30.0]), ("gpu0", [gpu_ms] * 5))
                for w, ms in zip(widths, series)]
        path = tmp_path / f"{name}.csv"
        path.write_text(sweep_rows_text(rows))
        (tmp_path / f"{name}-batches.json").write_text(json.dumps({"host": {"machine": name}}))
        paths.append(str(path))
    rule = make_rule(paths)
    assert rule.machines == {"laptop": "laptop", "lab": "lab"}
    assert [k.batch_size for k in rule.kinds] == [32, 128]
    assert choose(rule, 4096 * 2000 * 32, batch_size=32) == "laptop/gpu0"
    assert choose(rule, 16 * 2000 * 128, batch_size=128) == "lab/cpu"
    assert choose(rule, 1e9) is None  # two kinds: the caller names one
    assert {f["name"] for f in rule.files} == {"laptop.csv", "laptop-batches.json", "lab.csv", "lab-batches.json"}
