"""What the app and a lane say to each other: one frozen class per message, both ways, and a data-only codec.

App → lane: `RunJob`, `ProbeJob`, `CalibrateJob`, `AnatomyJob`, `CloseLane`, and during a run
`SwitchModel`, `Proceed`, `Finish`. Lane → app: `Bundle` (lane events: records and lifecycle,
core/records.py), `Probed`, `Calibrated`, `AnatomyMeasured`, `LaneStartFailed`, `LaneStatus`.
`Lane.request()` answers with the message asked for or one of the `Unanswered` kinds, each with
a `reason` sentence. A local lane sends these objects through multiprocessing queues; a remote
one through `to_wire`/`from_wire`, which build only the classes registered here from plain JSON
data, so a message can never make the receiver run code.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import typing
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Mapping, Sequence, TypeAlias, TypeVar, Union

from .config import FactoryModel, FactoryWidth, LaneSpec, ModelSpec, RunConfig, SavedModel, TrainSpec
from .json_data import JsonValue
from .records import (BatchTiming, EpochEnded, LaneEvent, TurnEnded, TurnResumed, RunFailed, RunFinished, RunSettings,
                      RunStarted, RunSummary,
                      SegmentEnded, SegmentStarted)

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

# ---------------------------------------------------------------- app → lane


@dataclass(frozen=True)
class RunJob:
    """Train `config` and report it under `run_id`. A paced run waits after each segment for the app
    to say what comes next (Proceed, or Finish): ramps, and lanes that take turns."""

    run_id: str
    config: RunConfig
    paced: bool = False


@dataclass(frozen=True)
class SwitchModel:
    """During a run: end the current segment at the next batch end and go on with `config` (a width
    dragged while it trains)."""

    config: RunConfig


@dataclass(frozen=True)
class Proceed:
    """To a paced run between segments: train the next segment, on `config`."""

    config: RunConfig


@dataclass(frozen=True)
class Finish:
    """To a paced run between segments: that was the last one."""


@dataclass(frozen=True)
class Pause:
    """During a run: the lane's turn is over. At the next batch end it says so (TurnEnded) and waits,
    mid-segment, for Resume, a SwitchModel or a stop; the other lanes take their turns meanwhile."""


@dataclass(frozen=True)
class Resume:
    """To a lane paused mid-segment: its turn again; go on with the segment where it stopped."""


@dataclass(frozen=True)
class ProbeJob:
    """Say which GPUs this lane's backend can use."""


@dataclass(frozen=True)
class PrepareJob:
    """Load (and keep) the data `config` trains on, before a study's first point is timed: every lane of a study
    does this at once, where one lane after another would each load theirs when its turn came."""

    config: RunConfig
    # Then read the device's idle power (its energy counter over a second of doing nothing): asked of one lane
    # after another once every lane has its data, so that no lane of the study trains while another reads it.
    idle: bool = False


@dataclass(frozen=True)
class CalibrateJob:
    """Time a size×size float32 matrix product for about `seconds`: the device's achievable GFLOP/s."""

    size: int
    seconds: float


@dataclass(frozen=True)
class AnatomyJob:
    """Time the rungs of the anatomy ladder (core/analysis/anatomy.py) for `config`, each in about `seconds_per_rung`;
    with `check_loss`, also train K steps by each rung from the same state and report the loss after."""

    config: RunConfig
    rungs: tuple[str, ...] = ()  # (): every rung of the task's ladder
    seconds_per_rung: float = 0.4
    check_loss: bool = False


@dataclass(frozen=True)
class InspectJob:
    """Load a user's saved Keras model (safe mode) and say what it is: its shapes, classes, parameters, FLOPs."""

    path: str
    sha256: str
    size_bytes: int
    factory: FactoryModel | None = None  # a user's model factory instead: FUNCTION(width) is built and inspected
    width: int = 0


@dataclass(frozen=True)
class ModelChunk:
    """Part of a user's model file, for a lane on another machine: sent as bytes, never named by a path there
    (core/engine/remote/model_files.py)."""

    sha256: str
    suffix: str  # ".keras" (a saved model) or ".py" (a model factory)
    index: int
    total: int
    data: str  # base64


@dataclass(frozen=True)
class CloseLane:
    """Leave once the job in progress (if any) has ended."""


Job = Union[RunJob, ProbeJob, PrepareJob, CalibrateJob, AnatomyJob, InspectJob, CloseLane]
Steer = Union[SwitchModel, Proceed, Finish, Pause, Resume]  # sent while a run goes on

# ---------------------------------------------------------------- lane → app


@dataclass(frozen=True)
class Bundle:
    """Lane events in the order they happened, sent together (one message per batch costs more)."""

    events: tuple[LaneEvent, ...]


@dataclass(frozen=True)
class Probed:
    backend: str
    gpus: tuple[str, ...]
    cpu: str
    settings: RunSettings = field(default_factory=RunSettings)  # the lane process's, as it started
    error: str = ""  # why the backend could not list GPUs, when it could not


@dataclass(frozen=True)
class Prepared:
    """A lane's answer to PrepareJob: how long loading took, or why it could not (the run says so again)."""

    seconds: float
    error: str = ""
    idle_w: float = math.nan  # the idle power read (PrepareJob.idle), NaN where not asked or no counter reads


@dataclass(frozen=True)
class Calibrated:
    size: int
    gflops: float  # NaN when it could not be measured; `error` says why
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and math.isfinite(self.gflops) and self.gflops > 0


@dataclass(frozen=True)
class Inspected:
    """A lane's answer to InspectJob: the model as found, or why it cannot be used (a sentence)."""

    saved: SavedModel | None
    error: str = ""


@dataclass(frozen=True)
class LaneStartFailed:
    """The lane process could not set up its backend; it has exited."""

    reason: str


@dataclass(frozen=True)
class LaneStatus:
    """Sent after every job: the process's size, which decides when it is recycled."""

    rss_mb: float


class LanePhase(str, Enum):
    """What a lane process is doing, as its heartbeat reads it (core/lane/worker.py Heartbeat)."""

    IDLE = "idle"
    PREPARING = "preparing"  # importing its framework, making data, building and tracing a model
    TRAINING = "training"  # its records speak for it: no heartbeat
    WAITING = "waiting"  # a paced run between segments, or a turn waited out
    FINISHING = "finishing"
    READY = "ready"  # said once, when the lane has imported its framework

    def __str__(self) -> str:
        return self.value


# The phases a heartbeat is sent in: no records flow then.
ALIVE_PHASES = (LanePhase.PREPARING, LanePhase.WAITING, LanePhase.FINISHING)


@dataclass(frozen=True)
class LaneAlive:
    """A heartbeat while a run prepares (data, model, compiling) or finishes: no records flow then,
    and the app's watchdog must tell a slow step from a lane that stopped responding."""

    phase: LanePhase  # preparing, waiting or finishing; ready once, when the lane has imported its framework

    def __post_init__(self) -> None:  # from the wire a phase arrives as its name: one not known is refused
        object.__setattr__(self, "phase", LanePhase(self.phase))


# What a lane says back; with core/analysis/anatomy.py AnatomyMeasured (the anatomy's reply lives beside its point).
Answer = Union[Bundle, Probed, Prepared, Calibrated, LaneStartFailed, LaneStatus, LaneAlive]

# ---------------------------------------------------------------- requests that got no answer


@dataclass(frozen=True)
class RequestCancelled:
    reason: str = "cancelled"


@dataclass(frozen=True)
class LaneClosed:
    reason: str = "the lane was closed before it answered"


@dataclass(frozen=True)
class NoAnswer:
    reason: str = "the lane did not answer in time"


@dataclass(frozen=True)
class LaneDied:
    reason: str = "the lane process ended before it answered"


Unanswered = Union[RequestCancelled, LaneClosed, NoAnswer, LaneDied, LaneStartFailed]

# ---------------------------------------------------------------- data-only codec

# What the codec carries: registered messages (frozen dataclasses), and plain data holding them.
Wirable: TypeAlias = "DataclassInstance | str | int | float | bool | None | Sequence[Wirable] | Mapping[str, Wirable]"
_Registered = TypeVar("_Registered", bound=type)

_REGISTRY: dict[str, type] = {cls.__name__: cls for cls in (
    RunJob, SwitchModel, Proceed, Finish, Pause, Resume, ProbeJob, PrepareJob, CalibrateJob, CloseLane, Bundle, Probed, Prepared, Calibrated, LaneStartFailed, LaneStatus, LaneAlive,
    AnatomyJob, InspectJob, Inspected, ModelChunk, SavedModel, FactoryModel, FactoryWidth,
    RequestCancelled, LaneClosed, NoAnswer, LaneDied,
    RunStarted, RunSettings, BatchTiming, EpochEnded, SegmentStarted, SegmentEnded, TurnEnded, TurnResumed, RunFinished, RunFailed, RunSummary,
    RunConfig, ModelSpec, TrainSpec, LaneSpec)}
TAG = "@"


def register(cls: _Registered) -> _Registered:
    """Add a frozen dataclass to what the codec may build (a decorator for messages defined elsewhere)."""
    _REGISTRY[cls.__name__] = cls
    return cls


def to_wire(obj: Wirable) -> JsonValue:
    """Plain JSON data: registered dataclasses become {"@": name, field: value…}."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        name = type(obj).__name__
        if _REGISTRY.get(name) is not type(obj):
            raise TypeError(f"{name} is not a registered message")
        return {TAG: name, **{f.name: to_wire(getattr(obj, f.name)) for f in dataclasses.fields(obj)}}
    if isinstance(obj, (list, tuple)):
        return [to_wire(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_wire(v) for k, v in obj.items()}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    return str(obj)  # a framework's own str or version type: its text is what was meant


@functools.lru_cache(maxsize=None)
def field_types(cls: type) -> dict[str, type]:
    """A class's field types, evaluated once per class: typing.get_type_hints per event was most of a remote lane's
    decode time. The one reader the codec, the wire and its guard share."""
    return typing.get_type_hints(cls)


@functools.lru_cache(maxsize=None)
def _field_names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(cls))


def from_wire(data: JsonValue) -> Wirable:
    """The inverse of to_wire; raises ValueError on anything but registered classes and plain data."""
    if isinstance(data, list):
        return [from_wire(v) for v in data]
    if not isinstance(data, dict):
        if data is None or isinstance(data, (bool, int, float, str)):
            return data
        raise ValueError(f"not plain data: {type(data).__name__}")
    if TAG not in data:
        return {str(k): from_wire(v) for k, v in data.items()}
    tag = data[TAG]
    cls = _REGISTRY.get(tag) if isinstance(tag, str) else None
    if cls is None:
        raise ValueError(f"unknown message type {tag!r}")
    hints = field_types(cls)
    names = _field_names(cls)
    kwargs: dict[str, Wirable] = {}
    for key, value in data.items():
        if key == TAG:
            continue
        if key not in names:
            raise ValueError(f"{cls.__name__} has no field {key!r}")
        value = from_wire(value)
        if isinstance(value, list) and typing.get_origin(hints[key]) is tuple:
            value = tuple(value)
        kwargs[key] = value
    try:
        return cls(**kwargs)
    except ValueError:
        raise
    except Exception as exc:  # a constructor's own checks met a value of another type (None where text belongs…)
        raise ValueError(f"{cls.__name__} holds a value of the wrong kind ({type(exc).__name__}: {exc})") from None
