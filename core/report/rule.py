"""The decision rule a program can follow: per kind of model (hidden layers, batch size, variant) and pair of
lanes, which lane to use at a given number of FLOPs per batch — made from the one crossing rule
(core/analysis/verdict.py), so it says what `analyze` says of the same files.

Over the widths both lanes measured, each stretch where one lane leads answers that lane; a change of
the faster lane splits at the width `analyze` names (its FLOPs per batch); a stretch equal within noise
answers None ("too close to call"), and so does a gap between measured widths that no crossing spans.
Outside the measured range the rule answers None with the reason: it never extrapolates.
`choose(rule, flops)` reads the rule (a Rule, its JSON, or the JSON file) and answers a lane or None;
`decide` gives the reason too.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, Sequence, Union

from ..analysis.crossings import LaneFit, analyze_points
from ..analysis.points import SweepPoint
from ..analysis.verdict import Change, PairVerdict, State, Stretch, pair_verdict
from ..config import ConfigError, is_saved_kind
from ..json_data import JsonObject, JsonValue, as_map, as_seq, parse_json
from ..files.inputs import read_text_bounded
from ..files.atomic import atomic_write_text
from ..files.sweeps.rows import SweepRow, curve_point, row_groups
from .. import APP_VERSION
from ..words.numbers import fmt_flops, fmt_num
from ..words.verdict import pair_words, unit_of, stretch_words
from .inputs import SweepInput, file_facts, read_sweeps, sweep_sidecar
from .kinds import ALONG_BATCH, saved_words

SAMPLES_PER_BATCH = "samples per batch"  # unit_of's unit along batch size

FORMAT = "crossover-rule/1"
TOO_CLOSE = "too close to call"


@dataclass(frozen=True)
class RuleRange:
    """A range of FLOPs per batch with one answer: `lane`, or None with `reason`. It holds `flops_lo` and
    the FLOPs above it, up to `flops_hi` (that one too when `hi_inclusive`)."""

    flops_lo: float
    flops_hi: float
    hi_inclusive: bool
    lane: str | None
    reason: str
    width_lo: float
    width_hi: float

    def holds(self, flops: float) -> bool:
        return self.flops_lo <= flops < self.flops_hi or (self.hi_inclusive and flops == self.flops_hi)

    def to_json(self) -> JsonObject:
        return {"flops_lo": self.flops_lo, "flops_hi": self.flops_hi, "hi_inclusive": self.hi_inclusive,
                "lane": self.lane, "reason": self.reason, "width_lo": self.width_lo, "width_hi": self.width_hi}

    @classmethod
    def from_json(cls, d: Mapping[str, JsonValue]) -> RuleRange:
        lane = d.get("lane")
        return cls(_num(d["flops_lo"]), _num(d["flops_hi"]), bool(d.get("hi_inclusive")),
                   None if lane is None else str(lane), str(d.get("reason") or ""),
                   _num(d.get("width_lo")), _num(d.get("width_hi")))


@dataclass(frozen=True)
class RuleChange:
    """Where the faster lane changes (the verdict's Change: between `width_lo`, where `faster_below` last leads,
    and `width_hi`, where `faster_above` first does), with the FLOPs per batch at those two widths."""

    faster_below: str
    faster_above: str
    width: float | None  # where the medians cross; None where a stretch within noise lies between
    width_lo: int
    width_hi: int
    flops_per_batch: float | None  # at `width`
    flops_lo: float | None
    flops_hi: float | None

    @classmethod
    def of(cls, change: Change, flops: Mapping[int, float]) -> RuleChange:
        return cls(change.faster_below, change.faster_above, change.width, change.width_lo, change.width_hi,
                   change.flops_per_batch, flops.get(change.width_lo), flops.get(change.width_hi))

    def to_json(self) -> JsonObject:
        return {"faster_below": self.faster_below, "faster_above": self.faster_above, "width": self.width,
                "width_lo": self.width_lo, "width_hi": self.width_hi, "flops_per_batch": self.flops_per_batch,
                "flops_lo": self.flops_lo, "flops_hi": self.flops_hi}

    @classmethod
    def from_json(cls, d: Mapping[str, JsonValue]) -> RuleChange:
        return cls(str(d.get("faster_below") or ""), str(d.get("faster_above") or ""), _num_or_none(d.get("width")),
                   int(_num(d.get("width_lo"))), int(_num(d.get("width_hi"))),
                   _num_or_none(d.get("flops_per_batch")), _num_or_none(d.get("flops_lo")),
                   _num_or_none(d.get("flops_hi")))


@dataclass(frozen=True)
class RuleFit:
    """One lane's fitted cost line as the rule keeps it (core/analysis/crossings.py LaneFit.to_json): its intercept,
    its throughput, the points it rests on, each width's residual, and whether it passed its check."""

    overhead_ms: float | None
    gflops: float | None
    n_points: int
    residuals: Mapping[str, float | None]
    fit_ok: bool

    @classmethod
    def of(cls, fit: LaneFit) -> RuleFit:
        return cls(fit.overhead_ms, fit.gflops, fit.n_points, {str(w): r for w, r in fit.residuals}, fit.ok)

    def to_json(self) -> JsonObject:
        return {"overhead_ms": self.overhead_ms, "gflops": self.gflops, "n_points": self.n_points,
                "residuals": dict(self.residuals), "fit_ok": self.fit_ok}

    @classmethod
    def from_json(cls, d: Mapping[str, JsonValue]) -> RuleFit:
        return cls(_num_or_none(d.get("overhead_ms")), _num_or_none(d.get("gflops")),
                   int(_num(d.get("n_points") or 0)),
                   {str(w): _num_or_none(r) for w, r in as_map(d.get("residuals")).items()}, bool(d.get("fit_ok")))


@dataclass(frozen=True)
class Decision:
    """What the rule answers at some FLOPs per batch: a lane, or None and why."""

    lane: str | None
    reason: str


@dataclass(frozen=True)
class PairRule:
    """One pair of lanes of one kind: the verdict in the app's words, the rule as a sentence, and its segments."""

    lanes: tuple[str, str]
    state: State
    verdict: str  # core/words/verdict.py's sentence, as `analyze` prints it
    statement: str  # "use jax:gpu0 when FLOPs per batch ≥ … (…), else jax:cpu; …"
    segments: tuple[RuleRange, ...]
    changes: tuple[RuleChange, ...]  # the verdict's changes, each with the FLOPs at its spread's ends
    fits: Mapping[str, RuleFit]  # each lane's fitted cost line
    predicted_flops: float | None  # where the two fitted lines meet
    unit: str = "units"  # what its x counts (unit_of): "samples per batch" along batch size, else the width's unit

    @property
    def flops_lo(self) -> float:
        return self.segments[0].flops_lo if self.segments else math.nan

    @property
    def flops_hi(self) -> float:
        return self.segments[-1].flops_hi if self.segments else math.nan

    def decide(self, flops: float) -> Decision:
        if not self.segments:
            return Decision(None, self.verdict)
        if not self.flops_lo <= flops <= self.flops_hi:
            return Decision(None, f"{fmt_flops(flops)} per batch is outside the measured range of {self.lanes[0]} "
                                  f"and {self.lanes[1]} ({fmt_flops(self.flops_lo)}–{fmt_flops(self.flops_hi)}, "
                                  f"{_w(self.segments[0].width_lo)}–{_w(self.segments[-1].width_hi)} {self.unit}): "
                                  "the rule does not extrapolate")
        segment = next((s for s in self.segments if s.holds(flops)), self.segments[-1])
        return Decision(segment.lane, segment.reason)

    def to_json(self) -> JsonObject:
        return {"lanes": list(self.lanes), "state": str(self.state), "verdict": self.verdict,
                "statement": self.statement, "segments": [s.to_json() for s in self.segments],
                "changes": [c.to_json() for c in self.changes],
                "fits": {lane: fit.to_json() for lane, fit in self.fits.items()}, "predicted_flops": self.predicted_flops,
                "unit": self.unit}

    @classmethod
    def from_json(cls, d: Mapping[str, JsonValue]) -> PairRule:
        lanes = [str(x) for x in as_seq(d.get("lanes"))]
        if len(lanes) != 2:
            raise ValueError("a pair names two lanes")
        predicted = d.get("predicted_flops")
        return cls((lanes[0], lanes[1]), _state(d.get("state")), str(d.get("verdict") or ""),
                   str(d.get("statement") or ""), tuple(RuleRange.from_json(as_map(s)) for s in as_seq(d.get("segments"))),
                   tuple(RuleChange.from_json(as_map(c)) for c in as_seq(d.get("changes"))),
                   {str(k): RuleFit.from_json(as_map(v)) for k, v in as_map(d.get("fits")).items()},
                   None if predicted is None else _num(predicted), str(d.get("unit") or "units"))


@dataclass(frozen=True)
class KindRule:
    """The rule for one kind of model: one group of `analyze` (a variant and a batch size), its depth."""

    group: str
    variant: str
    batch_size: int  # 0 for a group along batch size (one width, several batch sizes)
    layers: tuple[int, ...]
    lanes: tuple[str, ...]
    devices: Mapping[str, str]  # lane → the device it ran on
    pairs: tuple[PairRule, ...]
    family: str = ""  # the kind of model (SweepRow.family: "mlp", "saved mine.keras"); "" in rules made before it

    def describe(self) -> str:
        """"2 hidden layers · batch 128" (and the variant when it is not the base one), "… · along batch size";
        the group's own label first where a file holds several (a task, a kind of model). A saved model has no
        width and no hidden layers of one: "your saved model mine.keras (6 layers) · along batch size"."""
        if is_saved_kind(self.family):
            return self._describe_saved()
        depth = "/".join(map(str, self.layers)) or "?"
        plural = "" if self.layers == (1,) else "s"
        variant = f" · {self.variant}" if self.variant and self.variant != "base" else ""
        size = f"batch {self.batch_size}" if self.batch_size else "along batch size"
        group = f"{self.group}: " if self.group != "all" else ""
        return f"{group}{depth} hidden layer{plural} · {size}{variant}"

    def _describe_saved(self) -> str:
        # The group's label less what is said here (its kind, "saved NAME", and its one width, "width 0"): a task
        # or a variant that tells it from the file's other groups.
        others = [part for part in (self.group.split(" · ") if self.group != "all" else [])
                  if part != self.family and not part.startswith("width ")]
        depth = "/".join(map(str, self.layers))
        layers = f" ({depth} layer{'' if self.layers == (1,) else 's'})" if depth else ""
        variant = ([self.variant] if self.variant and self.variant != "base" and self.variant not in others else [])
        return " · ".join([*others, f"{saved_words(self.family)}{layers}", ALONG_BATCH, *variant])

    def decide(self, flops: float) -> Decision:
        """The lane every pair prefers over each other lane; None with the reasons when no lane is."""
        if not self.pairs:
            return Decision(None, f"only one lane ({', '.join(self.lanes)}): nothing to choose between")
        answers = {p.lanes: p.decide(flops) for p in self.pairs}
        for lane in self.lanes:
            mine = [d for pair, d in answers.items() if lane in pair]
            if mine and all(d.lane == lane for d in mine):
                return Decision(lane, "; ".join(d.reason for d in mine))
        beaten = {lane for pair, d in answers.items() if d.lane is not None for lane in pair if lane != d.lane}
        open_pairs = [d.reason for pair, d in answers.items() if d.lane is None and not set(pair) & beaten]
        return Decision(None, "; ".join(open_pairs) or "no lane is faster than every other one here")

    def to_json(self) -> JsonObject:
        return {"group": self.group, "variant": self.variant, "batch_size": self.batch_size,
                "layers": list(self.layers), "lanes": list(self.lanes), "devices": dict(self.devices),
                "describe": self.describe(), "pairs": [p.to_json() for p in self.pairs], "family": self.family}

    @classmethod
    def from_json(cls, d: Mapping[str, JsonValue]) -> KindRule:
        batch = int(_num(d.get("batch_size") or 0))
        pairs = []
        for p in (as_map(p) for p in as_seq(d.get("pairs"))):
            pair = PairRule.from_json(p)  # a rule written before pairs kept their unit: along batch size, batches
            pairs.append(replace(pair, unit=SAMPLES_PER_BATCH) if not batch and "unit" not in p else pair)
        return cls(str(d.get("group") or ""), str(d.get("variant") or ""), batch,
                   tuple(int(_num(x)) for x in as_seq(d.get("layers"))), tuple(str(x) for x in as_seq(d.get("lanes"))),
                   {str(k): str(v) for k, v in as_map(d.get("devices")).items()}, tuple(pairs),
                   str(d.get("family") or ""))


@dataclass(frozen=True)
class Rule:
    """Every kind's rule, the files and machines it came from, and the app that made it."""

    kinds: tuple[KindRule, ...]
    files: tuple[JsonObject, ...] = ()
    machines: Mapping[str, str] = field(default_factory=dict)  # file label → its machine ("" when unnamed)
    app_version: str = APP_VERSION

    def to_json(self) -> JsonObject:
        return {"format": FORMAT, "app_version": self.app_version, "files": list(self.files),
                "machines": dict(self.machines), "kinds": [k.to_json() for k in self.kinds]}

    @classmethod
    def from_json(cls, d: Mapping[str, JsonValue]) -> Rule:
        if d.get("format") != FORMAT:
            raise ValueError(f"not a Crossover rule ({FORMAT})")
        return cls(tuple(KindRule.from_json(as_map(k)) for k in as_seq(d.get("kinds"))),
                   tuple(dict(as_map(f)) for f in as_seq(d.get("files"))),
                   {str(k): str(v) for k, v in as_map(d.get("machines")).items()}, str(d.get("app_version") or ""))

    def lines(self) -> list[str]:
        """The rule as a person reads it: per kind, each pair's statement."""
        out = []
        for kind in self.kinds:
            prefix = f"{kind.describe()}: " if kind.pairs else ""
            out += [f"{prefix}{p.statement}" for p in kind.pairs] or [f"{kind.describe()}: one lane, no rule"]
        return out


RuleSource = Union[Rule, Mapping[str, JsonValue], str, os.PathLike]
MAX_RULE_BYTES = 16 << 20  # a rule of many kinds and lanes is a few hundred KB


def load_rule(source: RuleSource) -> Rule:
    """A Rule from itself, its JSON (as json.load gives it) or the JSON file `rule --json` wrote."""
    if isinstance(source, Rule):
        return source
    if isinstance(source, Mapping):
        return Rule.from_json(source)
    try:
        data = parse_json(read_text_bounded(source, MAX_RULE_BYTES), os.fspath(source))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"the rule {os.fspath(source)} cannot be read: {exc}") from None
    return Rule.from_json(as_map(data))


def decide(rule: RuleSource, flops_per_batch: float, *, batch_size: int | None = None,
           layers: int | None = None, variant: str | None = None) -> Decision:
    """The lane to use at `flops_per_batch` for the kind named (the only one when the rule has one kind),
    or None with the reason: outside the measured range, too close to call, or no such kind."""
    r = load_rule(rule)
    if not (isinstance(flops_per_batch, (int, float)) and math.isfinite(flops_per_batch) and flops_per_batch > 0):
        return Decision(None, f"FLOPs per batch {flops_per_batch!r} is not a positive number")
    kinds = [k for k in r.kinds if (batch_size is None or k.batch_size == batch_size)
             and (layers is None or layers in k.layers) and (variant is None or k.variant == variant)]
    if not kinds:
        known = ", ".join(k.describe() for k in r.kinds) or "none"
        return Decision(None, f"the rule has no kind like that (it knows: {known})")
    if len(kinds) > 1:
        return Decision(None, "the rule holds several kinds (" + ", ".join(k.describe() for k in kinds)
                        + "): name one with batch_size=, layers= or variant=")
    return kinds[0].decide(float(flops_per_batch))


def choose(rule: RuleSource, flops_per_batch: float, *, batch_size: int | None = None,
           layers: int | None = None, variant: str | None = None) -> str | None:
    """The lane to use at `flops_per_batch`, or None where the rule does not know (`decide` says why)."""
    return decide(rule, flops_per_batch, batch_size=batch_size, layers=layers, variant=variant).lane


# ---------------------------------------------------------------- making the rule


def _w(width: float) -> str:
    return f"{int(round(width)):,}" if math.isfinite(width) else "–"


def _flops_by_width(points: Sequence[SweepPoint], lanes: tuple[str, str]) -> dict[int, float]:
    """The FLOPs per batch at each width both lanes measured, as the crossing rule takes them (their geometric
    mean: the same model has the same FLOPs on both)."""
    by: dict[str, dict[int, float]] = {}
    for p in points:
        if p.lane in lanes:
            by.setdefault(p.lane, {})[p.width] = p.flops_per_batch
    a, b = by.get(lanes[0], {}), by.get(lanes[1], {})
    return {w: math.sqrt(max(a[w], 1.0) * max(b[w], 1.0)) for w in sorted(set(a) & set(b))}


def _stretch_reason(s: Stretch, unit: str = "units") -> str:
    said = stretch_words(s, unit)
    return said if s.leader else f"{TOO_CLOSE}: {said}"


def pair_segments(v: PairVerdict, flops: Mapping[int, float], unit: str = "units") -> list[RuleRange]:
    """The verdict's stretches as ranges of FLOPs per batch, split where `analyze` places each change; each
    reason in `unit` (unit_of: "samples per batch" along batch size)."""
    segments: list[RuleRange] = []
    stretches = v.stretches
    split = {(c.width_lo, c.width_hi): c for c in v.changes if c.width is not None and c.flops_per_batch}
    lo_f, lo_w = (flops[stretches[0].width_lo], float(stretches[0].width_lo)) if stretches else (math.nan, math.nan)
    for i, s in enumerate(stretches):
        nxt = stretches[i + 1] if i + 1 < len(stretches) else None
        change = split.get((s.width_hi, nxt.width_lo)) if nxt is not None else None
        if change is not None and change.width is not None and change.flops_per_batch:
            segments.append(RuleRange(lo_f, change.flops_per_batch, False, s.leader, _stretch_reason(s, unit), lo_w,
                                    change.width))
            lo_f, lo_w = change.flops_per_batch, change.width
            continue
        segments.append(RuleRange(lo_f, flops[s.width_hi], True, s.leader, _stretch_reason(s, unit), lo_w, s.width_hi))
        if nxt is not None:
            gap = (f"not measured between {_w(s.width_hi)} and {_w(nxt.width_lo)} {unit}, where the verdict goes "
                   f"from \"{stretch_words(s, unit)}\" to \"{stretch_words(nxt, unit)}\"")
            segments.append(RuleRange(flops[s.width_hi], flops[nxt.width_lo], False, None, gap, s.width_hi,
                                    nxt.width_lo))
            lo_f, lo_w = flops[nxt.width_lo], float(nxt.width_lo)
    return segments


def _depth(layers: Sequence[int]) -> str:
    depth = "/".join(map(str, layers)) or "?"
    return f"{depth} hidden layer{'' if list(layers) == [1] else 's'}"


def pair_statement(v: PairVerdict, segments: Sequence[RuleRange], flops: Mapping[int, float], layers: Sequence[int],
                   batch: int, unit: str = "units") -> str:
    """The rule for one pair in a sentence: "use B when FLOPs per batch ≥ X (2 hidden layers of ≥ 110 units at
    batch 128), else A", with the spread and the measured range; along batch size "(batch ≥ 48)"."""
    if not segments:
        return f"no rule: {pair_words(v, unit)}"
    measured = (f"measured from {fmt_flops(segments[0].flops_lo)} to {fmt_flops(segments[-1].flops_hi)} per batch "
                f"({_w(segments[0].width_lo)}–{_w(segments[-1].width_hi)} {unit}); outside that, no answer")
    if v.state is State.TOO_CLOSE:
        return f"no choice, {TOO_CLOSE}: {pair_words(v, unit)}; {measured}"
    marked = [c for c in v.changes if c.width is not None]
    if v.state is State.CROSSES and len(v.changes) == 1 and marked and len(segments) == 2:
        c = marked[0]
        spread = (f"the change lies between {_w(c.width_lo)} and {_w(c.width_hi)} {unit} within the noise"
                  + (f" ({fmt_flops(flops[c.width_lo])}–{fmt_flops(flops[c.width_hi])} per batch)"
                     if c.width_lo in flops and c.width_hi in flops else ""))
        where = (f"batch ≥ {fmt_num(c.width, 2)}" if unit == SAMPLES_PER_BATCH
                 else f"{_depth(layers)} of ≥ {fmt_num(c.width, 2)} {unit} at batch {batch}")
        return (f"use {c.faster_above} when FLOPs per batch ≥ {fmt_flops(c.flops_per_batch or math.nan)} "
                f"({where}), else {c.faster_below}; {spread}; {measured}")
    if v.state is State.LEADS and len(segments) == 1:
        every = "batch size" if unit == SAMPLES_PER_BATCH else "width"
        return f"use {v.leader} (faster at every measured {every}); {measured}"
    parts = []
    for s in segments:
        where = f"{fmt_flops(s.flops_lo)}–{fmt_flops(s.flops_hi)}"
        parts.append(f"{where}: use {s.lane}" if s.lane else f"{where}: no choice ({s.reason})")
    return "; ".join(parts) + f"; {measured}"


def pair_rule(points: Sequence[SweepPoint], a: str, b: str, layers: Sequence[int], batch: int) -> PairRule:
    v = pair_verdict(points, a, b)
    flops = _flops_by_width(points, v.lanes)
    unit = unit_of(points)
    segments = pair_segments(v, flops, unit)
    analysis = analyze_points([p for p in points if p.lane in v.lanes])
    changes = tuple(RuleChange.of(c, flops) for c in v.changes)
    predicted = next((p.flops_per_batch for p in analysis.predicted), None)
    fits = {lane: RuleFit.of(fit) for lane, fit in analysis.lanes.items()}
    return PairRule(v.lanes, v.state, pair_words(v, unit), pair_statement(v, segments, flops, layers, batch, unit),
                    tuple(segments), changes, fits, predicted, unit)


def kind_rules(rows: Sequence[SweepRow]) -> list[KindRule]:
    """One KindRule per group of `analyze` (variant and batch size), each pair of its lanes by the one rule."""
    out = []
    for label, (mine, batch_axis) in row_groups(rows).items():
        points = [curve_point(r, batch_axis) for r in mine]
        variant, batch = mine[0].variant, 0 if batch_axis else mine[0].batch_size
        layers = tuple(sorted({r.layers for r in mine if r.layers}))
        lanes = tuple(sorted({p.lane for p in points}))
        devices = {r.lane: r.device for r in mine if r.device}
        pairs = tuple(pair_rule(points, a, b, layers, batch) for i, a in enumerate(lanes) for b in lanes[i + 1:])
        out.append(KindRule(label, variant, batch, layers, lanes, devices, pairs, mine[0].family))
    return out


def rule_of(sweeps: Sequence[SweepInput]) -> Rule:
    """The rule of sweep files read together, as `analyze` reads them."""
    files: list[JsonObject] = []
    for s in sweeps:
        facts = [file_facts(s.path, "sweep")] + ([file_facts(side, "sidecar")] if (side := sweep_sidecar(s.path))
                                                 else [])
        files += [{**f.to_json(), "label": s.label, "machine": s.machine or None, "devices": list(s.devices)}
                  for f in facts]
    return Rule(tuple(kind_rules([r for s in sweeps for r in s.rows])), tuple(files),
                {s.label: s.machine for s in sweeps})


def make_rule(paths: Sequence[str], labels: Mapping[str, str] | None = None) -> Rule:
    return rule_of(read_sweeps(paths, labels))


def write_rule(rule: Rule, path: str | os.PathLike) -> Path:
    """The rule's JSON, written atomically (no NaN: a missing figure is null)."""
    try:
        text = json.dumps(_clean(rule.to_json()), indent=1, allow_nan=False)
    except ValueError as exc:
        raise ConfigError(f"the rule cannot be written as JSON: {exc}") from None
    return atomic_write_text(path, text + "\n")


# ---------------------------------------------------------------- reading JSON back


def _clean(value: JsonValue) -> JsonValue:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _state(x: JsonValue) -> State:
    """A pair's state as PairRule.to_json wrote it; ValueError for any other."""
    try:
        return State(x)
    except ValueError:
        raise ValueError(f"a pair's state is not one of {', '.join(s.value for s in State)}") from None


def _num_or_none(x: JsonValue) -> float | None:
    """A number a rule file holds, or None where it held none (null, or NaN written as null)."""
    return None if x is None else _num(x)


def _num(x: JsonValue) -> float:
    if x is None:
        return math.nan
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"{x!r} is not a number")
    return float(x)
