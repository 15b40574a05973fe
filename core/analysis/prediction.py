"""A step's time on a lane one has not got, predicted from a device profile's points, with an interval that comes
from the profile's own fit error and noise; and where two lanes' predicted times cross.

A line is one lane's points of one kind of model, task and batch size (a profile keeps the points; every reader
fits them again, so a prediction is always what its points say). It predicts with the project's cost model, a fixed
cost per step plus FLOPs over a throughput (core/analysis/fits.py), with a cost per layer beside it where the line
measured more than one depth, fitted locally: each point weighs by how near its FLOPs lie to the model's, on a
Gaussian kernel of BANDWIDTH in log FLOPs (real lanes bend away from one straight line over three decades of size:
caches, kernel choice, thread pools). BANDWIDTH was chosen among 0.7, 1.0 and 1.5 on the H200 results' files; the
accuracy benchmark here (benchmarks/profile_accuracy.py) is its check on models no line was built from.

How far a line misses a model it was not fitted to is measured on the line itself: each point left out in turn is
predicted from the others (leave-one-out), and the RMS of those log errors is the line's error. A measurement on
another day scatters by the lane's run-to-run noise besides (never taken below the rule's ±5% floor,
core/analysis/significance.py), so the 95% interval is

    predicted × exp(± t(0.975, n − p) · √(loo² + noise²))

over n points and p parameters. A line of fewer than MIN_POINTS points gives no interval; a model outside what the
line measured (another kind of model, another batch size, a depth or FLOPs far from those measured) gets its figure
said as an extrapolation, without an interval, never as a prediction like the others.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from .special import nnls
from .special import stdtrit

from .fits import CostFit, fit_cost_model
from .significance import PRIOR_NOISE

MIN_POINTS = 5  # a line's leave-one-out error needs four points left to fit each time; its t, two dof or more
BANDWIDTH = 1.5  # the local fit's kernel, in natural log of FLOPs: a point 4.5 times larger or smaller weighs 61%
FAR = 4.0  # FLOPs per step beyond 4× the largest measured (or below a quarter of the smallest): an extrapolation
Z95 = 0.975


@dataclass(frozen=True)
class LinePoint:
    """One measured point of a line: the model's width and depth, its FLOPs per step, its median ms."""

    width: int
    layers: int
    flops: float
    ms: float


def _local_coefficients(points: Sequence[LinePoint], flops: float, by_depth: bool) -> np.ndarray:
    """(fixed ms, ms per layer, ms per FLOP), each ≥ 0, fitted to `points` in relative error, each point weighed by
    the kernel around `flops`."""
    f = np.array([p.flops for p in points])
    ms = np.array([p.ms for p in points])
    layers = np.array([p.layers for p in points], dtype=float) if by_depth else np.zeros(len(points))
    x = np.column_stack([np.ones(len(points)), layers, f])
    w = np.sqrt(np.exp(-(np.log(f) - math.log(flops)) ** 2 / (2 * BANDWIDTH ** 2)))
    a = x / ms[:, None] * w[:, None]
    scale = np.abs(a).max(axis=0)
    scale[scale == 0] = 1.0
    c, _ = nnls(a / scale, w)
    return c / scale


def local_ms(points: Sequence[LinePoint], flops: float, layers: int) -> float:
    """The local fit's ms per step at `flops` and `layers`."""
    by_depth = len({p.layers for p in points}) > 1
    c = _local_coefficients(points, flops, by_depth)
    return float(c[0] + c[1] * (layers if by_depth else 0) + c[2] * flops)


@dataclass(frozen=True)
class CostLine:
    """One lane's points for one kind of model, task and batch size, with the line's own error (leave-one-out) and
    its straight cost fit (intercept and throughput, for the words; predictions fit locally)."""

    kind: str  # "mlp", "cnn", "lstm", "transformer 4 heads" (core/families.py kind_word)
    task: str  # train: ms per training step; predict: ms per forward call
    batch_size: int  # 0: a line across batch sizes (a predict sweep along batch size)
    points: tuple[LinePoint, ...]
    noise_log_sd: float  # the lane's run-to-run noise (SD of the logs of repeat medians); NaN where not measured
    fit: CostFit
    loo_log_sd: float  # NaN with fewer than MIN_POINTS points

    @property
    def n(self) -> int:
        return len(self.points)

    @property
    def parameters(self) -> int:
        return 3 if len(self.layers) > 1 else 2

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

    def predict(self, flops: float, layers: int) -> float:
        return local_ms(self.points, flops, layers)


def fit_line(kind: str, task: str, batch_size: int, points: Sequence[LinePoint],
             noise_log_sd: float = math.nan) -> CostLine | None:
    """The line of `points`, with its leave-one-out error; None where they cannot make one (fewer than two
    distinct FLOP counts, or no positive throughput in their straight fit)."""
    pts = tuple(sorted(points, key=lambda p: (p.flops, p.width, p.layers)))
    fit = fit_cost_model([p.flops for p in pts], [p.ms for p in pts])
    if fit is None or not (fit.gflops > 0 and math.isfinite(fit.overhead_ms)):
        return None
    return CostLine(kind, task, batch_size, pts, noise_log_sd, fit, loo_error(pts))


def loo_error(points: Sequence[LinePoint]) -> float:
    """The RMS of the log errors with which the others predict each point; NaN with fewer than MIN_POINTS."""
    if len(points) < MIN_POINTS:
        return math.nan
    errors = []
    for i, p in enumerate(points):
        rest = [q for j, q in enumerate(points) if j != i]
        predicted = local_ms(rest, p.flops, p.layers)
        if not predicted > 0:
            return math.nan
        errors.append(math.log(p.ms / predicted))
    return math.sqrt(sum(e * e for e in errors) / len(errors))


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


def predict(lines: Sequence[CostLine], kind: str, task: str, batch_size: int, flops_per_sample: float,
            layers: int, family_fallback: str = "mlp") -> Prediction:
    """The step time of a model of `kind`, `layers` deep, with `flops_per_sample` FLOPs per sample, at `batch_size`,
    from a lane's lines: the line at that batch size; between two lines of the same kind, the log-linear mean of both
    in log batch size (the wider interval of the two); anything else said as an extrapolation."""
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
        logs, halves = [], []
        for x in chosen:
            at = flops_per_sample * x.batch_size
            logs.append(math.log(max(x.predict(at, layers), 1e-12)))
            halves.append(x.half_width)
            outside += _outside(x, at, layers)
        a, b = chosen
        share = (math.log(batch_size) - math.log(a.batch_size)) / (math.log(b.batch_size) - math.log(a.batch_size))
        ms = math.exp((1 - share) * logs[0] + share * logs[1])
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


@dataclass(frozen=True)
class Crossing:
    """Where, along a model's width, the predicted faster lane changes: the width where the predicted times cross,
    and the widths on either side nearest to it where the two lanes' intervals lie apart (`tie_from`: the last
    width the lane below is clearly faster at, `tie_to`: the first the lane above is; between them the predictions
    cannot tell the lanes apart). Where no width on a side has the intervals apart, that side's end is the first or
    last width, and `clear_below`/`clear_above` is False."""

    width: float
    tie_from: float
    tie_to: float
    faster_below: str
    faster_above: str
    clear_below: bool = True
    clear_above: bool = True


def crossing(widths: Sequence[int], a: Sequence[Prediction], b: Sequence[Prediction], lane_a: str,
             lane_b: str) -> Crossing | None:
    """The first change of the faster lane along `widths` (ascending), by the two lanes' predictions there (each
    with an interval: an extrapolated or refused one ends the search), interpolated in log width; None where the
    same lane is faster at every width."""
    pairs = [(w, pa, pb) for w, pa, pb in zip(widths, a, b) if pa.has_interval and pb.has_interval]
    if len(pairs) < 2:
        return None
    logs = [math.log(pa.ms / pb.ms) for _, pa, pb in pairs]  # > 0: b is faster
    for i in range(1, len(pairs)):
        if (logs[i - 1] > 0) != (logs[i] > 0) and logs[i - 1] != logs[i]:
            w0, w1 = math.log(pairs[i - 1][0]), math.log(pairs[i][0])
            share = logs[i - 1] / (logs[i - 1] - logs[i])
            width = math.exp(w0 + share * (w1 - w0))
            clear = [not (pa.lo <= pb.hi and pb.lo <= pa.hi) for _, pa, pb in pairs]  # intervals apart
            before = [w for (w, _, _), apart in zip(pairs, clear) if w < width and apart]
            after = [w for (w, _, _), apart in zip(pairs, clear) if w > width and apart]
            below, above = (lane_a, lane_b) if logs[i] > 0 else (lane_b, lane_a)
            return Crossing(width, max(before) if before else pairs[0][0], min(after) if after else pairs[-1][0],
                            below, above, bool(before), bool(after))
    return None


def crossing_with_measured(widths: Sequence[int], predicted: Sequence[Prediction], measured_ms: Sequence[float],
                           predicted_lane: str, measured_lane: str) -> Crossing | None:
    """Where a predicted lane (a profile of a machine one does not have) and a lane measured here change places
    along `widths` (ascending; each measured median at its width): `crossing` with the measured medians as points
    without an interval of their own, so how far the crossing can be trusted is the prediction's interval alone.
    Only where the change is clear on both sides (the predicted interval apart from the measured median below and
    above it) is it a crossing; None otherwise."""
    measured = [Prediction(ms, ms, ms) if math.isfinite(ms) and ms > 0 else Prediction() for ms in measured_ms]
    found = crossing(widths, predicted, measured, predicted_lane, measured_lane)
    return found if found is not None and found.clear_below and found.clear_above else None
