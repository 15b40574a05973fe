"""The rule's false-lead rate as measured on this machine (`calibrate`): K sweeps of a lane against its twin, each
judged as `analyze` judges a file, and the share that named a lead, with its exact 95% interval and the design it
holds for. One frozen type per shape that writes and reads itself, in `rule-here.json` in Crossover's home folder;
the sweeps' own files stay in a folder beside it.

The shipped calibration (core/files/rule_calibration.py) simulates the noise the rule models; this one is the A/A
control on the real machine: two equal lanes taking turns as any pair does, with whatever noise this machine makes.
"""
from __future__ import annotations

import errno
import functools
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

from ..analysis.rates import CountedRate
from ..analysis.verdict import State
from ..json_data import JsonError, JsonValue, as_map, as_seq, finite_or_none, parse_json
from ..machine import HostInfo
from ..paths import crossover_home
from ..plain_text import ONE_LINE, printable
from ..config import TASKS, Task
from .atomic import atomic_write_text
from .findings import Findings
from .inputs import InputError, read_text_bounded
from .sweeps.rows import latest_rows
from .sweeps.files import SweepReading, iter_sweep_rows

FORMAT = "crossover-rule-here/1"
FILE = "rule-here.json"
SWEEPS_FOLDER = "rule-here-sweeps"  # beside the file: one folder per calibration, one set of sweep files per sweep
MAX_BYTES = 1 << 20
MAX_SWEEPS = 1000  # twin sweeps one calibration may hold (each is minutes: a thousand is weeks)
MAX_WIDTHS = 1000  # widths of one sweep (core/cli/sweep.py MAX_POINTS)
MAX_TEXT = 300
# The answers that name a lead: a lane leads throughout, or the lead changes hands. Between twins, either is false.
LEADS = (State.LEADS, State.CROSSES)


@dataclass(frozen=True)
class TwinDesign:
    """What each twin sweep measured: the lane and its twin, the widths (each layer that wide) and batch sizes, the
    points measured twice per sweep (its run-to-run noise), the steady batches and seconds a point had at most, and
    the task, the kind of model and the passes each point was measured in. A rate holds for answers of this design."""

    lane: str
    twin: str
    widths: tuple[int, ...]
    layers: int
    batch_sizes: tuple[int, ...]
    rechecks: int
    steady_steps: int
    seconds_per_point: float
    task: Task = Task.TRAIN
    family: str = "mlp"
    passes: int = 1

    def to_json(self) -> dict[str, JsonValue]:
        return {"lane": self.lane, "twin": self.twin, "widths": list(self.widths), "layers": self.layers,
                "batch_sizes": list(self.batch_sizes), "rechecks": self.rechecks, "steady_steps": self.steady_steps,
                "seconds_per_point": self.seconds_per_point, "task": str(self.task), "family": self.family,
                "passes": self.passes}

    @classmethod
    def from_json(cls, d: JsonValue) -> TwinDesign:
        """ValueError (a sentence) where a field is not what `calibrate` writes."""
        m = as_map(d)
        widths = tuple(_whole(w, "a width", 1, 1 << 20) for w in as_seq(m.get("widths"))[:MAX_WIDTHS + 1])
        batches = tuple(_whole(b, "a batch size", 1, 1 << 20) for b in as_seq(m.get("batch_sizes"))[:MAX_WIDTHS + 1])
        if not widths or len(widths) > MAX_WIDTHS or len(batches) > MAX_WIDTHS:
            raise ValueError(f"its design holds no widths, or more than {MAX_WIDTHS}")
        seconds = m.get("seconds_per_point")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds < 1e6:
            raise ValueError("its design's seconds per point are not a time")
        return cls(_text(m.get("lane"), "its lane"), _text(m.get("twin"), "its twin"), widths,
                   _whole(m.get("layers"), "its layers", 1, 1000), batches,
                   _whole(m.get("rechecks"), "its rechecks", 0, MAX_WIDTHS),
                   _whole(m.get("steady_steps"), "its steady steps", 1, 1 << 30), float(seconds),
                   _task(m.get("task")), _text(m.get("family"), "its kind of model"),
                   _whole(m.get("passes", 1), "its passes", 1, 99))


@dataclass(frozen=True)
class TwinSweep:
    """One twin sweep as `analyze` of its file judged it: its file, each answer's state on the pair (one per group
    of like-for-like points), the lanes any answer named as leading, the widest gap between the twins' medians, and
    the largest share of a twin's cores that other work used while a point was measured (NaN: not known).
    `judged`: some answer rests on widths both lanes measured (a sweep cut short before that counts for nothing)."""

    file: str
    states: tuple[str, ...]
    leaders: tuple[str, ...]
    max_gap: float
    others_cpu: float = math.nan

    @property
    def judged(self) -> bool:
        return any(state != State.NOT_ENOUGH.value for state in self.states)

    @property
    def false_lead(self) -> bool:
        """An answer named a lead (or a crossing) between two equal lanes."""
        return any(state in {s.value for s in LEADS} for state in self.states)

    def to_json(self) -> dict[str, JsonValue]:
        return {"file": self.file, "states": list(self.states), "leaders": list(self.leaders),
                "max_gap": finite_or_none(self.max_gap), "others_cpu": finite_or_none(self.others_cpu),
                "false_lead": self.false_lead}

    @classmethod
    def from_json(cls, d: JsonValue) -> TwinSweep:
        m = as_map(d)
        known = {s.value for s in State}
        states = tuple(_text(s, "a sweep's state") for s in as_seq(m.get("states"))[:100])
        if not set(states) <= known:
            raise ValueError(f"a sweep's state is not one of {', '.join(sorted(known))}")
        return cls(_text(m.get("file"), "a sweep's file", empty=True), states,
                   tuple(_text(s, "a leader") for s in as_seq(m.get("leaders"))[:2]),
                   _figure(m.get("max_gap"), 1.0, math.inf), _figure(m.get("others_cpu"), 0.0, 1.0))


def judge_twin_sweep(csv: str | os.PathLike, lane: str, twin: str) -> TwinSweep:
    """A twin sweep's file read and judged as `analyze FILE` judges it (core/files/findings.py: its latest rows,
    pooled per place, the one rule per group): the answers on `lane` and `twin`. ConfigError where the file cannot be
    read as a sweep."""
    path = os.fspath(csv)
    findings = Findings(latest_rows(iter_sweep_rows(path, SweepReading(path))))
    answers = [a.verdict for a in findings.answers() if set(a.verdict.lanes) == {lane, twin}]
    leaders = sorted({s.leader for v in answers for s in v.stretches if s.leader})
    gaps = [v.max_gap for v in answers if math.isfinite(v.max_gap)]
    busy = [r.others_cpu for r in findings.rows() if r.lane in (lane, twin) and math.isfinite(r.others_cpu)]
    return TwinSweep(path, tuple(v.state.value for v in answers), tuple(leaders), max(gaps, default=math.nan),
                     max(busy, default=math.nan))


@dataclass(frozen=True)
class HereCalibration:
    """This machine's measured false-lead rate: `rate.count` of `rate.trials` judged twin sweeps named a lead, with
    its exact interval (core/analysis/rates.py); the design every sweep had, each sweep's outcome, how many were
    asked for (fewer were judged where a stop came first), when, on which machine, and where the sweeps' files are."""

    design: TwinDesign
    rate: CountedRate
    sweeps: tuple[TwinSweep, ...]
    asked: int
    measured_at: str
    machine: HostInfo
    folder: str
    method: str = "clopper-pearson"

    def to_json(self) -> dict[str, JsonValue]:
        return {"format": FORMAT, "measured_at": self.measured_at, "false_leads": self.rate.count,
                "sweeps": self.rate.trials, "rate": self.rate.rate, "low": self.rate.low, "high": self.rate.high,
                "level": self.rate.level, "method": self.method, "asked": self.asked, "design": self.design.to_json(),
                "machine": self.machine.to_json(), "folder": self.folder,
                "each": [s.to_json() for s in self.sweeps]}

    @classmethod
    def from_json(cls, d: JsonValue) -> HereCalibration:
        """ValueError (a sentence) where the data is not what `calibrate` writes."""
        m = as_map(d)
        if m.get("format") != FORMAT:
            raise ValueError(f"its format is not {FORMAT}")
        trials = _whole(m.get("sweeps"), "its number of sweeps", 1, MAX_SWEEPS)
        count = _whole(m.get("false_leads"), "its count of false leads", 0, trials)
        low, high, level = (_share(m.get(k), f"its {k}") for k in ("low", "high", "level"))
        if not (low <= count / trials <= high and 0 < level < 1):
            raise ValueError(f"its interval {low:g}-{high:g} does not hold its rate {count} of {trials}")
        sweeps = tuple(TwinSweep.from_json(s) for s in as_seq(m.get("each"))[:MAX_SWEEPS])
        if len(sweeps) != trials or sum(s.false_lead for s in sweeps) != count:
            raise ValueError(f"its {trials} sweeps and {count} false leads are not the sweeps it lists")
        return cls(TwinDesign.from_json(m.get("design")), CountedRate(count, trials, low, high, level), sweeps,
                   _whole(m.get("asked"), "the sweeps asked for", trials, MAX_SWEEPS),
                   _text(m.get("measured_at"), "its date"), HostInfo.from_json(m.get("machine")),
                   _text(m.get("folder"), "its folder", empty=True), _text(m.get("method"), "its method"))


def _whole(value: JsonValue, what: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"{what} is not a whole number from {lo} to {hi}")
    return value


def _figure(value: JsonValue, lo: float, hi: float) -> float:
    """A figure that may be unknown: NaN where the file holds none, or one outside [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
        return math.nan
    return float(value)


def _share(value: JsonValue, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"{what} is not a share between 0 and 1")
    return float(value)


def _text(value: JsonValue, what: str, empty: bool = False) -> str:
    """A text of the file as Crossover shows it anywhere: bounded, one line, every control character escaped."""
    if not isinstance(value, str) or not (value or empty):
        raise ValueError(f"{what} is not a text")
    return printable(value[:MAX_TEXT], ONE_LINE)


def _task(value: JsonValue) -> Task:
    """A design's task as `calibrate` writes it ("train" or "predict")."""
    if not isinstance(value, str) or value not in TASKS:
        raise ValueError("its task is not train or predict")
    return Task(value)


def here_path() -> Path:
    """Where this machine's calibration is kept: rule-here.json in Crossover's home folder."""
    return crossover_home() / FILE


def sweeps_folder() -> Path:
    """Where each calibration's twin sweeps keep their files: a folder of its own under this one."""
    return crossover_home() / SWEEPS_FOLDER


def write_here_calibration(calibration: HereCalibration, path: Path | None = None) -> Path:
    """The calibration written whole or not at all (core/files/atomic.py): ExportError with a sentence."""
    return atomic_write_text(path or here_path(), json.dumps(calibration.to_json(), indent=2) + "\n")


@functools.lru_cache(maxsize=4)
def _read(path: str, stamp: tuple[int, int] | None) -> tuple[HereCalibration | None, str]:
    """The calibration at `path` (None where there is none or it cannot be read) and why not, as a sentence naming
    the file ("" when it was read, or is simply not there). `stamp` (its change time and size) keys the cache: a
    calibration written since is read again. Read like any file from outside: a regular file, a MB at most, JSON no
    deeper than parse_json's bound."""
    try:
        data = parse_json(read_text_bounded(path, MAX_BYTES), path)
    except InputError as exc:
        return None, "" if exc.errno == errno.ENOENT else str(exc)  # never calibrated here: no damage
    except UnicodeDecodeError:
        return None, f"{path} is not UTF-8 text: it is damaged"
    except (JsonError, OSError) as exc:
        return None, str(exc) if isinstance(exc, JsonError) else f"cannot read {path}: {exc.strerror or exc}"
    try:
        return HereCalibration.from_json(data), ""
    except (ValueError, TypeError, OverflowError) as exc:
        return None, f"{path} is not a calibration `calibrate` wrote ({exc}): it is damaged; run calibrate again"


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def here_calibration(path: Path | None = None) -> HereCalibration | None:
    """This machine's measured false-lead rate, count, interval and design, as `calibrate` last wrote them; None
    where it never ran here, or its file is damaged (here_calibration_problem says how)."""
    where = str(path or here_path())
    return _read(where, _stamp(where))[0]


def here_calibration_problem(path: Path | None = None) -> str:
    """Why this machine's calibration cannot be read, as a sentence naming its file; "" when it was, or when
    `calibrate` never ran here."""
    where = str(path or here_path())
    return _read(where, _stamp(where))[1]
