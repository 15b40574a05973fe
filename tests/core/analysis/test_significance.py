"""The pair's one test over a sweep (core/analysis/significance.py): Holm's weighted step-down, the pair's run-to-run
noise from its repeats (each run's ratio where the runs line up, else both lanes' scatters), from the sweep's shape
and the floor, and the test of the whole sweep marking widths (core/analysis/verdict.py sites_of)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from crossover_lab.core.analysis.verdict import sites_of, width_data
from crossover_lab.core.analysis.points import CurvePoint
from crossover_lab.core.analysis.significance import (ALPHA, PRIOR_DOF, PRIOR_NOISE, UNMEASURED_FLOOR, WidthData,
                                                      _shape_part, holm, judge_pair, pair_noise)

WIDTHS = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
WITHIN = 1e-6  # a width's variance of d from its batches: next to nothing, so that the noise is the runs'


def widths(ds: list[float], runs: int = 1, within: float = WITHIN) -> list[WidthData]:
    return [WidthData(w, 1000.0 * w, d, within, runs) for w, d in zip(WIDTHS, ds)]


def passes(ds: list[float], spread: float = 0.01) -> list[WidthData]:
    """Each width measured in five passes (the default design) whose log-ratios lie up to `spread` either side of d
    (the passes line up)."""
    return [WidthData(w, 1000.0 * w, d, WITHIN, 5, tuple(d + f * spread for f in (-1, -0.5, 0, 0.5, 1)))
            for w, d in zip(WIDTHS, ds)]


# ---------------------------------------------------------------- Holm's step-down

def test_holm_rejects_in_order_of_p_and_stops_at_the_first_that_fails():
    """Holm (1979), equal weights: p = 0.005, 0.01, 0.03, 0.04 at a 5% family-wise level are tested against 0.05/4,
    0.05/3, 0.05/2: the first two are rejected, 0.03 > 0.025 stops it, and 0.04 is not tested."""
    rejected, level = holm([0.01, 0.04, 0.03, 0.005], [0.25] * 4, 0.05)
    assert rejected == [True, False, False, True]
    assert level == pytest.approx([0.05 / 3, 0.05 / 2, 0.05 / 2, 0.05 / 4])


def test_holms_weights_share_alpha_unequally():
    """Weights 0.8 and 0.2: p = 0.035 is tested at 0.05 · 0.8 = 0.04 and rejected, where equal weights (0.025)
    keep it; once it is rejected the other is tested at the whole 0.05. The order is by p / weight."""
    rejected, level = holm([0.035, 0.5], [0.8, 0.2], 0.05)
    assert rejected == [True, False] and level == pytest.approx([0.04, 0.05])
    assert holm([0.035, 0.5], [0.5, 0.5], 0.05) == ([False, False], pytest.approx([0.025, 0.025]))
    # p / weight: 0.001 / 0.2 = 0.005 comes before 0.03 / 0.8 = 0.0375, at 0.01; then 0.03 at 0.05 · 0.8 / 0.8.
    rejected, level = holm([0.03, 0.001], [0.8, 0.2], 0.05)
    assert rejected == [True, True] and level == pytest.approx([0.05, 0.01])


def test_holm_keeps_the_chance_of_any_false_rejection_under_alpha():
    rng = np.random.default_rng(0)
    weights = [0.5 / 9] * 9 + [0.5]  # a sweep of nine widths and the sweep as one, as judge_pair weighs them
    false = sum(any(holm(list(rng.uniform(size=10)), weights, ALPHA)[0]) for _ in range(4000))
    assert false / 4000 <= ALPHA + 0.01


def test_the_test_of_a_sweep_takes_half_of_alpha_and_the_widths_share_the_rest():
    test = judge_pair(widths([0.0] * 9))
    assert test.tests == 10 and test.alpha == ALPHA and test.sweep is not None and test.sweep.widths == 9
    assert not test.sweep.lead and not any(t.lead for t in test.widths)
    assert judge_pair(widths([0.0] * 2)).sweep is None and judge_pair(widths([0.0] * 2)).tests == 2
    # Each width's interval is at the level Holm tested it at: with nothing rejected, 0.05 · (0.5 / 9).
    t = test.widths[0]
    from scipy.stats import t as student
    assert t.half == pytest.approx(student.ppf(1 - ALPHA * 0.5 / 9 / 2, t.dof) * t.se, rel=1e-6)


# ---------------------------------------------------------------- the pair's noise

def lane(name: str, width: int, medians: tuple[float, ...], keep: bool) -> CurvePoint:
    """One lane's point at a width, pooled from len(medians) runs: the runs' medians kept or not."""
    logs = np.log(medians)
    median = float(np.exp(logs.mean()))
    return CurvePoint(name, width, median, median * 0.999, median * 1.001, 10_000, 1e6 * width, len(medians),
                      float(np.std(logs, ddof=1)), tuple(medians) if keep else ())


def pair_data(cpu1_busy: float, keep: bool) -> list[WidthData]:
    """Four widths, each measured in a quiet run and a busy one: the busy run slows cpu by 40% and cpu1 by 40% times
    `cpu1_busy`."""
    return [width_data(lane("cpu", w, (1.0, 1.4), keep), lane("cpu1", w, (2.0, 2.8 * cpu1_busy), keep))
            for w in (64, 128, 256, 512)]


def test_the_pairs_noise_comes_from_each_runs_ratio_where_the_runs_line_up():
    """The load moved both lanes 40% together: their ratio moved 2%. With each run's median kept, the pair's
    noise is that ratio's scatter (inside the floor: the floor stands, on the repeats' own degrees of freedom; four
    repeats are too few to lower it below the unmeasured one); without, it is both lanes' scatters added, the load
    counted twice."""
    aligned = pair_data(1.02, keep=True)
    assert all(len(w.run_ds) == 2 for w in aligned)
    assert aligned[0].run_ds == pytest.approx((math.log(0.5), math.log(1.4 / (2.8 * 1.02))))
    noise = pair_noise(aligned)
    assert noise.tau == UNMEASURED_FLOOR and noise.repeat_widths == 4 and noise.repeat_dof == 4
    assert noise.dof == max(4, PRIOR_DOF) and noise.shape_dof == 0

    apart = pair_data(1.02, keep=False)
    assert all(w.run_ds == () and all(math.isfinite(x) for x in w.lane_between) for w in apart)
    noise = pair_noise(apart)
    w = apart[0]
    # Each width's two runs: both lanes' variances added (every width pooled: no run of one width alone says what
    # one run's batches explain, so nothing is taken off: a wider noise, never a narrower one).
    expected = w.lane_between[0] ** 2 + w.lane_between[1] ** 2
    assert noise.tau == pytest.approx(math.sqrt(expected), rel=1e-9) and noise.tau > 0.3
    assert noise.dof == 4 and noise.repeat_widths == 4  # the data's figure, on the data's degrees of freedom

    # Where the ratio itself moved 30% between the runs, the aligned runs show it.
    moved = pair_data(1.3, keep=True)
    w = moved[0]
    expected = float(np.var(w.run_ds, ddof=1))
    assert pair_noise(moved).tau == pytest.approx(math.sqrt(expected), rel=1e-9)
    assert expected == pytest.approx(math.log(1.3) ** 2 / 2, rel=0.01)


def test_a_width_measured_once_adds_nothing_to_the_repeats():
    once = [WidthData(w, 1.0, 0.1, WITHIN, 1) for w in (64, 128, 256)]
    noise = pair_noise(once)
    assert noise.repeat_dof == 0 and noise.repeat_widths == 0 and noise.tau == UNMEASURED_FLOOR
    assert noise.dof == PRIOR_DOF and noise.prior == "unmeasured" and not noise.measured


def test_a_straight_line_of_d_shows_no_noise_in_the_sweeps_shape():
    """Each width against the line through its neighbours (in log width): a log-ratio straight in log width, any
    offset and slope, leaves no residual; a bend leaves one (a quadratic's is the same at every width)."""
    x = np.log2(WIDTHS)
    for offset, slope in ((0.0, 0.0), (0.3, -0.2), (-1.0, 0.7)):
        shape, dof = _shape_part(widths(list(offset + slope * x), within=0.0))
        assert shape == pytest.approx(0.0, abs=1e-12) and dof > 0
    assert pair_noise(widths(list(0.3 - 0.2 * x))).tau == UNMEASURED_FLOOR  # 4 degrees of freedom: too few
    c = 0.05  # d = c·x²: each inner width sits c·h² (h = 1 doubling) off its neighbours' line
    shape, _ = _shape_part(widths(list(c * x ** 2), within=0.0))
    assert shape == pytest.approx(c ** 2 / 1.5, rel=1e-9)  # the residual's variance for one unit of τ²: 1 + ¼ + ¼
    # Fewer widths than the shape needs: no figure from it at all.
    assert _shape_part(widths([0.0, 0.5, 0.0, 0.5])) == (0.0, 0.0)


def test_the_noise_is_never_below_the_floor_and_the_data_stand_where_they_show_more():
    x = np.log2(WIDTHS)
    straight = widths(list(0.1 * x))
    noise = pair_noise(straight)
    # The shape of nine widths is under MEASURED_DOF degrees of freedom: the unmeasured floor, on the shape's own.
    assert noise.tau == UNMEASURED_FLOOR and noise.prior == "unmeasured" and noise.dof == max(noise.shape_dof, PRIOR_DOF)
    # Three passes measure the noise on 18 degrees of freedom: the floor is PRIOR_NOISE.
    measured = pair_noise(passes(list(0.1 * x)))
    assert measured.tau == PRIOR_NOISE and measured.prior == "default" and measured.repeat_dof == 36 and measured.measured
    # A machine's recorded noise above the floor lifts it; one below it leaves the floor.
    assert pair_noise(straight, prior=0.1).tau == 0.1 and pair_noise(straight, prior=0.1).prior == "machine"
    assert pair_noise(straight, prior=0.01).tau == UNMEASURED_FLOOR
    # A jagged sweep shows more than the floor: its figure stands, on its own degrees of freedom only.
    jagged = widths([0.3 * (-1) ** i for i in range(9)])
    noise = pair_noise(jagged)
    shape, dof = _shape_part(jagged)
    assert noise.tau == pytest.approx(math.sqrt(shape)) and noise.tau > PRIOR_NOISE and noise.dof == dof
    # Each width's error: its batches' and the pair's noise over its runs.
    test = judge_pair(widths([0.1] * 3, runs=4, within=1e-4))
    assert test.widths[0].se == pytest.approx(math.sqrt(1e-4 + UNMEASURED_FLOOR ** 2 / 4))


# ---------------------------------------------------------------- the test of the whole sweep

def site_marks(ds: list[float]) -> list[tuple[bool, int, int]]:
    data = passes(ds)
    return [(s.lead, s.pattern, s.sign) for s in sites_of(data, judge_pair(data), {})]


def test_the_whole_sweep_marks_its_widths_only_where_every_width_leans_its_way():
    """Nine widths 7% apart, measured in five passes whose means agree: none beyond the floor alone, the sweep as
    one (a t-test over its passes) well beyond it. In one pass the same lean is no lead: an offset every width of
    the pass shares would look alike (issue 57). Its lead
    marks every width (the first lane's, d > 0: the second is faster, sign +1) where all lean that way; not where
    one leans the other way by more than its standard error, nor where one width leads alone (the widths then speak
    for themselves)."""
    lean = math.log(1.07)
    assert not judge_pair(widths([lean] * 9)).sweep.lead  # one pass
    test = judge_pair(passes([lean] * 9))
    assert test.sweep is not None and test.sweep.lead and not any(t.lead for t in test.widths)
    assert test.sweep.dof == 4 and test.noise.passes == 5
    assert site_marks([lean] * 9) == [(False, 9, 1)] * 9
    assert site_marks([-lean] * 9) == [(False, 9, -1)] * 9

    se = test.widths[0].se
    against = [lean] * 8 + [-2 * se]
    assert judge_pair(passes(against)).sweep.lead  # the sweep still leads as a mean …
    assert site_marks(against) == [(False, 0, 0)] * 9  # … but is no lead at every width
    slight = [lean] * 8 + [-0.5 * se]  # a lean the other way inside its own error stays marked
    assert site_marks(slight) == [(False, 9, 1)] * 9

    one_leads = [lean] * 8 + [math.log(1.6)]
    test = judge_pair(passes(one_leads))
    assert test.widths[-1].lead and test.sweep.lead
    assert site_marks(one_leads) == [(False, 0, 0)] * 8 + [(True, 0, 1)]

    # Two widths are no sweep to test as one, and nine alternating leans have no lean at all.
    assert site_marks([lean] * 2) == [(False, 0, 0)] * 2
    assert site_marks([lean, -lean] * 4 + [lean]) == [(False, 0, 0)] * 9
