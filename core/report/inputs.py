"""The files a report or a rule is made from, read as `analyze` reads them: sweep CSVs (one machine or several,
lanes named LABEL/LANE when several), a run's per-batch CSV with its sidecar, an anatomy JSON (`anatomy
--json-file`); and each file's name, size and SHA-256, so a reader can tell it is the same file."""
from __future__ import annotations

import csv
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from ..analysis.anatomy import AnatomyPoint, point_from_json
from ..config import ConfigError
from ..json_data import JsonValue, as_map, as_seq, parse_json
from ..files.inputs import read_text_bounded
from ..files.run_files import FORMAT as RUN_FORMAT, read_runs, sidecar_path
from ..files.sweep_rows import SweepRow, latest_rows
from ..files.sweep_sets import file_prices, load_sets, sidecar_of
from ..files.sweeps import SweepReading, batches_path, iter_sweep_rows
from ..results import RunResult

SWEEP, RUN, ANATOMY = "sweep", "run", "anatomy"


@dataclass(frozen=True)
class FileFacts:
    """A source file as a reader checks it: its name, size in bytes and SHA-256."""

    path: str
    name: str
    size: int
    sha256: str
    role: str  # sweep | run | anatomy | sidecar

    def to_json(self) -> dict[str, JsonValue]:
        return {"name": self.name, "size": self.size, "sha256": self.sha256, "role": self.role}


def file_facts(path: str | os.PathLike, role: str) -> FileFacts:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    p = Path(path)
    return FileFacts(str(p), p.name, p.stat().st_size, digest.hexdigest(), role)


@dataclass(frozen=True)
class SweepInput:
    """One sweep file's usable rows (lanes renamed LABEL/LANE when several files are read), and its sidecar."""

    path: str
    label: str
    rows: tuple[SweepRow, ...]
    meta: Mapping[str, JsonValue]
    machine: str = ""
    prices: Mapping[str, float] = field(default_factory=dict)
    dropped: str = ""  # the reading's drop note, "" when no row was dropped

    @property
    def devices(self) -> list[str]:
        return sorted({r.device for r in self.rows if r.device})


@dataclass(frozen=True)
class RunInput:
    """A run's per-batch CSV and its sidecar, read back as the engine made the runs."""

    path: str
    runs: tuple[RunResult, ...]
    meta: Mapping[str, JsonValue]


@dataclass(frozen=True)
class AnatomyInput:
    """An anatomy JSON (`crossover anatomy --json-file`): its points, failures and the clocks' meanings."""

    path: str
    points: tuple[AnatomyPoint, ...]
    failures: tuple[Mapping[str, JsonValue], ...]
    clocks: Mapping[str, str]


@dataclass(frozen=True)
class Inputs:
    sweeps: tuple[SweepInput, ...] = ()
    runs: tuple[RunInput, ...] = ()
    anatomies: tuple[AnatomyInput, ...] = ()
    files: tuple[FileFacts, ...] = ()


def kind_of(path: str) -> str:
    """SWEEP, RUN or ANATOMY by what the file holds (not by its name); ConfigError for anything else."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{path}: no such file")
    if p.suffix.lower() == ".json":
        try:
            data = parse_json(read_text_bounded(p), str(p))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{path} is not JSON that reads ({exc})") from None
        if isinstance(data, dict) and "points" in data and "clocks" in data:
            return ANATOMY
        raise ConfigError(f"{path} is not an anatomy JSON (crossover anatomy --json-file); give a sweep or run "
                          "CSV, whose sidecar is read beside it")
    try:
        with open(p, encoding="utf-8-sig", newline="") as fh:
            header = next(csv.reader(fh), [])
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    if {"run_id", "step", "ms"} <= set(header) and "median_ms" not in header:
        return RUN
    return SWEEP


def read_sweeps(paths: Sequence[str], labels: Mapping[str, str] | None = None) -> list[SweepInput]:
    """Sweep files as `analyze` reads them: one file without labels keeps its lanes' names; several (or
    labelled ones) name each lane LABEL/LANE. ConfigError for a file that is not a sweep or holds no points."""
    if len(paths) == 1 and not labels:
        path = paths[0]
        reading = SweepReading(path)
        rows = tuple(latest_rows(iter_sweep_rows(path, reading)))
        meta = sidecar_of(path)
        host = meta.get("host")
        machine = str(host.get("machine") or "") if isinstance(host, Mapping) else ""
        out = [SweepInput(path, machine or Path(path).stem, rows, meta, machine, file_prices(meta),
                          reading.drop_note())]
    else:
        out = [SweepInput(s.path, s.label, s.rows, sidecar_of(s.path), s.machine, dict(s.prices),
                          s.reading.drop_note()) for s in load_sets(paths, labels)]
    empty = [s.path for s in out if not s.rows]
    if empty:
        raise ConfigError(f"{', '.join(empty)} hold(s) no points that can be used")
    return out


def sweep_sidecar(path: str) -> Path | None:
    """The sidecar a sweep CSV's facts come from (`<stem>-batches.json`), when there is one."""
    side = batches_path(path).with_suffix(".json")
    return side if side.is_file() else None


def read_inputs(paths: Sequence[str], labels: Mapping[str, str] | None = None) -> Inputs:
    """Every file, by what it holds; the sweeps read together (several machines make one analysis)."""
    if not paths:
        raise ConfigError("no files given: name sweep CSVs, run CSVs or anatomy JSONs")
    kinds = {path: kind_of(path) for path in paths}
    sweeps = read_sweeps([p for p in paths if kinds[p] == SWEEP], labels) if SWEEP in kinds.values() else []
    runs, anatomies, files = [], [], []
    for path in paths:
        kind = kinds[path]
        files.append(file_facts(path, kind))
        if kind == SWEEP:
            side = sweep_sidecar(path)
            if side is not None:
                files.append(file_facts(side, "sidecar"))
        elif kind == RUN:
            runs.append(_read_run(path))
            files.append(file_facts(sidecar_path(path), "sidecar"))
        else:
            anatomies.append(_read_anatomy(path))
    return Inputs(tuple(sweeps), tuple(runs), tuple(anatomies), tuple(files))


def _read_run(path: str) -> RunInput:
    try:
        meta = parse_json(read_text_bounded(sidecar_path(path)), str(sidecar_path(path)))
        if not isinstance(meta, dict) or meta.get("format") != RUN_FORMAT:
            raise ValueError(f"not a Crossover sidecar ({RUN_FORMAT})")
        runs = read_runs(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path} is a per-batch CSV, but its sidecar {sidecar_path(path)} cannot be read "
                          f"({type(exc).__name__}: {exc})") from None
    return RunInput(path, tuple(runs), meta)


def _read_anatomy(path: str) -> AnatomyInput:
    try:
        data = as_map(parse_json(read_text_bounded(path), path))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path} cannot be read as an anatomy JSON ({exc})") from None
    try:
        points = tuple(point_from_json(dict(as_map(p))) for p in as_seq(data.get("points")))
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: an anatomy point cannot be read ({type(exc).__name__}: {exc})") from None
    failures = tuple(f for f in as_seq(data.get("failures")) if isinstance(f, dict))
    clocks = {str(k): str(v) for k, v in as_map(data.get("clocks")).items()}
    return AnatomyInput(path, points, failures, clocks)
