"""The files a report or a rule is made from, read as `analyze` reads them: sweep CSVs (one machine or several,
lanes named MACHINE/LANE when several machines), a run's per-batch CSV with its sidecar, an anatomy JSON
(`anatomy --json-file`); and each file's name, size and SHA-256, so a reader can tell it is the same file."""
from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from ..machine import HostInfo
from ..analysis.anatomy import AnatomyPoint
from ..config import ConfigError
from ..json_data import JsonValue, as_map, parse_json
from ..files.inputs import read_text_bounded
from ..files.run_files import read_run_file, sidecar_path
from ..files.sweeps.rows import SweepRow, latest_rows
from ..files.sweeps.sets import SweepSet, file_prices, load_sets, sidecar_of
from ..files.sweeps.files import SweepReading, batches_path, iter_sweep_rows
from ..results import RunResult
from ..words.anatomy import anatomy_of_json

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
    """One sweep file's usable rows (lanes renamed LABEL/LANE when the files come from several machines), and its
    sidecar. `label` names the file's machine: files of one machine share it."""

    path: str
    label: str
    rows: tuple[SweepRow, ...]
    meta: Mapping[str, JsonValue]
    machine: str = ""
    prices: Mapping[str, float] = field(default_factory=dict)
    dropped: str = ""  # the reading's drop note, "" when no row was dropped
    lane_prefix: str = ""  # "LABEL/" where the lanes are renamed so (several machines), "" where they keep their names

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
    """Sweep files as `analyze` reads them, each file's lanes named by the machine it ran on. ConfigError for a
    file that is not a sweep or holds no points.

    A file's machine is the name `--label FILE=NAME` gives it, else the machine name in its sidecar's host info;
    a file that names neither is a machine of its own (called by its file's stem). Files that name the same
    machine are one machine: its label once (never "vm" and "vm#2"), and its lanes one set of lanes.

    - All files from one machine: every lane keeps its own name ("cpu", "cpu1"), as with a single file. Two of
      the files that both hold lane "cpu" hold points of one lane, as one file that measured it twice does: where
      both measured the same point (kind of model, task, variant, batch size and width), `analyze` pools the
      two runs' figures (core/files/findings.py), as a refinement pools a width it measured again.
    - Files from several machines: every lane is named MACHINE/LANE (machine labels that would repeat get #2,
      #3…), for a lane's name ("cpu", "gpu0") means another device on each machine, and a rule must say which.
    """
    if len(paths) == 1 and not labels:
        path = paths[0]
        reading = SweepReading(path)
        rows = tuple(latest_rows(iter_sweep_rows(path, reading)))
        meta = sidecar_of(path)
        machine = _machine_of(meta)
        out = [SweepInput(path, machine or Path(path).stem, rows, meta, machine, file_prices(meta),
                          reading.drop_note())]
    else:
        out = _by_machine(load_sets(paths, labels), dict(labels or {}))
    empty = [s.path for s in out if not s.rows]
    if empty:
        raise ConfigError(f"{', '.join(empty)} hold(s) no points that can be used")
    return out


def _machine_of(meta: Mapping[str, JsonValue]) -> str:
    return HostInfo.of_sidecar(meta).machine


def _label_given(path: str, labels: Mapping[str, str]) -> str:
    """The --label given for `path` (by its path, its name, or a path to the same file), as load_sets takes it."""
    for key, label in labels.items():
        if key in (path, os.path.basename(path)) or Path(key).resolve() == Path(path).resolve():
            return label
    return ""


def _by_machine(sets: Sequence[SweepSet], labels: Mapping[str, str]) -> list[SweepInput]:
    """load_sets' files (each labelled apart, its lanes LABEL/LANE) named again by machine, as read_sweeps says."""
    named = {s.path: _label_given(s.path, labels) or s.machine for s in sets}
    machine_of = {s.path: named[s.path] or f"file {s.path}" for s in sets}  # a file naming no machine: its own
    machines = list(dict.fromkeys(machine_of.values()))
    label_of: dict[str, str] = {}
    for machine in machines:
        base = next(named[s.path] or Path(s.path).stem for s in sets if machine_of[s.path] == machine)
        label, n = base, 1
        while label in label_of.values():
            n += 1
            label = f"{base}#{n}"
        label_of[machine] = label
    out = []
    for s in sets:
        meta = sidecar_of(s.path)
        label = label_of[machine_of[s.path]]
        prefix = f"{label}/" if len(machines) > 1 else ""
        own = len(s.label) + 1  # load_sets named each lane f"{s.label}/{lane}"
        rows = tuple(dataclasses.replace(r, lane=prefix + r.lane[own:]) for r in s.rows)
        prices = {prefix + lane: price for lane, price in file_prices(meta).items()}
        out.append(SweepInput(s.path, label, rows, meta, s.machine, prices, s.reading.drop_note(), prefix))
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
        meta, runs = read_run_file(path)  # the sidecar's format checked, its runs read by their one reader
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
        points, failures, clocks = anatomy_of_json(data)  # read by the module that writes it
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: an anatomy point cannot be read ({type(exc).__name__}: {exc})") from None
    return AnatomyInput(path, points, failures, clocks)
