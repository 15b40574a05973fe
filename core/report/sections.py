"""Each source's section of the report: a sweep's figures, fits, energy and prices; a run's per-batch figure, what
its numbers show and (a ramp) its crossing; a rate sweep's rates; an anatomy's parts. Every sentence comes from
core/words/, as the CLI says it; what the answer box already says (the verdict, what it rests on, a busy machine)
is not said again here."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping, Sequence

from ..colours import lane_hex
from ..analysis import tails
from ..analysis.anatomy import TRAIN_LADDER, stacked
from ..analysis.crossings import analyze_points
from ..analysis.points import SweepPoint
from ..analysis.serving_rates import rates_of, run_points
from ..files.sweeps.rows import curve_point, group_rows
from ..files.sweeps.files import run_rows
from ..records import BatchTiming
from ..results import RunResult
from ..words.anatomy import (PART_LABELS, anatomy_notes, clock_lines, floor_crossover_lines, floor_notes,
                             floor_sentence, fmt_part, fmt_rung, why_sentence)
from ..words.rates import RATE_HEADER, rate_row, rate_lines, rate_words
from ..words.numbers import fmt_flops, fmt_joules, fmt_num, fmt_range
from ..words.run import busy_lines, cold_start_lines, energy_lines as run_energy_lines, explain, verdict_lines
from ..words.sweep import cost_lines, energy_lines, fits_words
from ..words.verdict import unit_of
from .inputs import AnatomyInput, RunInput, SweepInput
from .kinds import worded_groups, worded_points
from .parts import Figure, Section, Table, figure, sentence, slug, table
from .svg import Bar, Plot, Series

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
    for lane in lanes:
        mine = sorted((p for p in points if p.lane == lane), key=lambda p: p.width)
        series.append(Series(lane, [(p.flops_per_batch, p.median_ms) for p in mine], "points", lane_hex(lane)))
        fit = analysis.lanes.get(lane)
        line = _fit_line(fit.overhead_ms if fit else None, fit.gflops if fit else None,
                         [p.flops_per_batch for p in mine])
        if line:
            series.append(Series(f"{lane} fit", line, "fit", lane_hex(lane)))
    unit = unit_of(points)
    batch_axis = any(p.axis == "batch" for p in points)  # x is the batch size: say so in the marks and the table
    marks = [(c.flops_per_batch, f"≈{fmt_num(c.width, 2)} {'per batch' if batch_axis else unit}")
             for c in analysis.crossovers if math.isfinite(c.flops_per_batch)]
    title = f"Sweep ({label}): ms per step against FLOPs per batch"
    plot = Plot(title, "FLOPs per batch", "ms per step (median)", series, marks=marks, x_flops=True)
    rows = [(p.lane, f"{p.width:,}", fmt_num(p.flops_per_batch / 1e6), fmt_num(p.median_ms),
             fmt_range(p.p10_ms, p.p90_ms, 3) if math.isfinite(p.p10_ms) else "–", f"{p.n_batches:,}",
             fmt_num(p.floor_ms) if math.isfinite(p.floor_ms) else "–")
            for p in sorted(points, key=lambda p: (p.width, p.lane))]
    numbers = table(["lane", "batch size" if batch_axis else f"width ({unit})", "MFLOP/batch", "median ms",
                     "p10–p90 ms", "steady batches", "floor ms"], rows)
    return figure(title, plot, numbers, f"figure-{n}-sweep-{slug(label)}.svg")


def fits_table(points: Sequence[SweepPoint]) -> Table:
    analysis = analyze_points(points)

    def worst(residuals: Sequence[tuple[int, float | None]]) -> str:
        values = [abs(r) for _, r in residuals if r is not None]
        return f"{100 * max(values):.0f}%" if values else "–"

    rows = [(lane, fmt_num(f.overhead_ms), fmt_num(f.gflops), str(f.n_points), worst(f.residuals),
             "yes" if f.ok else "no") for lane, f in analysis.lanes.items()]
    rows += [(f"{p.lanes[0]} × {p.lanes[1]}", "", "", "", "", f"fitted lines cross at {fmt_flops(p.flops_per_batch)}"
              " per batch") for p in analysis.predicted]
    return table(["lane", "intercept ms (fit)", "GFLOP/s (fit)", "points", "worst residual", "fit within 10%"], rows)


def fits_lines(groups: Mapping[str, Sequence[SweepPoint]]) -> list[str]:
    """Each group's fitted cost models, as sweep_lines ends its sentence ("Fits: …"): the crossings it begins with
    are the answer box's."""
    lines = []
    for label, points in groups.items():
        fit_text = fits_words({lane: f.fit for lane, f in analyze_points(points).lanes.items()})
        if fit_text:
            lines.append(f"{label + ': ' if len(groups) > 1 else ''}Fits: {fit_text}")
    return lines


def sweep_section(sweeps: Sequence[SweepInput], n0: int) -> Section:
    rows = [r for s in sweeps for r in s.rows]
    groups = worded_points(rows)
    prices = {k: v for s in sweeps for k, v in s.prices.items()}
    # Where the lanes cross (the findings' answer), and the busy note, are the answer box's.
    lines = [sentence(x) for x in fits_lines(groups) + floor_crossover_lines(groups) + floor_notes(groups)]
    lines += [sentence(x) for x in cost_lines(groups, prices)] if prices else []
    lines += [sentence(x) for x in energy_lines(groups)]  # where a counter measured energy (core/lane/energy.py)
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
                       table(["lane", x, "J per M samples", "mean W", "idle W", "counter"], energy)))
    if prices:
        tables.append(("Prices (dollars per hour)", table(["lane", "$/h"],
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
    for lane, result in run.lanes.items():
        records = _decimate([r for r in result.records if r.ms > 0])
        series.append(Series(lane, [(float(r.step), r.ms) for r in records], "line", lane_hex(lane)))
    rate = run.config.train.arrival_rate
    if rate is not None:  # arrivals at a rate: its calls along the run, and its table the CLI's (core/words/rates.py)
        title = f"Run {run.run_id}, requests at {rate_words(rate)}: ms per call along the run"
        plot = Plot(title, "call", "ms per call", series, log_x=False, log_y=True)
        numbers = table(RATE_HEADER, [rate_row(p) for p in run_points([run])])
        return figure(title, plot, numbers, f"figure-{n}-rate-{slug(run.run_id)}.svg")
    title = f"Run {run.run_id}: ms per batch along the run"
    plot = Plot(title, "step", "ms per batch", series, log_x=False, log_y=True)
    rows = []
    for lane, result in run.lanes.items():
        s = result.summary
        device = result.started.device if result.started else ""
        rows.append((lane, device, str(result.status), f"{s.n_batches:,}" if s else "–",
                     fmt_num(s.median_ms) if s else "–",
                     fmt_range(s.p10_ms, s.p90_ms, 3)
                     if s and math.isfinite(s.p10_ms) and tails.spread_shown(run.config.train.task, s.n_batches)
                     else "–",
                     fmt_num(s.samples_per_s) if s else "–", fmt_num(s.gflops) if s else "–",
                     fmt_num(s.warmup_s) if s else "–"))
    numbers = table(["lane", "device", "status", "steady", "median ms", "p10–p90 ms", "samples/s", "GFLOP/s",
                     "warm-up s"], rows)
    return figure(title, plot, numbers, f"figure-{n}-run-{slug(run.run_id)}.svg")


def segment_widths(run: RunResult) -> list[int]:
    """The widths a run's segments trained, in order (one for a plain run; more for a ramp or a drag)."""
    return list(dict.fromkeys(r.width for r in run_rows(run) if r.stage == "ramp"))


def _last_model(run: RunResult) -> str:
    rows = [r for r in run_rows(run) if r.stage == "ramp"]
    return f"its last model, hidden {rows[-1].width:,}" if rows else run.config.model.label()


def is_rate_run(item: RunInput) -> bool:
    """A file of serving at arrival rates (run --arrival-rate, sweep --arrival-rates): every run's requests arrive at a
    rate."""
    return bool(item.runs) and all(run.config.train.arrival_rate is not None for run in item.runs)


def load_lines(runs: Sequence[RunResult]) -> list[str]:
    """A rate sweep's rates in the words the CLI and analyze say them: each rate's schedule, its lanes and which answers
    sooner (core/words/rates.py); what holds across the rates is the answer box's."""
    points = run_points(runs)
    return [line for rate in rates_of(points) for line in rate_lines(points, rate)]


def _run_lines(run: RunResult) -> list[str]:
    """What a run's numbers show beyond its answer: each lane's time and throughput (the fixed-cost lesson only
    beside a fit, which one model at one size has not), its cold start, its energy; for a ramp, its last model's
    verdict and the crossing of its widths."""
    summaries = [lane.summary for lane in run.lanes.values() if lane.summary is not None]
    task = run.config.train.task
    lines: list[str] = []
    if len(segment_widths(run)) > 1:  # a ramp or a dragged width: its last model, named (the busy note: the answer's)
        busy = busy_lines(summaries)
        lines += [sentence(x) for x in verdict_lines(summaries, model=_last_model(run), task=task,
                                                     noise=run.run_noise) if x not in busy]
    elif len(summaries) == 2:
        lines.append(explain(summaries[0], summaries[1], task=task, general=False))
    lines += [sentence(x) for x in cold_start_lines(run) + run_energy_lines(summaries)]
    segmented = [r for r in run_rows(run) if r.stage == "ramp"]
    if len({r.width for r in segmented}) > 1:  # a ramp, or a width dragged while it ran: a sweep of its own
        lines += [sentence(x) for x in fits_lines(group_rows(segmented))]
    return lines


def run_section(item: RunInput, n0: int) -> Section:
    figures: list[Figure] = []
    if is_rate_run(item):
        figures = [run_figure(run, n0 + i) for i, run in enumerate(item.runs)]
        return Section(f"Serving at arrival rates: {Path(item.path).name}", "run",
                       tuple(sentence(x) for x in load_lines(item.runs)), tuple(figures))
    lines: list[str] = []
    for run in item.runs:
        lines += _run_lines(run)
        figures.append(run_figure(run, n0 + len(figures)))
        segmented = [r for r in run_rows(run) if r.stage == "ramp"]
        if len({r.width for r in segmented}) > 1:
            figures += [sweep_figure(f"{run.run_id} {label}", points, n0 + len(figures))
                        for label, points in group_rows(segmented).items()]
    return Section(f"Run: {Path(item.path).name}", "run", tuple(lines), tuple(figures))


# ---------------------------------------------------------------- anatomies


BUSY_NOTE = "other work used"  # how anatomy_notes begins its note on a busy lane: the answer's, not the section's


def _notes(item: AnatomyInput, busy: bool) -> list[tuple[str, str]]:
    """Each lane's notes as `anatomy` prints them (anatomy_notes), once: those on other work on its cores (`busy`),
    or the others."""
    said = dict.fromkeys((p.lane, note) for p in item.points for note in anatomy_notes(p))
    return [(lane, note) for lane, note in said if note.startswith(BUSY_NOTE) == busy]


def anatomy_answer(item: AnatomyInput) -> list[str]:
    """An anatomy's answer: where each lane's step (or call) goes, per model, and which lane the on-device loop
    favours; then a busy lane's note, as `anatomy` prints it."""
    models = list(dict.fromkeys(p.widths for p in item.points))
    lines = []
    for widths in models:
        same = [p for p in item.points if p.widths == widths]
        prefix = f"Hidden {'-'.join(map(str, widths))}: " if len(models) > 1 else ""
        lines.append(prefix + " ".join(why_sentence(p) for p in same)
                     + (" " + floor_sentence(same) if len(same) > 1 else ""))
    return lines + [sentence(note[:1].upper() + note[1:]) for _, note in _notes(item, busy=True)]


def anatomy_section(item: AnatomyInput, n0: int) -> Section:
    points = item.points
    lines = [sentence(f"note ({lane}): {note}") for lane, note in _notes(item, busy=False)]
    lines += [sentence(line) for line in clock_lines(points)]
    lines += [sentence(f"{name}: {meaning}") for name, meaning in item.clocks.items()]
    bars = [Bar(f"{p.lane} {'-'.join(map(str, p.widths))}",
                [(PART_LABELS.get(part, "within the spread, not attributed"), ms) for part, ms in stacked(p)])
            for p in points]
    ladder = points[0].ladder if points else TRAIN_LADDER  # one anatomy file dissects one task
    unit = ladder.unit
    title = ("Why: the synced step split into its parts (ms per step)" if ladder is TRAIN_LADDER else
             "Why: one served call split into its parts (ms per call)")
    rung_table = table(["lane", "hidden", "batch", *ladder.rungs],
                       [(p.lane, "-".join(map(str, p.widths)), str(p.batch_size),
                         *(fmt_rung(p, r) for r in ladder.rungs)) for p in points])
    cost = ["timing cost"] if ladder is TRAIN_LADDER else []
    part_table = table(["lane", "hidden", *(PART_LABELS[k] for k in ladder.parts), *cost],
                       [(p.lane, "-".join(map(str, p.widths)), *(fmt_part(part) for part in p.parts().values()),
                         *([f"{fmt_num(p.timing_cost)}x" if math.isfinite(p.timing_cost) else "–"] if cost else []))
                        for p in points])
    picture = figure(title, (title, bars, "ms"), part_table, f"figure-{n0}-why-{slug(Path(item.path).stem)}.svg")
    failures = [sentence(f"{f.get('lane')} {f.get('widths') or f.get('width')} failed: {f.get('reason')}")
                for f in item.failures]
    return Section(f"Anatomy: {Path(item.path).name}", "anatomy", tuple(lines + failures), (picture,),
                   ((f"ms per {unit}, median (p10–p90), per rung", rung_table),))
