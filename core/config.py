"""Run configuration: frozen, validated specs for the model, the training and the lane."""
from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping

from . import families
from .families import FACTORY, SAVED, Family, ModelKind
from .json_data import JsonValue
# A user's own model (a saved file, a factory) and the data shape every model takes, named where they always were.
from .user_models import (CLASSES as CLASSES, INPUT_DIM as INPUT_DIM, FactoryModel as FactoryModel,
                          FactoryWidth as FactoryWidth, SavedModel as SavedModel, is_factory_kind as is_factory_kind,
                          is_saved_kind as is_saved_kind)

MIN_WIDTH, MAX_WIDTH = 1, 16384
MAX_LAYERS = 8
MNIST_TRAIN_SIZE = 60_000  # MNIST's training set, and its synthetic stand-in: a run's samples unless limited
OPTIMIZERS = ("adam", "nadam", "sgd", "rmsprop")
OPTIMIZER_SLOTS = {"adam": 2, "nadam": 2, "rmsprop": 1, "sgd": 0}  # state kept per weight (SGD without momentum)
ACTIVATIONS = ("relu", "tanh", "sigmoid", "gelu")
PREPROCESSING = ("scale", "l2")
BACKENDS = ("tensorflow", "jax", "torch")
FEEDINGS = ("host", "device")
# Open-loop arrivals (predict --arrival-rate, core/lane/arrivals.py): how requests arrive, and the bounds asked of it.
ARRIVALS = ("poisson", "constant")
MAX_RATE = 100_000.0  # requests per second a schedule may ask for
MAX_BATCH = 4096  # requests one call may answer (dynamic batching)
MAX_CALL_SAMPLES = 65536  # samples one call may take: the largest batch size, whether one request or several
BEHIND_S = 2.0  # the oldest waiting request has waited this long: the lane does not hold the rate
RATE_REQUESTS = 1000  # requests per rate point by default: more than the 662 a p99 needs (core/analysis/tails.py)
# A rate is judged held only from this many seconds of arrivals (core/analysis/serving_rates.py): a rate point's
# default schedule is at least this long, so that the default can answer "holds R requests/s" at any rate.
MIN_HOLD_S = 5.0
# The longest an arrival schedule (its requests over its rate) may run a lane: a longer one is refused before any lane
# starts (`--arrival-rate 1e-300` waited for 10^295 years without a word), with how to shorten it.
MAX_SCHEDULE_S = 3600.0
SERVE_WAYS = ("keras", "compiled")  # Keras predict_on_batch | the backend's compiled forward pass called directly
DEFAULT_WARMUP_STEPS = 5

# Data as JSON holds it: what the sidecars, a saved configuration and the remote wire carry, and the settings and
# machine facts recorded with a result. The containers are the read-only kinds, so that a list of str or a dict
# of int (or a tuple, which json writes as a list) is JSON data too; code that reads JSON back narrows it.


class ConfigError(ValueError):
    """A setting a user chose is invalid; the message says which and what is allowed."""


class Schedule(str, Enum):
    """How the lanes of one run share the machine: taking turns (each measured uncontended), all at once (a demo;
    lanes on shared cores slow each other), or one after another. A str, so that files and the wire carry the word
    ("side-by-side") and one read back compares equal to its member."""

    INTERLEAVED = "interleaved"
    SIDE_BY_SIDE = "side-by-side"
    SEQUENTIAL = "sequential"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def named(cls, name: str) -> Schedule:
        """A schedule by its name as a user or a file gives it ("concurrent", the old name, is side-by-side);
        ConfigError with the choices for any other."""
        name = _SCHEDULE_ALIASES.get(name, name)
        try:
            return cls(name)
        except ValueError:
            raise ConfigError(f"schedule {name!r}: choose one of {', '.join(SCHEDULES)}") from None


SCHEDULES = tuple(s.value for s in Schedule)
_SCHEDULE_ALIASES = {"concurrent": "side-by-side", "side_by_side": "side-by-side"}


class Task(str, Enum):
    """What a run times: a training step (fit), or one forward call as a server makes it (input from host memory,
    the answer back on the host). A str, so that files, settings and the wire carry the word ("predict") and one
    read back compares equal to its member; code compares with the members, and reads a word with Task(word)."""

    TRAIN = "train"
    PREDICT = "predict"

    def __str__(self) -> str:
        return self.value


TASKS = tuple(t.value for t in Task)


def _fewer_requests(most: int) -> str:
    return f"choose --max-batch {most:,} or less" if most > 1 else "serve one request per call (--max-batch 1)"


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigError(message)


@dataclass(frozen=True)
class ModelSpec:
    """The model: by default the MLP (784 inputs → hidden widths → 10 classes, softmax); `family` picks a CNN, an
    RNN or a transformer (core/families.py), whose `widths` are filters per block, units per recurrent layer or
    d_model per encoder block. `cell` is the RNN's (lstm or gru), `heads` the transformer's."""

    widths: tuple[int, ...] = (128,)
    dropout: float = 0.2
    activation: str = "relu"
    family: str = Family.MLP  # a Family member once made (a word no family has stays as given, and is refused)
    cell: str = "lstm"
    heads: int = 4
    saved: SavedModel | None = None  # family "saved": a user's own model file, which has no widths
    factory: FactoryModel | None = None  # family "factory": a user's function of one width

    def __post_init__(self) -> None:
        object.__setattr__(self, "widths", tuple(self.widths))
        if self.family in Family._value2member_map_:  # a file's or a setting's word, as the type
            object.__setattr__(self, "family", Family(self.family))
        if isinstance(self.saved, Mapping):  # as read back from a file
            object.__setattr__(self, "saved", SavedModel(**self.saved))
        if isinstance(self.factory, Mapping):
            object.__setattr__(self, "factory", FactoryModel(**self.factory))
        if self.family == Family.SAVED or self.saved is not None:
            _check(self.family == Family.SAVED and self.saved is not None, "a saved model is family 'saved', with its file")
            _check(not self.widths, "a saved model has no widths: its axis is batch size")
            return
        if self.family == Family.FACTORY or self.factory is not None:
            _check(self.family == Family.FACTORY and self.factory is not None,
                   "a model factory is family 'factory', with its file and function")
            name = self.factory.function if self.factory is not None else "the function"
            _check(len(self.widths) == 1, f"{len(self.widths)} widths: {name}(width) builds one model of one width")
            w = self.widths[0]
            _check(isinstance(w, int) and not isinstance(w, bool) and MIN_WIDTH <= w <= MAX_WIDTH,
                   f"width {w!r}: widths must be whole numbers {MIN_WIDTH}-{MAX_WIDTH}")
            return
        _check(1 <= len(self.widths) <= MAX_LAYERS,
               f"{len(self.widths)} hidden layers: choose 1-{MAX_LAYERS}")
        for i, w in enumerate(self.widths, start=1):
            _check(isinstance(w, int) and not isinstance(w, bool),
                   f"width {w!r} in layer {i}: widths must be whole numbers")
            _check(MIN_WIDTH <= w <= MAX_WIDTH,
                   f"width {w} in layer {i}: widths must be {MIN_WIDTH}-{MAX_WIDTH}")
        _check(0.0 <= self.dropout < 1.0, f"dropout {self.dropout}: choose 0 to below 1")
        _check(self.activation in ACTIVATIONS,
               f"activation {self.activation!r}: choose one of {', '.join(ACTIVATIONS)}")
        _check(isinstance(self.heads, int) and not isinstance(self.heads, bool), f"heads {self.heads!r}: a whole number")
        wrong = families.problems(self.family, self.widths, self.cell, self.heads)
        _check(not wrong, "; ".join(wrong))

    @property
    def layer_sizes(self) -> tuple[int, ...]:
        return (INPUT_DIM, *self.widths, CLASSES)

    @property
    def figures(self) -> SavedModel | None:
        """A user's model as a lane found it: a saved model's, or a factory's at this width (None before a lane
        inspected that width); None for Crossover's own models."""
        if self.factory is not None:
            return self.factory.at(self.widths[0])
        return self.saved

    def _user_figures(self) -> SavedModel | None:
        """`figures`, refusing a factory's width no lane has inspected: its figures would be another width's."""
        found = self.figures
        if found is None and self.factory is not None:
            raise ConfigError(f"{self.factory.function}({self.widths[0]}) has not been inspected by a lane yet: "
                              "its figures are not known")
        return found

    @property
    def params(self) -> int:
        """Trainable parameters: for the MLP the weights and biases of every Dense layer."""
        user = self._user_figures()
        if user is not None:
            return user.params
        if self.family != Family.MLP:
            return families.params(self.family, self.widths, self.cell, self.heads)
        sizes = self.layer_sizes
        return sum(a * b + b for a, b in zip(sizes, sizes[1:]))

    def in_family(self, family: str) -> ModelSpec:
        """This model as another family of about the same cost: the same layers (within the family's limit), every
        layer of the one width whose training FLOPs per sample come nearest to this model's, so a switch keeps the
        run's length, not a number that means filters in one family and units in another (a 512-wide MLP's width
        made a CNN that trained for 7 minutes). Itself when the family is its own, or not one of Crossover's."""
        if family == self.family or family not in families.FAMILIES or self.family not in families.FAMILIES:
            return self
        target = self.flops_per_batch(1)
        layers = min(len(self.widths), families.LAYER_LIMITS[family])
        step = self.heads if family == Family.TRANSFORMER else 1  # a transformer's d_model is a multiple of its heads
        top = families.WIDTH_LIMITS[family] // step

        def cost(k: int) -> int:
            return dataclasses.replace(self, family=family, widths=(k * step,) * layers).flops_per_batch(1)

        lo, hi = 1, max(1, top)
        while lo < hi:  # the smallest width that costs at least the target (cost grows with width)
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if cost(mid) < target else (lo, mid)
        best = min((k for k in (lo - 1, lo) if k >= 1), key=lambda k: abs(math.log(cost(k) / target)))
        return dataclasses.replace(self, family=family, widths=(best * step,) * layers)

    def flops_per_batch(self, batch_size: int, forward: bool = False) -> int:
        """Floating-point operations of one training step (forward + backward), or with `forward` of one
        forward call (a predict: 2·a·b per sample per Dense layer).

        A Dense layer a→b costs 2·a·b FLOPs per sample forward (multiply-add), and
        twice that backward (gradients for the inputs and for the weights): 6·a·b per
        sample in all. Biases, activations, dropout, the loss and the optimizer update
        are O(a+b) or O(params) and are left out; they are under 1% for widths ≥ 64.
        The first layer needs no gradient for its input (the data), so it counts 4·a·b.
        The other families count by the same rules (core/families.py); a saved model, and a factory's model at
        this width, by its layers (SavedModel).
        """
        user = self._user_figures()
        if user is not None:
            return (user.forward_flops if forward else 3 * user.forward_flops - user.input_flops) * batch_size
        if self.family != Family.MLP:
            return families.flops_per_sample(self.family, self.widths, self.cell, self.heads, forward) * batch_size
        sizes = self.layer_sizes
        total = 0
        for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
            total += (2 if forward else 4 if i == 0 else 6) * a * b
        return total * batch_size

    def min_memory_bytes(self, batch_size: int, optimizer: str = "adam") -> int:
        """At least the memory a lane needs to train this model, float32: its weights, their gradients and the
        optimizer's slots (Adam and Nadam 2 per weight, RMSprop 1, SGD 0), and an MLP's activations for one
        batch, kept for the backward pass. A predict run trains its weights a few steps first, so it needs as
        much. Frameworks add workspace on top of this."""
        activations = batch_size * sum(self.layer_sizes) if self.family == Family.MLP else 0
        if self.factory is not None and self.figures is None:
            return 0  # not known before a lane built it at this width: checked once it has (resolve_factory)
        return 4 * (self.params * (2 + OPTIMIZER_SLOTS[optimizer]) + 2 * activations)

    @property
    def kind(self) -> str:
        """The kind of model, beside its depth ("mlp", "cnn", "lstm", "transformer 4 heads"): core/families.py."""
        return str(self.model_kind)

    @property
    def model_kind(self) -> ModelKind:
        """The kind as a value with parts (core/families.py ModelKind)."""
        if self.saved is not None:  # one curve per file: two saved models are never crossed with each other
            return ModelKind(SAVED, self.saved.name)
        if self.factory is not None:  # one curve per factory, never crossed with Crossover's own families
            return ModelKind(FACTORY, self.factory.function)
        return families.kind_of(self.family, self.cell, self.heads)

    def label(self) -> str:
        if self.saved is not None:
            return f"{self.saved.name or 'saved model'} ({Path(self.saved.path).name})"
        if self.factory is not None:
            return f"{self.factory.function}({self.widths[0]}) ({self.factory.file})"
        if self.family != Family.MLP:
            return families.label(self.family, self.widths, self.cell, self.heads)
        return "-".join(str(s) for s in self.layer_sizes)


@dataclass(frozen=True)
class TrainSpec:
    """How the model is trained and fed; every setting that changes speed is explicit."""

    batch_size: int = 128
    epochs: int = 1
    optimizer: str = "adam"
    learning_rate: float = 1e-3
    seed: int = 0
    steps_per_execution: int = 1
    jit: bool | None = None  # None: the backend's documented default, resolved and recorded by the lane
    preprocessing: str = "scale"
    data: str = "auto"  # auto | mnist | synthetic | path to .npz
    samples: int | None = None  # limit on training samples; None = all
    max_steps: int | None = None  # stop after this many steps (sweeps); None = whole epochs
    max_seconds: float | None = None  # stop after this much steady time (sweeps)
    warmup_steps: int = DEFAULT_WARMUP_STEPS
    feeding: str = "host"
    mixed_precision: bool = False
    task: Task = Task.TRAIN  # a Task once made (a file's or a setting's word is parsed; any other is refused)
    serve: str = "keras"  # how a predict call is made (SERVE_WAYS); ignored for training
    # predict at an arrival rate: requests per second arriving on their own schedule (None: one call after another),
    # how they arrive (ARRIVALS), and how many waiting requests one call may answer (1: one at a time).
    # With a rate, max_steps counts requests (RATE_REQUESTS when None), and max_seconds bounds the schedule.
    arrival_rate: float | None = None
    arrivals: str = "poisson"
    max_batch: int = 1

    @property
    def rate_requests(self) -> int:
        """At an arrival rate: the requests its schedule holds (its step budget, bounded by its time limit)."""
        asked = self.max_steps if self.max_steps is not None else RATE_REQUESTS
        if self.max_steps is None and self.arrival_rate is not None:  # long enough to judge the rate held
            asked = max(asked, math.ceil(MIN_HOLD_S * self.arrival_rate))
        if self.arrival_rate is None or self.max_seconds is None:
            return asked
        return max(1, min(asked, int(self.arrival_rate * self.max_seconds)))

    def __post_init__(self) -> None:
        _check(isinstance(self.batch_size, int) and 1 <= self.batch_size <= 65536,
               f"batch size {self.batch_size}: choose 1-65536")
        _check(isinstance(self.epochs, int) and 1 <= self.epochs <= 1000,
               f"epochs {self.epochs}: choose 1-1000")
        _check(self.optimizer in OPTIMIZERS,
               f"optimizer {self.optimizer!r}: choose one of {', '.join(OPTIMIZERS)}")
        _check(0 < self.learning_rate <= 10, f"learning rate {self.learning_rate}: choose above 0, at most 10")
        _check(isinstance(self.seed, int) and 0 <= self.seed < 2**32,
               f"seed {self.seed}: choose a whole number from 0 to {2**32 - 1:,} (what NumPy and Keras take)")
        _check(isinstance(self.steps_per_execution, int) and 1 <= self.steps_per_execution <= 10000,
               f"steps per execution {self.steps_per_execution}: choose 1-10000")
        _check(self.preprocessing in PREPROCESSING,
               f"preprocessing {self.preprocessing!r}: choose one of {', '.join(PREPROCESSING)}")
        _check(self.data in ("auto", "mnist", "synthetic") or self.data.endswith(".npz"),
               f"data source {self.data!r}: choose auto, mnist, synthetic or a path ending in .npz")
        _check(self.samples is None or self.samples >= self.batch_size,
               f"sample limit {self.samples} is fewer than one batch of {self.batch_size}: "
               "raise the sample limit or lower the batch size")
        _check(self.max_steps is None or self.max_steps >= 1, f"max steps {self.max_steps}: choose at least 1")
        _check(self.max_seconds is None or self.max_seconds > 0, f"max seconds {self.max_seconds}: choose above 0")
        _check(0 <= self.warmup_steps <= 1000, f"warm-up steps {self.warmup_steps}: choose 0-1000")
        _check(self.feeding in FEEDINGS, f"feeding {self.feeding!r}: choose one of {', '.join(FEEDINGS)}")
        _check(self.task in TASKS, f"task {str(self.task)!r}: choose one of {', '.join(TASKS)}")
        object.__setattr__(self, "task", Task(self.task))  # a file's or a setting's word, as the type
        _check(self.serve in SERVE_WAYS, f"predict way {self.serve!r}: choose one of {', '.join(SERVE_WAYS)}")
        _check(self.task == Task.TRAIN or self.feeding == "host",
               "feeding=device is for training: a predict call takes its input from host memory, as a server does")
        _check(self.task == Task.TRAIN or self.steps_per_execution == 1,
               f"steps per execution {self.steps_per_execution} is for training: a predict call is one call (use 1)")
        rate = self.arrival_rate
        _check(rate is None or (isinstance(rate, (int, float)) and 0 < rate <= MAX_RATE),
               f"arrival rate {rate}: choose above 0, at most {MAX_RATE:,.0f} requests per second")
        _check(rate is None or self.task == Task.PREDICT,
               "an arrival rate is for the predict task: requests arrive at a server (add --task predict)")
        _check(self.arrivals in ARRIVALS, f"arrivals {self.arrivals!r}: choose one of {', '.join(ARRIVALS)}")
        _check(isinstance(self.max_batch, int) and 1 <= self.max_batch <= MAX_BATCH,
               f"max batch {self.max_batch}: choose 1-{MAX_BATCH}")
        _check(self.max_batch == 1 or rate is not None,
               f"max batch {self.max_batch} batches requests that queued: give an arrival rate too (--arrival-rate)")
        # A call answers up to max_batch requests of batch_size samples in one batch: bounded as a batch is, before
        # any lane starts (4,096 requests of 60,000 samples asked 770 GB of one call, and the lane was killed).
        _check(self.max_batch * self.batch_size <= MAX_CALL_SAMPLES,
               f"max batch {self.max_batch:,} of requests of {self.batch_size:,} samples: one call could answer "
               f"{self.max_batch * self.batch_size:,} samples at once, more than the {MAX_CALL_SAMPLES:,} a batch "
               f"may hold: {_fewer_requests(MAX_CALL_SAMPLES // self.batch_size)}, or smaller requests (--batch-size)")


_LANE_RE = re.compile(r"^(?:(?P<backend>[a-z]+):)?(?P<device>cpu|gpu)(?P<num>\d*)(?:#(?P<twin>\d{1,6}))?$")
# A lane's twin: a second (third…) process of the same lane, named LANE#2 (LANE#3…), that takes turns with it as
# any two lanes do: an A/A control, two equal lanes whose verdict should be "too close to call" (`calibrate`).
TWIN_MARK = "#"
MAX_TWIN = 16
SSH_PREFIX = "ssh://"
# [user@]host[:port]: nothing that could reach ssh as an option or the remote shell as syntax.
_HOST_RE = re.compile(r"^(?:(?P<user>[A-Za-z0-9_][A-Za-z0-9._-]*)@)?"
                      r"(?P<host>[A-Za-z0-9_][A-Za-z0-9._-]*|\[[0-9A-Fa-f:.]+\])(?::(?P<port>\d{1,5}))?$")


def check_host(host: str) -> str:
    """`[user@]host[:port]` as a remote lane names it; ConfigError with the form when it is not one."""
    m = _HOST_RE.match(host)
    _check(m is not None and (m["port"] is None or 1 <= int(m["port"]) <= 65535),
           f"host {host!r}: use ssh://[user@]host[:port], e.g. ssh://lab-gpu or ssh://me@10.0.0.5:2222")
    return host


class DeviceKind(str, Enum):
    """What a lane trains on: the CPU (a thread budget) or a GPU (an index). Files and names keep its word."""

    CPU = "cpu"
    GPU = "gpu"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class LaneSpec:
    """One device profile: a Keras backend on a CPU thread budget or on one GPU."""

    kind: str = DeviceKind.CPU  # a DeviceKind once made (a word of neither is refused)
    index: int = 0  # GPU index; ignored for CPU
    threads: int | None = None  # CPU thread budget; None = all cores
    backend: str = "tensorflow"
    host: str = ""  # [user@]host[:port] of a remote lane, reached over SSH; "" = this machine
    # 0: the lane itself; 2, 3…: its twin of that number, the same device in a process of its own (only its name
    # differs: cpu1#2), so that a lane can be compared with itself.
    twin: int = 0

    def __post_init__(self) -> None:
        if self.host:
            check_host(self.host)
        _check(self.kind in DeviceKind._value2member_map_, f"lane kind {self.kind!r}: choose cpu or gpu")
        object.__setattr__(self, "kind", DeviceKind(self.kind))
        _check(self.backend in BACKENDS, f"backend {self.backend!r}: choose one of {', '.join(BACKENDS)}")
        _check(self.index >= 0, f"GPU index {self.index}: must be 0 or more")
        _check(self.threads is None or 1 <= self.threads <= 1024, f"thread budget {self.threads}: choose 1-1024")
        _check(isinstance(self.twin, int) and not isinstance(self.twin, bool)
               and (self.twin == 0 or 2 <= self.twin <= MAX_TWIN),
               f"twin {self.twin!r}: a lane's twins are numbered 2-{MAX_TWIN} (cpu1#2); the first is the lane itself")

    @property
    def name(self) -> str:
        """The lane's name in the CLI and the CSV: cpu, cpu1, gpu0, jax:gpu0…, a twin's with its number (cpu1#2)."""
        if self.kind == DeviceKind.CPU:
            base = "cpu" if self.threads is None else f"cpu{self.threads}"
        else:
            base = f"gpu{self.index}"
        local = base if self.backend == "tensorflow" else f"{self.backend}:{base}"
        if self.twin:
            local += f"{TWIN_MARK}{self.twin}"
        return f"{SSH_PREFIX}{self.host}/{local}" if self.host else local

    @property
    def local(self) -> "LaneSpec":
        """The same lane as the machine that runs it names it (no host)."""
        return dataclasses.replace(self, host="")

    @property
    def original(self) -> "LaneSpec":
        """The lane a twin is a twin of (cpu1 for cpu1#2); the lane itself when it is no twin."""
        return dataclasses.replace(self, twin=0)

    def twinned(self, taken: "set[str] | frozenset[str]") -> "LaneSpec":
        """This lane's first twin whose name is not in `taken` (cpu1#2, then cpu1#3…); ConfigError past MAX_TWIN."""
        for twin in range(2, MAX_TWIN + 1):
            spec = dataclasses.replace(self, twin=twin)
            if spec.name not in taken:
                return spec
        raise ConfigError(f"{self.original.name} listed more than {MAX_TWIN} times: a lane has at most "
                          f"{MAX_TWIN - 1} twins")

    @classmethod
    def parse(cls, text: str) -> "LaneSpec":
        """`cpu`, `cpu1` (one thread), `gpu`/`gpu0`, `gpu1` (second GPU), `jax:gpu`, `torch:cpu`…, a lane's twin
        `cpu1#2`, and any of them on another machine: `ssh://[user@]host[:port]/LANE`."""
        text = text.strip()
        if text.lower().startswith(SSH_PREFIX):
            host, slash, lane = text[len(SSH_PREFIX):].partition("/")
            _check(bool(slash and lane) and "/" not in lane, f"remote lane {text!r}: name the lane after the host, "
                   "e.g. ssh://lab-gpu/gpu0 or ssh://me@10.0.0.5:2222/cpu")
            return dataclasses.replace(cls.parse(lane), host=check_host(host))
        m = _LANE_RE.match(text.lower())
        if not m:
            raise ConfigError(
                f"lane {text!r}: use cpu, cpuN (N threads), gpu, gpuN (GPU number N), "
                f"optionally prefixed by a backend ({', '.join(BACKENDS)}), e.g. jax:gpu; a lane's twin "
                "(a second process of it) as cpu1#2")
        backend = m["backend"] or "tensorflow"
        num = m["num"]
        twin = int(m["twin"]) if m["twin"] else 0
        _check(m["twin"] is None or (twin >= 2 and str(twin) == m["twin"]),
               f"lane {text!r}: a lane's twins are numbered from 2 (cpu1#2); the first is the lane itself (cpu1)")
        if m.group("device") == DeviceKind.CPU:
            return cls(kind=DeviceKind.CPU, threads=int(num) if num else None, backend=backend, twin=twin)
        return cls(kind=DeviceKind.GPU, index=int(num) if num else 0, backend=backend, twin=twin)


def twin_problem(spec: LaneSpec) -> str:
    """Why this twin cannot run beside its lane, as a sentence ("" when it can): TensorFlow maps nearly all of a
    GPU's memory to the first process that uses it, so a TensorFlow GPU lane's twin would train on what is left,
    a pair unequal before it starts. JAX (no preallocation) and PyTorch allocate as they go."""
    if spec.twin and spec.kind == DeviceKind.GPU and spec.backend == "tensorflow":
        return (f"{spec.name}: two TensorFlow processes do not share one GPU evenly (the first maps nearly all of "
                "its memory): twin a CPU lane (cpu1,cpu1) or a JAX GPU lane (jax:gpu0,jax:gpu0)")
    return ""


def parse_lanes(text: str) -> tuple[LaneSpec, ...]:
    """The lanes of `--lanes`, each once: a lane named again is its twin (`cpu1,cpu1` is cpu1 and cpu1#2, a third
    cpu1#3), the same device in a process of its own, taking turns with it."""
    lanes: list[LaneSpec] = []
    for part in text.split(","):
        if not part.strip():
            continue
        spec = LaneSpec.parse(part)
        taken = {lane.name for lane in lanes}
        lanes.append(spec.twinned(taken) if spec.name in taken else spec)
    _check(bool(lanes), "no lanes given: name at least one, e.g. --lanes cpu,gpu")
    problems = [problem for problem in map(twin_problem, lanes) if problem]
    _check(not problems, "; ".join(problems))
    return tuple(lanes)


def _whole(part: str) -> int:
    return int(part.replace("_", "").strip())


def parse_widths(text: str) -> tuple[int, ...]:
    """A model's hidden widths, "750,150,50": errors name the layer."""
    if not text.strip():
        raise ConfigError("no widths given: name one per hidden layer, e.g. 750,150,50")
    widths = []
    for i, part in enumerate(text.split(","), start=1):
        try:
            widths.append(_whole(part))
        except ValueError:
            raise ConfigError(f"width {part.strip()!r} in layer {i}: widths must be whole numbers") from None
    return tuple(widths)


def parse_int_list(text: str, what: str) -> tuple[int, ...]:
    """A list of whole numbers such as sweep widths or batch sizes; errors name `what` and the item."""
    parts = text.split(",")
    if not text.strip():
        raise ConfigError(f"no {what}s given: list them separated by commas, e.g. 16,64,256")
    values = []
    for i, part in enumerate(parts, start=1):
        try:
            values.append(_whole(part))
        except ValueError:
            raise ConfigError(f"{what} {part.strip()!r} (item {i} of {len(parts)}): "
                              f"{what}s must be whole numbers") from None
    return tuple(values)


@dataclass(frozen=True)
class RunConfig:
    """What one run trains: the same config goes to every lane of a comparison."""

    model: ModelSpec = field(default_factory=ModelSpec)
    train: TrainSpec = field(default_factory=TrainSpec)

    @property
    def flops_per_batch(self) -> int:
        """FLOPs of one timed step: a training step, or for the predict task one forward call."""
        return self.model.flops_per_batch(self.train.batch_size, forward=self.train.task == Task.PREDICT)

    def to_dict(self) -> dict[str, JsonValue]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, JsonValue]) -> "RunConfig":
        # As read from a file: ModelSpec and TrainSpec check each value, and say what is wrong with it.
        model: Any = d.get("model", {})
        train: Any = d.get("train", {})
        try:
            return cls(model=ModelSpec(**model), train=TrainSpec(**train))
        except TypeError as exc:
            raise ConfigError(f"unknown setting in saved configuration: {exc}") from None

    def replace(self, **train_changes: int | float | str | bool | None) -> "RunConfig":
        return dataclasses.replace(self, train=dataclasses.replace(self.train, **train_changes))
