"""A device profile (`crossover-profile/1`): one machine's lanes as cost lines, a file that writes and reads itself.

A profile holds, per lane and per set of settings that change speed (jit, steps per execution, feeding, mixed
precision), the points Crossover measured there (each kind of model, task and batch size: width, depth, FLOPs per
step and median ms), the lane's run-to-run noise, the tail at batch 1 where a predict sweep measured one, and the
machine and versions it ran with. It is made from sweep files (`profile --from`, core/cli/profile.py) or by
measuring (`profile`), and sent to someone who has no such machine: `predict` reads it (core/analysis/prediction.py).

Every reader fits the lines again from the points: the figures a profile also writes beside them (intercept,
throughput, error) are for a person reading the file, never read back. Every field is bounded to what a sweep can
write; a file of another format, damaged, or of absurd values is refused with a sentence.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from ..analysis.prediction import CostLine, LinePoint, fit_line
from ..config import TASKS, ConfigError, LaneSpec, Task
from ..json_data import JsonError, JsonObject, JsonValue, as_map, as_seq, finite_or_none, parse_json
from ..machine import HostInfo
from ..paths import crossover_home, resource_dir
from ..plain_text import ONE_LINE, printable
from ..records import Status
from .atomic import atomic_write_text
from .inputs import read_text_bounded
from .run_files import MAX_PLAUSIBLE_MS, sidecar_runs
from ..results import RunResult
from .sweeps.sets import sidecar_of
from .sweeps.files import read_sweep_rows
from .sweeps.rows import MAX_PLAUSIBLE_WIDTH, SweepRow

FORMAT = "crossover-profile/1"
SUFFIX = ".json"
MAX_BYTES = 4 << 20
MAX_TEXT = 400  # characters of any name, device or command kept from a file
MAX_LANES = 64
MAX_LINES = 256  # per lane
MAX_POINTS = 1024  # per line
MAX_FLOPS = 1e18
MIN_BATCHES = 3  # a point of fewer steady batches is no point of a line
SETTINGS = ("jit", "steps_per_execution", "feeding", "mixed_precision")


def shipped_dir() -> Path:
    """The profiles Crossover ships (resources/profiles/), built from the stored results by
    benchmarks/ship_profiles.sh."""
    return resource_dir() / "profiles"


@dataclass(frozen=True)
class ProfileLane:
    """One lane of a profile with one set of speed settings: its cost lines, its noise, its tail at batch 1."""

    lane: str
    device: str
    backend: str
    settings: tuple[tuple[str, str], ...]  # (setting, value in words), in SETTINGS' order
    lines: tuple[CostLine, ...]
    noise_log_sd: float = math.nan  # run-to-run noise: the RMS of the SD of logs of repeat medians
    noise_repeats: int = 0  # the repeats (degrees of freedom) behind it
    p99_batch1_ms: float = math.nan  # a predict call's p99 at batch 1, where measured

    @property
    def setting(self) -> dict[str, str]:
        return dict(self.settings)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(sorted({line.kind for line in self.lines}))

    def to_json(self) -> JsonObject:
        return {"lane": self.lane, "device": self.device, "backend": self.backend, "settings": dict(self.settings),
                "noise_log_sd": finite_or_none(self.noise_log_sd), "noise_repeats": self.noise_repeats,
                "p99_batch1_ms": finite_or_none(self.p99_batch1_ms),
                "lines": [_line_json(line) for line in self.lines]}


def _line_json(line: CostLine) -> JsonObject:
    return {"kind": line.kind, "task": str(line.task), "batch_size": line.batch_size,
            # For a reader of the file; every reader fits the points again.
            "intercept_ms": finite_or_none(line.fit.overhead_ms), "gflops": finite_or_none(line.fit.gflops),
            "loo_log_sd": finite_or_none(line.loo_log_sd),
            "points": [{"width": p.width, "layers": p.layers, "flops": p.flops, "ms": p.ms} for p in line.points]}


@dataclass(frozen=True)
class DeviceProfile:
    """A machine's lanes as cost lines, where they were measured, with what, and by which command."""

    name: str
    made_at: str  # when the profile was made
    measured_at: str  # when its earliest run began ("" where its files do not say): what its age counts from
    host: HostInfo
    command: str
    sources: tuple[str, ...]
    lanes: tuple[ProfileLane, ...]
    path: str = field(default="", compare=False)  # where it was read from ("" for one just made)

    def lane(self, name: str, settings: Mapping[str, str] | None = None) -> ProfileLane | None:
        """The profile's lane of that name (by its own name or its machine's: `h200/jax:gpu0` is `jax:gpu0`),
        with those settings where it has them, else its first."""
        named = [x for x in self.lanes if x.lane == name or x.lane == name.rpartition("/")[2]]
        if settings:
            fitting = [x for x in named if all(x.setting.get(k) == v for k, v in settings.items())]
            if fitting:
                return fitting[0]
        return named[0] if named else None

    @property
    def versions(self) -> str:
        """"Keras 3.15.1, jax 0.11.2": what the lanes ran with."""
        parts = [f"Keras {self.host.keras}"] if self.host.keras else []
        backends = {x.backend for x in self.lanes}
        parts += [f"{name} {version}" for name, version in self.host.backends if version and name in backends]
        return ", ".join(parts) or "versions not recorded"

    def to_json(self) -> JsonObject:
        return {"format": FORMAT, "name": self.name, "made_at": self.made_at, "measured_at": self.measured_at,
                "command": self.command,
                "sources": list(self.sources), "host": self.host.to_json(),
                "lanes": [lane.to_json() for lane in self.lanes]}

    def write(self, path: str | os.PathLike) -> Path:
        """Atomically: a reader sees the old profile or this one."""
        return atomic_write_text(path, json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def from_json(cls, data: JsonValue, where: str = "the profile") -> DeviceProfile:
        """A profile as a file holds it; ConfigError with a sentence for another format, damage or absurd values."""
        d = as_map(data)
        if d.get("format") != FORMAT:
            found = d.get("format")
            raise ConfigError(f"{where} is not a Crossover device profile ({FORMAT}): its format is "
                              f"{_text(found)!r}" if isinstance(found, str) else
                              f"{where} is not a Crossover device profile: it has no \"format\": \"{FORMAT}\"")
        lanes_json = as_seq(d.get("lanes"))
        if not lanes_json:
            raise ConfigError(f"{where} holds no lanes")
        if len(lanes_json) > MAX_LANES:
            raise ConfigError(f"{where} holds {len(lanes_json)} lanes: a profile holds at most {MAX_LANES}")
        lanes = tuple(_lane_from_json(x, where) for x in lanes_json)
        return cls(_text(d.get("name")) or "unnamed", _text(d.get("made_at")), _text(d.get("measured_at")),
                   HostInfo.of_sidecar(d),
                   _text(d.get("command")), tuple(_text(s) for s in as_seq(d.get("sources"))[:MAX_LANES]), lanes)


def _text(value: JsonValue) -> str:
    """A text of the file as Crossover shows it anywhere: bounded, one line, every control or bidi character
    escaped (a profile is someone else's file: its texts are data for the eye, never a terminal's command)."""
    return printable(value[:MAX_TEXT], ONE_LINE) if isinstance(value, str) else ""


def local_lane_name(text: str, where: str) -> str:
    """A profile's lane name, as the machine it describes calls it (cpu, cpu1, jax:gpu0): ConfigError for
    anything else. A lane of another machine (ssh://host/cpu) is refused: a file never names a host to connect
    to, so nothing run because of a profile (predict --measure) can reach one."""
    try:
        spec = LaneSpec.parse(text)
    except ConfigError:
        raise ConfigError(f"{where}: lane {text!r} is not a lane's name (cpu, cpu1, gpu0, jax:gpu0…)") from None
    if spec.host:
        raise ConfigError(f"{where}: lane {text!r} names another machine over SSH; a profile's lanes are the lanes "
                          "of the one machine it describes (cpu, jax:gpu0…), never a host to connect to")
    return spec.name


def _number(value: JsonValue, what: str, where: str, lo: float, hi: float, optional: bool = False) -> float:
    if value is None and optional:
        return math.nan
    try:
        number = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan
    except OverflowError:  # an integer of 400 digits
        number = math.nan
    if not (math.isfinite(number) and lo <= number <= hi):
        raise ConfigError(f"{where}: {what} {str(value)[:40]!r} is not a number from {lo:g} to {hi:g}")
    return number


def _lane_from_json(data: JsonValue, where: str) -> ProfileLane:
    d = as_map(data)
    lane = _text(d.get("lane"))
    if not lane:
        raise ConfigError(f"{where}: a lane has no name")
    lane = local_lane_name(lane, where)
    at = f"{where}, lane {lane}"
    settings = as_map(d.get("settings"))
    noise = _number(d.get("noise_log_sd"), "noise_log_sd", at, 0.0, 2.0, optional=True)
    repeats = int(_number(d.get("noise_repeats", 0), "noise_repeats", at, 0, 1e6))
    p99 = _number(d.get("p99_batch1_ms"), "p99_batch1_ms", at, 0.0, MAX_PLAUSIBLE_MS, optional=True)
    lines_json = as_seq(d.get("lines"))
    if len(lines_json) > MAX_LINES:
        raise ConfigError(f"{at}: {len(lines_json)} lines: a lane holds at most {MAX_LINES}")
    lines = []
    for x in lines_json:
        line = _line_from_json(x, at, noise)
        if line is not None:
            lines.append(line)
    return ProfileLane(lane, _text(d.get("device")), _text(d.get("backend")),
                       tuple((k, _text(settings.get(k))) for k in SETTINGS if isinstance(settings.get(k), str)),
                       tuple(lines), noise, repeats, p99)


def _line_from_json(data: JsonValue, where: str, noise: float) -> CostLine | None:
    d = as_map(data)
    kind, task = _text(d.get("kind")), _text(d.get("task"))
    if task not in TASKS or not kind:
        raise ConfigError(f"{where}: a line of task {task!r} and kind {kind!r}: a line is of a kind of model, "
                          "for train or predict")
    batch = int(_number(d.get("batch_size"), "batch_size", where, 0, 1 << 20))
    points_json = as_seq(d.get("points"))
    if len(points_json) > MAX_POINTS:
        raise ConfigError(f"{where}: a line of {len(points_json)} points: at most {MAX_POINTS}")
    points = []
    for p in points_json:
        q = as_map(p)
        points.append(LinePoint(int(_number(q.get("width"), "width", where, 0, MAX_PLAUSIBLE_WIDTH)),
                                int(_number(q.get("layers"), "layers", where, 0, 64)),
                                _number(q.get("flops"), "flops", where, 1.0, MAX_FLOPS),
                                _number(q.get("ms"), "ms", where, 1e-6, MAX_PLAUSIBLE_MS)))
    return fit_line(kind, Task(task), batch, points, noise)


def read_profile(path: str | os.PathLike) -> DeviceProfile:
    """The profile in the file at `path`; ConfigError with a sentence where it cannot be one."""
    shown = printable(os.fspath(path), ONE_LINE)
    try:
        text = read_text_bounded(path, MAX_BYTES)
    except OSError as exc:
        raise ConfigError(f"cannot read the profile {shown}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{shown} is not a device profile: its bytes are not UTF-8 text") from None
    try:
        data = parse_json(text, f"the profile {shown}")
    except JsonError as exc:
        raise ConfigError(f"{shown} is not a device profile: {exc}") from None
    try:
        profile = DeviceProfile.from_json(data, shown)
    except RecursionError:
        raise ConfigError(f"{shown} is not a device profile: it nests too deep") from None
    return dataclasses.replace(profile, path=os.path.abspath(path))


def shipped_profiles() -> list[DeviceProfile]:
    """Every profile Crossover ships, by name (one that cannot be read is left out: the test of the shipped
    profiles reads each)."""
    out = []
    for path in sorted(shipped_dir().glob(f"*{SUFFIX}")):
        try:
            out.append(read_profile(path))
        except ConfigError:
            continue
    return out


def user_profiles_dir() -> Path:
    """The user's own profiles, found by name as the shipped ones are (crossover_home()/profiles)."""
    return crossover_home() / "profiles"


def is_profile_path(text: str) -> bool:
    """Whether `text` names a file by its shape (a `/`, a leading `~`, or ending in .json), not a profile's name:
    a name never reads a file of the working folder, so a file planted there cannot stand in for a shipped one."""
    return "/" in text or os.sep in text or text.startswith("~") or text.lower().endswith(SUFFIX)


def find_profile(name_or_path: str) -> DeviceProfile:
    """A profile by its path (a `/` in it, or ending in .json), or by the name of one Crossover ships
    ("h200-2026-11-30") or of one in the user's profiles folder; its `path` says which file was read."""
    shown = printable(name_or_path, ONE_LINE)
    if is_profile_path(name_or_path):
        try:
            path = Path(name_or_path).expanduser()
        except RuntimeError:  # "~nouser/x": no such user's home
            raise ConfigError(f"no profile {shown!r}: there is no such user's home folder") from None
        return read_profile(path)
    if not name_or_path or name_or_path.startswith(".") or any(ch in name_or_path for ch in "\\:\0"):
        raise ConfigError(f"no profile {shown!r}: give a profile's name (profile --list) or a file's path "
                          "(./NAME.json)")
    for folder in (shipped_dir(), user_profiles_dir()):
        candidate = folder / f"{name_or_path}{SUFFIX}"
        try:
            found = candidate.is_file()
        except OSError:
            found = False
        if found:
            return read_profile(candidate)
    known = ", ".join(p.stem for p in sorted(shipped_dir().glob(f"*{SUFFIX}"))) or "none"
    raise ConfigError(f"no profile {shown!r} among those Crossover ships ({known}) or in "
                      f"{user_profiles_dir()}; a file is named by its path (./{shown}.json). `profile --list` "
                      "lists them")


# Building a profile from what sweeps measured.

def _feeding_word(text: str) -> str:
    return text.split(":", 1)[0].strip() if text else ""


def row_settings(row: SweepRow) -> tuple[tuple[str, str], ...]:
    """The settings of a sweep row that change speed, in words: jit on/off/"backend default", steps per execution,
    feeding (host or device), mixed precision on/off."""
    jit = "backend default" if row.jit is None else "on" if row.jit else "off"
    return (("jit", jit), ("steps_per_execution", str(row.steps_per_execution or 1)),
            ("feeding", _feeding_word(row.feeding) or "host"),
            ("mixed_precision", "on" if row.mixed_precision else "off"))


def usable(row: SweepRow) -> bool:
    return (row.status == Status.COMPLETED and math.isfinite(row.median_ms) and row.median_ms > 0
            and row.flops_per_batch > 0 and row.n_batches >= MIN_BATCHES and row.batch_size > 0)


def _noise(rows: Iterable[SweepRow]) -> tuple[float, int]:
    """The pooled SD of logs between repeat runs of one point, and its degrees of freedom (NaN, 0 without)."""
    total, dof = 0.0, 0
    for r in rows:
        if r.runs > 1 and math.isfinite(r.between_runs):
            total += (r.runs - 1) * r.between_runs ** 2
            dof += r.runs - 1
    return (math.sqrt(total / dof), dof) if dof else (math.nan, 0)


def lanes_from_rows(rows: Sequence[SweepRow]) -> tuple[ProfileLane, ...]:
    """The rows as profile lanes: per lane and speed settings, a line per kind, task and batch size (where a batch
    size has one point only, as a predict sweep along batch size measures, its kind's points at every batch size
    make one line across batch sizes, batch_size 0). A point measured in several files counts once: the row that
    pools the most runs."""
    best: dict[tuple, SweepRow] = {}
    for r in rows:
        if not usable(r):
            continue
        key = (r.lane, row_settings(r), r.family, r.task, r.batch_size, r.width, r.layers, r.flops_per_batch)
        if key not in best or r.runs > best[key].runs:
            best[key] = r
    by_lane: dict[tuple, list[SweepRow]] = {}
    for r in best.values():
        by_lane.setdefault((r.lane, row_settings(r)), []).append(r)
    out = []
    for (lane, settings), lane_rows in sorted(by_lane.items()):
        noise, repeats = _noise(lane_rows)
        groups: dict[tuple[str, Task, int], list[SweepRow]] = {}
        for r in lane_rows:
            groups.setdefault((r.family, r.task, r.batch_size), []).append(r)
        lines: list[CostLine] = []
        thin: dict[tuple[str, Task], list[SweepRow]] = {}
        for (kind, task, batch), group in sorted(groups.items()):
            if len({r.flops_per_batch for r in group}) < 2:
                thin.setdefault((kind, task), []).extend(group)
                continue
            line = fit_line(kind, task, batch, [_point(r) for r in group], noise)
            if line is not None:
                lines.append(line)
        for (kind, task), group in sorted(thin.items()):
            if len({r.batch_size for r in group}) >= 2 and not any(x.kind == kind and x.task == task for x in lines):
                line = fit_line(kind, task, 0, [_point(r) for r in group], noise)
                if line is not None:
                    lines.append(line)
        batch1 = [r.p99_ms for r in lane_rows
                  if r.task == Task.PREDICT and r.batch_size == 1 and math.isfinite(r.p99_ms)]
        first = lane_rows[0]
        out.append(ProfileLane(lane, first.device[:MAX_TEXT], first.backend, settings, tuple(lines), noise, repeats,
                               min(batch1) if batch1 else math.nan))
    return tuple(x for x in out if x.lines)


def _runs_of(sidecar: Mapping[str, JsonValue]) -> list[RunResult]:
    """The runs a sidecar records, read by their own type; none where they do not read (the rows still count)."""
    try:
        return sidecar_runs(sidecar)
    except (KeyError, TypeError, ValueError, AttributeError, ConfigError):
        return []


def _point(r: SweepRow) -> LinePoint:
    return LinePoint(r.width, r.layers, float(r.flops_per_batch), float(r.median_ms))


def _machine_key(host: HostInfo) -> tuple[str, int | None, tuple[str, ...]]:
    """What tells two machines apart in a sidecar: the CPU, its core count and the GPUs."""
    return host.cpu, host.cpu_cores, tuple(g.name for g in host.gpus)


def machine_name(host: HostInfo) -> str:
    gpus = ", ".join(g.name for g in host.gpus)
    return f"{host.cpu} ({host.cpu_cores or '?'} cores{', ' + gpus if gpus else ''})"


def profile_from_files(paths: Sequence[str], name: str, command: str, made_at: str) -> tuple[DeviceProfile, list[str]]:
    """A profile of the lanes that the sweep files at `paths` measured (a run's per-batch CSV reads as its ramp),
    and a note per file on what was left out; ConfigError where nothing in them makes a line."""
    rows: list[SweepRow] = []
    notes: list[str] = []
    hosts: list[HostInfo] = []
    began: list[str] = []
    for path in paths:
        found, reading = read_sweep_rows(path)
        rows.extend(found)
        sidecar = sidecar_of(path)
        hosts.append(HostInfo.of_sidecar(sidecar))
        began += [run.started_at for run in _runs_of(sidecar) if run.started_at]
        dropped = sum(reading.dropped.values())
        if dropped:
            notes.append(f"{path}: {dropped} of {reading.lines} rows dropped ({'; '.join(reading.dropped)})")
        unused = sum(1 for r in found if not usable(r))
        if unused:
            notes.append(f"{path}: {unused} of {len(found)} points not used (failed, cut short, or fewer than "
                         f"{MIN_BATCHES} steady batches)")
    remote = sorted({r.lane for r in rows if r.lane.lower().startswith("ssh://")})
    if remote:  # a profile describes one machine; a remote lane's belongs in a profile measured there
        notes.append(f"left out {', '.join(remote)}: lanes of another machine; make its profile there")
        rows = [r for r in rows if not r.lane.lower().startswith("ssh://")]
    lanes = lanes_from_rows(rows)
    if not lanes:
        raise ConfigError(f"no cost line could be made from {', '.join(paths)}: a line takes a lane's points at two "
                          "model sizes or more, of one kind of model and batch size")
    machines = {_machine_key(h) for h in hosts if h.cpu}
    if len(machines) > 1:
        names = sorted({machine_name(h) for h in hosts if h.cpu})
        raise ConfigError(f"these files were measured on {len(machines)} machines ({'; '.join(names)}): a "
                          "profile is of one machine; make one profile per machine")
    unknown = [p for p, h in zip(paths, hosts) if not h.cpu]
    if unknown and len(paths) > 1:
        raise ConfigError(f"{', '.join(printable(p, ONE_LINE) for p in unknown)}: no machine recorded (no sidecar "
                          "beside it), so it cannot be told to be the other files' machine; make its profile alone")
    host = next((h for h in hosts if h.cpu), hosts[0] if hosts else HostInfo())
    return DeviceProfile(name[:MAX_TEXT], made_at, min(began) if began else "", host, command[:4 * MAX_TEXT],
                         tuple(Path(p).name for p in paths), lanes), notes
