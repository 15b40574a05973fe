"""One run on a lane, segment by segment: set up once, then train each model until its budget, a stop or a new one.

A segment is a stretch of the run on one model. A plain run has one. A width changed while it
trains (SwitchModel) ends the segment at the next batch and starts another on the new model; a
paced run (a ramp, or lanes taking turns) waits after each segment for the app's Proceed or
Finish. Records count steps on across segments, their clock runs from the run's start, and each
segment's first steps are warm-up again.

Energy: the lane's meter (core/lane/energy.py) is made once per process, and the device's idle power is
measured once, before the lane's first segment (only where a counter reads). Each segment's summary
carries the joules of its steady stretch, as the step timer read them (core/lane/timing.py).
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import time
import traceback
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Mapping, Protocol

from ..json_data import JsonObject
from .backends import PlacementError, compile_cache_counts, compile_cache_word, keras_device, require_device, resolve_jit, set_precision, verify_placement
from .feeding import make_input, steps_per_epoch
from .load import load_average, others_share_of
from ..messages import Bundle, Finish, LanePhase, Proceed, RunJob, SwitchModel
from ..config import ConfigError, LaneSpec, RunConfig, Task
from ..records import (MIN_ENERGY_WINDOW_S, RunFailed, RunFinished, RunSettings, RunStarted, RunSummary, SegmentEnded,
                       SegmentStarted, Status, now_iso)
from ..run_stats import summarize
from .data import Dataset, DataError
from .energy import LANE_ENERGY
from .model import ModelShelf
from .arrivals import arrival_server_words
from .serving import PREDICT_FEEDING, make_call, serve, serve_arrivals, train_weights
from .steering import Steering
from .timing import EnergySpan, SegmentClock, StopReason, make_batch_timer

if TYPE_CHECKING:
    from keras import Model


SWITCHED_STEADY_STEPS = 60  # a model changed mid-run is measured at least this long (as a sweep point is)
WAIT_POLL_S = 0.1  # a paced run waiting for its turn checks the cancel flag this often
ASKED_WAIT_S = 1.0  # a steering message counted as sent is on its way down the queue: wait this long for it


class EventSink(Protocol):
    """Where a lane's events go: the queue to the app (a multiprocessing queue, or the remote wire)."""

    def put(self, obj: Any, /) -> None: ...


class Flag(Protocol):
    def is_set(self) -> bool: ...


class Phase(Protocol):
    """What the lane's heartbeat reads of it: the phase it is in (worker.Heartbeat)."""

    phase: LanePhase


class LaneProcess(Protocol):
    """What a run needs of the lane's process: LaneWorker (core/lane/worker.py), or the anatomy's."""

    spec: LaneSpec
    events: EventSink
    cancel: Flag
    steering: Steering
    keras: ModuleType
    settings: dict[str, Any]
    models: ModelShelf

    @property
    def heartbeat(self) -> Phase: ...  # read-only here: the run sets its phase, never replaces it

    def data(self, config: RunConfig) -> Dataset: ...

    def on_phase(self, phase: LanePhase) -> None: ...


def json_safe(settings: Mapping[str, object]) -> JsonObject:
    """Only JSON types cross to the parent: a framework's own str subclass (torch's TorchVersion)
    would make the parent import the framework just to unpickle it."""
    return json.loads(json.dumps(settings, default=str))


_ESCAPES = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # Keras bolds the cause it wraps (a terminal's escapes)


def cause_line(message: str) -> str:
    """The line of an exception's message that says what went wrong. Keras wraps a framework's error as
    "Exception encountered when calling Functional.call().", the framework's own message a line or two below,
    then "Arguments received by …": that message is the cause a user can act on, not the wrapper's first line."""
    lines = [line.strip() for line in _ESCAPES.sub("", message).splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].startswith("Exception encountered when calling") \
            and not lines[1].startswith("Arguments received"):
        return lines[1]
    return lines[0] if lines else ""


def describe_error(exc: BaseException, device: str) -> str:
    """A sentence for the user: the framework's own message, shortened; the traceback goes to the lane's log."""
    cause = cause_line(str(exc))
    text = f"{type(exc).__name__}: {cause}" if cause else type(exc).__name__
    text = text if len(text) <= 300 else text[:299] + "…"
    lowered = f"{type(exc).__name__}: {exc}".lower()
    if isinstance(exc, MemoryError) or "resourceexhausted" in lowered or "out of memory" in lowered or "oom" in lowered.split():
        return f"out of memory on {device}: lower the widths or the batch size ({text})"
    if isinstance(exc, (ConfigError, DataError, PlacementError)):
        return str(exc)
    return text


class SegmentFailed(Exception):
    """A segment's training raised: what it measured before (`partial`) is the run's last word."""

    def __init__(self, partial: RunSummary) -> None:
        super().__init__(partial.reason or "a segment failed")
        self.partial = partial


@dataclass(frozen=True)
class _Segment:
    steps: int
    stopped_by: StopReason
    switch_to: RunConfig | None
    summary: RunSummary


# A segment's status by what ended it.
_STATUS_OF = {StopReason.BUDGET: Status.COMPLETED, StopReason.CANCEL: Status.CANCELLED,
              StopReason.SWITCH: Status.SWITCHED}


def _epoch_steps(n_samples: int, config: RunConfig) -> int:
    steps = steps_per_epoch(n_samples, config.train.batch_size)
    # Keras runs whole executions of N steps, past the epoch's end if need be: make the epoch a
    # whole number of executions so the records count exactly what was trained.
    n = config.train.steps_per_execution
    return max(n, steps - steps % n)


def _budget(n_samples: int, config: RunConfig) -> int:
    """A config's own step budget: its step limit, else its epochs."""
    t = config.train
    return t.max_steps if t.max_steps is not None else _epoch_steps(n_samples, config) * t.epochs


def run_job(worker: LaneProcess, job: RunJob) -> RunSummary | None:
    """Carry out `job` on the lane's process; every outcome becomes an event."""
    spec, w = worker.spec, worker
    run_id, lane, device = job.run_id, spec.name, spec.name  # device: named once it is checked
    t0, t0_at, started_at = time.perf_counter(), time.time(), now_iso()
    config, segment, first_step, last = job.config, 1, 0, None
    w.heartbeat.phase = LanePhase.PREPARING
    waited_out = False  # a stop came while a paced run waited for its next segment
    try:
        device = require_device(spec, w.settings["threads"])
        data = w.data(config)
        t = config.train
        jit, jit_source = resolve_jit(spec, t)
        steps_left = _budget(len(data), config)
        settings = dict(w.settings, jit_compile=jit, jit_source=jit_source, steps_per_execution=t.steps_per_execution,
                        data_source=data.source, data_description=data.description, samples=len(data),
                        steps_per_epoch=_epoch_steps(len(data), config), total_steps=steps_left, epochs=t.epochs,
                        mixed_precision=t.mixed_precision, warmup_steps=t.warmup_steps, pid=os.getpid(),
                        paced=job.paced, task=str(t.task))
        sources: dict[tuple, Any] = {}  # a new width on the same batch size reuses the input pipeline
        with w.keras.device(keras_device(spec)):
            settings.update(_prepare(w, config, data, sources))
            # The first model is built before the run is announced: its placement is checked and recorded.
            model, settings["model_reused"], settings["placement"], weights = _model_for(w, config, data, jit)
            if t.task == Task.PREDICT:  # trained a few steps, never timed; the sidecar says so
                settings.update(serve=t.serve, weights=weights)
            if t.arrival_rate is not None:  # what the lane's server did with requests that arrived while it was busy
                settings.update(server=arrival_server_words(t.max_batch))
            w.events.put(Bundle((RunStarted(run_id, lane, device, RunSettings.from_json(json_safe(settings)),
                                               started_at),)))
            budget = steps_left
            while config is not None:
                clock = SegmentClock(run_id, lane, device, spec.backend, config.train.batch_size,
                                     config.model.widths, segment, first_step, t0,
                                     config.train.warmup_steps,
                                     # an arrival schedule is its budget (core/lane/serving.py serve_arrivals)
                                     None if config.train.arrival_rate is not None else budget,
                                     None if config.train.arrival_rate is not None else config.train.max_seconds,
                                     t0_at,
                                     config.train.task, config.model.kind)
                done = _train(w, config, clock, data, sources, model)
                model = None
                last = done.summary
                first_step += done.steps
                steps_left -= done.steps
                if done.stopped_by == StopReason.CANCEL:
                    break
                config, budget, waited_out = _next(w, job, done, data, steps_left)
                segment += 1
        w.heartbeat.phase = LanePhase.FINISHING
        # A stop while the last segment tidied up leaves it completed; a stop while a paced run waited
        # for its next segment leaves the plan unfinished.
        status = (Status.CANCELLED if (last is not None and last.status == Status.CANCELLED) or waited_out
                  else Status.COMPLETED)
        summary = _final(last, status, time.perf_counter() - t0)
        w.events.put(Bundle((RunFinished(run_id, lane, summary, now_iso()),)))
        return summary
    except Exception as exc:  # every failure becomes a message; the lane lives on
        traceback.print_exc()
        if isinstance(exc, SegmentFailed):
            last = exc.partial
        cause = exc.__cause__ if isinstance(exc, SegmentFailed) and exc.__cause__ is not None else exc
        reason = describe_error(cause, device)
        failed = _final(last, Status.FAILED, time.perf_counter() - t0, reason) if last else summarize(
            [], run_id=run_id, lane=lane, device=device, status=Status.FAILED, reason=reason,
            flops_per_batch=job.config.flops_per_batch, wall_s=time.perf_counter() - t0)
        w.events.put(Bundle((RunFailed(run_id, lane, reason, failed, now_iso()),)))
        return failed


def _model_for(w: LaneProcess, config: RunConfig, data: Dataset, jit: bool) -> tuple[Model, bool, str, str]:
    """A segment's model from the lane's shelf (and whether it came from there), its placement checked, and for
    the predict task its weights trained a few steps, never timed (what the sidecar records as `weights`)."""
    model, reused = w.models.get(config.model, config.train, jit=jit)
    placement = verify_placement(model, w.spec)
    weights = (train_weights(model, data.x, data.y, config.train.batch_size)
               if config.train.task == Task.PREDICT else "")
    return model, reused, placement, weights


def _prepare(w: LaneProcess, config: RunConfig, data: Dataset, sources: dict) -> dict[str, Any]:
    """Settings a segment's model changes: dtype policy; returns what to record of it."""
    t, spec = config.train, w.spec
    set_precision(w.keras, spec, t.mixed_precision)
    if t.task == Task.PREDICT:  # a predict call takes a NumPy slice of the data set (core/lane/serving.py)
        return {"feeding": PREDICT_FEEDING}
    key = (t.batch_size, t.feeding)
    if key not in sources:
        sources[key] = make_input(data.x, data.y, t.batch_size, spec, t.feeding)
    return {"feeding": sources[key][1]}


def _train(w: LaneProcess, config: RunConfig, clock: SegmentClock, data: Dataset, sources: dict,
           model: Any = None) -> _Segment:
    t, spec = config.train, w.spec
    w.heartbeat.phase = LanePhase.PREPARING
    jit = resolve_jit(spec, t)[0]
    if model is None:  # a segment after the first: its own dtype policy and input, then its model
        _prepare(w, config, data, sources)
        model = _model_for(w, config, data, jit)[0]
    source = sources[(t.batch_size, t.feeding)][0] if t.task == Task.TRAIN else None
    meter = LANE_ENERGY.meter(spec)
    idle_w = LANE_ENERGY.idle_w(spec)  # once per lane process, before its first segment; NaN at once without a counter
    w.events.put(Bundle((SegmentStarted(clock.run_id, clock.lane, clock.segment, config.model.widths, t.batch_size,
                                        config.flops_per_batch, clock.first_step, time.time(), clock.t0_at),)))
    predict = t.task == Task.PREDICT
    timer = make_batch_timer(w.keras, clock, emit=w.events.put, should_stop=w.cancel.is_set, steering=w.steering,
                             on_phase=w.on_phase, meter=meter if meter.counter else None, per_call=predict)
    started, cache = time.perf_counter(), compile_cache_counts()
    try:
        arrivals_ended = ""
        if predict and t.arrival_rate is not None:  # requests on their own schedule (core/lane/arrivals.py)
            arrivals_ended = serve_arrivals(model, make_call(w.keras, model, spec, t, jit), data.x, t, timer)
        elif predict:  # one forward call at a time, host to host (core/lane/serving.py)
            call = make_call(w.keras, model, spec, t, jit)
            serve(model, call, data.x, t.batch_size, timer, _epoch_steps(len(data), config))
        else:
            model.fit(source, epochs=10**6, steps_per_epoch=_epoch_steps(len(data), config), callbacks=[timer],
                      verbose=0, shuffle=False)
    except Exception as exc:
        # What this segment measured before it failed is the run's last word: keep its summary.
        raise SegmentFailed(summarize(timer.records, run_id=clock.run_id, lane=clock.lane, device=clock.device,
                                      status=Status.FAILED, flops_per_batch=config.flops_per_batch,
                                      wall_s=time.perf_counter() - started)) from exc
    status = _STATUS_OF[timer.stopped_by]
    logs = timer.epoch_logs
    summary = dataclasses.replace(
        summarize(timer.records, run_id=clock.run_id, lane=clock.lane, device=clock.device, status=status,
                  flops_per_batch=config.flops_per_batch, wall_s=time.perf_counter() - started,
                  final_loss=logs.get("loss", math.nan), final_accuracy=logs.get("accuracy", math.nan)),
        others_cpu=others_share_of(timer.load_pieces), load_avg=load_average(),
        compile_cache=compile_cache_word(cache, compile_cache_counts()), arrivals_ended=arrivals_ended,
        **energy_fields(timer.energy, meter.counter, meter.note, idle_w))
    w.events.put(Bundle((SegmentEnded(clock.run_id, clock.lane, clock.segment, summary, time.time()),)))
    del model
    return _Segment(timer.steps, timer.stopped_by, timer.switch_to, summary)


def energy_fields(span: EnergySpan, counter: str, note: str, idle_w: float) -> dict[str, float | int | str]:
    """A segment's energy figures for its RunSummary: the span the timer read, or NaN with the meter's reason."""
    if not counter:
        return {"energy_note": note}
    if span.failed or not span.pieces:
        why = "a counter read failed" if span.failed else "no steady step was measured"
        return {"energy_counter": counter, "energy_note": f"{NOT_READ}: {why}", "idle_w": idle_w}
    if span.seconds < MIN_ENERGY_WINDOW_S:  # the reading is kept in the file; no view gives joules from it
        note = (f"too short to read: the counter was read over {span.seconds:.2f} s of steady steps, and a reading "
                f"needs {MIN_ENERGY_WINDOW_S:g} s (more steady steps, or a longer time per point)")
    return {"energy_j": span.joules, "energy_steps": span.steps, "energy_samples": span.samples,
            "energy_s": span.seconds, "energy_counter": counter, "energy_note": note, "idle_w": idle_w,
            "gpu_temp_begin_c": span.temp_begin_c, "gpu_temp_end_c": span.temp_end_c}


NOT_READ = "not measured"


def _next(w: LaneProcess, job: RunJob, done: _Segment, data: Dataset,
          steps_left: int) -> tuple[RunConfig | None, int, bool]:
    """The next segment's model and step budget, or None when the run is over; and whether a stop
    came while a paced run waited for it."""
    if done.stopped_by == StopReason.SWITCH and done.switch_to is not None:
        return done.switch_to, _switched_budget(done.switch_to, data, steps_left), False
    if w.steering.asked():  # a new model asked for just as the budget ran out
        message = w.steering.steer(ASKED_WAIT_S)  # it was sent: wait for it to come down the queue
        if isinstance(message, SwitchModel):
            return message.config, _switched_budget(message.config, data, steps_left), False
    if not job.paced:
        return None, 0, False
    w.heartbeat.phase = LanePhase.WAITING
    while not w.cancel.is_set():
        message = w.steering.steer(WAIT_POLL_S)
        if isinstance(message, Finish):
            return None, 0, False
        if isinstance(message, (Proceed, SwitchModel)):
            return message.config, _budget(len(data), message.config), False
    return None, 0, True


def _switched_budget(config: RunConfig, data: Dataset, steps_left: int) -> int:
    """A model changed mid-run trains for what the run had left, and at least long enough to measure."""
    if config.train.max_steps is not None:
        return config.train.max_steps
    return max(steps_left, config.train.warmup_steps + SWITCHED_STEADY_STEPS)


def _final(last: RunSummary | None, status: Status, wall_s: float, reason: str = "") -> RunSummary:
    """The run's summary: its last segment's figures, with the run's status."""
    if last is None:
        return RunSummary("", "", "", status, reason=reason, wall_s=wall_s)
    return RunSummary(**{**last.as_dict(), "status": status, "reason": reason or last.reason, "wall_s": wall_s})
