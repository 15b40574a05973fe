"""A step's time on a lane one has not got, predicted from a device profile's points by a cost model of the model's
family, with an interval from that model's own error on the profile's points (where two lanes' predicted times
cross is core/analysis/predicted_crossing.py).

A line is one lane's points of one kind of model, task and batch size (a profile keeps the points; every reader
fits them again, so a prediction is always what its points say). Its cost model is a sum of what a step pays, each
term ≥ 0 (non-negative least squares in relative error, core/analysis/special.py):

    ms = fixed + per layer · layers + FLOPs / throughput [+ bytes moved / bandwidth]

the fixed cost per step; a cost per layer of the family's kind (a dense layer, a conv block, a recurrent layer's
step along the sequence, an attention block) where the line measured more than one depth; the FLOPs over a
throughput (the compute side of a roofline); and the bytes a step moves (its memory side: weights read and updated,
activations written and read back, their gradients), counted from the family's own arithmetic (`shape`, beside the
code that counts FLOPs: core/families.py, ModelSpec's for the MLP), so an old profile, which keeps only width,
depth, FLOPs and ms, reads as it did. Each line takes the simplest of MODELS that its points support: each point
left out in turn is predicted from the others (leave-one-out), and a model with more terms is taken only where its
mean squared log error lies more than one standard error below the simpler one's (the one-standard-error rule: with
five to twelve points a line, a lower error by less than that is as likely luck as a term that matters). Without the
bytes (a kind that is none of Crossover's families, a line across batch sizes) a line is the cost line: fixed + per
layer + FLOPs.

Every term is fitted locally: each point weighs by how near its FLOPs lie to the model's, on a Gaussian kernel of
BANDWIDTH in log FLOPs (real lanes bend away from one straight line over three decades of size: caches, kernel
choice, thread pools). BANDWIDTH was chosen among 0.7, 1.0 and 1.5 on the H200 results' files; the accuracy
benchmark here (benchmarks/profile_accuracy.py, and its --rescore of stored folders) is its check on models no line
was built from.

How far a line misses a model it was not fitted to is the chosen model's leave-one-out error: the RMS of the log
errors with which the others predict each point. A measurement on another day scatters by the lane's run-to-run
noise besides (never taken below the rule's ±5% floor, core/analysis/significance.py), so the 95% interval is

    predicted × exp(± t(0.975, n − p) · √(loo² + noise²))

over n points and the model's p terms. A line of fewer than MIN_POINTS points gives no interval; a model outside what
the line measured (another kind of model, another batch size, a depth or FLOPs far from those measured) gets its
figure said as an extrapolation, without an interval, never as a prediction like the others.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import Sequence

import numpy as np
from .special import nnls
from .special import stdtrit

from .. import families
from ..config import CLASSES, INPUT_DIM, Task
from ..families import GATES, MLP_RATIO, SIDE, Family, ModelKind
from .fits import CostFit, fit_cost_model
from .significance import PRIOR_NOISE

MIN_POINTS = 5  # a line's leave-one-out error needs four points left to fit each time; its t, two dof or more
MIN_DOF = 2  # a model of p terms is tried only on a line of p + 2 points or more: its t needs two dof
BANDWIDTH = 1.5  # the local fit's kernel, in natural log of FLOPs: a point 4.5 times larger or smaller weighs 61%
FAR = 4.0  # FLOPs per step beyond 4× the largest measured (or below a quarter of the smallest): an extrapolation
Z95 = 0.975
FLOAT_BYTES = 4  # float32, as every lane trains
# How often a step touches each weight and each activation, as a roofline counts it. Training: a weight is read
# forward and backward and its gradient accumulated at every use, then Adam reads the weight, its gradient and two
# moments and writes three back; an activation is written forward and read backward, its gradient written and read.
# A forward call reads each weight at each use and writes each activation for the next layer to read.
WEIGHT_TOUCHES = {Task.TRAIN: (3, 7), Task.PREDICT: (1, 0)}  # (per use, per step)
ACTIVATION_TOUCHES = {Task.TRAIN: 4, Task.PREDICT: 2}


class Term(str, Enum):
    """One thing a step pays for, as the cost model fits it (ms per unit, ≥ 0)."""

    FIXED = "fixed"  # per step, whatever the model: dispatch, the optimizer's launch, feeding a batch
    LAYER = "layer"  # per layer of the family's kind (a recurrent layer counts each of its steps)
    FLOPS = "flops"  # per FLOP: one over the lane's throughput, a roofline's compute side
    BYTES = "bytes"  # per byte a step moves: one over its bandwidth, a roofline's memory side

    def __str__(self) -> str:
        return self.value


LINE = (Term.FIXED, Term.LAYER, Term.FLOPS)  # the project's cost line (core/analysis/fits.py), a cost per layer beside
MEMORY = (*LINE, Term.BYTES)
MODELS = (LINE, MEMORY)  # simplest first: a line takes the first its points support (`choose`)


@dataclass(frozen=True)
class LinePoint:
    """One measured point of a line: the model's width and depth, its FLOPs per step, its median ms."""

    width: int
    layers: int
    flops: float
    ms: float


@dataclass(frozen=True)
class Shape:
    """What a step of a model pays beside its FLOPs, from its family's arithmetic: the layers of its kind (a recurrent
    layer's steps along the sequence counted one by one) and the bytes it moves (NaN where the kind is none of
    Crossover's families, or the line's batch size is not one number)."""

    flops: float  # per step
    layer_ops: float
    bytes: float

    def column(self, term: Term) -> float:
        return {Term.FIXED: 1.0, Term.LAYER: self.layer_ops, Term.FLOPS: self.flops, Term.BYTES: self.bytes}[term]


def _family(kind: str) -> tuple[str, str, int] | None:
    """(family, cell, heads) of a kind's text ("lstm", "transformer 4 heads"); None for another kind."""
    k = ModelKind.parse(kind)
    if k.family not in families.FAMILIES:
        return None
    heads = 4
    if k.family == Family.TRANSFORMER:
        word = k.detail.split(" ")[0]
        if not word.isdigit() or int(word) < 1:
            return None
        heads = int(word)
    return str(k.family), k.base if k.family == Family.RNN else "lstm", heads


@functools.lru_cache(maxsize=1 << 16)  # shape() searches widths by bisection: the same widths come back again and again
def _counts(family: str, cell: str, heads: int, width: int, layers: int, forward: bool) -> tuple[int, int, int, int]:
    """A model of `layers` layers each `width` wide: FLOPs per sample (as the project counts them), trainable
    parameters, activation values per sample that a step keeps, and how often each weight is used per step."""
    widths = (width,) * layers
    if family == Family.MLP:  # ModelSpec.flops_per_batch and .params (core/config.py)
        sizes = (INPUT_DIM, *widths, CLASSES)
        flops = sum((2 if forward else 4 if i == 0 else 6) * a * b for i, (a, b) in enumerate(zip(sizes, sizes[1:])))
        return flops, sum(a * b + b for a, b in zip(sizes, sizes[1:])), sum(sizes[1:]), 1
    flops = families.flops_per_sample(family, widths, cell, heads, forward)
    params = families.params(family, widths, cell, heads)
    if family == Family.CNN:  # each block's conv output, and its pooled map where it pools
        side, values = SIDE, 0
        for _ in widths:
            values += width * side * side
            if side >= 4:
                side //= 2
                values += width * side * side
        return flops, params, values + CLASSES, 1
    if family == Family.RNN:  # each step keeps its gates, its cell and its hidden state; the weights serve each step
        return flops, params, layers * SIDE * width * (GATES[cell] + 2) + CLASSES, SIDE
    # A transformer: the tokens' projection; per block queries, keys, values, the heads' output and its projection,
    # two norms, the MLP's hidden and output values, and the attention scores before and after their softmax.
    per_block = SIDE * width * (3 + 1 + 1 + 2 + MLP_RATIO + 1) + 2 * heads * SIDE * SIDE
    return flops, params, SIDE * width + layers * per_block + width + CLASSES, 1


def _bytes(family: str, cell: str, heads: int, width: int, layers: int, task: Task, batch: int) -> tuple[float, float]:
    """(FLOPs per sample, bytes moved per step) of the model `width` wide."""
    flops, params, values, uses = _counts(family, cell, heads, width, layers, task == Task.PREDICT)
    per_use, per_step = WEIGHT_TOUCHES[task]
    moved = params * (per_use * uses + per_step) + values * batch * ACTIVATION_TOUCHES[task]
    return float(flops), float(FLOAT_BYTES * moved)


@functools.lru_cache(maxsize=1 << 16)  # each point's shape is asked again by every fit that leaves another point out
def shape(kind: str, task: Task, batch_size: int, flops: float, layers: int) -> Shape:
    """What a step of `flops` FLOPs of a `layers`-deep model of `kind` pays beside them. The width is the one at
    which a model of equal layers has those FLOPs (exactly the width measured for Crossover's own models; between
    two whole widths the bytes are interpolated, for a model of unequal widths), so a profile's points need no more
    than they hold."""
    found = _family(kind)
    recurrent = found is not None and found[0] == Family.RNN
    ops = float(layers * SIDE if recurrent else layers)
    if found is None or batch_size < 1 or layers < 1 or task not in WEIGHT_TOUCHES or not flops > 0:
        return Shape(flops, ops, math.nan)
    family, cell, heads = found
    target = flops / batch_size

    def at(w: int) -> tuple[float, float]:
        return _bytes(family, cell, heads, w, layers, task, batch_size)

    lo, hi = 1, 2
    while at(hi)[0] < target and hi < 1 << 22:  # FLOPs grow with width: double, then halve the bracket
        lo, hi = hi, 2 * hi
    if at(lo)[0] >= target:
        return Shape(flops, ops, at(lo)[1])
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if at(mid)[0] < target else (lo, mid)
    (f0, b0), (f1, b1) = at(lo), at(hi)
    share = min(max((target - f0) / (f1 - f0), 0.0), 1.0) if f1 > f0 else 0.0
    return Shape(flops, ops, b0 + share * (b1 - b0))


def terms_for(model: Sequence[Term], shapes: Sequence[Shape]) -> tuple[Term, ...]:
    """The terms of `model` that `shapes` can fit: a cost per layer only where they hold more than one depth (else it
    is the fixed cost again), the bytes only where every point's are known."""
    out = []
    for term in model:
        if term == Term.LAYER and len({s.layer_ops for s in shapes}) < 2:
            continue
        if term == Term.BYTES and not all(math.isfinite(s.bytes) and s.bytes > 0 for s in shapes):
            continue
        out.append(term)
    return tuple(out)


def _coefficients(shapes: Sequence[Shape], ms: Sequence[float], terms: Sequence[Term],
                  flops: float | None) -> np.ndarray:
    """The terms' ms per unit, each ≥ 0, fitted to `ms` in relative error; each point weighed by the kernel around
    `flops` (None: every point alike)."""
    x = np.array([[s.column(t) for t in terms] for s in shapes], dtype=float)
    y = np.asarray(ms, dtype=float)
    f = np.array([s.flops for s in shapes])
    w = (np.ones(len(shapes)) if flops is None
         else np.sqrt(np.exp(-(np.log(f) - math.log(flops)) ** 2 / (2 * BANDWIDTH ** 2))))
    a = x / y[:, None] * w[:, None]
    scale = np.abs(a).max(axis=0)
    scale[scale == 0] = 1.0
    c, _ = nnls(a / scale, w)
    return c / scale


def model_ms(shapes: Sequence[Shape], ms: Sequence[float], terms: Sequence[Term], at: Shape) -> float:
    """The local fit's ms per step at `at`."""
    c = _coefficients(shapes, ms, terms, at.flops)
    return float(sum(ci * at.column(t) for ci, t in zip(c, terms)))


# A line's leave-one-out error is measured on at most this many of its points, evenly spaced along it (each left out
# in turn from that sample): each point left out costs a fit of the others, so a line of 1,000 points (a 3.9 MB
# profile within every bound) took predict 5 min of CPU; real profiles' lines hold 5-30 points, all used as before.
LOO_MAX = 48


def _left_out(n: int) -> list[int]:
    return list(range(n)) if n <= LOO_MAX else sorted({round(k * (n - 1) / (LOO_MAX - 1)) for k in range(LOO_MAX)})


def loo_errors(shapes: Sequence[Shape], ms: Sequence[float], terms: Sequence[Term]) -> list[float] | None:
    """The log error with which the others predict each point (measured over predicted); None where one has no
    positive prediction."""
    keep = _left_out(len(shapes))  # a long line: its error from an even sample of its points, each left out in turn
    shapes, ms = [shapes[i] for i in keep], [ms[i] for i in keep]
    errors = []
    for i, s in enumerate(shapes):
        predicted = model_ms([x for j, x in enumerate(shapes) if j != i], [m for j, m in enumerate(ms) if j != i],
                             terms, s)
        if not predicted > 0:
            return None
        errors.append(math.log(ms[i] / predicted))
    return errors


def choose(errors: Sequence[Sequence[float] | None]) -> int:
    """Which of several models (simplest first, each with its leave-one-out errors on the same points, None where
    it cannot be fitted) a line takes: the simplest whose mean squared error lies within one standard error of the
    lowest one's (Breiman's one-standard-error rule)."""
    mse = [float(np.mean(np.square(e))) if e else math.inf for e in errors]
    best = int(np.argmin(mse))
    lowest = errors[best]
    if not lowest or not math.isfinite(mse[best]):
        return 0
    squares = np.square(lowest)
    se = float(np.std(squares, ddof=1) / math.sqrt(len(squares))) if len(squares) > 1 else 0.0
    return next(i for i, m in enumerate(mse) if m <= mse[best] + se)


@dataclass(frozen=True)
class TermFit:
    """One term of a line's model over all its points (no kernel): ms per unit, and its jackknife standard error
    (over the fits that leave each point out; NaN with fewer than MIN_POINTS)."""

    term: Term
    ms_per_unit: float
    se: float


@dataclass(frozen=True)
class CostLine:
    """One lane's points for one kind of model, task and batch size, with the cost model they support (`terms`), its
    own error (leave-one-out) and the straight cost fit (intercept and throughput, for the words; predictions fit
    locally)."""

    kind: str  # "mlp", "cnn", "lstm", "transformer 4 heads" (core/families.py kind_word)
    task: Task  # ms per training step, or per forward call
    batch_size: int  # 0: a line across batch sizes (a predict sweep along batch size)
    points: tuple[LinePoint, ...]
    noise_log_sd: float  # the lane's run-to-run noise (SD of the logs of repeat medians); NaN where not measured
    fit: CostFit
    loo_log_sd: float  # the chosen model's; NaN with fewer than MIN_POINTS points
    terms: tuple[Term, ...] = (Term.FIXED, Term.FLOPS)  # the chosen model's terms, as these points can fit them
    line_loo_log_sd: float = math.nan  # the cost line's own (LINE), beside the chosen model's

    @property
    def n(self) -> int:
        return len(self.points)

    @property
    def parameters(self) -> int:
        return len(self.terms)

    @property
    def flops_range(self) -> tuple[float, float]:
        return min(p.flops for p in self.points), max(p.flops for p in self.points)

    @property
    def layers(self) -> tuple[int, ...]:
        return tuple(sorted({p.layers for p in self.points}))

    @property
    def noise(self) -> float:
        """The run-to-run noise the interval adds: the lane's measured one, never below the rule's floor."""
        return max(self.noise_log_sd, PRIOR_NOISE) if math.isfinite(self.noise_log_sd) else PRIOR_NOISE

    @property
    def half_width(self) -> float:
        """The 95% interval's half-width in log: NaN where the line has too few points for one."""
        if not math.isfinite(self.loo_log_sd):
            return math.nan
        return float(stdtrit(self.n - self.parameters, Z95)) * math.hypot(self.loo_log_sd, self.noise)

    def shape(self, flops: float, layers: int) -> Shape:
        return shape(self.kind, self.task, self.batch_size, flops, layers)

    @cached_property  # a width found from FLOPs per point: found once, not at every width a map predicts
    def shapes(self) -> tuple[Shape, ...]:
        return tuple(self.shape(p.flops, p.layers) for p in self.points)

    def predict(self, flops: float, layers: int) -> float:
        return model_ms(self.shapes, [p.ms for p in self.points], self.terms, self.shape(flops, layers))

    def term_fits(self) -> tuple[TermFit, ...]:
        """The chosen model's terms fitted to all the points alike, each with its jackknife standard error: what
        the lane pays per step, per layer, per FLOP and per byte, and how well its points pin each down."""
        shapes, ms = self.shapes, [p.ms for p in self.points]
        c = _coefficients(shapes, ms, self.terms, None)
        se = np.full(len(self.terms), math.nan)
        if self.n >= MIN_POINTS:
            rest = np.array([_coefficients([s for j, s in enumerate(shapes) if j != i],
                                           [m for j, m in enumerate(ms) if j != i], self.terms, None)
                             for i in range(self.n)])
            se = np.sqrt((self.n - 1) / self.n * np.sum((rest - rest.mean(axis=0)) ** 2, axis=0))
        return tuple(TermFit(t, float(ci), float(s)) for t, ci, s in zip(self.terms, c, se))


def fit_line(kind: str, task: Task, batch_size: int, points: Sequence[LinePoint],
             noise_log_sd: float = math.nan, models: Sequence[Sequence[Term]] = MODELS) -> CostLine | None:
    """The line of `points`, with the simplest of `models` its points support (`choose`) and that model's
    leave-one-out error; None where they cannot make one (fewer than two distinct FLOP counts, or no positive
    throughput in their straight fit). `models=(LINE,)` is the cost line alone, as every line was before the
    family's terms."""
    pts = tuple(sorted(points, key=lambda p: (p.flops, p.width, p.layers)))
    fit = fit_cost_model([p.flops for p in pts], [p.ms for p in pts])
    if fit is None or not (fit.gflops > 0 and math.isfinite(fit.overhead_ms)):
        return None
    shapes = [shape(kind, task, batch_size, p.flops, p.layers) for p in pts]
    ms = [p.ms for p in pts]
    candidates = list(dict.fromkeys(terms_for(m, shapes) for m in models))
    if len(pts) < MIN_POINTS:
        return CostLine(kind, task, batch_size, pts, noise_log_sd, fit, math.nan, candidates[0])
    errors = [loo_errors(shapes, ms, terms) if len(pts) - len(terms) >= MIN_DOF else None for terms in candidates]
    chosen = choose(errors)
    rms = [math.sqrt(float(np.mean(np.square(e)))) if e else math.nan for e in errors]
    own = terms_for(LINE, shapes)
    line_rms = rms[candidates.index(own)] if own in candidates else math.nan
    return CostLine(kind, task, batch_size, pts, noise_log_sd, fit, rms[chosen], candidates[chosen], line_rms)


@dataclass(frozen=True)
class Outside:
    """One reason a model lies outside what a line measured (core/words/profile.py says it): `what` is "kind" (the
    profile never measured the model's kind, `stand_in` stood in), "batch", "flops", "depth" or "few" (a line too
    short for an interval: `asked` its points, `measured` (the points an interval takes,)); `asked` is the model's
    value, `measured` what the profile has (every batch size or depth, or the lowest and highest FLOPs)."""

    what: str
    asked: float = math.nan
    measured: tuple[float, ...] = ()
    stand_in: str = ""
    kind: str = ""


@dataclass(frozen=True)
class Prediction:
    """A predicted ms per step (or per call) and how far to trust it: an interval (lo, hi), or where the model lies
    outside what the profile measured, why (`outside`) and no interval; `refused` where there is no figure."""

    ms: float = math.nan
    lo: float = math.nan
    hi: float = math.nan
    lines: tuple[CostLine, ...] = ()  # what it rests on: one line, or the two it lies between
    outside: tuple[Outside, ...] = ()
    refused: str = ""  # "no task", "no kind", "no flops", "no time": why there is no figure

    @property
    def has_interval(self) -> bool:
        return math.isfinite(self.lo) and math.isfinite(self.hi) and not self.outside and not self.refused

    def contains(self, measured_ms: float) -> bool:
        return self.has_interval and self.lo <= measured_ms <= self.hi


def _outside(line: CostLine, flops: float, layers: int) -> list[Outside]:
    """Why a model lies outside what `line` measured ([] where it lies inside)."""
    out = []
    lo, hi = line.flops_range
    if flops > FAR * hi or flops < lo / FAR:
        out.append(Outside("flops", flops, (lo, hi)))
    depths = line.layers
    if layers not in depths and (len(depths) == 1 or not depths[0] / 2 <= layers <= 2 * depths[-1]):
        out.append(Outside("depth", layers, tuple(float(d) for d in depths)))
    return out


BETWEEN_BATCHES = ("straight", "power")  # between two lines: straight in batch size; a power law (log-log), as before


def predict(lines: Sequence[CostLine], kind: str, task: Task, batch_size: int, flops_per_sample: float,
            layers: int, family_fallback: str = "mlp", between: str = "straight") -> Prediction:
    """The step time of a model of `kind`, `layers` deep, with `flops_per_sample` FLOPs per sample, at `batch_size`,
    from a lane's lines: the line at that batch size; between two lines of the same kind, the straight line between
    their predictions in batch size (the wider interval of the two); anything else said as an extrapolation.

    Straight in batch size because a step is a fixed cost plus a cost per sample: a straight line in log time and log
    batch size (a power law, as this did before) lies above such a step's time wherever the fixed cost counts. Between
    the profile's lines it predicted 1-8% slow on average per lane on two machines' held-out points (AMD EPYC and
    Intel Xeon, docs/results/cpu-2026-12-07/profile-accuracy-*), the straight line within -4% to +3%; on a fresh run
    measured after the choice the straight line was 2-5% fast there, the power law within -1% to +3%, and the straight
    line came within ±10% as often or more on every lane (profile-accuracy-straight). `between`
    "power" is the earlier form, for rescoring the runs measured with it (benchmarks/profile_accuracy.py --rescore)."""
    if between not in BETWEEN_BATCHES:
        raise ValueError(f"between={between!r}: one of {', '.join(BETWEEN_BATCHES)}")
    if not (flops_per_sample > 0 and math.isfinite(flops_per_sample) and batch_size > 0):
        return Prediction(refused="no flops")
    of_task = [line for line in lines if line.task == task]
    if not of_task:
        return Prediction(refused="no task")
    same = [line for line in of_task if line.kind == kind]
    outside: list[Outside] = []
    if not same:
        same = [line for line in of_task if line.kind == family_fallback]
        if not same:
            return Prediction(refused="no kind")
        outside.append(Outside("kind", stand_in=family_fallback, kind=kind))
    flops = flops_per_sample * batch_size
    by_batch = sorted((x for x in same if x.batch_size), key=lambda line: line.batch_size)
    exact = [x for x in by_batch if x.batch_size == batch_size] or [x for x in same if not x.batch_size]
    below = [x for x in by_batch if x.batch_size < batch_size]
    above = [x for x in by_batch if x.batch_size > batch_size]
    chosen: tuple[CostLine, ...]
    if exact:
        chosen = (max(exact, key=lambda x: x.n),)
        ms, half = chosen[0].predict(flops, layers), chosen[0].half_width
        outside += _outside(chosen[0], flops, layers)
    elif below and above:
        chosen = (below[-1], above[0])
        ends, halves = [], []
        for x in chosen:
            at = flops_per_sample * x.batch_size
            ends.append(x.predict(at, layers))
            halves.append(x.half_width)
            outside += _outside(x, at, layers)
        a, b = chosen
        if between == "power":
            share = math.log(batch_size / a.batch_size) / math.log(b.batch_size / a.batch_size)
            ms = math.exp((1 - share) * math.log(max(ends[0], 1e-12)) + share * math.log(max(ends[1], 1e-12)))
        else:
            share = (batch_size - a.batch_size) / (b.batch_size - a.batch_size)
            ms = (1 - share) * ends[0] + share * ends[1]
        half = max(halves) if all(math.isfinite(h) for h in halves) else math.nan
    else:
        chosen = (below[-1] if below else above[0],)
        ms, half = chosen[0].predict(flops, layers), math.nan
        outside.append(Outside("batch", batch_size, tuple(float(x.batch_size) for x in by_batch)))
        outside += _outside(chosen[0], flops_per_sample * chosen[0].batch_size, layers)
    if not (ms > 0 and math.isfinite(ms)):
        return Prediction(lines=chosen, refused="no time")
    if not outside and not math.isfinite(half):
        outside.append(Outside("few", min(x.n for x in chosen), (MIN_POINTS,)))
    if outside:
        return Prediction(ms, lines=chosen, outside=tuple(dict.fromkeys(outside)))
    return Prediction(ms, ms * math.exp(-half), ms * math.exp(half), chosen)
