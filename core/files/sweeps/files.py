"""Sweep files: reading any sweep CSV (streamed, bad rows counted and named), exporting a sweep, autosaving one.

A sweep is written as three files: the sweep CSV (a row per point and lane), its per-batch CSV
(`sweep-batches.csv`) and that one's JSON sidecar. An export writes all three or none; an
autosave appends each point as it arrives, so a crash mid-sweep leaves every finished point.
"""
from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Mapping, Protocol, Sequence

from ...analysis.crossings import analyze_groups
from ...analysis.anatomy import floor_crossovers
from ...analysis.energy import energy_analysis
from ...config import ConfigError
from ...json_data import JsonValue, parse_json
from ...machine import HostInfo
from ..run_files import batches_text, read_run_file, read_runs, run_json, sidecar_from_parts, sidecar_path, sidecar_text
from ..atomic import append_lines, atomic_write_files, atomic_write_text, complete_lines, plain_row, split_lines
from ..inputs import RowsReading, open_regular, read_text_bounded
from ..live import BackgroundWriter, OutputClaim
from ...analysis.refinement import Refinement, with_refinement
from ...messages import Calibrated
from ...records import BatchTiming, SegmentEnded, Status
from ...run_stats import summarize
from ...results import RunResult, Segment
from .rows import COLUMNS, REQUIRED, RowError, SweepRow, group_rows, sweep_rows_text

csv.field_size_limit(1 << 20)  # a sweep cell is short; a 1 MB one is a broken file, reported as such


def batches_path(csv_path: str | os.PathLike) -> Path:
    """`sweep.csv` → `sweep-batches.csv`: the per-batch records beside the points."""
    path = Path(csv_path)
    stem = path.name[:-4] if path.name.endswith(".csv") else path.name
    return path.with_name(stem + "-batches.csv")


class SweepReading(RowsReading):
    """What reading a sweep file found besides its rows: how many lines, and why some were dropped."""


def iter_sweep_rows(path: str, reading: SweepReading | None = None) -> Iterator[SweepRow]:
    """The usable rows of any sweep CSV with the documented columns, one at a time (any file size).

    A file that is not a sweep CSV raises ConfigError with a sentence; single bad rows are counted
    in `reading.dropped` by what is wrong with them, and skipped.
    """
    reading = reading if reading is not None else SweepReading(path)
    try:
        with io.TextIOWrapper(open_regular(path), encoding="utf-8-sig", newline="") as fh:  # a fifo is refused
            reader = csv.DictReader(complete_lines(fh, name=str(path)))
            if not reader.fieldnames:
                raise ConfigError(f"{path} is empty: it holds no points")
            if {"run_id", "step", "ms"} <= set(reader.fieldnames) and "median_ms" not in reader.fieldnames:
                yield from _run_file_rows(path, reading)  # a run's per-batch CSV: a ramp reads as a sweep
                return
            missing = [c for c in REQUIRED if c not in reader.fieldnames]
            if missing:
                raise ConfigError(f"{path} is not a sweep CSV: it has no {', '.join(missing)} column")
            while True:
                try:
                    row = next(reader)
                except StopIteration:
                    return
                except csv.Error:
                    reading.lines += 1
                    reading.dropped["line is not CSV (a broken quote, or a field longer than a CSV reader takes)"] += 1
                    continue
                reading.lines += 1
                try:
                    yield SweepRow.from_csv_row(plain_row(row)).check()
                except RowError as exc:
                    reading.dropped[exc.problem] += 1
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not a text CSV file (its bytes are not UTF-8)") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None


def run_rows(run: RunResult) -> list[SweepRow]:
    """A run as sweep points: each lane's segments (a ramp's widths), or its one summary."""
    rows = []
    for name, lane in run.lanes.items():
        if lane.segments:
            rows += [SweepRow.from_segment(run, name, _cut_short(run, name, seg) if seg.ended is None else seg)
                     for seg in lane.segments if seg.ended is not None or _records_of(run, name, seg)]
        elif lane.summary is not None:
            rows.append(SweepRow.from_result(run, name))
    return rows


def _records_of(run: RunResult, lane: str, seg: Segment) -> list[BatchTiming]:
    return [r for r in run.lanes[lane].records if r.segment == seg.index]


def _cut_short(run: RunResult, lane: str, seg: Segment) -> Segment:
    """A segment that never ended (the app was killed mid-segment, kill -9): ended here from the records the file
    kept, as a stop would have ended it, so its steady steps are a point (cancelled, with as many batches as it
    had) rather than nothing."""
    records = _records_of(run, lane, seg)
    summary = summarize(records, run_id=run.run_id, lane=lane, device=records[0].device if records else lane,
                        status=Status.CANCELLED, reason="interrupted mid-segment: the records the file kept",
                        flops_per_batch=seg.started.flops_per_batch, wall_s=math.nan)
    return dataclasses.replace(seg, ended=SegmentEnded(run.run_id, lane, seg.index, summary, seg.started.at))


def _run_file_rows(path: str, reading: SweepReading) -> Iterator[SweepRow]:
    try:
        runs = read_runs(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path} is a per-batch CSV, but its sidecar {Path(path).with_suffix('.json')} "
                          f"cannot be read ({type(exc).__name__}: {exc})") from None
    for run in runs:
        for row in run_rows(run):
            reading.lines += 1
            try:
                yield row.check()
            except RowError as exc:
                reading.dropped[exc.problem] += 1


def runs_behind(path: str) -> tuple[list[RunResult], HostInfo]:
    """The runs, with every batch, behind a sweep CSV (its `-batches.csv`) or a run's per-batch CSV, and the host
    their sidecar names; no runs and an unknown host where there are none, or they cannot be read (the points are
    shown all the same)."""
    try:
        with open_regular(path) as fh:
            header = fh.readline().decode("utf-8-sig", errors="replace")
        batches = Path(path) if {"run_id", "step", "ms"} <= set(header.strip().split(",")) else batches_path(path)
        if not batches.exists():
            return [], HostInfo()
        meta, runs = read_run_file(batches)
        return runs, HostInfo.of_sidecar(meta)
    except (OSError, ValueError, KeyError, TypeError, ConfigError):
        return [], HostInfo()


def read_sweep_rows(path: str) -> tuple[list[SweepRow], SweepReading]:
    """Every usable row of a sweep CSV (for a table), and what was dropped."""
    reading = SweepReading(path)
    return list(iter_sweep_rows(path, reading)), reading


class SweepAsked(Protocol):
    """What a sweep asked for, as its sidecar records it (a core.study.sweep.SweepSpec)."""

    @property
    def widths(self) -> tuple[int, ...]: ...
    @property
    def layers(self) -> int: ...
    @property
    def batch_sizes(self) -> tuple[int, ...]: ...
    @property
    def steady_steps(self) -> int: ...
    @property
    def seconds_per_point(self) -> float: ...
    @property
    def variant(self) -> str: ...


class SweepMeasured(Protocol):
    """What a sweep measured, as its files hold it (a core.study.sweep.SweepResult)."""

    @property
    def spec(self) -> SweepAsked: ...
    @property
    def rows(self) -> Sequence[SweepRow]: ...
    @property
    def runs(self) -> Sequence[RunResult]: ...
    @property
    def cancelled(self) -> bool: ...
    @property
    def calibration(self) -> Mapping[str, Calibrated]: ...
    @property
    def refinement(self) -> Refinement | None: ...


@dataclass(frozen=True)
class SweepAskedFor:
    """A sweep sidecar's "sweep" entry as read back (sweep_info writes it): what the sweep was asked for. The one
    reader of that entry, for the report's settings and its command to measure the file again."""

    widths: tuple[int, ...] = ()
    layers: int = 0
    batch_sizes: tuple[int, ...] = ()
    floor: bool = False
    recheck: bool = False
    steady_steps: int | None = None
    seconds_per_point: float | None = None
    passes: int = 1  # every point measured this many times, in passes (sweep --passes)

    @classmethod
    def of_sidecar(cls, meta: Mapping[str, JsonValue]) -> SweepAskedFor | None:
        """The entry, None where the sidecar has none (a run's); a value of the wrong kind reads as unknown."""
        d = meta.get("sweep")
        if not isinstance(d, Mapping):
            return None

        def ints(key: str) -> tuple[int, ...]:
            v = d.get(key)
            return tuple(x for x in v if isinstance(x, int) and not isinstance(x, bool)) if isinstance(v, list) else ()

        def number(key: str) -> float | None:
            v = d.get(key)
            return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

        layers, steady, passes = d.get("layers"), d.get("steady_steps"), d.get("passes")
        return cls(ints("widths"), layers if isinstance(layers, int) else 0, ints("batch_sizes"),
                   d.get("floor") is True, d.get("recheck") is True,
                   steady if isinstance(steady, int) and not isinstance(steady, bool) else None,
                   number("seconds_per_point"),
                   passes if isinstance(passes, int) and not isinstance(passes, bool) and 1 <= passes <= 99 else 1)


def sweep_info(specs: Sequence[SweepAsked], results: Sequence[SweepMeasured] = ()) -> dict[str, JsonValue]:
    """The sidecar's "sweep" entry: what was asked for and, per variant, calibration and analysis."""
    if not specs:
        return {}
    spec = specs[0]
    return {"widths": list(spec.widths), "layers": spec.layers, "batch_sizes": list(spec.batch_sizes),
            "floor": getattr(spec, "floor", False),
            # Whether points chosen by place were measured twice (core/study/sweep.py rechecks): their rows' runs 2.
            "recheck": getattr(spec, "recheck", False),
            "passes": getattr(spec, "passes", 1),  # every point measured this many times (sweep --passes)
            "steady_steps": spec.steady_steps, "seconds_per_point": spec.seconds_per_point,
            "variants": {res.spec.variant: {"calibration": {k: vars(v) for k, v in res.calibration.items()},
                                            "cancelled": res.cancelled,
                                            "analysis": with_refinement(analyze_groups(group_rows(res.rows)).to_json(),
                                                                        res.refinement),
                                            **floor_info(res.rows), **energy_info(res.rows)}
                         for res in results}}


def energy_info(rows: Sequence[SweepRow]) -> dict[str, JsonValue]:
    """Where energy was measured: the counter each lane used, and per group its joules per million samples and the
    energy crossovers (each run's summary in the sidecar says why a lane measured none)."""
    counters = {r.lane: r.energy_counter for r in rows if r.energy_counter}
    if not counters:
        return {}
    return {"energy": {"counters": dict(sorted(counters.items())),
                       "groups": {label: energy_analysis(points).to_json()
                                  for label, points in group_rows(rows).items()}}}


def floor_info(rows: Sequence[SweepRow]) -> dict[str, JsonValue]:
    """With sweep --floor: where the faster lane would change with an on-device loop, per group of rows."""
    groups = group_rows(rows)
    if not any(math.isfinite(p.floor_ms) for points in groups.values() for p in points):
        return {}
    return {"floor_crossovers": {label: [{**dataclasses.asdict(c), "lanes": list(c.lanes)}
                                         for c in floor_crossovers(points)] for label, points in groups.items()}}


def export_sweep(csv_path: str | os.PathLike, results: Sequence[SweepMeasured], host: Mapping[str, JsonValue],
                 prices: Mapping[str, float] | None = None) -> list[Path]:
    """The sweep CSV, its per-batch CSV and that one's sidecar (with the lanes' prices, if any): all three, or none."""
    rows = [r for res in results for r in res.rows]
    runs = [run for res in results for run in res.runs]
    info = sweep_info([res.spec for res in results], results)
    batches = batches_path(csv_path)
    extra = {"sweep": info, **({"prices": dict(prices)} if prices else {})}
    return atomic_write_files([(csv_path, sweep_rows_text(rows)), (batches, batches_text(runs)),
                               (batches.with_suffix(".json"), sidecar_text(runs, host, extra))])


def sweep_paths(csv_path: str | os.PathLike) -> tuple[Path, Path, Path]:
    """The sweep CSV, its per-batch CSV and that one's sidecar."""
    batches = batches_path(csv_path)
    return Path(csv_path), batches, batches.with_suffix(".json")


class SweepFiles:
    """A sweep's three files, growing point by point in the background (the window's sweep autosave, the
    CLI's --csv while it sweeps).

    They are replaced together at the start (whatever was at the paths goes as one), so a kill at any
    moment leaves three files of this sweep. Each point costs the same to save at point 40 as at
    point 1: its rows and records are appended, and the sidecar is rebuilt from each finished run's
    entry, serialised once.
    """

    def __init__(self, csv_path: str | os.PathLike, host: Mapping[str, JsonValue], specs: Sequence[SweepAsked] = (),
                 prices: Mapping[str, float] | None = None, claim: bool = False) -> None:
        self.csv_path, self.batches_path, self.json_path = sweep_paths(csv_path)
        self._host, self._extra = host, {"sweep": sweep_info(specs), **({"prices": dict(prices)} if prices else {})}
        self._run_texts: list[str] = []
        self._claim = OutputClaim(self.csv_path, self.batches_path, self.json_path) if claim else None
        self.writer = BackgroundWriter("crossover-sweep-files")
        self._broken = False  # a write failed (a full disk): none follows, so the files never have a hole
        first = (sweep_rows_text([]), batches_text([]), sidecar_from_parts([], self._host, self._extra))
        self._submit(lambda: atomic_write_files(list(zip((self.csv_path, self.batches_path, self.json_path), first))))

    @property
    def error(self) -> str:
        return self.writer.error

    def _submit(self, write: Callable[[], object]) -> None:
        def job() -> None:
            if self._broken:
                return
            try:
                write()
            except OSError:  # ExportError is one
                self._broken = True
                raise

        self.writer.submit(job)

    def whole(self) -> bool:
        """Whether every point added so far is in the three files (no write failed): once the writes are done."""
        return self.writer.flush(10.0) and not self._broken

    def _write_sidecar(self) -> None:
        text = sidecar_from_parts(self._run_texts, self._host, self._extra)
        self._submit(lambda: atomic_write_text(self.json_path, text))

    def add_point(self, rows: Sequence[SweepRow], run: RunResult | None) -> None:
        """One finished point: its rows at the end of the sweep CSV, its records at the end of the
        per-batch CSV, and a sidecar that now lists its run."""
        lines = split_lines(sweep_rows_text(rows))[1:]
        self._submit(lambda: append_lines(self.csv_path, ",".join(COLUMNS), lines))
        if run is None:
            return
        records = split_lines(batches_text([run]))
        self._submit(lambda: append_lines(self.batches_path, records[0], records[1:]))
        self._run_texts.append(run_json(run))
        self._write_sidecar()

    def close(self) -> None:
        self.writer.close(10.0)
        if self._claim is not None:
            self._claim.release()
            self._claim = None
