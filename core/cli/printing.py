"""What the command line prints: tables, progress lines, run summaries and sweep analyses."""
from __future__ import annotations

import math
import sys
from typing import Mapping, Sequence, TextIO, Union

from rich.console import Console
from rich.progress import BarColumn, TaskID, TaskProgressColumn, TextColumn
from rich.progress import Progress as RichProgress

from ..words import sweep as sweep_words
from ..analysis.crossings import LaneFit, analyze_points
from ..files.findings import Answer
from .. import run_stats
from ..analysis.points import SweepPoint, curves
from ..words.anatomy import floor_crossover_lines, floor_notes
from ..analysis.contention import common_stretch, contended
from ..messages import Calibrated
from ..records import BatchTiming, LaneEnded, LaneEvent, RunFailed, RunFinished, RunStarted, Status
from ..config import Task
from ..results import RunResult
from ..study.sweep import SweepResult
from ..files.sweeps.files import run_rows
from ..files.sweeps.rows import SweepRow, group_rows
from ..words.run import energy_lines as run_energy_lines
from ..words.run import (cold_start_lines, compared_lines, compared_summaries, explain, latency_lines, one_run_line,
                         run_headline, verdict_lines)
from ..words.numbers import fmt_flops, fmt_joules, fmt_num, fmt_spread
from ..words.failures import failure_words
from ..analysis.energy import energy_curves
from ..analysis.serving_rates import RatePoint
from ..words.rates import RATE_HEADER, rate_row, rate_lines
from .streams import STDERR, STDOUT



Cell = Union[str, int, float]  # a table's cell, printed as str() writes it


def table(header: Sequence[str], rows: Sequence[Sequence[Cell]]) -> str:
    cells = [list(map(str, header))] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


class Progress:
    """How far each lane is while `run` trains: on a terminal, a bar per lane (rich's, redrawn in place);
    elsewhere (a pipe, a log file), a plain line per lane at its start, at every quarter and at its end."""

    QUARTERS = (25, 50, 75)

    def __init__(self, stream: TextIO = STDERR) -> None:
        self.stream = stream
        self.terminal = stream.isatty()
        self.total_steps: dict[str, int] = {}
        self._said: dict[str, int] = {}  # lane → the last quarter said (plain lines)
        self._bar: RichProgress | None = None
        self._tasks: dict[str, TaskID] = {}

    def __call__(self, event: LaneEvent) -> None:
        if isinstance(event, RunStarted):
            self.total_steps[event.lane] = event.settings.total_steps
            self._start(event.lane, f"{event.lane}: started on {event.device}")
        elif isinstance(event, BatchTiming):
            self._step(event.lane, event.step, event.epoch)
        elif isinstance(event, (RunFinished, RunFailed, LaneEnded)):
            status = event.summary.status if isinstance(event, RunFinished) else (
                event.status if isinstance(event, LaneEnded) else Status.FAILED)
            reason = event.summary.reason if isinstance(event, RunFinished) else event.reason
            # A failure says why where the user looks: on the lane's own line, with its log.
            self._end(event.lane, f"failed: {failure_words(event.lane, reason)}" if status == Status.FAILED
                      else str(status))

    def _start(self, lane: str, text: str) -> None:
        if self.terminal:
            if self._bar is None:
                self._bar = RichProgress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                                         TextColumn("{task.fields[note]}"), console=Console(file=self.stream),
                                         transient=False)
                self._bar.start()
            self._tasks[lane] = self._bar.add_task(lane, total=self.total_steps.get(lane) or None, note=text)
        else:
            print(text, file=self.stream, flush=True)

    def _step(self, lane: str, step: int, epoch: int) -> None:
        total = self.total_steps.get(lane) or 0
        if self.terminal and self._bar is not None and lane in self._tasks:
            self._bar.update(self._tasks[lane], completed=step, note=f"epoch {epoch} · step {step:,}")
        elif not self.terminal and total:
            quarter = max((q for q in self.QUARTERS if 100 * step >= q * total), default=0)
            if quarter > self._said.get(lane, 0):
                self._said[lane] = quarter
                print(f"{lane}: {quarter}% (step {step:,} of {total:,})", file=self.stream, flush=True)

    def _end(self, lane: str, status: str) -> None:
        if self.terminal and self._bar is not None and lane in self._tasks:
            self._bar.update(self._tasks[lane], note=status)
        else:
            print(f"{lane}: {status}", file=self.stream, flush=True)

    def done(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def tail_cell(q: int, value: float, calls: int) -> str:
    """A tail in a table: its figure where the tail rule gives it, else "–" (the sentence under the table says
    how many calls it needs)."""
    return fmt_num(value) if run_stats.known(q, calls) and math.isfinite(value) else "–"


def withheld_tails(calls_by_lane: Sequence[tuple[str, int]]) -> list[str]:
    """Under a table: each tail a lane's calls are too few for, once per percentile ("p99 needs ≥ 662 calls (have
    59 on cpu, 61 on cpu1)")."""
    lines = []
    for q in (90, 99):
        short = [(lane, n) for lane, n in calls_by_lane if not run_stats.known(q, n)]
        if short:
            have = ", ".join(f"{n:,} on {lane}" for lane, n in short)
            lines.append(f"p{q} not given: p{q} needs ≥ {run_stats.MIN_CALLS[q]:,} calls (have {have})")
    return lines


def print_summary(result: RunResult, out: TextIO = STDOUT) -> None:
    """A run's table and verdict; a predict run's in latency, its tail (p90, p99) beside the median."""
    predict = result.config.train.task == Task.PREDICT
    rows: list[list[Cell]] = []
    for name, lane in result.lanes.items():
        s = lane.summary
        device = lane.started.device if lane.started else ""
        if s is None:
            rows.append([name, device, lane.status, "–", "–", "–", "–", "–", "–"])
            continue
        if predict:
            rows.append([name, device or s.device, s.status, s.n_batches, fmt_num(s.median_ms),
                         tail_cell(90, s.p90_ms, s.n_batches), tail_cell(99, s.p99_ms, s.n_batches),
                         fmt_num(s.requests_per_s, 3), fmt_num(s.warmup_s)])
            continue
        rows.append([name, device or s.device, s.status, s.n_batches, fmt_num(s.median_ms),
                     fmt_spread(s.p10_ms, s.p90_ms, s.n_batches),
                     fmt_num(s.samples_per_s), fmt_num(s.gflops), fmt_num(s.warmup_s)])
    header = (["lane", "device", "status", "calls", "median ms", "p90 ms", "p99 ms", "calls/s measured", "warm-up s"]
              if predict else ["lane", "device", "status", "steady", "median ms", "p10-p90 ms", "samples/s",
                               "GFLOP/s", "warm-up s"])
    print(table(header, rows), file=out)
    if predict:
        for line in withheld_tails([(name, lane.summary.n_batches) for name, lane in result.lanes.items()
                                    if lane.summary is not None and lane.summary.n_batches]):
            print(line, file=out)
    for name, lane in result.lanes.items():
        if lane.failure:
            print(f"{name} {lane.status}: "
                  f"{failure_words(name, lane.failure) if lane.status == Status.FAILED else lane.failure}", file=out)
    summaries = [lane.summary for lane in result.lanes.values() if lane.summary and lane.summary.status != Status.FAILED]
    stretch = common_stretch(result)  # lanes side by side: compared on the time all of them trained
    compared = compared_summaries(result, stretch)
    task = result.config.train.task
    for line in run_headline(result, compared):  # the words the report and the window give this run
        print(line + ".", file=out)
    for line in latency_lines(compared, result.config.train.batch_size) if predict else []:
        print(line + ".", file=out)
    for line in compared_lines(stretch):
        print(line + ".", file=out)
    if len(summaries) == 2:
        print(explain(summaries[0], summaries[1], task=task), file=out)
    if len(summaries) >= 2:
        print(one_run_line(result) + ".", file=out)
    for line in cold_start_lines(result):
        print(line + ".", file=out)
    for line in run_energy_lines([lane.summary for lane in result.lanes.values() if lane.summary]):
        print(line + ".", file=out)  # it starts with a lane's name, or "energy": as the verdict's lines


def print_ramp(result: RunResult, out: TextIO = STDOUT) -> None:
    """A ramp (or a run whose model changed): each lane's segments as points, and where the lanes cross."""
    rows = run_rows(result)
    print_points(rows, {}, out)
    for name, lane in result.lanes.items():
        if lane.failure:
            print(f"{name} {lane.status}: "
                  f"{failure_words(name, lane.failure) if lane.status == Status.FAILED else lane.failure}", file=out)
    print_groups_analysis(group_rows(rows), out)


def print_groups_analysis(groups: Mapping[str, list[SweepPoint]], out: TextIO = STDOUT,
                          answers: Sequence[Answer] | None = None) -> None:
    """Each group's fits and the one rule's sentences: the findings' `answers` where given (the points of several
    runs pooled, core/files/findings.py), else each pair judged on `groups` alone."""
    for label, points in groups.items():
        if len(groups) > 1:
            print(f"\n{label}:", file=out)
        said = None if answers is None else [sweep_words.answer_words(a) for a in answers if a.group == label]
        print_sweep_analysis(points, out, said)
    for line in floor_crossover_lines(groups) + floor_notes(groups):  # sweep --floor: the floor's lines
        print(line + ".", file=out)
    for line in sweep_words.busy_lines(groups):  # "Other work used 46% of cpu's cores while …"
        print(line + ".", file=out)
    print_energy(groups, out)


def print_energy(groups: Mapping[str, list[SweepPoint]], out: TextIO = STDOUT) -> None:
    """Where energy was measured: joules per million samples per lane and width, then where the lane that uses
    less energy per sample changes (the one rule, on the energy curves). Nothing where none was measured."""
    for label, points in groups.items():
        per_lane = curves(energy_curves(points))
        if not per_lane:
            continue
        widths = sorted({w for per in per_lane.values() for w in per})
        print(f"\n{'' if len(groups) == 1 else label + ': '}joules per million samples, by width", file=out)
        print(table(["lane", *map(str, widths)],
                    [[lane, *(fmt_joules(per[w].value) if w in per else "–" for w in widths)]
                     for lane, per in sorted(per_lane.items())]), file=out)
    for line in sweep_words.energy_lines(groups):
        print(line + ".", file=out)  # a lane's name first, as the time crossings' lines


def print_sweep_analysis(points: list[SweepPoint], out: TextIO = STDOUT, said: list[str] | None = None) -> None:
    """Each lane's fitted cost model, and where each pair of lanes crosses (the one rule; `said`, where given, is
    its sentences already made)."""
    result = analyze_points(points)

    def worst(fit: LaneFit) -> str:
        values = [abs(r) for _, r in fit.residuals if r is not None]
        return f"{100 * max(values):.0f}%" if values else "–"

    print(table(["lane", "intercept ms (fit)", "GFLOP/s (fit)", "points", "worst residual"],
                [[lane, fmt_num(v.overhead_ms), fmt_num(v.gflops), v.n_points, worst(v)]
                 for lane, v in result.lanes.items()]), file=out)
    lanes = sorted(result.lanes)
    if said is None:
        said = [sweep_words.describe_pair(points, a, b) for i, a in enumerate(lanes) for b in lanes[i + 1:]]
    for line in said:
        print(line + ".", file=out)
    for line in sweep_words.fit_crossing_lines(points, result):
        print(line + ".", file=out)


def print_points(rows: Sequence[SweepRow], calibration: Mapping[str, Calibrated], out: TextIO = STDOUT) -> None:
    for lane, cal in calibration.items():
        if cal.error:
            print(f"{lane}: calibration failed: {cal.error}", file=out)
        else:
            print(f"{lane}: a {cal.size}x{cal.size} float32 matrix product runs at {fmt_num(cal.gflops)} GFLOP/s",
                  file=out)
    tail = any(r.task == Task.PREDICT for r in rows)  # a predict point's latency has its p99 beside it
    # The p10-p90 spread (and a p99) rest on the steady batches (calls) beside them.
    print(table(["lane", "width", "batch", "MFLOP/batch", "median ms", "p10-p90 ms", *(["p99 ms"] if tail else []),
                 "steady", "GFLOP/s", "of peak", "status"],
                [[r.lane, r.width_label, r.batch_size, fmt_num(r.flops_per_batch / 1e6), fmt_num(r.median_ms),
                  fmt_spread(r.p10_ms, r.p90_ms, r.n_batches), *([tail_cell(99, r.p99_ms, r.n_batches)] if tail else []),
                  r.n_batches, fmt_num(r.gflops),
                  f"{100 * r.peak_share:.0f}%" if math.isfinite(r.peak_share) else "–", r.status]
                 for r in rows]), file=out)
    if tail:
        short = [r for r in rows if r.task == Task.PREDICT and r.n_batches and not run_stats.known(99, r.n_batches)]
        if short:
            fewest = run_stats.MIN_CALLS[99]
            print(f"p99 not given for {len(short)} of {len(rows)} points: p99 needs ≥ {fewest:,} calls "
                  f"(have {min(r.n_batches for r in short):,}-{max(r.n_batches for r in short):,}); a point's time "
                  "limit ended them first: raise --seconds-per-point for a p99", file=out)
    for r in rows:
        if r.status == Status.FAILED:
            print(f"{r.lane} width {r.width_label} failed: {failure_words(r.lane, r.reason)}", file=out)


def print_comparison(base: SweepResult, changed: SweepResult, out: TextIO = STDOUT) -> None:
    """How the knob moved each lane's fitted intercept and throughput, and the crossovers."""
    (label_a, points_a) = next(iter(group_rows(base.rows).items()), ("all", []))
    (label_b, points_b) = next(iter(group_rows(changed.rows).items()), ("all", []))
    a, b = analyze_points(points_a), analyze_points(points_b)
    name = changed.spec.variant if label_b == "all" else f"{changed.spec.variant} ({label_b})"
    rows = []
    for lane in sorted(set(a.lanes) | set(b.lanes)):
        la, lb = a.lanes.get(lane), b.lanes.get(lane)
        rows.append([lane, f"{fmt_num(la and la.overhead_ms)} → {fmt_num(lb and lb.overhead_ms)}",
                     f"{fmt_num(la and la.gflops)} → {fmt_num(lb and lb.gflops)}"])
    print(f"\ncompare: base → {name}", file=out)
    print(table(["lane", "intercept ms (fit)", "GFLOP/s (fit)"], rows), file=out)
    for label, res in (("base" if label_a == "all" else f"base ({label_a})", a), (name, b)):
        crossings = ", ".join(f"{c.faster_above} faster above width {fmt_num(c.width)}"
                              for c in res.crossovers)
        print(f"{label}: {crossings or 'no crossover in this range'}", file=out)


def print_rates(points: Sequence[RatePoint], out: TextIO = STDOUT) -> None:
    """A run (or one rate of a sweep) at an arrival rate: its schedule, the table, each lane in words, and which answers
    sooner (core/words/rates.py rate_lines)."""
    if not points:
        return
    schedule, *lines = rate_lines(points, points[0].rate)
    print(schedule + ":", file=out)
    print(table(RATE_HEADER, [rate_row(p) for p in points]), file=out)
    for line in lines:
        print(line + ".", file=out)
