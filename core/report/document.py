"""What a report says, before it is rendered: the question and the answer first, then each file's figures with
their numbers, the fits, the floor, prices, the settings that change speed, the machines, the command that
reproduces each file, and the source files' names, sizes and SHA-256. Every verdict sentence comes from
core/words/, as the CLI and the window say it; nothing here words a verdict of its own."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from markupsafe import Markup

from ..machine import HostInfo
from ..analysis import tails
from ..analysis.anatomy import TRAIN_LADDER, stacked
from ..analysis.crossings import analyze_points
from ..analysis.leads import refinement_of_sidecar
from ..analysis.points import SweepPoint
from ..json_data import JsonValue
from ..config import is_saved_kind
from ..files.findings import Findings
from ..files.run_files import sidecar_runs
from ..files.sweeps import SweepAskedFor
from ..files.sweep_rows import SweepRow, curve_point, group_rows
from ..files.sweeps import run_rows
from ..records import BatchTiming
from ..results import RunResult
from ..version import APP_VERSION
from ..words.anatomy import (CALL_CLOCKS, CLOCKS, PART_LABELS, PER_CALL_CLOCK, SYNCED_CLOCK, clock_lines, fmt_part, fmt_rung, floor_sentence,
                             why_sentence)
from ..words.numbers import fmt_flops, fmt_joules, fmt_num, fmt_range
from ..analysis.serving_load import rates_of, run_points
from ..words.load import compare_words, rate_lines
from ..words.load import sweep_lines as sweep_lines_load
from ..words.run import busy_lines, explain, latency_lines, run_headline, verdict_lines
from ..words.sweep import (cost_lines, busy_lines as sweep_busy_lines, energy_lines, picture_title, refine_lines, run_crossing_lines,
                           sweep_lines)
from ..words.anatomy import floor_crossover_lines, floor_notes
from ..words.verdict import pair_words, unit_of
from .inputs import AnatomyInput, Inputs, RunInput, SweepInput
from .kinds import saved_model_words, worded_groups, worded_points
from .reproduce import anatomy_command, reproduce_command
from .rule import Rule, rule_of
from .svg import Bar, Plot, Series, bars_svg, plot_svg

Cell = str


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]


@dataclass(frozen=True)
class Figure:
    """A picture, its numbers in a table under it, and the file name it takes beside a Markdown report."""

    title: str
    svg: Markup
    standalone: Markup
    table: Table
    file_name: str


@dataclass(frozen=True)
class Section:
    """One source's part of the report: what it measured, its pictures, and its facts."""

    title: str
    kind: str  # sweep | run | anatomy
    lines: tuple[str, ...]  # sentences in the app's words
    figures: tuple[Figure, ...]
    tables: tuple[tuple[str, Table], ...] = ()  # (caption, table): fits, prices, settings


@dataclass(frozen=True)
class Report:
    title: str
    question: str
    answer: tuple[str, ...]  # the verdict, in the app's words
    facts: tuple[tuple[str, str], ...]  # model, task, lanes, machines, clock
    rule_lines: tuple[str, ...]
    sections: tuple[Section, ...]
    machines: tuple[tuple[str, Table], ...]
    settings: tuple[tuple[str, Table], ...]
    reproduce: tuple[tuple[str, str], ...]  # (file, command)
    files: Table
    app_version: str = APP_VERSION
    notes: tuple[str, ...] = field(default_factory=tuple)


def _sentence(text: str) -> str:
    """A line as the CLI prints it: the words as they are (a lane's name keeps its case), with a full stop."""
    text = text.strip()
    return text + ("" if text.endswith(".") else ".") if text else ""


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> Table:
    return Table(tuple(header), tuple(tuple(r) for r in rows))


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")[:60] or "figure"


def _figure(title: str, svg_of: Plot | tuple[str, Sequence[Bar], str], table: Table, name: str) -> Figure:
    if isinstance(svg_of, Plot):
        return Figure(title, plot_svg(svg_of), plot_svg(svg_of, standalone=True), table, name)
    t, bars, unit = svg_of
    return Figure(title, bars_svg(t, bars, unit), bars_svg(t, bars, unit, standalone=True), table, name)


# ---------------------------------------------------------------- sweeps


def _fit_line(fit_overhead: float | None, fit_gflops: float | None, flops: Sequence[float]) -> list[tuple[float, float]]:
    if fit_overhead is None or fit_gflops is None or not flops:
        return []
    lo, hi = min(flops), max(flops)
    xs = [lo * (hi / lo) ** (i / 24) for i in range(25)] if lo > 0 else []
    return [(x, fit_overhead + x * 1e-6 / fit_gflops) for x in xs]


def sweep_figure(label: str, points: Sequence[SweepPoint], n: int) -> Figure:
    """ms per step against FLOPs per batch, each lane's points and fitted line, the crossings marked."""
    analysis = analyze_points(points)
    lanes = sorted({p.lane for p in points})
    series: list[Series] = []
    for i, lane in enumerate(lanes):
        mine = sorted((p for p in points if p.lane == lane), key=lambda p: p.width)
        series.append(Series(lane, [(p.flops_per_batch, p.median_ms) for p in mine], "points", i))
        fit = analysis.lanes.get(lane)
        line = _fit_line(fit.overhead_ms if fit else None, fit.gflops if fit else None,
                         [p.flops_per_batch for p in mine])
        if line:
            series.append(Series(f"{lane} fit", line, "fit", i))
    unit = unit_of(points)
    batch_axis = any(p.axis == "batch" for p in points)  # x is the batch size: say so in the marks and the table
    marks = [(c.flops_per_batch, f"≈{fmt_num(c.width, 2)} {'per batch' if batch_axis else unit}")
             for c in analysis.crossovers if math.isfinite(c.flops_per_batch)]
    title = f"Sweep ({label}): ms per step against FLOPs per batch"
    plot = Plot(title, "FLOPs per batch", "ms per step (median)", series, marks=marks, x_flops=True)
    rows = [(p.lane, f"{p.width:,}", fmt_num(p.flops_per_batch / 1e6), fmt_num(p.median_ms),
             fmt_range(p.p10_ms, p.p90_ms, 3) if math.isfinite(p.p10_ms) else "–", str(p.n_batches),
             fmt_num(p.floor_ms) if math.isfinite(p.floor_ms) else "–")
            for p in sorted(points, key=lambda p: (p.width, p.lane))]
    table = _table(["lane", "batch size" if batch_axis else f"width ({unit})", "MFLOP/batch", "median ms",
                    "p10–p90 ms", "steady batches", "floor ms"], rows)
    return _figure(title, plot, table, f"figure-{n}-sweep-{_slug(label)}.svg")


def fits_table(points: Sequence[SweepPoint]) -> Table:
    analysis = analyze_points(points)

    def worst(residuals: Sequence[tuple[int, float | None]]) -> str:
        values = [abs(r) for _, r in residuals if r is not None]
        return f"{100 * max(values):.0f}%" if values else "–"

    rows = [(lane, fmt_num(f.overhead_ms), fmt_num(f.gflops), str(f.n_points), worst(f.residuals),
             "yes" if f.ok else "no") for lane, f in analysis.lanes.items()]
    rows += [(f"{p.lanes[0]} × {p.lanes[1]}", "", "", "", "", f"fitted lines cross at {fmt_flops(p.flops_per_batch)}"
              " per batch") for p in analysis.predicted]
    return _table(["lane", "intercept ms (fit)", "GFLOP/s (fit)", "points", "worst residual", "fit within 10%"], rows)


def _host_table(host: HostInfo) -> Table:
    rows = [("machine", host.machine or "–"), ("CPU", f"{host.cpu or '–'} ({host.cpu_cores or '?'} cores usable)")]
    rows += [("GPU", f"{g.name} (driver {g.driver}, {g.memory})") for g in host.gpus]
    rows += [(key, value) for key, value in (("platform", host.platform), ("python", host.python),
                                             ("numpy", host.numpy), ("keras", host.keras),
                                             ("app_version", host.app_version)) if value]
    rows += [(f"backend {k}", v if v is not None else "not installed") for k, v in host.backends]
    return _table(["", "value"], rows)


SPEED_KEYS = ("backend", "threads", "jit_compile", "jit_source", "steps_per_execution", "feeding", "placement",
              "mixed_precision", "xla_flags", "data_source", "samples", "steps_per_epoch", "warmup_steps",
              "keras_version", "jax_version", "tensorflow_version", "torch_version")


def _settings_table(meta: Mapping[str, JsonValue], runs: Sequence[RunResult]) -> Table:
    """What changes speed, as the sidecar recorded it: the training settings asked for, and each lane's resolved
    ones (backend, threads, jit, steps per execution, feeding, precision). `runs`: the sidecar's, as its reader
    gave them."""
    rows: list[tuple[str, str]] = []
    if runs:
        config = runs[0].config
        rows += [(f"train {k}", str(v)) for k, v in dataclasses.asdict(config.train).items()]
        rows += [(f"model {k}", str(v)) for k, v in dataclasses.asdict(config.model).items() if k != "widths"]
    sweep = SweepAskedFor.of_sidecar(meta)
    if sweep is not None:
        rows += [("sweep layers", str(sweep.layers)), ("sweep steady_steps", str(sweep.steady_steps)),
                 ("sweep seconds_per_point", str(sweep.seconds_per_point)), ("sweep floor", str(sweep.floor)),
                 ("sweep batch_sizes", str(list(sweep.batch_sizes)))]
    if runs and runs[0].schedule:
        rows.append(("schedule", str(runs[0].schedule)))
    for lane, result in (runs[0].lanes.items() if runs else ()):
        settings = result.started.settings if result.started is not None else {}
        rows += [(f"{lane} {k}", str(settings[k])) for k in SPEED_KEYS if k in settings]
    return _table(["setting", "value"], rows)


def sweep_section(sweeps: Sequence[SweepInput], n0: int, findings: Findings) -> Section:
    rows = [r for s in sweeps for r in s.rows]
    groups = worded_points(rows)
    prices = {k: v for s in sweeps for k, v in s.prices.items()}
    # The answer is the findings' (core/files/findings.py): files of one machine pooled where they measured a
    # width twice, as `analyze` and the window say it.
    lines = [_sentence(x) for x in sweep_lines(groups, findings) + floor_crossover_lines(groups) + floor_notes(groups)
             + sweep_busy_lines(groups)]
    lines += [_sentence(x) for x in cost_lines(groups, prices)] if prices else []
    lines += [_sentence(x) for x in energy_lines(groups)]  # where a counter measured energy (core/lane/energy.py)
    figures = tuple(sweep_figure(label, points, n0 + i) for i, (label, points) in enumerate(groups.items()))
    tables: list[tuple[str, Table]] = [(f"Fitted cost models ({label}): ms per step = fixed + FLOPs / throughput",
                                        fits_table(points)) for label, points in groups.items()]
    # x as the sweep's tables have it: the batch size along batch size (a saved model's one width, 0, is none)
    curves = list(worded_groups(rows).values())
    energy = [(r.lane, f"{curve_point(r, axis).width:,}", fmt_joules(r.energy_j_per_msample), fmt_num(r.mean_w),
               fmt_num(r.idle_w), r.energy_counter)
              for mine, axis in curves for r in mine if math.isfinite(r.energy_j_per_msample)]
    axes = {axis for _, axis in curves}
    if energy:
        x = "batch size" if axes == {True} else "width" if axes == {False} else "width (batch size along batch size)"
        tables.append(("Energy per point (joules per million samples, mean and idle watts, the counter read)",
                       _table(["lane", x, "J per M samples", "mean W", "idle W", "counter"], energy)))
    if prices:
        tables.append(("Prices (dollars per hour)", _table(["lane", "$/h"],
                                                           [(k, f"${v:,.2f}") for k, v in sorted(prices.items())])))
    names = ", ".join(f"{s.label} ({Path(s.path).name})" for s in sweeps)
    return Section(f"Sweep: {names}", "sweep", tuple(lines), figures, tuple(tables))


# ---------------------------------------------------------------- runs


def _decimate(records: Sequence[BatchTiming], most: int = 1500) -> list[BatchTiming]:
    step = max(1, math.ceil(len(records) / most))
    return list(records[::step])


def run_figure(run: RunResult, n: int) -> Figure:
    """ms per batch along the run's steps, per lane (warm-up batches included, as measured)."""
    series = []
    for i, (lane, result) in enumerate(run.lanes.items()):
        records = _decimate([r for r in result.records if r.ms > 0])
        series.append(Series(lane, [(float(r.step), r.ms) for r in records], "line", i))
    title = f"Run {run.run_id}: ms per batch along the run"
    plot = Plot(title, "step", "ms per batch", series, log_x=False, log_y=True)
    rows = []
    for lane, result in run.lanes.items():
        s = result.summary
        device = result.started.device if result.started else ""
        rows.append((lane, device, str(result.status), str(s.n_batches) if s else "–",
                     fmt_num(s.median_ms) if s else "–",
                     fmt_range(s.p10_ms, s.p90_ms, 3)
                     if s and math.isfinite(s.p10_ms) and tails.spread_shown(run.config.train.task, s.n_batches)
                     else "–",
                     fmt_num(s.samples_per_s) if s else "–", fmt_num(s.gflops) if s else "–",
                     fmt_num(s.warmup_s) if s else "–"))
    table = _table(["lane", "device", "status", "steady", "median ms", "p10–p90 ms", "samples/s", "GFLOP/s",
                    "warm-up s"], rows)
    return _figure(title, plot, table, f"figure-{n}-run-{_slug(run.run_id)}.svg")


def _segment_widths(run: RunResult) -> list[int]:
    """The widths a run's segments trained, in order (one for a plain run; more for a ramp or a drag)."""
    return list(dict.fromkeys(r.width for r in run_rows(run) if r.stage == "ramp"))


def run_model_words(run: RunResult) -> str:
    """What a run trained: its model, or for a ramp (or a width dragged while it ran) the widths it went through."""
    widths = _segment_widths(run)
    batch = f"batch {run.config.train.batch_size}"
    if len(widths) > 1:
        layers = len(run.config.model.widths)
        return (f"hidden width {' → '.join(f'{w:,}' for w in widths)} ({layers} layer{'s' if layers != 1 else ''}) "
                f"· {batch}")
    return f"{run.config.model.label()} · {batch}"


def run_answer(run: RunResult) -> list[str]:
    """The run's answer in the app's words: where the lanes cross for a run whose model changed (the window's
    summary says the same), else the verdict on its model; the busy note either way."""
    summaries = [lane.summary for lane in run.lanes.values() if lane.summary is not None]
    if len(_segment_widths(run)) > 1:
        return [_sentence(x) for x in run_crossing_lines(run) + busy_lines(summaries)] or \
            [_sentence("the lanes have not both completed two of the run's widths: no crossing can be stated")]
    task = run.config.train.task
    return [_sentence(x) for x in run_headline(run)  # the CLI's and the window's words for this run
            + (latency_lines(summaries, run.config.train.batch_size) if task == "predict" else [])]


def _last_model(run: RunResult) -> str:
    rows = [r for r in run_rows(run) if r.stage == "ramp"]
    return f"its last model, hidden {rows[-1].width:,}" if rows else run.config.model.label()


def load_lines(runs: Sequence[RunResult]) -> list[str]:
    """A load's runs (run --arrival-rate, sweep --arrival-rates) in the words the CLI and analyze say them: each
    rate's lanes, which answers sooner, and what each lane holds (core/words/load.py)."""
    points = run_points(runs)
    lines = [line for rate in rates_of(points) for line in rate_lines(points, rate)]
    return lines + (sweep_lines_load(points) if len(rates_of(points)) > 1 else [])


def run_section(item: RunInput, n0: int) -> Section:
    lines: list[str] = []
    figures: list[Figure] = []
    if item.runs and all(run.config.train.arrival_rate is not None for run in item.runs):  # serving under load
        lines = [_sentence(x) for x in load_lines(item.runs)]
        figures = [run_figure(run, n0 + i) for i, run in enumerate(item.runs)]
        return Section(f"Serving under load: {Path(item.path).name}", "run", tuple(lines), tuple(figures),
                       (("Settings that change speed", _settings_table(item.meta, item.runs)),))
    for run in item.runs:
        summaries = [lane.summary for lane in run.lanes.values() if lane.summary is not None]
        task = run.config.train.task
        if len(_segment_widths(run)) > 1:  # a ramp or a dragged width: its last model, named
            lines += [_sentence(x) for x in verdict_lines(summaries, model=_last_model(run), task=task,
                                                          noise=run.run_noise)]
        else:  # one model: the run's one headline, as the answer, the CLI and the window say it
            lines += [_sentence(x) for x in run_headline(run)]
        if len(summaries) == 2:
            lines.append(explain(summaries[0], summaries[1], task=task))
        figures.append(run_figure(run, n0 + len(figures)))
        segmented = [r for r in run_rows(run) if r.stage == "ramp"]
        if len({r.width for r in segmented}) > 1:  # a ramp, or a width dragged while it ran: a sweep of its own
            groups = group_rows(segmented)
            lines += [_sentence(x) for x in sweep_lines(groups)]
            figures += [sweep_figure(f"{run.run_id} {label}", points, n0 + len(figures))
                        for label, points in groups.items()]
    return Section(f"Run: {Path(item.path).name}", "run", tuple(lines), tuple(figures),
                   (("Settings that change speed", _settings_table(item.meta, item.runs)),))


# ---------------------------------------------------------------- anatomies


def anatomy_section(item: AnatomyInput, n0: int) -> Section:
    points = item.points
    lines: list[str] = []
    for widths in dict.fromkeys(p.widths for p in points):
        same = [p for p in points if p.widths == widths]
        lines.append(f"Hidden {'-'.join(map(str, widths))}: " + " ".join(why_sentence(p) for p in same)
                     + (" " + floor_sentence(same) if len(same) > 1 else ""))
    lines += [_sentence(line) for line in clock_lines(points)]
    lines += [_sentence(f"{name}: {meaning}") for name, meaning in item.clocks.items()]
    bars = [Bar(f"{p.lane} {'-'.join(map(str, p.widths))}",
                [(PART_LABELS.get(part, "within the spread, not attributed"), ms) for part, ms in stacked(p)])
            for p in points]
    ladder = points[0].ladder if points else TRAIN_LADDER  # one anatomy file dissects one task
    unit = ladder.unit
    title = ("Why: the synced step split into its parts (ms per step)" if ladder is TRAIN_LADDER else
             "Why: one served call split into its parts (ms per call)")
    rung_table = _table(["lane", "hidden", "batch", *ladder.rungs],
                        [(p.lane, "-".join(map(str, p.widths)), str(p.batch_size),
                          *(fmt_rung(p, r) for r in ladder.rungs)) for p in points])
    cost = ["timing cost"] if ladder is TRAIN_LADDER else []
    part_table = _table(["lane", "hidden", *(PART_LABELS[k] for k in ladder.parts), *cost],
                        [(p.lane, "-".join(map(str, p.widths)), *(fmt_part(part) for part in p.parts().values()),
                          *([f"{fmt_num(p.timing_cost)}x" if math.isfinite(p.timing_cost) else "–"] if cost else []))
                         for p in points])
    figure = _figure(title, (title, bars, "ms"), part_table, f"figure-{n0}-why-{_slug(Path(item.path).stem)}.svg")
    failures = [_sentence(f"{f.get('lane')} {f.get('widths') or f.get('width')} failed: {f.get('reason')}")
                for f in item.failures]
    return Section(f"Anatomy: {Path(item.path).name}", "anatomy", tuple(lines + failures), (figure,),
                   ((f"ms per {unit}, median (p10–p90), per rung", rung_table),))


# ---------------------------------------------------------------- the whole report


def sweep_model_words(rows: Sequence[SweepRow]) -> str:
    """What the sweeps measured, per kind of model: picture_title's words ("MLP, 2 hidden layers of 16–4,096 units ·
    batch 128"), and a saved model by its name, along batch size ("your saved model mine.keras (6 layers), along
    batch size 1–1,024"): it has no width (its sweep writes 0) and no hidden layers of one."""
    kinds = list(dict.fromkeys(r.family for r in rows))
    words = []
    for kind in kinds:
        mine = [r for r in rows if r.family == kind]
        words.append(saved_model_words(mine) if is_saved_kind(kind) else picture_title(mine, {}).partition("\n")[0])
    return "; ".join(words)


def machines_words(sweeps: Sequence[SweepInput]) -> str:
    """Each machine once, with the devices of all its files: "vm: vm (CPU)"; "lab: lab (GPU0 of lab; …)"."""
    said = []
    for label in dict.fromkeys(s.label for s in sweeps):
        mine = [s for s in sweeps if s.label == label]
        machine = next((s.machine for s in mine if s.machine), "") or "machine not named"
        devices = sorted({d for s in mine for d in s.devices})
        said.append(f"{label}: {machine} ({'; '.join(devices) or 'no device named'})")
    return "; ".join(said)


def run_lane_prefix(item: RunInput, sweeps: Sequence[SweepInput]) -> str:
    """How the lanes list names a run's lanes beside the sweeps': as they are where the sweeps' lanes keep their
    names (one machine); where the sweeps name theirs MACHINE/LANE, by the run's machine (the sweeps' label for
    it when one of them ran there, so its "cpu" is theirs), and as they are when its sidecar names no machine."""
    if not any(s.lane_prefix for s in sweeps):
        return ""
    machine = HostInfo.of_sidecar(item.meta).machine
    if not machine:
        return ""
    return next((s.lane_prefix for s in sweeps if s.machine == machine and s.lane_prefix), f"{machine}/")


def _question(inputs: Inputs, findings: Findings) -> tuple[str, tuple[str, ...], list[tuple[str, str]]]:
    """The question, the answer in the app's words, and the facts the answer rests on."""
    facts: list[tuple[str, str]] = []
    answer: list[str] = []
    lanes: list[str] = []
    if inputs.sweeps:
        rows = [r for s in inputs.sweeps for r in s.rows]
        _, _, devices = picture_title(rows, {}).partition("\n")
        facts += [("model", sweep_model_words(rows)), ("devices", devices)]
        groups = worded_points(rows)
        for label, points in groups.items():
            names = sorted({p.lane for p in points})
            lanes += names
            prefix = f"{label}: " if len(groups) > 1 else ""
            answer += [_sentence(prefix + pair_words(findings.verdict_of(points, a, b), unit_of(points)))
                       for i, a in enumerate(names) for b in names[i + 1:]]
        labels = [s.label for s in inputs.sweeps]
        for s in inputs.sweeps:  # a refined sweep's open crossings and why it stopped, as `analyze` says them
            refined = refinement_of_sidecar(s.meta)
            name = s.label if labels.count(s.label) == 1 else f"{s.label} ({Path(s.path).name})"
            prefix = f"{name}: " if len(inputs.sweeps) > 1 else ""
            answer += [_sentence(prefix + line) for line in (refine_lines(refined) if refined else [])]
        facts.append(("machines", machines_words(inputs.sweeps)))
    loads = False
    for item in inputs.runs:
        prefix = run_lane_prefix(item, inputs.sweeps)
        if item.runs and all(run.config.train.arrival_rate is not None for run in item.runs):  # serving under load
            loads = True
            lanes += [prefix + lane for run in item.runs for lane in run.lanes]
            facts.append(("model", run_model_words(item.runs[0])))
            points = run_points(item.runs)
            answer += [_sentence(x) for x in (sweep_lines_load(points) if len(rates_of(points)) > 1
                                              else [compare_words(points, points[0].rate)] if points else [])
                       if x]
            continue
        for run in item.runs:
            lanes += [prefix + lane for lane in run.lanes]
            facts.append(("model", run_model_words(run)))
            answer += run_answer(run)
    for item in inputs.anatomies:
        lanes += [p.lane for p in item.points]
        for widths in dict.fromkeys(p.widths for p in item.points):
            same = [p for p in item.points if p.widths == widths]
            answer += [why_sentence(p) for p in same]
    metas = [s.meta for s in inputs.sweeps] + [r.meta for r in inputs.runs]
    tasks, kinds = [], [p.task for item in inputs.anatomies for p in item.points]
    for meta in metas:
        runs = sidecar_runs(meta)
        if runs:
            train = runs[0].config.train
            kinds.append(train.task)
            tasks.append(f"predict (calls by {train.serve}), {train.data} data" if train.task == "predict"
                         else f"{train.data} data, {train.optimizer}, {train.epochs} epoch(s)"
                         + (f" or {train.max_seconds:g} s a lane, whichever came first"
                            if train.max_seconds and SweepAskedFor.of_sidecar(meta) is None else ""))
    if tasks:
        facts.append(("task", "; ".join(dict.fromkeys(tasks))))
    lanes = list(dict.fromkeys(lanes))
    facts.insert(0, ("lanes", ", ".join(lanes) or "–"))
    serving = bool(kinds) and all(k == "predict" for k in kinds)
    if serving and loads:
        facts.append(("clock", "each request timed from its intended arrival to its answer on the host, its wait in "
                               "the queue included (an open loop: requests arrive on their own schedule)"))
        question = (f"Which of {', '.join(lanes)} serves these requests sooner, and which holds the rate?"
                    if len(lanes) > 1 else "Does this lane hold the rate of requests asked?")
    elif serving:
        facts.append(("clock", f"the {PER_CALL_CLOCK}: {CALL_CLOCKS[PER_CALL_CLOCK]}"))
        question = (f"Which of {', '.join(lanes)} answers one call of this model sooner, and where does the faster "
                    "one change?" if len(lanes) > 1 else "How soon does this lane answer one call of this model?")
    else:
        facts.append(("clock", f"the {SYNCED_CLOCK}: {CLOCKS[SYNCED_CLOCK]}"
                      + (f"; predict files: the {PER_CALL_CLOCK}" if "predict" in kinds else "")))
        question = (f"Which of {', '.join(lanes)} trains this model faster, and where does the faster one change?"
                    if len(lanes) > 1 else "How fast does this lane train this model?")
    return question, tuple(answer), facts


def build_report(inputs: Inputs) -> Report:
    findings = Findings(r for s in inputs.sweeps for r in s.rows)  # the answer, made once for every section
    question, answer, facts = _question(inputs, findings)
    sections: list[Section] = []
    n = 1
    rule: Rule | None = None
    if inputs.sweeps:
        sections.append(sweep_section(inputs.sweeps, n, findings))
        n += len(sections[-1].figures)
        rule = rule_of(inputs.sweeps)
    for item in inputs.runs:
        sections.append(run_section(item, n))
        n += len(sections[-1].figures)
    for item in inputs.anatomies:
        sections.append(anatomy_section(item, n))
        n += 1
    machines: list[tuple[str, Table]] = []
    settings: list[tuple[str, Table]] = []
    reproduce: list[tuple[str, str]] = []
    for path, meta, kind, runs in ([(s.path, s.meta, "sweep", sidecar_runs(s.meta)) for s in inputs.sweeps]
                                   + [(r.path, r.meta, "run", list(r.runs)) for r in inputs.runs]):
        name = Path(path).name
        host = HostInfo.of_sidecar(meta)
        if host != HostInfo():
            machines.append((name, _host_table(host)))
        if runs:
            settings.append((name, _settings_table(meta, runs)))
        command = reproduce_command(path, meta, kind, runs)
        reproduce.append((name, command or "(no sidecar beside it: its settings are not recorded)"))
    for item in inputs.anatomies:
        reproduce.append((Path(item.path).name, anatomy_command(item.points, Path(item.path).name)))
    files = _table(["file", "role", "bytes", "SHA-256"],
                   [(f.name, f.role, f"{f.size:,}", f.sha256) for f in inputs.files])
    notes = tuple(s.dropped for s in inputs.sweeps if s.dropped)
    model = next((value for key, value in facts if key == "model"), "")
    calls = bool(inputs.anatomies) and all(p.task == "predict" for item in inputs.anatomies for p in item.points)
    title = "Crossover report: " + (model or ("the anatomy of a served call" if calls else
                                              "the anatomy of a training step" if inputs.anatomies else "measurements"))
    return Report(title, question, answer, tuple(facts), tuple(rule.lines()) if rule else (), tuple(sections),
                  tuple(machines), tuple(settings), tuple(reproduce), files, APP_VERSION, notes)
