"""The one test of a pair of lanes over a sweep: each width's log-ratio with its noise, a t-test per width and one
test of the whole sweep fixed before the data, and Holm's step-down across them, so that the chance of any false
lead over the whole sweep is at most ALPHA (family-wise), however many widths it has.

The noise of one run's log-ratio at a width has two parts:
- its batches' own error: each lane's median from its p10-p90 spread and its steady batches, counted as
  n / DESIGN_EFFECT independent ones (neighbouring batches are correlated: one slow stretch spans several);
- the run-to-run term τ that no run's batches can show (a turn meets the machine in another state). τ² is one
  variance pooled over the sweep, estimated from three sources, each with its degrees of freedom: widths measured
  in several runs (the scatter of the pair's ratio between them, or where that is not kept, of each lane's
  medians), the sweep's own shape (each width against the line through its neighbours: a smooth curve leaves
  noise), and a prior (this machine's recorded noise, else PRIOR_NOISE) worth PRIOR_DOF degrees of freedom. Each
  width's test is a t-test with Satterthwaite's degrees of freedom.

docs/guide/numbers.md says why, and benchmarks/rule_calibration.py measures the error rates. Nothing here
measures or words.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from .special import stdtr, stdtrit

ALPHA = 0.05  # the chance of any false lead over a whole sweep (every width, and the sweep as a whole)
# Batches of one run are correlated: lag-1 autocorrelation of log step times 0.2-0.45 in docs/results' batch files,
# a design effect (1 + ρ) / (1 - ρ) of 1.5-2.6 for such a series; 3 covers them.
DESIGN_EFFECT = 3.0
MEDIAN_SE = 1.2533  # the standard error of a median: 1.2533 σ / √n (normal data)
P10_P90_SIGMAS = 2.563  # p90 - p10 spans 2.563 σ (normal data)
MIN_REL_SE = 0.005  # no median is taken as known better than 0.5%, however many batches it has
NO_SPREAD_SE = 0.03  # a point with no spread recorded: a wide error rather than a false lead
# A floor for τ: 5% (what lanes taking turns here scattered by between runs of one width, docs/results/cpu-2026-12-03),
# never narrower whatever few repeats say, counted as PRIOR_DOF degrees of freedom beside the data's own where it
# stands.
PRIOR_NOISE = 0.05
PRIOR_DOF = 4.0
SWEEP_TEST_FROM = 3  # widths: the whole sweep is tested as one, besides each width, from this many up
# The share of ALPHA the test of the whole sweep gets (the widths share the rest): a lead that holds everywhere is
# what most sweeps of two similar lanes have to find, and one test over every width finds it where no width alone can.
SWEEP_SHARE = 0.5
# Widths: the sweep's shape shows noise from this many up. Fewer lie too far apart: a curve that bends between them
# (a CPU's lead giving way to a GPU's) would pass for noise.
SHAPE_FROM = 8
MAX_DOF = 1000.0



@dataclass(frozen=True)
class WidthData:
    """What one width gives the test: the log-ratio of the pooled medians (first lane over second), the variance of
    that from the batches alone, the runs it pools, and where kept, each run's log-ratio (aligned runs), or else
    each lane's between-run variance of its medians."""

    width: int
    flops: float
    d: float
    within: float  # variance of d from the batches of every run pooled
    runs: int
    run_ds: tuple[float, ...] = ()
    lane_between: tuple[float, float] = (math.nan, math.nan)  # each lane's SD of its runs' log medians


@dataclass(frozen=True)
class PairNoise:
    """The run-to-run term of one run's log-ratio (τ, a standard deviation in log units) and what it rests on."""

    tau: float
    dof: float
    repeat_dof: float  # from widths measured in several runs
    repeat_widths: int
    shape_dof: float  # from the sweep's shape
    prior_dof: float
    prior: str  # "machine": this machine's recorded noise; "default": PRIOR_NOISE
    floored: bool = True  # τ is the floor (the data showed less), not the data's own figure

    def to_json(self) -> dict[str, float | int | str | bool]:
        return {"tau": self.tau, "dof": self.dof, "repeat_dof": self.repeat_dof, "repeat_widths": self.repeat_widths,
                "shape_dof": self.shape_dof, "prior_dof": self.prior_dof, "prior": self.prior,
                "floored": self.floored}


@dataclass(frozen=True)
class WidthTest:
    """One width's test: the log-ratio, its standard error and degrees of freedom, the p-value, whether Holm's
    procedure found a lead there, and the half-width of its interval at the level Holm tested it at."""

    d: float
    se: float
    dof: float
    p: float
    lead: bool
    half: float


@dataclass(frozen=True)
class SweepTest:
    """The test of the whole sweep as one: the inverse-variance mean of the widths' log-ratios."""

    d: float
    se: float
    dof: float
    p: float
    lead: bool
    widths: int


@dataclass(frozen=True)
class PairTest:
    widths: tuple[WidthTest, ...]
    sweep: SweepTest | None
    noise: PairNoise
    alpha: float
    tests: int  # how many hypotheses Holm's procedure took (the widths, and the sweep as one)


def point_se(lo: float, hi: float, n: int) -> float:
    """The relative standard error of one lane's median (log units) from its p10-p90 spread and steady batches."""
    if not (n > 0 and 0 < lo <= hi and math.isfinite(hi)):
        return NO_SPREAD_SE
    sigma = math.log(hi / lo) / P10_P90_SIGMAS
    return max(MEDIAN_SE * sigma / math.sqrt(max(n / DESIGN_EFFECT, 1.0)), MIN_REL_SE)


def _p_two_sided(t: float, dof: float) -> float:
    return float(2 * stdtr(min(dof, MAX_DOF), -abs(t)))


def _t_quantile(q: float, dof: float) -> float:
    return float(stdtrit(min(dof, MAX_DOF), q))


def _repeat_part(data: Sequence[WidthData]) -> tuple[float, float, int]:
    """τ² from widths measured in several runs, its degrees of freedom and how many widths: each run's log-ratio's
    scatter less what one run's batches explain, pooled; where the runs' ratios are not kept, the two lanes'
    scatters added (their shared load then counts twice: a wider noise, never a narrower one). One run's batch
    error is read from the widths measured once (a pooled point's spread holds the runs' own difference too), or,
    where every width was measured again, from the pooled spread over its runs."""
    singles = [w.within for w in data if w.runs <= 1]
    total, dof, widths = 0.0, 0.0, 0
    for w in data:
        if w.runs < 2:
            continue
        single = float(np.median(singles)) if singles else w.within * w.runs
        if len(w.run_ds) == w.runs:
            s2 = float(np.var(np.asarray(w.run_ds), ddof=1))
        elif all(math.isfinite(x) for x in w.lane_between):
            s2 = w.lane_between[0] ** 2 + w.lane_between[1] ** 2
        else:
            continue
        total += (w.runs - 1) * (s2 - single)
        dof += w.runs - 1
        widths += 1
    return (max(total / dof, 0.0) if dof else 0.0), dof, widths


def _shape_part(data: Sequence[WidthData]) -> tuple[float, float]:
    """τ² from the sweep's shape and its degrees of freedom: each inner width's log-ratio against the line through
    its two neighbours (in log width). A curve that truly bends (a GPU's lead growing with the square of the width)
    adds to it: a wider noise, never a narrower one."""
    if len(data) < SHAPE_FROM:
        return 0.0, 0.0
    x = np.log([w.width for w in data])
    d = np.array([w.d for w in data])
    within = np.array([w.within for w in data])
    inv_runs = np.array([1.0 / max(w.runs, 1) for w in data])
    rows = []
    for i in range(1, len(data) - 1):
        lam = (x[i + 1] - x[i]) / (x[i + 1] - x[i - 1])
        row = np.zeros(len(data))
        row[i], row[i - 1], row[i + 1] = 1.0, -lam, -(1 - lam)
        rows.append(row)
    a = np.array(rows)
    residuals = a @ d
    sq = a ** 2
    excess = float(residuals @ residuals - (sq @ within).sum())
    per_tau = float((sq @ inv_runs).sum())
    cov = a @ a.T  # the residuals' correlation for equal noise at every width: their effective degrees of freedom
    dof = float(np.trace(cov) ** 2 / np.sum(cov ** 2))
    return max(excess / per_tau, 0.0), dof


def pair_noise(data: Sequence[WidthData], prior: float = math.nan, prior_dof: float = PRIOR_DOF) -> PairNoise:
    """τ from the repeats and the shape, each weighted by its degrees of freedom, and never below the floor (this
    machine's recorded noise where given, else PRIOR_NOISE)."""
    rep, rep_dof, rep_widths = _repeat_part(data)
    shape, shape_dof = _shape_part(data)
    known = math.isfinite(prior) and prior >= 0
    tau0 = max(prior, PRIOR_NOISE) if known else PRIOR_NOISE
    data_dof = rep_dof + shape_dof
    seen = (rep_dof * rep + shape_dof * shape) / data_dof if data_dof else 0.0
    # Where the data show more than the floor, their figure stands on their own degrees of freedom (the floor is no
    # evidence that the noise is smaller); where the floor stands, it adds its own.
    tau2, dof = (seen, data_dof) if seen > tau0 ** 2 else (tau0 ** 2, data_dof + prior_dof)
    return PairNoise(math.sqrt(tau2), dof, rep_dof, rep_widths, shape_dof, prior_dof, "machine" if known else "default",
                     seen <= tau0 ** 2)


def holm(ps: Sequence[float], weights: Sequence[float], alpha: float) -> tuple[list[bool], list[float]]:
    """Holm's weighted step-down (Holm 1979): while hypotheses remain, the one with the smallest p / weight is
    rejected where p ≤ alpha · its weight / the weights remaining; the first that is not stops it. The chance of any
    false rejection is at most alpha, whatever the tests' dependence. Each hypothesis' level is the one it was (or
    would have been) tested at."""
    order = sorted(range(len(ps)), key=lambda i: ps[i] / weights[i])
    rejected, level = [False] * len(ps), [alpha] * len(ps)
    left = sum(weights)
    going = True
    for i in order:
        level[i] = alpha * weights[i] / left
        if going and ps[i] <= level[i]:
            rejected[i] = True
            left -= weights[i]
        else:
            going = False
    return rejected, level


def judge_pair(data: Sequence[WidthData], prior: float = math.nan, prior_dof: float = PRIOR_DOF,
              alpha: float = ALPHA) -> PairTest:
    """Each width tested, and the sweep as one (from SWEEP_TEST_FROM widths), Holm's step-down across them all."""
    noise = pair_noise(data, prior, prior_dof)
    if not data:
        return PairTest((), None, noise, alpha, 0)
    tau2 = noise.tau ** 2
    ses, dofs, ps = [], [], []
    for w in data:
        between = tau2 / max(w.runs, 1)
        v = w.within + between
        ses.append(math.sqrt(v))
        dofs.append(min(v ** 2 / (between ** 2 / noise.dof), MAX_DOF) if between > 0 else MAX_DOF)
        ps.append(_p_two_sided(w.d / math.sqrt(v), dofs[-1]) if v > 0 else 1.0)
    sweep = None
    if len(data) >= SWEEP_TEST_FROM:
        weights = np.array([1 / (s * s) for s in ses])
        mean = float(np.dot(weights, [w.d for w in data]) / weights.sum())
        se = float(1 / math.sqrt(weights.sum()))
        sweep_dof = noise.dof if tau2 > 0 else MAX_DOF
        sweep = SweepTest(mean, se, sweep_dof, _p_two_sided(mean / se, sweep_dof), False, len(data))
    all_p = ps + ([sweep.p] if sweep else [])
    weights = [(1 - SWEEP_SHARE) / len(ps)] * len(ps) + [SWEEP_SHARE] if sweep else [1 / len(ps)] * len(ps)
    rejected, level = holm(all_p, weights, alpha)
    tests = len(all_p)
    out = tuple(WidthTest(w.d, ses[i], dofs[i], ps[i], rejected[i], _t_quantile(1 - level[i] / 2, dofs[i]) * ses[i])
                for i, w in enumerate(data))
    if sweep is not None:
        sweep = SweepTest(sweep.d, sweep.se, sweep.dof, sweep.p, rejected[-1], sweep.widths)
    return PairTest(out, sweep, noise, alpha, tests)
