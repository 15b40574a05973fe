"""This machine's run-to-run noise per lane, as its latest sweep measured it: what one run's verdict is bounded by.

A run's own batches give the spread of its steps, not how far a second run of the same model would land: a busy
machine moves whole runs (cpu's runs of one width differed by 10–60% on a 2-core machine). A sweep measures that,
where it times a point twice (its recheck, a refinement); at its end it writes each lane's figure here
(`run-noise.json` in Crossover's home folder), and a later `run` (or the window's run) records the figures it was
bounded by in its own sidecar (RunResult.run_noise), so every view of that run's file says the same.

One frozen type per entry that writes and reads itself (`as_json`, `from_json`), in one file with a format name.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from ..analysis.verdict import run_noise
from ..analysis.points import SweepPoint
from ..json_data import JsonError, JsonValue, parse_json
from ..paths import crossover_home
from ..results import RunResult
from ..config import TASKS, Task
from .atomic import ExportError, atomic_write_text
from .inputs import InputError, read_text_bounded
from ..plurals import plural

FORMAT = "crossover-run-noise/1"
NOISE_FILE = "run-noise.json"
MAX_NOISE_BYTES = 1 << 20
# What a sweep can write: a spread between runs of one width under 1 (a factor of 2.7 either way: beyond that no
# run bounds another), at most as many twice-measured points as a sweep has (core/cli/sweep.py MAX_POINTS), a load
# average of a machine, and short text. An entry outside these is no measurement and is left out.
MAX_LOG_SD = 1.0
MAX_POINTS = 1000
MAX_LOAD = 10_000.0
MAX_TEXT = 300
OLD_DAYS = 30  # a figure older than this is said with its age


@dataclass(frozen=True)
class LaneNoise:
    """One lane's run-to-run noise: the spread between runs of one point (SD of the logs of their medians), over how
    many points measured more than once, when, by which sweep (its file, or "" when it wrote none), and the load."""

    lane: str
    log_sd: float
    points: int
    measured_at: str
    source: str = ""
    load_avg: float = math.nan
    task: Task = Task.TRAIN  # what the sweep timed: training steps, or predict calls

    @property
    def key(self) -> str:
        return f"{self.task}:{self.lane}"

    def as_json(self) -> dict[str, JsonValue]:
        return {"lane": self.lane, "task": str(self.task), "log_sd": self.log_sd, "points": self.points,
                "measured_at": self.measured_at, "source": self.source,
                "load_avg": None if math.isnan(self.load_avg) else self.load_avg}

    @classmethod
    def from_json(cls, data: JsonValue) -> LaneNoise:
        """An entry back; ValueError naming what is wrong with a damaged one."""
        if not isinstance(data, dict):
            raise ValueError("an entry is not an object")
        lane, sd, points, at = data.get("lane"), data.get("log_sd"), data.get("points"), data.get("measured_at")
        if not isinstance(lane, str) or not lane or len(lane) > 200:
            raise ValueError("an entry's lane is not a lane's name")
        if isinstance(sd, bool) or not isinstance(sd, (int, float)) or not (0 <= sd <= MAX_LOG_SD):
            raise ValueError(f"{lane}'s log_sd is not a spread a sweep can measure (0-{MAX_LOG_SD:g})")
        if isinstance(points, bool) or not isinstance(points, int) or not 1 <= points <= MAX_POINTS:
            raise ValueError(f"{lane}'s points is not a count of a sweep's points")
        if not isinstance(at, str) or len(at) > 40:
            raise ValueError(f"{lane}'s measured_at is not a time")
        load = data.get("load_avg")
        if load is not None and (isinstance(load, bool) or not isinstance(load, (int, float))
                                 or not (math.isfinite(load) and 0 <= load <= MAX_LOAD)):
            raise ValueError(f"{lane}'s load_avg is not a load average")
        source = data.get("source")
        if source is not None and (not isinstance(source, str) or len(source) > 4096):
            raise ValueError(f"{lane}'s source is not a file's path")
        task = data.get("task", Task.TRAIN)
        if not isinstance(task, str) or task not in TASKS:
            raise ValueError(f"{lane}'s task is not train or predict")
        return cls(lane, float(sd), points, at, source or "", math.nan if load is None else float(load), Task(task))


def noise_path() -> Path:
    return crossover_home() / NOISE_FILE


def measured_noise(points: Sequence[SweepPoint], measured_at: str, source: str = "",
                   task: Task = Task.TRAIN) -> list[LaneNoise]:
    """Each lane's run-to-run noise from a sweep's points (verdict.run_noise, the figure its own verdict used), where
    it measured a point more than once."""
    out = []
    for lane in dict.fromkeys(p.lane for p in points):
        mine = [p for p in points if p.lane == lane]
        twice = [p for p in mine if p.runs > 1 and math.isfinite(p.between_runs)]
        sd = run_noise(p.curve_point() for p in mine)
        if twice and math.isfinite(sd):
            loads = [p.load_avg for p in mine if math.isfinite(p.load_avg)]
            if sd <= MAX_LOG_SD:  # a wider scatter bounds nothing; the sweep's own files still say it
                out.append(LaneNoise(lane, sd, len(twice), measured_at, source, max(loads) if loads else math.nan,
                                     task))
    return out


def read_noise(path: Path | None = None) -> dict[str, LaneNoise]:
    """The noise each lane's latest sweep measured here; {} where none did (or the file is damaged: a bound that
    cannot be read is no bound, and the run says its verdict rests on its own spread only)."""
    try:
        data = parse_json(read_text_bounded(path or noise_path(), MAX_NOISE_BYTES), "the run-noise file")
    except (OSError, InputError, JsonError, ValueError):
        return {}
    entries = data.get("lanes") if isinstance(data, dict) and data.get("format") == FORMAT else None
    if not isinstance(entries, list):
        return {}
    out = {}
    for entry in entries:
        try:
            noise = LaneNoise.from_json(entry)
        except ValueError:
            continue
        out[noise.key] = noise
    return out


def record_noise(measured: Sequence[LaneNoise], path: Path | None = None) -> tuple[Path | None, str]:
    """Keep these lanes' figures (replacing their earlier ones, keeping other lanes'): the file written, or None and
    why not in a sentence where it could not be (a folder in its place, a home folder that cannot be written: the
    sweep's own files hold its figures either way); (None, "") when nothing was measured."""
    if not measured:
        return None, ""
    path = path or noise_path()
    kept = {**read_noise(path), **{n.key: n for n in measured}}
    text = _text(kept)
    try:
        os.makedirs(path.parent, exist_ok=True)
        if path.is_dir() and not path.is_symlink():
            raise IsADirectoryError(f"{path} is a folder")
        return atomic_write_text(path, text), ""
    except OSError as exc:
        why = str(exc) if isinstance(exc, ExportError) else f"cannot write {path}: {exc.strerror or exc}"
        return None, f"this sweep's run-to-run noise was not kept for later runs ({why}); its own files hold it"


def _text(lanes: Mapping[str, LaneNoise]) -> str:
    import json

    return json.dumps({"format": FORMAT, "lanes": [n.as_json() for n in lanes.values()]}, indent=1) + "\n"


def bound_by_noise(result: RunResult, known: Mapping[str, LaneNoise] | None = None) -> RunResult:
    """`result` (a run about to start) with this machine's run-to-run noise for its lanes, where a sweep here
    measured it: what its verdict is bounded by, kept in its sidecar so every view of it says the same."""
    known = read_noise() if known is None else known
    task = result.config.train.task
    if result.config.train.arrival_rate is not None:
        return result  # a load's verdict is its own (core/analysis/serving_rates.py), by blocks of its requests
    mine = {lane: known[f"{task}:{lane}"] for lane in result.lanes if f"{task}:{lane}" in known}
    result.run_noise = {lane: n.log_sd for lane, n in mine.items()}
    if mine:
        dates = sorted({n.measured_at[:10] for n in mine.values() if n.measured_at})
        sources = sorted({_cited(n.source) for n in mine.values() if n.source})
        age = _age_days(min((n.measured_at for n in mine.values() if n.measured_at), default=""))
        old = f", {age} days before this run" if age is not None and age > OLD_DAYS else ""
        result.run_noise_from = (f"the {plural(len(dates), 'sweep')} of {', '.join(dates) or 'an earlier day'}"
                                 + old + (f" ({', '.join(sources)})" if sources else ""))
    return result


def _cited(source: str) -> str:
    """A sweep file as a run cites it: its name, cut short, and whether it is still there."""
    name = "".join(ch for ch in os.path.basename(source) if ch.isprintable())[:80]
    return name if os.path.isfile(source) else f"{name}, no longer on disk"


def _age_days(when: str) -> int | None:
    import datetime as dt

    try:
        then = dt.datetime.fromisoformat(when.replace("Z", "+00:00"))
    except ValueError:
        return None
    if then.tzinfo is None:
        then = then.replace(tzinfo=dt.timezone.utc)
    return (dt.datetime.now(dt.timezone.utc) - then).days
