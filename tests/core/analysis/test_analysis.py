"""Tests for crossover_lab.core.analysis: statistics, cost fits, crossovers and the sentences built on them."""
from __future__ import annotations

import dataclasses
import json
import math
import statistics

import numpy as np
import pytest

from crossover_lab.core.analysis.fits import CostFit, fit_cost_model, predicted_crossover
from crossover_lab.core.analysis.crossings import analyze_points, find_crossovers
from crossover_lab.core.analysis.points import Crossover, SweepPoint
from crossover_lab.core.run_stats import robust_stats, summarize
from crossover_lab.core.words.run import explain, verdict
from crossover_lab.core.words.numbers import fmt_range
from crossover_lab.core.words.sweep import crossing_label, describe_pair, sweep_lines
from crossover_lab.core.records import BatchTiming, RunSummary

OVERHEAD_MS, GFLOPS = 0.05, 200.0


def model_ms(flops, overhead=OVERHEAD_MS, gflops=GFLOPS):
    return overhead + np.asarray(flops, dtype=float) / (gflops * 1e9) * 1000


def sweep(lane, widths, ms, spread=None, flops=None, n=0, passes=3):
    """A lane's points as a sweep of `passes` passes measures them (each pass within 1% of the median): the rule then
    measures the pair's run-to-run noise instead of standing on its unmeasured floor."""
    return [SweepPoint(lane=lane, width=int(w), flops_per_batch=float(flops(w) if flops else 1000.0 * w * w),
                       median_ms=float(m),
                       p10_ms=float(m * (1 - spread)) if spread else math.nan,
                       p90_ms=float(m * (1 + spread)) if spread else math.nan, n_batches=n,
                       runs=passes, run_medians=tuple(float(m) * (1 + 0.01 * (k - 1)) for k in range(passes))
                       if passes > 1 else ())
            for w, m in zip(widths, ms)]


# ---------------------------------------------------------------- statistics

def test_robust_stats_known_values():
    s = robust_stats([1, 2, 3, 4, 100])
    assert s.median == 3 and s.n == 5
    assert s.mad == 1  # |deviations| = 2, 1, 0, 1, 97
    assert s.p10 == pytest.approx(1.4) and s.p90 == pytest.approx(61.6)


def test_robust_stats_empty_is_nan():
    s = robust_stats([])
    assert s.n == 0 and all(math.isnan(v) for v in (s.median, s.p10, s.p90, s.mad))


def rec(ms, warmup=False, batches=1, samples=128):
    return BatchTiming(run_id="r", lane="cpu", device="CPU", epoch=0, batch=0, step=0, start_s=0.0,
                       ms=ms, samples=samples, warmup=warmup, loss=1.0, batches=batches)


def test_summarize_excludes_warmup():
    records = [rec(500.0, warmup=True), rec(300.0, warmup=True)] + [rec(m) for m in (10, 12, 11, 13, 9)]
    s = summarize(records, run_id="r", lane="cpu", device="CPU", status="completed",
                  flops_per_batch=2_000_000_000, wall_s=3.0)
    assert (s.n_batches, s.n_warmup) == (5, 2)
    assert s.median_ms == 11 and s.mad_ms == 1
    assert s.warmup_s == pytest.approx(0.8)
    assert s.samples_per_s == pytest.approx(5 * 128 / 0.055)
    assert s.gflops == pytest.approx(2.0 / 0.011)  # 2 GFLOP in 11 ms
    assert s.batches_per_record == 1 and s.status == "completed"


def test_summarize_divides_multi_step_records():
    records = [rec(80.0, warmup=True, batches=4, samples=512)] + [rec(m, batches=4, samples=512)
                                                                  for m in (40, 44, 48)]
    s = summarize(records, run_id="r", lane="cpu", device="CPU", status="completed",
                  flops_per_batch=1_000_000, wall_s=1.0)
    assert s.median_ms == pytest.approx(11.0) and s.batches_per_record == 4
    assert s.samples_per_s == pytest.approx(3 * 512 / 0.132)
    assert s.gflops == pytest.approx(1e6 / 0.011 / 1e9)
    assert (s.n_batches, s.n_warmup) == (12, 4)  # training steps, not records


def test_summarize_without_steady_records_is_nan():
    s = summarize([rec(5.0, warmup=True)], run_id="r", lane="cpu", device="CPU", status="cancelled",
                  flops_per_batch=1000, wall_s=0.1)
    assert s.n_batches == 0 and math.isnan(s.median_ms) and math.isnan(s.gflops)
    assert math.isnan(s.samples_per_s) and s.warmup_s == pytest.approx(0.005)
    assert summarize([], run_id="r", lane="cpu", device="CPU", status="failed", flops_per_batch=1, wall_s=0.0).batches_per_record == 1


# ---------------------------------------------------------------- cost model

FLOPS = np.logspace(5, 12, 15)


def test_fit_recovers_clean_curve():
    fit = fit_cost_model(FLOPS, model_ms(FLOPS))
    assert fit is not None and fit.ok and fit.n == 15
    assert fit.overhead_ms == pytest.approx(OVERHEAD_MS, rel=1e-6)
    assert fit.gflops == pytest.approx(GFLOPS, rel=1e-6)
    assert max(abs(r) for r in fit.residuals) < 1e-9
    assert fit.predict_ms(1e10) == pytest.approx(float(model_ms(1e10)))


def test_fit_recovers_noisy_curve():
    rng = np.random.default_rng(1)
    ms = model_ms(FLOPS) * np.exp(rng.normal(0, 0.05, FLOPS.size))
    fit = fit_cost_model(FLOPS, ms)
    assert fit is not None and fit.ok
    assert fit.overhead_ms == pytest.approx(OVERHEAD_MS, rel=0.1)
    assert fit.gflops == pytest.approx(GFLOPS, rel=0.1)


@pytest.mark.parametrize("factor", [8.0, 1 / 8])
@pytest.mark.parametrize("index", [0, 7, 14])
def test_fit_survives_gross_outlier(index, factor):
    rng = np.random.default_rng(2)
    ms = model_ms(FLOPS) * np.exp(rng.normal(0, 0.02, FLOPS.size))
    ms[index] *= factor
    fit = fit_cost_model(FLOPS, ms)
    assert fit is not None
    assert fit.overhead_ms == pytest.approx(OVERHEAD_MS, rel=0.05)
    assert fit.gflops == pytest.approx(GFLOPS, rel=0.05)
    assert abs(math.log1p(fit.residuals[index])) > 1.5  # it stands out instead of bending the line


def test_plain_least_squares_would_be_wrecked_by_that_outlier():
    # Guards the test above: an outlier this size does move an unweighted fit a lot.
    ms = model_ms(FLOPS)
    ms[14] *= 8.0
    slope, _ = np.polyfit(FLOPS, ms, 1)
    assert abs(1e-6 / slope - GFLOPS) / GFLOPS > 0.5


def test_fit_needs_two_distinct_flops():
    assert fit_cost_model([1e9], [5.0]) is None
    assert fit_cost_model([1e9, 1e9, 1e9], [5.0, 5.1, 4.9]) is None
    assert fit_cost_model([], []) is None
    assert fit_cost_model([1e9, 2e9], [5.0, 10.0]) is not None


def test_fit_constrains_overhead_non_negative():
    fit = fit_cost_model([1e9, 2e9, 3e9], [1.0, 2.5, 4.0])  # unconstrained line: -0.5 ms + 1.5 ms/GFLOP
    assert fit is not None and fit.overhead_ms == 0.0 and fit.gflops > 0


def test_fit_constrains_slope_positive():
    fit = fit_cost_model([1e6, 1e7, 1e8], [2.0, 1.9, 1.8])  # faster with more FLOPs: no throughput limit
    assert fit is not None and not fit.ok
    assert fit.gflops == math.inf and fit.overhead_ms == pytest.approx(1.9, rel=0.01)
    flat = [SweepPoint("cpu", w, f, m) for w, f, m in zip([1, 2, 3], [1e6, 1e7, 1e8], [2.0, 1.9, 1.8])]
    assert analyze_points(flat).lanes["cpu"].gflops is None  # stays JSON-ready, no Infinity
    assert analyze_points(flat).to_json()["lanes"]["cpu"]["gflops"] is None


def fit_of(overhead, gflops):
    return CostFit(overhead_ms=overhead, gflops=gflops, n=5, residuals=(), ok=True)


def test_predicted_crossover():
    cpu, gpu = fit_of(0.01, 100.0), fit_of(0.1, 1000.0)
    f = predicted_crossover(cpu, gpu)
    assert f == pytest.approx(1e7)  # 0.01 + 1e-8 f = 0.1 + 1e-9 f
    assert cpu.predict_ms(f) == pytest.approx(gpu.predict_ms(f))
    assert predicted_crossover(gpu, cpu) == pytest.approx(1e7)


def test_predicted_crossover_none_when_lines_do_not_cross():
    assert predicted_crossover(fit_of(0.01, 1000.0), fit_of(0.1, 100.0)) is None  # one lane better everywhere
    assert predicted_crossover(fit_of(0.01, 100.0), fit_of(0.1, 100.0)) is None  # parallel


# ---------------------------------------------------------------- measured crossovers

WIDTHS = [16, 32, 64, 128, 256, 512]


def crossing_points(spread=None):
    # cpu: ms = 0.01·w, gpu0: 1 ms flat, so log(ms_cpu/ms_gpu) is linear in log(w) and zero at w = 100.
    return (sweep("cpu", WIDTHS, [0.01 * w for w in WIDTHS], spread)
            + sweep("gpu0", WIDTHS, [1.0] * len(WIDTHS), spread))


def test_clean_crossing_is_exact_in_log_space():
    (c,) = find_crossovers(crossing_points())
    assert c.lanes == ("cpu", "gpu0") and c.faster_above == "gpu0"
    assert c.width == pytest.approx(100.0)
    assert c.flops_per_batch == pytest.approx(1000.0 * 100 ** 2)
    # The interval: the nearest widths either side where each lane measurably leads (the one rule).
    assert (c.width_lo, c.width_hi) == (64, 128)
    assert describe_pair(crossing_points(), "gpu0", "cpu").startswith("gpu0 is faster above about 100 units")


def test_uncertainty_bounds_bracket_the_estimate():
    (c,) = find_crossovers(crossing_points(spread=0.1))
    assert 64 == c.width_lo < c.width < c.width_hi == 128


def test_an_asymmetric_spread_reads_as_its_range_never_plus_minus():
    assert fmt_range(290, 1200) == "290–1,200" and fmt_range(81.8, 122.2) == "82–120"
    (c,) = find_crossovers(crossing_points(spread=0.1))
    assert c.width - c.width_lo != pytest.approx(c.width_hi - c.width, rel=0.05)  # asymmetric: 36 below, 28 above
    text = describe_pair(crossing_points(spread=0.1), "cpu", "gpu0")
    assert "64–128 within the noise)" in text and "±" not in text
    assert "±" not in " ".join(sweep_lines({"": crossing_points(spread=0.1)}))
    wide = Crossover(("cpu", "gpu0"), 570.0, 290.0, 1200.0, 1e9, "gpu0")
    assert crossing_label(wide, spread=True) == "gpu0 beats cpu above ≈570 (290–1,200)"
    assert crossing_label(wide) == "gpu0 beats cpu above ≈570"  # the map's short label stays short
    assert crossing_label(wide, "flops", spread=True) == "gpu0 beats cpu above ≈1 GFLOP"


def test_wide_spread_clamps_to_bracketing_widths():
    (c,) = find_crossovers(crossing_points(spread=0.9))
    assert c.width_lo == pytest.approx(64) and c.width_hi == pytest.approx(128)


def in_runs(points, load):
    """Each point measured in len(load) runs, the run's load a factor on its median, pooled as the findings pool
    them (each run's median kept, the pooled median their logs' mean)."""
    out = []
    for p in points:
        medians = tuple(p.median_ms * f for f in load)
        logs = [math.log(m) for m in medians]
        out.append(dataclasses.replace(p, median_ms=math.exp(statistics.fmean(logs)), runs=len(load),
                                       between_runs=statistics.stdev(logs), run_medians=medians,
                                       n_batches=p.n_batches * len(load)))
    return out


def test_noisy_crossing():
    # cpu's time grows with its FLOPs (the square of the width), gpu0's is flat at 1 ms: they cross at 100 units,
    # each median 3% off at random, 100 batches each. Widths an octave apart: the nearest either side are 1.6x
    # and 2.4x from equal, beyond one run's noise.
    rng = np.random.default_rng(3)
    widths = [2 ** k for k in range(4, 12)]
    cpu = [1e-4 * w * w * math.exp(rng.normal(0, 0.03)) for w in widths]
    gpu = [math.exp(rng.normal(0, 0.03)) for _ in widths]
    found = find_crossovers(sweep("cpu", widths, cpu, 0.05, n=100) + sweep("gpu0", widths, gpu, 0.05, n=100))
    assert len(found) == 1
    assert found[0].width == pytest.approx(100.0, rel=0.1) and found[0].faster_above == "gpu0"
    assert found[0].width_lo <= found[0].width <= found[0].width_hi


def test_no_crossing():
    pts = sweep("cpu", WIDTHS, [0.01 * w + 2 for w in WIDTHS]) + sweep("gpu0", WIDTHS, [1.0] * 6)
    assert find_crossovers(pts) == []
    assert describe_pair(pts, "cpu", "gpu0").startswith("gpu0 is faster from 16 to 512 units (")


def test_two_crossings_found_in_order():
    # gpu0 4x slower at the ends and 4x faster in the middle, each width measured in three runs (the pair's ratio
    # moving 1% between them): a bend that sharp counts as noise in one run's sweep.
    gpu = [4, 2, 0.5, 0.25, 0.5, 2, 4]
    widths = [16, 32, 64, 128, 256, 512, 1024]
    points = (in_runs(sweep("cpu", widths, [1.0] * 7, 0.05, n=100), (0.97, 1.0, 1.04))
              + in_runs(sweep("gpu0", widths, gpu, 0.05, n=100), (0.97 * 0.99, 1.0 / 0.99, 1.04)))
    found = find_crossovers(points)
    assert [c.faster_above for c in found] == ["gpu0", "cpu"]
    assert found[0].width == pytest.approx(math.sqrt(32 * 64))
    assert found[1].width == pytest.approx(math.sqrt(256 * 512))
    text = describe_pair(points, "cpu", "gpu0")
    assert text.count("; then ") == 1 and text.index("gpu0 is faster") < text.index("cpu is faster")


def test_three_lanes_sorted_by_width():
    pts = crossing_points() + sweep("gpu1", WIDTHS, [0.02 * w for w in WIDTHS])
    found = find_crossovers(pts)
    assert [c.width for c in found] == sorted(c.width for c in found)
    assert {c.lanes for c in found} == {("cpu", "gpu0"), ("gpu0", "gpu1")}
    assert all(isinstance(c, Crossover) for c in found)


def test_lane_with_one_point(monkeypatch):
    pts = sweep("cpu", [64], [0.64]) + sweep("gpu0", WIDTHS, [1.0] * 6)
    assert find_crossovers(pts) == []
    said = describe_pair(pts, "cpu", "gpu0")  # one width: a lead, no crossing, and what it rests on
    # The rate quoted is the shipped calibration's row for this design (one width in three passes), whatever its value.
    from crossover_lab.core.files.rule_calibration import design_rate
    from crossover_lab.core.words.numbers import fmt_num
    row = design_rate(1, 3, False, 1)
    assert row is not None and row.design == "3 passes" and row.widths == 1
    assert said.startswith("cpu is faster at 64 units (1.6x) (3 runs of each lane; at most a 5% chance of any "
                           f"false lead at this width, {fmt_num(100 * row.false_lead, 2)}% measured for this design "
                           f"(95%: {fmt_num(100 * row.lo, 2)}–{fmt_num(100 * row.hi, 2)}%"), said
    assert "more than it is designed for" not in said
    # Where the calibration measured more than the design's 5% for this design, the answer says so beside it.
    from crossover_lab.core.files.rule_calibration import DesignRate
    from crossover_lab.core.words import verdict as verdict_words
    worse = DesignRate(1, "3 passes", 1, 0.075, 0.045, 0.12, 200, "unequal batches", "rule calibration, 2026-12-06")
    monkeypatch.setattr(verdict_words, "design_rate", lambda *args, **kwargs: worse)
    said = describe_pair(pts, "cpu", "gpu0")
    assert "at this width, but 7.5% measured for this design (95%: 4.5–12%" in said, said
    assert "unequal batches: more than it is designed for; rule calibration, 2026-12-06" in said, said
    assert "no width measured on both" in describe_pair(pts, "cpu", "gpu7")


# ---------------------------------------------------------------- JSON and words

def test_analyze_points_json_shape():
    widths = [2 ** k for k in range(4, 13)]
    flops = lambda w: 6.0 * 784 * w * 128  # noqa: E731
    cpu = sweep("cpu", widths, [float(model_ms(flops(w), 0.02, 50.0)) for w in widths], flops=flops)
    gpu = sweep("gpu0", widths, [float(model_ms(flops(w), 0.5, 5000.0)) for w in widths], flops=flops)
    solo = sweep("tpu", [64], [1.0], flops=flops)
    analysis = analyze_points(cpu + gpu + solo)
    assert analysis.lanes["cpu"].ok and analysis.lanes["tpu"].fit is None
    out = analysis.to_json()
    json.dumps(out, allow_nan=False)
    assert set(out) == {"lanes", "crossovers", "predicted_crossovers"}
    assert out["lanes"]["cpu"]["overhead_ms"] == pytest.approx(0.02, rel=1e-6)
    assert out["lanes"]["gpu0"]["gflops"] == pytest.approx(5000.0, rel=1e-6)
    assert out["lanes"]["tpu"] == {"overhead_ms": None, "gflops": None, "n_points": 1, "residuals": {},
                                   "fit_ok": False}
    # Clean curves: every width's residual is (close to) zero and the fit is good.
    assert set(out["lanes"]["cpu"]["residuals"]) == {str(w) for w in widths}
    assert max(abs(r) for r in out["lanes"]["cpu"]["residuals"].values()) < 1e-6
    assert out["lanes"]["cpu"]["fit_ok"] is True
    (c,) = out["crossovers"]
    assert c["lanes"] == ["cpu", "gpu0"] and c["faster_above"] == "gpu0"
    assert set(c) == {"lanes", "width", "width_lo", "width_hi", "flops_per_batch", "faster_above"}
    predicted = [p for p in out["predicted_crossovers"] if p["lanes"] == ["cpu", "gpu0"]]
    expected = (0.5 - 0.02) / (1e-6 / 50 - 1e-6 / 5000)
    assert predicted[0]["flops_per_batch"] == pytest.approx(expected, rel=1e-6)
    assert c["flops_per_batch"] == pytest.approx(expected, rel=0.15)  # measured agrees with the model


def summary(lane, median_ms, flops=12_345_678):
    return RunSummary(run_id="r", lane=lane, device=lane.upper(), status="completed", n_batches=50,
                      median_ms=median_ms, flops_per_batch=flops, gflops=flops / (median_ms / 1000) / 1e9)


def test_verdict():
    rests = " (one run of each lane; at most a 5% chance of any false lead at this width, "
    assert verdict(summary("cpu", 3.1), summary("gpu0", 1.0)).startswith(
        "gpu0 is 3.1x faster than cpu on this model" + rests)
    assert verdict(summary("gpu0", 1.0), summary("cpu", 0.25)).startswith(
        "cpu is 4.0x faster than gpu0 on this model" + rests)
    assert verdict(summary("cpu", 1.02), summary("gpu0", 1.0)).startswith(
        "cpu and gpu0 are too close to call on this model (medians 2% apart, inside the noise one run "
        "cannot rule out; one run of each lane; at most a 5% chance of any false lead at this width, ")
    assert "not enough steady batches" in verdict(summary("cpu", math.nan), summary("gpu0", 1.0))


def test_explain_quotes_the_runs_figures():
    a, b = summary("cpu", 0.5), summary("gpu0", 2.0)
    text = explain(a, b)
    assert "cpu spends 0.5" in text and "gpu0 2 ms" in text and "12.3 MFLOP" in text
    assert "24.7 GFLOP/s on cpu" in text and "6.17 GFLOP/s on gpu0" in text
    assert 2 <= text.count(". ") + 1 <= 4


def test_explain_with_fits_quotes_crossover():
    fits = {"cpu": fit_of(0.01, 100.0), "gpu0": fit_of(0.1, 1000.0)}
    text = explain(summary("cpu", 0.5), summary("gpu0", 2.0), fits)
    assert "0.01 ms intercept plus 100 GFLOP/s" in text and "0.1 ms plus 1,000 GFLOP/s" in text
    assert "cross near 10 MFLOP" in text and "sits above it" in text
    fits = {"cpu": fit_of(0.01, 1000.0), "gpu0": fit_of(0.1, 100.0)}
    assert "cpu is predicted faster at every size" in explain(summary("cpu", 0.5), summary("gpu0", 2.0), fits)
    assert "Not enough steady batches" in explain(summary("cpu", math.nan), summary("gpu0", 2.0))


def test_fitted_lines_meet_only_where_each_rests_on_three_points_or_more():
    """Two points fit a line exactly (zero residuals): where two such lines meet is said nowhere, neither in the
    words nor in a file's analysis; a third point on each gives the meeting point again, where the rule itself finds
    the lanes change places across the widths measured (issue 57: two equal lanes' lines meet somewhere by
    chance)."""
    from crossover_lab.core.analysis.crossings import analyze_points
    from crossover_lab.core.analysis.points import SweepPoint

    def pts(widths):
        out = []
        for w in widths:
            f = 1e6 * w
            out += [SweepPoint("cpu", w, f, 0.5 + f / 2e9), SweepPoint("gpu0", w, f, 2.0 + f / 2e10)]
        return out

    two = analyze_points(pts((16, 256)))
    assert two.lanes["cpu"].fit is not None and two.predicted == ()
    assert two.to_json()["predicted_crossovers"] == []
    no_change = analyze_points(pts((16, 256, 4096)))  # gpu0 1.16x ahead at 4,096: inside one run's noise
    assert no_change.predicted == () and no_change.to_json()["predicted_crossovers"] == []
    three = analyze_points(pts((16, 256, 16384)))  # gpu0 3x ahead at 16,384: the lanes change places
    assert [p.lanes for p in three.predicted] == [("cpu", "gpu0")]
    assert three.predicted[0].flops_per_batch == pytest.approx(1.5 / (1 / 2e9 - 1 / 2e10), rel=0.01)
