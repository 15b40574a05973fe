"""One current answer per pair of lanes and kind of model: every completed, like-for-like point measured since the
window opened (runs, ramps, sweeps, refinements) or read from the files `analyze` is given, pooled where a width was
measured more than once, and judged once by the one rule (core/analysis/verdict.py).

A point is a sweep row (core/files/sweeps/rows.py: a run's lane, a ramp's segment, a sweep's point) and belongs to
its run (`run_id`): the same run's row for the same place replaces the old one (a live ramp's point firms up, a
sweep lent a ramp's points shows them again), and rows of different runs at the same place are pooled, as a
refinement pools a width it measured again: their medians weighted by their steady batches, how many runs, how
far those runs' medians lie apart, and each run's own median (from which the pair's test reads how the pair's ratio
scattered between runs, core/analysis/significance.py). A row that pools runs keeps its first run's id (a sweep's
recheck, a refinement), so it replaces that run's row instead of counting its batches twice. The headline, the map,
the Sweep tab, `analyze` and the report render these answers; none computes its own. Nothing here measures or
words.
"""
from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

from ..analysis.fits import CostFit, fit_cost_model
from ..analysis.points import SweepPoint
from ..analysis.verdict import PairVerdict, pair_verdict
from ..config import RunConfig
from ..records import Status
from .sweeps.rows import SweepRow, curve_point, row_groups, row_width

# A lane's cost fit (fixed cost plus FLOPs over throughput) is claimed from this many model sizes: through two
# points any line fits exactly, and noise then passes for a cost model.
MIN_SIZES_FOR_FIT = 3

# Where a row lies: kind of model, task, variant, hidden layers, batch size, width, lane. Rows of one place pool.
Place = tuple[str, str, str, int, int, int, str]


def place_of(row: SweepRow) -> Place:
    return row.family, row.task, row.variant, row.layers, row.batch_size, row.width, row.lane


def kind_of_config(config: RunConfig) -> tuple[str, str, str, int, int]:
    """Where a config's rows lie but for width and lane (kind of model, task, variant, layers, batch size), as
    SweepRow.from_result fills them."""
    model = config.model
    return (model.kind, config.train.task, "base", model.saved.layers if model.saved else len(model.widths),
            config.train.batch_size)


@dataclass(frozen=True)
class Answer:
    """The one rule's verdict on a pair of lanes over one group of like-for-like points (row_groups' label: "all"
    where every point is of one kind), with the points it rests on and how many runs measured them."""

    group: str
    verdict: PairVerdict
    points: tuple[SweepPoint, ...]  # the pair's pooled points
    runs: int  # separate runs behind the pair's points
    family: str
    task: str
    batch_size: int  # of a width curve; 0 along batch size
    layers: int
    # Each lane's cost fit over the group's pooled points (None: too few points, or no fit), fitted once per
    # change of the findings, for the views' sentences and lines alike.
    fits: Mapping[str, CostFit | None] = dataclasses.field(default_factory=dict)

    def matches(self, family: str, task: str, batch_size: int) -> bool:
        """An answer about this kind of model and task at this batch size (or along batch size)."""
        return self.family == family and self.task == task and self.batch_size in (batch_size, 0)


def pool(rows: Sequence[SweepRow]) -> SweepRow:
    """Rows of one place from separate runs as one: the medians' and spreads' logs weighted by steady batches, the
    batches and runs added, the spread between the runs' medians as `between_runs`, the busiest run's share of
    other work (a busy run taints the pool), energy only where every run measured it with one counter. A tail
    cannot be pooled without the batches: p99 is withheld."""
    if len(rows) == 1:
        return rows[0]
    weights = [max(r.n_batches, 1) for r in rows]
    total = sum(weights)

    def mean_log(values: Iterable[float]) -> float:
        return math.exp(sum(w * math.log(v) for w, v in zip(weights, values)) / total)

    median = mean_log(r.median_ms for r in rows)
    spread_lo = [r.p10_ms / r.median_ms for r in rows]
    spread_hi = [r.p90_ms / r.median_ms for r in rows]
    lo = median * mean_log(spread_lo) if all(math.isfinite(x) and x > 0 for x in spread_lo) else math.nan
    hi = median * mean_log(spread_hi) if all(math.isfinite(x) and x > 0 for x in spread_hi) else math.nan
    logs = [math.log(r.median_ms) for r in rows]
    within = [r.between_runs ** 2 for r in rows if r.runs > 1 and math.isfinite(r.between_runs)]
    between = math.sqrt((statistics.variance(logs) + sum(within)) / (1 + len(within)))
    each = [r.run_medians for r in rows]
    ids = list(dict.fromkeys(i for r in rows for i in (r.pooled_run_ids.split(";") if r.pooled_runs else [r.run_id])))
    medians = ";".join(f"{m:.6g}" for ms in each for m in ms) if all(each) else ""
    energies = [r.energy_j_per_msample for r in rows]
    same_counter = len({r.energy_counter for r in rows}) == 1 and all(math.isfinite(e) for e in energies)
    busy = [r.others_cpu for r in rows if math.isfinite(r.others_cpu)]
    loads = [r.load_avg for r in rows if math.isfinite(r.load_avg)]
    latest = rows[-1]
    return dataclasses.replace(
        latest, median_ms=median, p10_ms=lo, p90_ms=hi, n_batches=sum(r.n_batches for r in rows), p99_ms=math.nan,
        runs=sum(r.runs for r in rows), between_runs=between, stage="pooled", run_medians_ms=medians,
        pooled_run_ids=";".join(ids),
        others_cpu=max(busy) if busy else math.nan, load_avg=max(loads) if loads else math.nan,
        energy_j_per_msample=(sum(w * e for w, e in zip(weights, energies)) / total if same_counter else math.nan))


class Findings:
    """Every completed point put in, by place and run; the answers, computed once per change."""

    def __init__(self, rows: Iterable[SweepRow] = ()) -> None:
        self._places: dict[Place, dict[str, SweepRow]] = {}
        self._answers: tuple[Answer, ...] | None = None
        self._fits: dict[tuple[str, str, str, int, int], dict[str, CostFit]] = {}  # lane_fits, per kind asked for
        self.on_change: Callable[[], None] | None = None  # told after a put or drop that changed the points
        self.put(rows)

    def put(self, rows: Iterable[SweepRow]) -> bool:
        """Add the completed, usable rows (a run's row replaces its own earlier row at that place); whether
        anything changed."""
        changed = False
        given: dict[Place, set[str]] = {}  # the runs these rows gave each place
        for row in rows:
            if row.status != Status.COMPLETED or not row.usable:
                continue
            place = place_of(row)
            at = self._places.setdefault(place, {})
            mine = given.setdefault(place, set())
            if row.runs > 1 and not row.run_medians_ms:
                # A file from before pooled rows kept their first run's id: a pooled row there holds the rows
                # before it at its place, in the same file, under other runs' ids.
                for run_id in mine - {row.run_id}:
                    at.pop(run_id, None)
            # A row that pools several runs stands for their rows at its place: each is counted once, in it.
            held = {pooled for key, kept in at.items() if key != row.run_id for pooled in kept.pooled_runs}
            if row.run_id in held:
                continue  # one run's row, read after the pooled row that holds it
            kept = at.get(row.run_id)
            if kept is not None and kept.runs > row.runs:
                continue  # a sweep's first pass at a place, read after its recheck pooled it (same run id)
            for run_id in row.pooled_runs - {row.run_id}:
                changed = at.pop(run_id, None) is not None or changed
            mine.add(row.run_id)
            if at.get(row.run_id) != row:
                at.pop(row.run_id, None)  # the latest row of a run goes last: pool() keeps the latest's columns
                at[row.run_id] = row
                changed = True
        if changed:
            self._answers, self._fits = None, {}
            if self.on_change is not None:
                self.on_change()
        return changed

    def drop(self, run_ids: Iterable[str]) -> bool:
        """Forget these runs' rows (a run removed from the history); whether anything changed."""
        gone = set(run_ids)
        changed = False
        for place in list(self._places):
            at = self._places[place]
            for run_id in gone & set(at):
                del at[run_id]
                changed = True
            if not at:
                del self._places[place]
        if changed:
            self._answers, self._fits = None, {}
            if self.on_change is not None:
                self.on_change()
        return changed

    @property
    def run_ids(self) -> set[str]:
        return {run_id for at in self._places.values() for run_id in at}

    def rows(self) -> list[SweepRow]:
        """One pooled row per place."""
        return [pool(list(at.values())) for at in self._places.values()]

    def measured(self, config: RunConfig, lane: str) -> SweepPoint | None:
        """What the runs of this model measured on one lane (pooled where several did), as a point; None if none."""
        at = self._places.get((*kind_of_config(config), row_width(config.model.widths), lane))
        return pool(list(at.values())).point() if at else None

    def lane_fits(self, config: RunConfig) -> dict[str, CostFit]:
        """Each lane's cost fit over its pooled points of this config's kind of model (depth, batch size, family and
        task: a predict run never borrows a training fit), for lanes measured at MIN_SIZES_FOR_FIT sizes or more;
        what a run's explanation rests on."""
        kind = kind_of_config(config)
        if kind not in self._fits:
            by_lane: dict[str, list[SweepRow]] = {}
            for place, at in self._places.items():
                if place[:5] == kind:
                    by_lane.setdefault(place[-1], []).append(pool(list(at.values())))
            fits = {}
            for lane, rows in sorted(by_lane.items()):
                if len({r.flops_per_batch for r in rows}) >= MIN_SIZES_FOR_FIT:
                    fit = fit_cost_model([r.flops_per_batch for r in rows], [r.median_ms for r in rows])
                    if fit is not None:
                        fits[lane] = fit
            self._fits[kind] = fits
        return dict(self._fits[kind])

    def answers(self) -> tuple[Answer, ...]:
        """Per group of like-for-like points, each pair of lanes' verdict, in group and then lane order."""
        if self._answers is None:
            self._answers = tuple(self._judge())
        return self._answers

    def answers_about(self, rows: Iterable[SweepRow]) -> tuple[Answer, ...]:
        """The answers on the kinds of model `rows` measured (their whole groups: every width of that kind the
        findings holds, not only `rows`' own), for the lanes `rows` name."""
        kinds = {(r.family, r.task, r.batch_size) for r in rows}
        lanes = {r.lane for r in rows}
        return tuple(a for a in self.answers() if set(a.verdict.lanes) <= lanes
                     and any(a.matches(family, task, batch) for family, task, batch in kinds))

    def verdict_of(self, points: Sequence[SweepPoint], a: str, b: str) -> PairVerdict:
        """The answer on `a` and `b` where `points` are one of its groups (however a view groups and labels them:
        the report's words, a file's rows), else the one rule on `points` alone (a cut-short point the findings
        leave out makes another group)."""
        key = {(p.lane, p.width, p.flops_per_batch) for p in points if p.lane in (a, b)}
        for answer in self.answers():
            if set(answer.verdict.lanes) == {a, b} and {(p.lane, p.width, p.flops_per_batch)
                                                        for p in answer.points} == key:
                return answer.verdict
        return pair_verdict(points, a, b)

    def _judge(self) -> Iterable[Answer]:
        for label, (rows, along_batch) in sorted(row_groups(self.rows()).items()):
            points = [curve_point(r, along_batch) for r in rows]
            first = rows[0]
            places = {place_of(r) for r in rows}
            names = sorted({p.lane for p in points})
            fits = {}
            for lane in names:
                mine = sorted((p for p in points if p.lane == lane), key=lambda p: p.flops_per_batch)
                fits[lane] = fit_cost_model([p.flops_per_batch for p in mine], [p.median_ms for p in mine])
            for i, a in enumerate(names):
                for b in names[i + 1:]:
                    pair = [p for p in points if p.lane in (a, b)]
                    v = pair_verdict(pair, a, b)
                    runs = len({run_id for place in places if place[-1] in (a, b) for run_id in self._places[place]})
                    yield Answer(label, v, tuple(pair), runs, first.family, first.task,
                                 0 if along_batch else first.batch_size, first.layers,
                                 {lane: fits[lane] for lane in (a, b)})
