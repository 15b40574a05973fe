"""Sweeps: points, presets, compare knobs, cancellation, and the sweep CSV."""
from __future__ import annotations

import dataclasses
import math
import re
import statistics
import threading

import pytest

from crossover_lab.core.analysis.crossings import find_crossovers
from crossover_lab.core.config import ConfigError, LaneSpec, ModelSpec, RunConfig, TrainSpec
from crossover_lab.core.presets import PRESETS, SWEEP_PRESETS
from crossover_lab.core.results import LaneResult
from crossover_lab.core.files.atomic import atomic_write_text
from crossover_lab.core.study.sweep import SweepSpec, log_widths, run_sweeps, with_knob
from crossover_lab.core.files.sweeps.files import read_sweep_rows
from crossover_lab.core.files.sweeps.rows import SweepRow, group_rows, sweep_rows_text

BASE = RunConfig(ModelSpec((8,)), TrainSpec(batch_size=32, samples=1000, data="synthetic"))


def test_presets_are_the_seeds_models():
    qa = PRESETS["qa"].config
    assert qa.model.layer_sizes == (784, 750, 150, 50, 50, 10)
    assert (qa.train.optimizer, qa.train.batch_size, qa.train.preprocessing, qa.model.dropout) == ("nadam", 128, "l2", 0.2)
    small, wide = PRESETS["blog-small"].config, PRESETS["blog-wide"].config
    assert small.model.layer_sizes == (784, 128, 10) and wide.model.layer_sizes == (784, 1000, 1000, 10)
    for cfg in (small, wide):
        assert (cfg.train.optimizer, cfg.train.batch_size, cfg.train.preprocessing) == ("adam", 32, "scale")
    assert PRESETS["qa-100"].config.model.widths == (100,)
    blog = SWEEP_PRESETS["blog"]
    layers, widths, base = blog.layers, blog.widths, blog.base
    assert base == small
    assert 128 in widths and 1000 in widths and layers == 2


def test_log_widths():
    assert log_widths(16, 4096, 5) == (16, 64, 256, 1024, 4096)
    assert log_widths(16, 4096, 6) == (16, 50, 150, 400, 1500, 4096)  # the window's default: round widths
    with pytest.raises(ConfigError):
        log_widths(100, 10, 3)


def test_points_set_width_layers_and_budget():
    spec = SweepSpec(widths=(16, 64), layers=3, batch_sizes=(32, 256), base=BASE, steady_steps=10, seconds_per_point=2)
    points = spec.points()
    assert [(p.model.widths, p.train.batch_size) for p in points] == [
        ((16, 16, 16), 32), ((64, 64, 64), 32), ((16, 16, 16), 256), ((64, 64, 64), 256)]
    assert all(p.train.max_steps == 5 + 10 and p.train.max_seconds == 2 for p in points)


def test_compare_knobs():
    spec = SweepSpec(widths=(16,), base=BASE)
    jit = with_knob(spec, "jit=on")
    assert jit.base.train.jit is True and jit.variant == "jit=on"
    assert with_knob(spec, "batch-size=512").points()[0].train.batch_size == 512
    with pytest.raises(ConfigError, match="KNOB=VALUE"):
        with_knob(spec, "colour=red")
    with pytest.raises(ConfigError, match="not a value for jit"):
        with_knob(spec, "jit=maybe")
    with pytest.raises(ConfigError, match="feeding 'disk'"):
        with_knob(spec, "feeding=disk")


def how_the_point_ended(lane: LaneResult, steady_steps: int, seconds: float) -> str:
    """Which limit ended a lane's run of a sweep point, "steps" or "time", read from its records by the lane's own rule
    (core/lane/timing.py): after each step it stops once its steady steps reach `steady_steps` or their time reaches
    `seconds`. Fails where the run went on past a limit or ended before either. The run says "completed" both ways
    and records no more, so a test of realness asks this of the records, and asserts that one of them ended it."""
    assert lane.records, lane.failure
    steps, steady_s, ended = 0, 0.0, ""
    for record in lane.records:
        assert not ended, f"{lane.lane} went on past its {ended} limit to step {record.step}"
        if record.warmup:
            continue
        steps += max(record.batches, 1)
        steady_s += record.ms / 1000.0  # the lane sums the same steady steps' seconds
        if steps >= steady_steps:
            ended = "steps"
        elif steady_s >= seconds * (1 - 1e-9):  # (the lane's sum and this one may differ in the last digit)
            ended = "time"
    assert ended, f"{lane.lane} stopped after {steps} steady steps in {steady_s:.3f} s: neither limit"
    return ended


@pytest.mark.lanes
def test_sweep_end_to_end_and_csv_round_trip(tmp_path, pool):
    seen = []
    # 8 against 2,048 units: 256 times the FLOPs, so the bigger model is slower beyond this machine's noise (256
    # units at batch 32 is within the fixed cost: it measured 2.42 ms against 2.44 ms at 8 units once).
    spec = SweepSpec(widths=(8, 2048), layers=1, base=BASE, steady_steps=8, seconds_per_point=1.0)
    (result,) = run_sweeps(pool, [LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")], [spec],
                           on_point=lambda point: seen.append((point.done, point.total)))
    assert seen == [(2, 6), (4, 6), (6, 6)]  # one report per point, counting lane-points, and the one measured again
    # The lanes take turns in alternating order from point to point (a drifting load falls on both alike).
    assert [(r.lane, r.width) for r in result.rows] == [("cpu", 8), ("cpu1", 8), ("cpu1", 2048), ("cpu", 2048)]
    again = {r.width for r in result.rows if r.runs == 2}
    assert len(again) == 1 and len(result.runs) == 3  # one point's rows hold its two runs
    runs = {run.run_id: run for run in result.runs}
    for row in result.rows:
        assert row.status == "completed"
        # Each run of the point ended at its 8 steady batches or at its second, whichever came first: which one is the
        # machine's speed and load to say (a lane at 2,048 units made 6 in its second on a loaded CI), never a test's.
        pooled = [runs[run_id].lanes[row.lane] for run_id in sorted({row.run_id} | row.pooled_runs)]
        assert len(pooled) == row.runs
        steady = [sum(max(r.batches, 1) for r in lane.records if not r.warmup) for lane in pooled]
        for lane, n in zip(pooled, steady):
            ended = how_the_point_ended(lane, spec.steady_steps, spec.seconds_per_point)
            assert (n == spec.steady_steps) if ended == "steps" else (1 <= n < spec.steady_steps), (row.width, ended, n)
        assert row.n_batches == sum(steady) and 0 < row.p10_ms <= row.median_ms <= row.p90_ms
        assert math.isfinite(row.between_runs) == (row.runs == 2)
        assert row.flops_per_batch == ModelSpec((row.width,)).flops_per_batch(32)
        assert row.peak_gflops > 0 and 0 < row.peak_share < 1.5
        assert row.jit is False and row.steps_per_execution == 1  # typed from the lane's settings
    # Bigger model, more time per batch, on each lane.
    by = {(r.lane, r.width): r.median_ms for r in result.rows}
    assert by[("cpu", 2048)] > by[("cpu", 8)] and by[("cpu1", 2048)] > by[("cpu1", 8)]
    path = tmp_path / "sweep.csv"
    atomic_write_text(path, sweep_rows_text(result.rows))
    back, reading = read_sweep_rows(str(path))
    assert not reading.dropped
    assert [(r.lane, r.width, r.jit, r.status) for r in back] == [(r.lane, r.width, r.jit, r.status)
                                                                  for r in result.rows]
    assert [r.median_ms for r in back] == pytest.approx([r.median_ms for r in result.rows], rel=1e-5)
    find_crossovers([r.point() for r in back])  # analysable as written


def test_cancelled_sweep_keeps_finished_points(scripted_pool):
    pool = scripted_pool
    cancel = threading.Event()

    def on_point(point):
        if point.done == 2:
            cancel.set()

    spec = SweepSpec(widths=(8, 16, 32, 64), layers=1, base=BASE, steady_steps=5, seconds_per_point=0.5,
                     calibrate=False)
    (result,) = run_sweeps(pool, [LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")], [spec], on_point=on_point,
                           cancel=cancel)
    assert result.cancelled
    assert [(r.lane, r.width) for r in result.rows] == [("cpu", 8), ("cpu1", 8)]
    assert all(r.status == "completed" and not math.isnan(r.median_ms) for r in result.rows)


def _row(lane, width, batch, ms, variant="base", status="completed"):
    return SweepRow(lane=lane, device="", width=width, params=0, flops_per_batch=width * batch * 10_000, batch_size=batch,
                    median_ms=ms, p10_ms=math.nan, p90_ms=math.nan, n_batches=10, variant=variant, status=status)


def test_points_group_by_variant_and_batch_size():
    rows = [_row(l, w, b, ms, v) for v in ("base", "jit=on") for b in (32, 512)
            for l, w, ms in (("cpu", 16, 1.0), ("cpu", 256, 4.0), ("gpu0", 16, 2.0), ("gpu0", 256, 2.5))]
    rows.append(_row("cpu", 999, 32, 1.0, status="failed"))
    groups = group_rows(rows)
    assert list(groups) == ["base · batch 32", "base · batch 512", "jit=on · batch 32", "jit=on · batch 512"]
    assert all(sorted((p.lane, p.width) for p in pts) == [("cpu", 16), ("cpu", 256), ("gpu0", 16), ("gpu0", 256)]
               for pts in groups.values())
    assert list(group_rows(rows[:4])) == ["all"]
    # Each group crosses on its own; mixing them would let batch 512 overwrite batch 32.
    assert all(len(find_crossovers(pts)) == 1 for pts in groups.values())


def test_the_progress_counts_every_point_even_one_cut_short(monkeypatch):
    """The time left is elapsed / done × (total − done): a point that gave no rows (a lane failed or was cut
    short) is still a point done, over a sweep and over the whole knob ladder."""
    from helpers import two_lane_result
    from crossover_lab.core.study import ladder, sweep

    def fake_point(pool, lanes, config, result, on_event, cancel):
        width = config.model.widths[0]
        run = two_lane_result(f"r{width}", width, 1.0, 2.0)
        rows = [] if width == 64 else [SweepRow.from_result(run, lane) for lane in ("cpu", "gpu0")]
        return run, rows

    class Pool:
        def ready(self, lanes, cancel, data_of=None):
            pass

    monkeypatch.setattr(sweep, "measure_point", fake_point)
    lanes = [LaneSpec.parse("cpu"), LaneSpec.parse("gpu0")]
    spec = SweepSpec(widths=(16, 64, 256), layers=1, base=BASE, calibrate=False)
    seen = []
    run_sweeps(Pool(), lanes, [spec], on_point=seen.append)
    # Three points and the one measured again for the run-to-run noise: four lane-points per lane.
    assert [(p.done, p.total, p.again) for p in seen] == [(2, 8, False), (4, 8, False), (6, 8, False), (8, 8, True)]
    seen.clear()
    run_sweeps(Pool(), lanes, [dataclasses.replace(spec, recheck=False)], on_point=seen.append)
    assert [(p.done, p.total) for p in seen] == [(2, 6), (4, 6), (6, 6)]
    once = dataclasses.replace(spec, recheck=False)  # as the ladder's settings are: each of its points once
    assert not any(k.spec.recheck for k in ladder.ladder_settings(spec, lanes))
    settings = [ladder.KnobSetting("base", once, tuple(lanes)), ladder.KnobSetting("jit=on", once, tuple(lanes))]
    seen.clear()
    ladder.run_ladder(Pool(), settings, on_point=seen.append)
    assert [(p.done, p.total) for p in seen] == [(2, 12), (4, 12), (6, 12), (8, 12), (10, 12), (12, 12)]


class _Timings:
    """A fake measure_point: each call a run of its own (run ids r1, r2, …) at the ms per batch `ms(lane, width,
    call)` gives, every lane completed unless `fail` names the call and lane."""

    def __init__(self, ms, fail=()):
        self.ms, self.fail, self.calls = ms, set(fail), []

    def __call__(self, pool, lanes, config, result, on_event, cancel):
        from helpers import two_lane_result
        from crossover_lab.core.files.sweeps.rows import SweepRow
        width, n = config.model.widths[0], len(self.calls) + 1
        self.calls.append(width)
        run = two_lane_result(f"r{n}", width, self.ms("cpu", width, n), self.ms("gpu0", width, n), config=config)
        result.runs.append(run)
        rows = [SweepRow.from_result(run, lane) for lane in ("cpu", "gpu0") if (n, lane) not in self.fail]
        return run, rows


class _Ready:
    def ready(self, lanes, cancel, data_of=None):
        pass


LANES = [LaneSpec.parse("cpu"), LaneSpec.parse("gpu0")]


def _claim(sentence: str) -> str:
    """A verdict sentence without its closing bracket (what it rests on and the error rate it carries)."""
    return re.split(r" \((?:one run|up to \d+ runs) per width;", sentence, maxsplit=1)[0]


def _sweep_twice_at_the_middle(monkeypatch, ms):
    from crossover_lab.core.study import sweep
    timings = _Timings(ms)
    monkeypatch.setattr(sweep, "measure_point", timings)
    spec = SweepSpec(widths=(16, 256, 4096), layers=1, base=BASE, calibrate=False)
    seen = []
    (result,) = run_sweeps(_Ready(), LANES, [spec], on_point=seen.append)
    return timings, result, seen


def test_a_sweep_measures_its_middle_point_again_and_its_rows_pool_both_runs(monkeypatch):
    """The middle point of three (256, chosen by place, not by how close its lanes lay) is measured a second time;
    each lane's row there then holds both runs' batches, keeps the first run's id, says 2 runs, how far their
    medians lie apart and each run's median; and the one rule reads the pair's run-to-run noise from them: a lead
    that one run called is noise once the runs' ratios disagree by more."""
    from crossover_lab.core.words.sweep import describe_pair
    cpu = {16: 1.0, 256: 1.6, 4096: 8.0}
    gpu = {16: 3.0, 256: 2.0, 4096: 2.5}
    # The second run at 256 finds cpu 25% slower and gpu0 as before: the pair's ratio moved by 25% between runs.
    timings, result, seen = _sweep_twice_at_the_middle(
        monkeypatch, lambda lane, w, n: (cpu if lane == "cpu" else gpu)[w] * (1.25 if n == 4 and lane == "cpu" else 1))
    assert timings.calls == [16, 256, 4096, 256]
    assert len(result.runs) == 4 and not result.cancelled
    # One row per lane and point, as before; the point measured again holds both runs.
    assert [(r.lane, r.width, r.runs) for r in result.rows] == [
        ("cpu", 16, 1), ("gpu0", 16, 1), ("cpu", 256, 2), ("gpu0", 256, 2), ("cpu", 4096, 1), ("gpu0", 4096, 1)]
    again = {r.lane: r for r in seen[-1].rows}
    assert seen[-1].again and set(again) == {"cpu", "gpu0"}
    for lane, first, slower in (("cpu", 1.6, 1.25), ("gpu0", 2.0, 1.0)):
        row = again[lane]
        # The first run's id: the row holds that run's batches, and a reader of rows by run takes it in its place.
        assert row.runs == 2 and row.run_id == "r2" and row.n_batches == 2 * result.rows[0].n_batches
        one, two = (summarize_ms(result.runs[i], lane) for i in (1, 3))
        assert two / one == pytest.approx(slower, rel=0.02) and one == pytest.approx(first, rel=0.05)
        assert row.between_runs == pytest.approx(statistics.stdev([math.log(one), math.log(two)]))
        assert row.run_medians == pytest.approx((one, two), rel=1e-5)  # each run's own, in the order measured
        assert one <= row.median_ms <= two
    # The rule reads the scatter from the rows: the same medians measured once say more than they may.
    points = [r.point() for r in result.rows]
    said = describe_pair(points, "cpu", "gpu0")
    once = describe_pair([dataclasses.replace(r, runs=1, between_runs=math.nan, run_medians_ms="").point()
                          for r in result.rows], "cpu", "gpu0")
    assert _claim(once) == "cpu is faster up to 16 units and gpu0 from 4,096 units; between, the noise cannot tell them apart"
    assert "(one run per width;" in once and "(up to 2 runs per width;" in said
    assert said.startswith("no answer for cpu and gpu0 on this machine: gpu0 looked 3.2x faster at 4,096 units, but "
                           "one run's ratio of the two is uncertain by ±17%"), said


def test_a_load_both_lanes_met_between_runs_is_no_noise_of_their_ratio(monkeypatch):
    """Both lanes 25% slower in the second run of 256 (the machine was busier for both): each lane's medians scatter,
    but the pair's ratio did not move, and that ratio is what the rule judges: the answer is at least as firm as one
    run gave it (the width measured twice with its ratio unmoved is firmer: gpu0's 1.45x there becomes a lead)."""
    from crossover_lab.core.words.sweep import describe_pair
    cpu = {16: 1.0, 256: 1.6, 4096: 8.0}
    gpu = {16: 3.0, 256: 1.1, 4096: 2.5}
    timings, result, _seen = _sweep_twice_at_the_middle(
        monkeypatch, lambda lane, w, n: (cpu if lane == "cpu" else gpu)[w] * (1.25 if n == 4 else 1.0))
    assert timings.calls == [16, 256, 4096, 256]
    pooled = [r for r in result.rows if r.runs == 2]
    assert [r.width for r in pooled] == [256, 256] and all(r.between_runs > 0.15 for r in pooled)
    said = describe_pair([r.point() for r in result.rows], "cpu", "gpu0")
    once = describe_pair([dataclasses.replace(r, runs=1, between_runs=math.nan, run_medians_ms="").point()
                          for r in result.rows], "cpu", "gpu0")
    assert said.startswith("gpu0 is faster above about 130 units"), said
    assert "cpu below" in said and once.startswith("cpu is faster up to 16 units and gpu0 from 4,096 units"), once


def summarize_ms(run, lane):
    from crossover_lab.core.run_stats import summarize
    records = [r for r in run.lanes[lane].records if not r.warmup]
    return summarize(records, run_id="", lane=lane, device="", status="completed", flops_per_batch=1,
                     wall_s=0.0).median_ms


def test_a_point_measured_again_that_fails_on_a_lane_keeps_that_lanes_first_row(monkeypatch):
    from crossover_lab.core.study import sweep
    timings = _Timings(lambda lane, w, n: w / (8 if lane == "gpu0" else 16) + 1, fail={(3, "gpu0")})
    monkeypatch.setattr(sweep, "measure_point", timings)
    spec = SweepSpec(widths=(16, 4096), layers=1, base=BASE, calibrate=False)
    seen = []
    (result,) = run_sweeps(_Ready(), LANES, [spec], on_point=seen.append)
    assert timings.calls == [16, 4096, 16]  # the middle of two points, by place: round(0.5) is the first
    assert [(r.lane, r.width, r.runs) for r in result.rows] == [
        ("cpu", 16, 2), ("gpu0", 16, 1), ("cpu", 4096, 1), ("gpu0", 4096, 1)]
    assert [r.lane for r in seen[-1].rows] == ["cpu"]


def test_no_point_is_measured_again_with_one_lane_one_point_when_asked_not_to_or_once_stopped(monkeypatch):
    from crossover_lab.core.study import sweep
    two = SweepSpec(widths=(16, 4096), layers=1, base=BASE, calibrate=False)
    for lanes, spec, calls in ((LANES[:1], two, [16, 4096]),
                               (LANES, dataclasses.replace(two, widths=(16,)), [16]),
                               (LANES, dataclasses.replace(two, recheck=False), [16, 4096])):
        timings = _Timings(lambda lane, w, n: 1.0)
        monkeypatch.setattr(sweep, "measure_point", timings)
        run_sweeps(_Ready(), lanes, [spec])
        assert timings.calls == calls
    cancel = threading.Event()
    timings = _Timings(lambda lane, w, n: 1.0)
    monkeypatch.setattr(sweep, "measure_point", timings)
    (result,) = run_sweeps(_Ready(), LANES, [two], on_point=lambda p: cancel.set() if p.done == 4 else None,
                           cancel=cancel)
    assert timings.calls == [16, 4096] and result.cancelled and all(r.runs == 1 for r in result.rows)


def test_the_command_line_measures_points_again_unless_told_not_to():
    from crossover_lab.core.cli.main import build_parser
    from crossover_lab.core.cli.sweep import sweep_spec
    from crossover_lab.core.files.sweeps.files import sweep_info
    parser = build_parser()
    asked = sweep_spec(parser.parse_args(["sweep", "--widths", "16,256"]))
    once = sweep_spec(parser.parse_args(["sweep", "--widths", "16,256", "--no-recheck"]))
    assert asked.recheck and not once.recheck
    assert sweep_info([asked])["recheck"] is True and sweep_info([once])["recheck"] is False  # the sidecar says it


def test_a_row_pooled_over_two_runs_recomputes_its_tail_and_its_energy_from_both():
    """Pooled means pooled: a point measured twice gets the p99 of both runs' calls together (5% slow calls in the
    first, none in the second: 2.5% slow over both, so the pooled p99 is a slow call, where the second run's own p99
    is a fast one), and joules over both runs' steady stretches, not the second run's."""
    from crossover_lab.core.records import BatchTiming, RunSummary
    from crossover_lab.core.study.sweep import with_batches

    def run(run_id, slow):
        return [BatchTiming(run_id, "cpu", "CPU", 1, i + 1, i + 1, i / 1000, 50.0 if i < slow else 1.0, 8, False,
                            math.nan, task="predict") for i in range(700)]

    first, second = run("a", 35), run("b", 0)
    row = _row("cpu", 64, 8, 1.0)
    energy = [RunSummary("a", "cpu", "CPU", "completed", energy_j=70.0, energy_steps=700, energy_samples=5600,
                         energy_s=7.0, energy_counter="rapl-package"),
              RunSummary("b", "cpu", "CPU", "completed", energy_j=14.0, energy_steps=700, energy_samples=5600,
                         energy_s=1.4, energy_counter="rapl-package")]
    alone = with_batches(row, second, energy[1:])
    pooled = with_batches(row, first + second, energy)
    assert alone.p99_ms == 1.0 and pooled.p99_ms == 50.0 and pooled.n_batches == 1400 and pooled.runs == 2
    assert pooled.energy_j_per_msample == pytest.approx(1e6 * 84.0 / 11200)
    assert pooled.mean_w == pytest.approx(84.0 / 8.4)
    # The second run's 1.4 s alone is too short a window to give joules; pooled with the first, it counts.
    assert math.isnan(alone.energy_j_per_msample)
    # A run without a reading leaves the pooled energy unknown, never one run's figure for both.
    unknown = with_batches(row, first + second, [energy[0], RunSummary("b", "cpu", "CPU", "completed")])
    assert math.isnan(unknown.energy_j_per_msample) and unknown.energy_counter == ""
    # Too few calls for a p99 (the tail rule, core/analysis/tails.py): none is given.
    assert math.isnan(with_batches(row, second[:600]).p99_ms)


def test_a_sweep_of_six_points_measures_two_points_again_so_the_ratio_noise_rests_on_two_widths(monkeypatch):
    """One width measured twice is one degree of freedom: a load that changed once between its runs would be all
    the pair's ratio noise knew (issue 36). A sweep of six points or more measures two points again, a third and two
    thirds of the way along it (64 and 128 here), wherever its lanes lay closest (256)."""
    from crossover_lab.core.analysis.significance import PRIOR_NOISE
    from crossover_lab.core.files.findings import Findings
    from crossover_lab.core.study import sweep
    cpu = {16: 1.0, 32: 1.1, 64: 1.3, 128: 1.8, 256: 3.0, 512: 6.0}
    gpu = {16: 3.0, 32: 3.0, 64: 3.0, 128: 3.1, 256: 3.2, 512: 3.4}
    timings = _Timings(lambda lane, w, n: (cpu if lane == "cpu" else gpu)[w] * (1.1 if n > 6 and lane == "cpu" else 1))
    monkeypatch.setattr(sweep, "measure_point", timings)
    spec = SweepSpec(widths=tuple(cpu), layers=1, base=BASE, calibrate=False)
    seen = []
    run_sweeps(_Ready(), LANES, [spec], on_point=seen.append)
    assert timings.calls == [16, 32, 64, 128, 256, 512, 64, 128]
    assert sweep.rechecks(spec, LANES) == 2 and sweep.rechecks(dataclasses.replace(spec, widths=(16, 32)), LANES) == 1
    (answer,) = Findings(row for point in seen for row in point.rows).answers()  # as the window gathers them
    noise = answer.verdict.noise
    assert answer.verdict.widths == tuple(cpu) and answer.verdict.runs == 2  # each width once, 64 and 128 pooled
    assert (noise.repeat_widths, noise.repeat_dof) == (2, 2.0)
    # cpu's ratio moved by 10% between the runs at both widths: more than the 5% floor, and the data's figure stands.
    assert noise.tau > PRIOR_NOISE


def _point(width, medians, done=("cpu", "gpu0")):
    """A measured point as run_sweeps keeps it: its config, its run, and a completed row per lane in `done`."""
    from helpers import two_lane_result
    config = dataclasses.replace(BASE, model=ModelSpec((width,)))
    run = two_lane_result(f"r{width}", width, *medians, config=config)
    return config, run, [SweepRow.from_result(run, lane) for lane in done]


def test_the_points_measured_again_are_chosen_by_place_never_by_the_first_runs_ratio():
    """The rechecks lie evenly along the sweep (the middle one for one, a third and two thirds of the way for two),
    among the points every lane completed, whatever the first run measured: picking where the lanes lay closest
    would pick small first differences, and the two runs' scatter would understate the noise."""
    from crossover_lab.core.study.sweep import to_recheck
    lanes = ["cpu", "gpu0"]
    # The lanes lie closest at 16 (1.0 against 1.01 ms) and farthest at 256: the choice is the same either way.
    close_first = [_point(w, (1.0, 1.0 + w / 1600)) for w in (16, 32, 64, 128, 256)]
    close_last = [_point(w, (1.0, 1.0 + 16 / w)) for w in (16, 32, 64, 128, 256)]
    for points in (close_first, close_last):
        assert [p[0].model.widths[0] for p in to_recheck(points, lanes, 1)] == [64]
        assert [p[0].model.widths[0] for p in to_recheck(points, lanes, 2)] == [32, 128]  # 4/3 and 8/3 of 4 rounded
    six = [_point(w, (1.0, 2.0)) for w in (16, 32, 64, 128, 256, 512)]
    assert [p[0].model.widths[0] for p in to_recheck(six, lanes, 2)] == [64, 128]
    # A point a lane did not complete is not one to measure again: the places are counted among the others.
    gapped = [_point(16, (1.0, 2.0)), _point(32, (1.0, 2.0), done=("cpu",)), _point(64, (1.0, 2.0)),
              _point(128, (1.0, 2.0))]
    assert [p[0].model.widths[0] for p in to_recheck(gapped, lanes, 1)] == [64]
    assert to_recheck(close_first, lanes, 0) == [] and to_recheck(close_first, lanes[:1], 1) == []
    assert to_recheck([], lanes, 1) == []
    assert [p[0].model.widths[0] for p in to_recheck(close_first[:1], lanes, 2)] == [16]  # one point: once


def test_lanes_take_their_turns_in_alternating_order_and_a_recheck_reverses_its_points_order(monkeypatch):
    """A load that drifts over the sweep falls on each lane alike: the lanes go first in turn, point by point, and a
    point measured again is measured in the reverse of its first run's order."""
    from crossover_lab.core.study import sweep
    from crossover_lab.core.study.sweep import turn_order
    three = [LaneSpec.parse("cpu"), LaneSpec.parse("cpu1"), LaneSpec.parse("gpu0")]
    assert [[lane.name for lane in turn_order(three, i)] for i in range(3)] == [
        ["cpu", "cpu1", "gpu0"], ["gpu0", "cpu1", "cpu"], ["cpu", "cpu1", "gpu0"]]
    orders = []

    class Ordered(_Timings):
        def __call__(self, pool, lanes, config, result, on_event, cancel):
            orders.append([lane.name for lane in lanes])
            run, rows = super().__call__(pool, lanes, config, result, on_event, cancel)
            run.lanes = {lane.name: run.lanes[lane.name] for lane in lanes}  # the run keeps its lanes' turns
            return run, rows

    timings = Ordered(lambda lane, w, n: 1.0 if lane == "cpu" else 2.0)
    monkeypatch.setattr(sweep, "measure_point", timings)
    spec = SweepSpec(widths=(16, 64, 256, 1024), layers=1, base=BASE, calibrate=False)
    run_sweeps(_Ready(), LANES, [spec])
    assert timings.calls == [16, 64, 256, 1024, 256]  # round(1.5): the third of four points
    assert orders == [["cpu", "gpu0"], ["gpu0", "cpu"], ["cpu", "gpu0"], ["gpu0", "cpu"], ["gpu0", "cpu"]]
