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
from enum import Enum
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
# A floor for τ where the data measured it: 6.5%. Lanes taking turns here scattered by 5% between runs of one width
# (docs/results/cpu-2026-12-03); a load that drifts slower than a sweep's passes hides from their scatter and from the
# sweep's shape (the widths at the ends of two passes in reversed order are measured back to back), and at 5-6% two
# equal lanes got a lead in 5-8% of 3-pass sweeps under such a load, felt unequally (benchmarks/rule_calibration.py).
# Never narrower whatever few repeats say, counted as PRIOR_DOF degrees of freedom beside the data's own where it
# stands.
PRIOR_NOISE = 0.065
PRIOR_DOF = 4.0
SWEEP_TEST_FROM = 3  # widths: the whole sweep is tested as one, besides each width, from this many up
# The share of ALPHA the test of the whole sweep gets (the widths share the rest): a lead that holds everywhere is
# what most sweeps of two similar lanes have to find, and one test over every width finds it where no width alone can.
SWEEP_SHARE = 0.5
# Widths: the sweep's shape shows noise from this many up. Fewer lie too far apart: a curve that bends between them
# (a CPU's lead giving way to a GPU's) would pass for noise.
SHAPE_FROM = 8
MAX_DOF = 1000.0
# An offset common to every width of one pass of the pair: a slow load one lane feels more than the other, a turn
# order that favours one lane, the machine in another state. It does not shrink with the number of widths, so the
# test of the whole sweep never counts it as the widths' independent noise (ten widths of a load felt unequally gave
# two equal lanes a "lead" in 44% of sweeps). Measured where the sweep has PASSES_FOR_SWEEP passes or more (each
# width measured once in each pass, the passes apart in time, the lanes' order reversed): the whole sweep is then
# tested over its passes' means, a t-test with passes - 1 degrees of freedom that holds whatever the widths share
# within a pass. Fewer passes cannot measure it: the whole-sweep test counts COMMON_PRIOR of it as a stated prior.
PASSES_FOR_SWEEP = 3
COMMON_PRIOR = 0.05
# Passes are apart in time, but not far: a load that drifts as slowly as a pass takes (40 s against a default
# sweep's 30-40 s a pass) leaves neighbouring passes alike, and their scatter then shows too little of it (a t-test
# over five such passes named a lead between two equal lanes in 7-8% of sweeps under a load one lane felt more). The
# rule takes neighbouring passes as correlated by PASS_RHO, and passes k apart by PASS_RHO ** k (a stated prior: the
# correlation of two neighbouring 40-second means of such a load is 0.49), for the whole-sweep test and for each
# width's passes alike (pass_inflation).
PASS_RHO = 0.5
# A sweep whose run-to-run noise nothing measured (no width measured twice, too few widths for its shape) cannot
# tell a lead from a shift of the machine: its floor for τ is this, so a lead is only said beyond about
# 2.8 × √2 × UNMEASURED_FLOOR (~40%) at one width of a sweep, less over a whole sweep, and the words say so. At 8%,
# two equal lanes of a 5-width sweep got a lead at one width in 6% of sweeps on a shared machine, a turn's 20 batches
# against 60 (benchmarks/rule_calibration.py).
UNMEASURED_FLOOR = 0.10
# The whole-sweep test's offset common to every width where nothing measured it: a drift of the machine that both
# lanes' turns at one width share most of, at the whole sweep's scale less (a whole sweep spans several of its
# swings). It holds the false leads of every row at or under 5% at 8% (the table cited above).
UNMEASURED_COMMON = 0.08
# Fewer widths than a sweep is tested as one from (a run of one model, a width dragged to one other): the answer rests
# on one or two comparisons, with no whole-sweep test and almost no share of the error rate to split, so nothing but
# this floor stands between a drift of the machine and a false lead. At 8% two equal lanes of one run got
# a lead in 9-16% of runs on a shared machine (benchmarks/rule_calibration.py), and twin lanes here in 2 of 20 sweeps
# (docs/results/cpu-2026-12-07/calibrate-busy): a lead is said only beyond about 2.8 × FEW_WIDTHS_FLOOR (~40%).
FEW_WIDTHS_FLOOR = 0.12
MEASURED_DOF = 6.0  # degrees of freedom of the data's own noise from which PRIOR_NOISE is the floor
# Lanes measured in separate runs (two files, `analyze A B`): an offset between the sessions that no run of either
# can show, a stated prior worth PRIOR_DOF degrees of freedom, added to every width and to the whole sweep. At 20%,
# two equal lanes, each from a sweep of its own on a shared machine, got a lead in 10-16% of pairs of one width.
SESSION_PRIOR = 0.30



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
    apart: bool = False  # the two lanes' figures come from different runs (files of separate sessions)


class Prior(str, Enum):
    """What the floor under a pair's run-to-run noise is: this machine's recorded noise, PRIOR_NOISE (the data measured
    the noise on enough degrees of freedom), or UNMEASURED_FLOOR (they did not). Its word is what a file holds."""

    MACHINE = "machine"
    DEFAULT = "default"
    UNMEASURED = "unmeasured"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class PairNoise:
    """The run-to-run term of one run's log-ratio (τ, a standard deviation in log units) and what it rests on."""

    tau: float
    dof: float
    repeat_dof: float  # from widths measured in several runs
    repeat_widths: int
    shape_dof: float  # from the sweep's shape
    prior_dof: float
    prior: Prior
    floored: bool = True  # τ is the floor (the data showed less), not the data's own figure
    passes: int = 1  # passes the whole-sweep test rests on (PASSES_FOR_SWEEP or more: measured, else the prior)
    common: float = COMMON_PRIOR  # the common offset's SD the whole-sweep test counts where passes cannot show it
    session: float = 0.0  # the offset between sessions counted where the lanes were measured apart
    floor: float = PRIOR_NOISE  # the floor under τ (this machine's recorded noise, or the rule's) …
    floor_dof: float = PRIOR_DOF  # … and the degrees of freedom it stands on

    @property
    def measured(self) -> bool:
        """Whether the data measured the run-to-run noise (widths measured again, or the sweep's shape) on enough
        degrees of freedom to stand on (MEASURED_DOF)."""
        return self.repeat_dof + self.shape_dof >= MEASURED_DOF

    def to_json(self) -> dict[str, float | int | str | bool]:
        return {"tau": self.tau, "dof": self.dof, "repeat_dof": self.repeat_dof, "repeat_widths": self.repeat_widths,
                "shape_dof": self.shape_dof, "prior_dof": self.prior_dof, "prior": str(self.prior),
                "floored": self.floored, "passes": self.passes, "common": self.common, "session": self.session}


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
        single = float(np.median(singles)) if singles else 0.0  # every width pooled: its runs' scatter as it is
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
    data_dof = rep_dof + shape_dof
    # Noise measured on few degrees of freedom is barely measured: two rechecks often show a third of it. Below
    # MEASURED_DOF the floor is the unmeasured one, so that a lead is said only beyond it.
    floor = PRIOR_NOISE if data_dof >= MEASURED_DOF else \
        UNMEASURED_FLOOR if len(data) >= SWEEP_TEST_FROM else FEW_WIDTHS_FLOOR
    tau0 = max(prior, floor) if known else floor
    seen = (rep_dof * rep + shape_dof * shape) / data_dof if data_dof else 0.0
    # Where the data show more than the floor, their figure stands on their own degrees of freedom (the floor is no
    # evidence that the noise is smaller); where the floor stands, it adds its own.
    # Where the data show less than the floor, the floor stands, resting on the data's degrees of freedom or the
    # prior's, whichever is more, never both added (a floor added to two repeats as four more would pass for a
    # well-measured noise: two equal lanes on a shared machine then got a lead in 17% of 6-width sweeps).
    tau2, dof = (seen, data_dof) if seen > tau0 ** 2 else (tau0 ** 2, max(data_dof, prior_dof))
    passes = min((len(w.run_ds) for w in data), default=0) if data else 0
    return PairNoise(math.sqrt(tau2), dof, rep_dof, rep_widths, shape_dof, prior_dof,
                     Prior.MACHINE if known else Prior.DEFAULT if data_dof >= MEASURED_DOF else Prior.UNMEASURED,
                     seen <= tau0 ** 2,
                     passes=passes if passes >= PASSES_FOR_SWEEP else 1,
                     session=SESSION_PRIOR if any(w.apart for w in data) else 0.0,
                     floor=tau0, floor_dof=max(data_dof, prior_dof))


def pass_inflation(passes: int, rho: float = PASS_RHO) -> float:
    """How many times the variance of the mean of `passes` passes exceeds what their scatter says, where passes k
    apart are correlated by rho ** k: the variance of the mean grows by 1 + 2 Σ (1 - k/P) ρ^k, and the scatter shows
    less of it, by 1 - 2 Σ (P - k) ρ^k / (P (P - 1)) (both exact for such a correlation)."""
    k = np.arange(1, passes)
    lag = rho ** k
    var = 1 + 2 * float(np.sum((1 - k / passes) * lag))
    bias = 1 - 2 * float(np.sum((passes - k) * lag)) / (passes * (passes - 1))
    return var / bias


def _own_passes(w: WidthData, noise: PairNoise) -> tuple[float, float] | None:
    """A width measured in the sweep's passes: the variance of its mean log-ratio from its own passes' scatter (which
    holds their batches' error too), widened by what neighbouring passes share (pass_inflation), on passes - 1
    degrees of freedom; or, where that is less, its batches' error and the floor over its runs, on the floor's. Each
    width on its own: here the pair's run-to-run noise was ±4% between the passes of a width of 4,096 units and ±30%
    at 64 units (cpu against cpu1, 2 cores), and one pooled figure said no answer for a 1.5x gap at 4,096. None
    where the width was not measured in the sweep's passes."""
    n = len(w.run_ds)
    if noise.passes < PASSES_FOR_SWEEP or n < noise.passes:
        return None
    own = float(np.var(np.asarray(w.run_ds), ddof=1)) / n * pass_inflation(n)
    floor = w.within + noise.floor ** 2 / max(w.runs, 1)
    return (own, float(n - 1)) if own > floor else (floor, max(noise.floor_dof, float(n - 1)))


def _satterthwaite(total: float, parts: Sequence[tuple[float, float]]) -> float:
    """The degrees of freedom of a variance `total` made of a known part and `parts` (variance, its degrees of
    freedom) estimated apart (Welch-Satterthwaite)."""
    spread = sum(v * v / dof for v, dof in parts if v > 0 and dof > 0)
    return min(total * total / spread, MAX_DOF) if spread > 0 else MAX_DOF


def _sweep_test(data: Sequence[WidthData], ses: Sequence[float], noise: PairNoise) -> SweepTest:
    """The whole sweep as one. With PASSES_FOR_SWEEP passes or more (every width with as many aligned runs): a
    t-test over the passes' mean log-ratios, which holds whatever the widths of a pass share (a slow load, an
    offset of the session) since each pass's mean carries it whole. Else the inverse-variance mean of the widths,
    its variance the widths' independent part plus the common offset no pass could show (COMMON_PRIOR, stated)
    and, for lanes measured apart, the sessions' offset."""
    passes = noise.passes
    if passes >= PASSES_FOR_SWEEP and all(len(w.run_ds) >= passes for w in data):
        means = np.array([[w.run_ds[k] for k in range(passes)] for w in data]).mean(axis=0)
        mean = float(means.mean())
        se = float(means.std(ddof=1) / math.sqrt(passes)) * math.sqrt(pass_inflation(passes))
        # never below what the widths' own noise says a mean of W widths over P passes varies by, were they apart
        se = max(se, math.sqrt(sum(s * s - noise.session ** 2 for s in ses)) / len(data))
        dof = float(passes - 1)
        return SweepTest(mean, se, dof, _p_two_sided(mean / se, dof) if se > 0 else 1.0, False, len(data))
    session2 = noise.session ** 2
    weights = np.array([1 / max(s * s - session2, 1e-12) for s in ses])  # each width's own part, the session apart
    mean = float(np.dot(weights, [w.d for w in data]) / weights.sum())
    independent = float(1 / weights.sum())
    common2 = max(noise.common, min(noise.tau, UNMEASURED_COMMON) if not noise.measured else 0.0) ** 2
    v = independent + common2 + session2
    dof = _satterthwaite(v, ((independent, noise.dof if noise.tau > 0 else MAX_DOF), (common2, PRIOR_DOF),
                             (session2, PRIOR_DOF)))
    return SweepTest(mean, math.sqrt(v), dof, _p_two_sided(mean / math.sqrt(v), dof), False, len(data))


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
    tau2, session2 = noise.tau ** 2, noise.session ** 2
    ses, dofs, ps = [], [], []
    for w in data:
        own = _own_passes(w, noise)
        if own is not None:  # the width's own passes: their scatter, or the floor where they show less
            part, part_dof = own
            v = part + session2
        else:
            part, part_dof = tau2 / max(w.runs, 1), noise.dof
            v = w.within + part + session2
        ses.append(math.sqrt(v))
        dofs.append(_satterthwaite(v, ((part, part_dof), (session2, PRIOR_DOF))))
        ps.append(_p_two_sided(w.d / math.sqrt(v), dofs[-1]) if v > 0 else 1.0)
    sweep = _sweep_test(data, ses, noise) if len(data) >= SWEEP_TEST_FROM else None
    all_p = ps + ([sweep.p] if sweep else [])
    weights = [(1 - SWEEP_SHARE) / len(ps)] * len(ps) + [SWEEP_SHARE] if sweep else [1 / len(ps)] * len(ps)
    rejected, level = holm(all_p, weights, alpha)
    tests = len(all_p)
    out = tuple(WidthTest(w.d, ses[i], dofs[i], ps[i], rejected[i], _t_quantile(1 - level[i] / 2, dofs[i]) * ses[i])
                for i, w in enumerate(data))
    if sweep is not None:
        sweep = SweepTest(sweep.d, sweep.se, sweep.dof, sweep.p, rejected[-1], sweep.widths)
    return PairTest(out, sweep, noise, alpha, tests)
