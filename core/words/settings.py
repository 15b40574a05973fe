"""A file's settings as a reader needs them: only those that apply to its task and its model's family, each in words
with its unit, grouped (the model, the training or the serving, the sweep, every lane, each lane); what is the same on
every lane said once, and what Crossover chose for the user said as such. The sidecar keeps every key as recorded."""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence, TypeVar

from ..config import ConfigError, DeviceKind, LaneSpec, ModelSpec, Schedule, Task, TrainSpec
from ..families import Family
from ..files.sweeps.files import SweepAskedFor
from ..json_data import JsonValue
from ..results import RunResult
from .numbers import fmt_count, fmt_num
from ..plurals import plural
from ..records import RunSettings

Rows = list[tuple[str, str]]
T = TypeVar("T")

BACKENDS = {"tensorflow": "TensorFlow", "jax": "JAX", "torch": "PyTorch"}
OPTIMIZERS = {"adam": "Adam", "nadam": "Nadam", "sgd": "SGD", "rmsprop": "RMSprop"}
PREPROCESSING = {"scale": "pixel values divided by 255", "l2": "each sample scaled to unit length (L2 norm)"}
ARRIVALS = {"poisson": "Poisson: random gaps, on average one over the rate",
            "constant": "evenly spaced, one every one-over-the-rate seconds"}
SERVE_WAYS = {"keras": "Keras' predict_on_batch", "compiled": "the backend's compiled forward pass, called directly"}
SCHEDULES = {Schedule.INTERLEAVED: "the lanes take turns, so none is timed while another runs",
             Schedule.SIDE_BY_SIDE: "the lanes ran at the same time, sharing what they share",
             Schedule.SEQUENTIAL: "one lane after another"}
ACTIVATIONS = {"relu": "ReLU", "gelu": "GELU", "tanh": "tanh", "sigmoid": "sigmoid", "elu": "ELU", "selu": "SELU",
               "swish": "swish", "silu": "SiLU"}
FAMILY_NAMES = {Family.MLP: "MLP", Family.CNN: "CNN", Family.TRANSFORMER: "transformer encoder"}
LAYERS = {Family.CNN: ("convolution blocks", "block", "filters"), Family.RNN: ("recurrent layers", "layer", "units"),
          Family.TRANSFORMER: ("encoder blocks", "block", "wide (d_model)")}
ONE_THREAD_XLA_FLAG = "--xla_cpu_multi_thread_eigen=false"  # set by Crossover for a one-thread JAX CPU lane
CHOSEN = "Crossover's choice"
_DEFAULT = TrainSpec()


@dataclass(frozen=True)
class SettingsGroup:
    """One group of a file's settings: its title ("Model", "Training", "Every lane", "Lane cpu1") and its rows
    (setting, value in words)."""

    title: str
    rows: tuple[tuple[str, str], ...]


def _whole(values: Sequence[int]) -> list[str]:
    return [f"{v:,}" for v in values]


def listed(values: Sequence[int | float], unit: str = "") -> str:
    """"16, 32 and 64 units"; more than six: "16, 32, 64, …, 8,192 units (10 values)"."""
    shown = [f"{int(v):,}" if float(v).is_integer() else fmt_num(v) for v in values]
    if len(shown) > 6:
        text = f"{', '.join(shown[:3])}, …, {shown[-1]}"
    elif len(shown) > 1:
        text = f"{', '.join(shown[:-1])} and {shown[-1]}"
    else:
        text = shown[0] if shown else "–"
    return f"{text}{' ' + unit if unit else ''}{f' ({len(shown)} values)' if len(shown) > 6 else ''}"


def _distinct(values: Sequence[T]) -> list[T]:
    return list(dict.fromkeys(values))


def backend_name(backend: str) -> str:
    return BACKENDS.get(backend, backend)


def _family(model: ModelSpec) -> Family | None:
    try:
        return Family(model.family)
    except ValueError:
        return None


# ---------------------------------------------------------------- the model


def _layers(what: str, unit: str, widths: Sequence[tuple[int, ...]]) -> str:
    """"1 layer of 128 units", "2 layers: 750 and 150 units", "2 layers, each as wide as the other: 16, 64 and 256
    units" (a sweep's widths)."""
    depth = len(widths[0])
    count = fmt_count(depth, what)
    if len(widths) == 1:
        one = widths[0]
        if len(set(one)) == 1:
            return f"{count} of {one[0]:,} {unit}" if depth == 1 else f"{count}, each {one[0]:,} {unit}"
        return f"{count}: {listed(one, unit)}"
    if all(len(set(w)) == 1 for w in widths):
        each = "each as wide as the others" if depth > 2 else "each as wide as the other" if depth == 2 else "of"
        return f"{count}, {each}: {listed([w[0] for w in widths], unit)}" if depth > 1 else \
            f"{count}: {listed([w[0] for w in widths], unit)}, one width at a time"
    return f"{count}: " + "; ".join("-".join(_whole(w)) for w in widths)


def model_rows(models: Sequence[ModelSpec], task: Task = Task.TRAIN) -> Rows:
    """The model's settings that apply to its family (an LSTM's cell only for a recurrent model, heads only for a
    transformer); the widths a file's runs trained each said once."""
    m = models[0]
    family = _family(m)
    widths = _distinct([x.widths for x in models])
    rows: Rows = []
    if m.saved is not None:
        rows += [("model", f"your saved model {m.saved.name or Path(m.saved.path).name}"),
                 ("file", f"{Path(m.saved.path).name}, {fmt_count(m.saved.size_bytes, 'byte')}"),
                 ("SHA-256", m.saved.sha256)]
    elif m.factory is not None:
        rows += [("model", f"your model factory {m.factory.function}(width) in {Path(m.factory.path).name}"),
                 ("width", listed([w[0] for w in widths])), ("SHA-256 of the file", m.factory.sha256)]
    else:
        name = f"RNN of {m.cell.upper()} cells" if family is Family.RNN else FAMILY_NAMES.get(family, m.family) \
            if family is not None else m.family
        rows.append(("model", f"{name}, {m.label()}" if len(widths) == 1 and family is Family.MLP else name))
        what, unit, wide = LAYERS.get(family, ("hidden layers", "layer", "units")) if family else \
            ("hidden layers", "layer", "units")
        same_depth = len({len(w) for w in widths}) == 1
        rows.append((what, _layers(unit, wide, widths) if same_depth else
                     "; ".join("-".join(_whole(w)) for w in widths)))
        if family is Family.TRANSFORMER:
            rows.append(("attention heads", str(m.heads)))
        if family is not Family.RNN:
            rows.append(("activation", ACTIVATIONS.get(m.activation, m.activation)))
        if task != Task.PREDICT:  # dropout does nothing to a forward call
            rows.append(("dropout", f"{fmt_num(100 * m.dropout)}% of units dropped in each training step"
                         if m.dropout > 0 else "none"))
    params: list[int] = []
    for x in models:
        try:
            params.append(x.params)
        except ConfigError:  # a factory's width no lane inspected: its size is not known
            pass
    params = _distinct(params)
    if params:
        rows.append(("trainable parameters", f"{params[0]:,}" if len(params) == 1 else
                     f"{min(params):,} to {max(params):,}, by width"))
    return rows


# ---------------------------------------------------------------- the training or the serving


def same_setting(lanes: Mapping[str, RunSettings], read: Callable[[RunSettings], T]) -> T | None:
    """A lane setting every lane that recorded it recorded alike (`read` gives it, falsy where not recorded), else
    None."""
    values = _distinct([read(s) for s in lanes.values() if read(s)])
    return values[0] if len(values) == 1 else None


def data_words(train: TrainSpec, lanes: Mapping[str, RunSettings]) -> str:
    """What the lanes trained or served on: their own description, its first clause (why MNIST could not be had is
    the CLI's note, with the error it got); where the file asked for "auto", that Crossover chose it."""
    described = same_setting(lanes, lambda s: s.data_description)
    source = same_setting(lanes, lambda s: s.data_source)
    if described:
        data = described.partition(": ")[0] if train.data == "auto" else described
    elif source:
        data = f"{source} data"
    else:
        data = "MNIST where it is cached or can be downloaded, else synthetic data" if train.data == "auto" \
            else train.data
    if train.data == "auto" and (described or source):
        data += f"; {CHOSEN}, as no data set was named" + (" and MNIST could not be had" if source == "synthetic"
                                                             else "")
    return data


def _data_rows(train: TrainSpec, lanes: Mapping[str, RunSettings]) -> Rows:
    rows = [("data", data_words(train, lanes))]
    samples = same_setting(lanes, lambda s: s.samples)
    if samples:
        rows.append(("samples", f"{samples:,}" + (", a limit set for this run" if train.samples is not None
                                                   else ", the whole data set")))
    elif train.samples is not None:
        rows.append(("samples", f"at most {train.samples:,}"))
    rows.append(("preprocessing", PREPROCESSING.get(train.preprocessing, train.preprocessing)))
    return rows


def _default(value: object, name: str) -> str:
    return ", the default" if getattr(_DEFAULT, name) == value else ""


def _serving_rows(trains: Sequence[TrainSpec], lanes: Mapping[str, RunSettings]) -> Rows:
    t = trains[0]
    batches = _distinct([x.batch_size for x in trains])
    rows: Rows = [("task", "serving: each call one forward pass of a batch, no training"),
                  ("a call", SERVE_WAYS.get(t.serve, t.serve)),
                  ("batch size", "1 sample a call" if batches == [1] else listed(batches, "samples a call"))]
    rates = _distinct([x.arrival_rate for x in trains if x.arrival_rate is not None])
    if rates:
        rows.append(("requests arrive at", listed(rates, "requests/s")))
        rows.append(("arrivals", ARRIVALS.get(t.arrivals, t.arrivals)))
        server = same_setting(lanes, lambda s: s.server)
        rows.append(("the server", server if server else
                     f"at most {fmt_count(t.max_batch, 'request')} a call"))
    weights = same_setting(lanes, lambda s: s.weights)
    if weights:
        rows.append(("weights", weights))
    rows.append(("warm-up", f"the first {fmt_count(t.warmup_steps, 'call')} of each lane, kept apart from the "
                 f"figures{_default(t.warmup_steps, 'warmup_steps')}"))
    return rows


def _training_rows(trains: Sequence[TrainSpec], sweep: SweepAskedFor | None) -> Rows:
    t = trains[0]
    rows: Rows = [("task", "training: each step a forward pass, the gradients and the optimizer's update"),
                  ("batch size", listed(_distinct([x.batch_size for x in trains]), "samples"))]
    rows.append(("optimizer", f"{OPTIMIZERS.get(t.optimizer, t.optimizer)}, learning rate {t.learning_rate:g}"))
    if sweep is None:  # a sweep's points say their own length (under Sweep)
        length = fmt_count(t.epochs, "epoch")
        if t.max_steps is not None:
            length += f", at most {fmt_count(t.max_steps, 'step')}"
        if t.max_seconds:
            length += f", or {fmt_num(t.max_seconds)} s of steady steps a lane, whichever came first"
        rows.append(("length", length))
    rows.append(("warm-up", f"the first {fmt_count(t.warmup_steps, 'step')} of each lane, kept apart from the "
                 f"figures{_default(t.warmup_steps, 'warmup_steps')}"))
    rows.append(("steps per call into the backend",
                 f"{t.steps_per_execution}{_default(t.steps_per_execution, 'steps_per_execution')}"))
    rows.append(("seed", f"{t.seed}{_default(t.seed, 'seed')}"))
    return rows


def train_rows(trains: Sequence[TrainSpec], lanes: Mapping[str, RunSettings],
               sweep: SweepAskedFor | None = None) -> Rows:
    """How the model was trained, or its calls served, with what applies to that task only (arrivals only for a
    load, an optimizer only for training)."""
    t = trains[0]
    rows = _serving_rows(trains, lanes) if t.task == Task.PREDICT else _training_rows(trains, sweep)
    rows += _data_rows(t, lanes)
    rows.append(("mixed precision", "on: float16 compute, float32 weights" if t.mixed_precision else
                 "off: float32 throughout, the default"))
    return rows


def sweep_rows(sweep: SweepAskedFor, family: str, task: Task = Task.TRAIN) -> Rows:
    """What a sweep was asked for: along what, how long each point, the run-to-run noise, the floor."""
    unit = {Family.CNN: "filters", Family.TRANSFORMER: "d_model"}.get(
        Family(family) if family in {f.value for f in Family} else Family.MLP, "units")
    rows: Rows = []
    if len(sweep.batch_sizes) > 1:
        rows.append(("along", f"batch size (the sizes under {'Serving' if task == Task.PREDICT else 'Training'})"))
    elif sweep.widths and sweep.widths != (0,):
        rows.append(("along", f"width, in {unit} (the widths under Model)"))
    steady = "steady call" if task == Task.PREDICT else "steady step"
    each = ([fmt_count(sweep.steady_steps, steady)] if sweep.steady_steps else []) + \
        ([f"{fmt_num(sweep.seconds_per_point)} s"] if sweep.seconds_per_point else [])
    if each:
        rows.append(("each point", f"at most {' or '.join(each)} a lane"
                     + (", whichever came first" if len(each) > 1 else "")))
    rows.append(("run-to-run noise", f"measured: every point timed {sweep.passes} times, in passes (--passes "
                 f"{sweep.passes})" if sweep.passes > 1 else "measured: one pass, one point timed again (--passes 1)"
                 if sweep.recheck else "not measured (--passes 1 --no-recheck): each point timed once"))
    if sweep.floor:
        rows.append(("floor", "each point's on-device loop timed as well (--floor)"))
    return rows


# ---------------------------------------------------------------- the lanes


_DEVICE = re.compile(r"device:([A-Za-z_]+):(\d+)$|^([A-Za-z_]+):(\d+)$")


def placement_words(placement: str, backend: str) -> str:
    """"/job:localhost/replica:0/task:0/device:CPU:0" → "TensorFlow's CPU 0"; "gpu:0" → "JAX's GPU 0"."""
    m = _DEVICE.search(placement.strip())
    if not m:
        return placement
    kind, index = (m[1], m[2]) if m[1] else (m[3], m[4])
    return f"{backend_name(backend)}'s {kind.upper()} {index}"


def _threads_rows(s: RunSettings) -> Rows:
    rows: Rows = []
    if s.threads > 0:
        if s.cpu_affinity:
            rows.append(("CPU threads", f"{fmt_count(s.threads, 'thread')}, pinned to "
                                        f"{plural(len(s.cpu_affinity), 'core')} {listed(s.cpu_affinity)} ({CHOSEN}: a "
                                        "thread budget takes the last cores)"))
        else:
            rows.append(("CPU threads", f"{fmt_count(s.threads, 'thread')}: every usable core"))
    if s.intra_op_threads is not None and s.inter_op_threads is not None:
        rows.append((f"{backend_name(s.backend)}'s thread pools", f"{s.intra_op_threads} within an op, "
                     f"{s.inter_op_threads} across ops ({CHOSEN}: both its thread budget)"))
    if s.torch_threads is not None:
        rows.append(("PyTorch's threads", str(s.torch_threads)))
    return rows


def _compile_rows(s: RunSettings) -> Rows:
    rows: Rows = []
    if s.jit_compile is not None:
        said = "on" if s.jit_compile else "off"
        if s.jit_source.endswith(" default"):
            said += f", {backend_name(s.jit_source.removesuffix(' default'))}'s default"
        elif s.jit_source:
            said += ", as asked"
        rows.append(("jit (XLA) compilation", said))
    if s.xla_flags:
        mine = f" ({CHOSEN} for a one-thread lane)" if s.xla_flags == ONE_THREAD_XLA_FLAG else ""
        rows.append(("XLA flags", s.xla_flags + mine))
    if s.compile_cache_dir:
        rows.append(("compiled programs", f"kept between runs in {s.compile_cache_dir} ({CHOSEN}: JAX's persistent "
                                          "cache)"))
    return rows


def lane_rows(s: RunSettings, device: str) -> Rows:
    """One lane's settings as its process recorded them, in words; what says nothing about speed (its process id,
    its step counts) left to the sidecar."""
    rows: Rows = [("device", device)] if device else []
    versions = [f"{backend_name(s.backend)} {s.framework_version}"] if s.framework_version else []
    if s.keras_version:
        versions.append(f"Keras {s.keras_version}")
    if s.backend:
        rows.append(("framework", ", ".join(versions) or backend_name(s.backend)))
    if not device.upper().startswith("GPU"):  # a GPU lane's host threads only feed it
        rows += _threads_rows(s)
    if s.placement:
        where = f"on {placement_words(s.placement, s.backend)}"
        if s.soft_device_placement is False:
            where += f"; an op that cannot run there fails rather than moving ({CHOSEN})"
        rows.append(("ops placed", where))
    rows += _compile_rows(s)
    if s.feeding:
        rows.append(("feeding", s.feeding))
    if s.framework_warmed_s is not None:
        rows.append(("framework warmed", "two steps of a tiny model as the lane started, so the framework's "
                                         f"once-a-process costs are not in a run's first steps ({CHOSEN})"))
    if s.gc_frozen_objects > 0:
        rows.append(("garbage collector", "what the framework's import made, frozen before timing, so a collection "
                                          f"walks only a step's own objects ({CHOSEN})"))
    return rows


def lane_settings(runs: Sequence[RunResult]) -> dict[str, tuple[RunSettings, str]]:
    """Each lane's recorded settings and device, from the first run in which it started."""
    out: dict[str, tuple[RunSettings, str]] = {}
    for run in runs:
        for lane, result in run.lanes.items():
            if lane not in out and result.started is not None:
                out[lane] = (result.started.settings, result.started.device)
    return out


def lane_groups(lanes: Mapping[str, tuple[RunSettings, str]]) -> list[SettingsGroup]:
    """What every lane shares, said once, then each lane's own; a lane alone is its own group."""
    worded = {lane: dict(lane_rows(s, device)) for lane, (s, device) in lanes.items()}
    if len(worded) < 2:
        return [SettingsGroup(f"Lane {lane}", tuple(rows.items())) for lane, rows in worded.items()]
    first = next(iter(worded.values()))
    common = [(k, v) for k, v in first.items() if all(rows.get(k) == v for rows in worded.values())]
    shared = {k for k, _ in common}
    return [SettingsGroup("Every lane", tuple(common))] + [
        SettingsGroup(f"Lane {lane}", tuple((k, v) for k, v in rows.items() if k not in shared))
        for lane, rows in worded.items()]


def _asked(runs: Sequence[RunResult]) -> tuple[list[ModelSpec], list[TrainSpec]]:
    """The models and training settings a file's runs measured: each run's config, and where a run stepped through
    widths or batch sizes (a ramp, a width dragged), each segment's (its config holds only the first)."""
    models, trains = [], []
    for run in runs:
        steps = dict.fromkeys((seg.started.widths, seg.started.batch_size)
                              for lane in run.lanes.values() for seg in lane.segments)
        if len(steps) < 2:
            steps = {(run.config.model.widths, run.config.train.batch_size): None}
        models += [dataclasses.replace(run.config.model, widths=widths) for widths, _ in steps]
        trains += [dataclasses.replace(run.config.train, batch_size=batch) for _, batch in steps]
    return models, trains


def settings_groups(runs: Sequence[RunResult], sweep: SweepAskedFor | None = None) -> list[SettingsGroup]:
    """A file's settings, grouped: the model, the training (or the serving), the sweep or the lanes' schedule; then
    what every lane shares, said once, and each lane's own."""
    if not runs:
        return []
    lanes = lane_settings(runs)
    settings = {lane: s for lane, (s, _) in lanes.items()}
    task = runs[0].config.train.task
    models, trains = _asked(runs)
    groups = [SettingsGroup("Model", tuple(model_rows(models, task))),
              SettingsGroup("Serving" if task == Task.PREDICT else "Training",
                            tuple(train_rows(trains, settings, sweep)))]
    plan = sweep_rows(sweep, runs[0].config.model.family, task) if sweep is not None else []
    if len(lanes) > 1:
        schedule = runs[0].schedule
        plan.append(("schedule", f"{schedule.value}: {SCHEDULES[schedule]}"))
    if plan:
        groups.append(SettingsGroup("Sweep" if sweep is not None else "Schedule", tuple(plan)))
    groups += lane_groups(lanes)
    return [g for g in groups if g.rows]


def task_words(runs: Sequence[RunResult], sweep: SweepAskedFor | None = None) -> str:
    """The task in a few words, for the report's facts: "training, 10 epochs, Adam, synthetic MNIST-shaped data";
    "serving, calls by Keras' predict_on_batch, synthetic MNIST-shaped data"."""
    t = runs[0].config.train
    data = data_words(t, {lane: s for lane, (s, _) in lane_settings(runs).items()}).partition(" (")[0]
    if t.task == Task.PREDICT:
        return f"serving, calls by {SERVE_WAYS.get(t.serve, t.serve)}, {data}"
    length = "" if sweep is not None else f", {fmt_count(t.epochs, 'epoch')}" + (
        f" or {fmt_num(t.max_seconds)} s a lane, whichever came first" if t.max_seconds else "")
    return f"training{length}, {OPTIMIZERS.get(t.optimizer, t.optimizer)}, {data}"


def lane_meaning(lane: LaneSpec, cores: int | None) -> str:
    """What a lane's name means, for a newcomer and a class: "cpu = all 2 cores", "cpu1 = one thread", "gpu0 = the
    first GPU"."""
    name = lane.local.name
    if lane.twin:
        return f"{name} = {lane.local.original.name} again, in a process of its own (its twin)"
    if lane.kind == DeviceKind.GPU:
        return f"{name} = the first GPU" if lane.index == 0 else f"{name} = GPU number {lane.index}"
    if lane.threads is None:
        return f"{name} = all {fmt_count(cores, 'core')}" if cores else f"{name} = every core"
    return f"{name} = one thread" if lane.threads == 1 else f"{name} = {fmt_count(lane.threads, 'thread')}"
