"""The anatomy job in a lane process: build the model once, time each rung of the ladder, check they agree.

Order: a short `fit` compiles the step and estimates its time, which sizes every rung to about
`seconds_per_rung` (core/analysis/anatomy.py: window_plan): windows of K steps; then the rungs take turns,
twice, each turn a warm-up of its own (first calls trace, compile or capture) before its timed
windows. Every rung is summarised per window (the mean step of each window), synced ones too. The weights train on through
the rungs: timing does not need them equal. The same-loss check does: for it, each rung starts
from the same saved state and trains the same K batches.
"""
from __future__ import annotations

import dataclasses
import gc
import math
import time
import traceback
from typing import TYPE_CHECKING, Callable, Protocol

import numpy as np

from ..analysis.anatomy import (MAX_WINDOW_STEPS, PREDICT_LADDER, TRAIN_LADDER, AnatomyMeasured, AnatomyPoint, RungTime,
                                window_plan)
from .run import LaneProcess, json_safe
from ..records import RunSettings
from .steps import Batch, DeviceLoop, State, Steps, Tensor, Unsupported, steps_for
from .backends import compile_cache_counts, compile_cache_word, keras_device, require_device, resolve_jit, set_precision, verify_placement
from ..config import RunConfig, Task, TrainSpec
from ..json_data import JsonValue
from .data import Dataset
from .feeding import Source, input_factory, steps_per_epoch
from ..messages import AnatomyJob
from .model import build_model
from .serving import PREDICT_FEEDING, Forward, forward_for, train_weights
from .timing import Logs, SegmentClock, make_batch_timer
from .load import load_average, others_share
from .load import CpuSample
from .load import sample as cpu_sample

if TYPE_CHECKING:
    from types import ModuleType

    from keras import Model


WARMUP_STEPS = 2  # per rung, after the first fit compiled the step: first calls of a new loop or iterator
ROUNDS = 2  # each rung is timed in this many turns, its samples pooled
MAX_BATCHES = 64  # distinct batches the step loops cycle through, resident on the device
RESIDENT_BYTES = 256 * 2**20  # at most this much of them (and of the on-device loop's K batches): big batches get fewer
TF_NOTE = ("TensorFlow's fit waits for every step whatever the callbacks (Keras runs callbacks synchronously on "
           "TensorFlow), so fit_pipelined is what a plain fit gets there and differs from fit only by Crossover's "
           "own callback")


def per_window(step_ms: list[float], k: int) -> list[float]:
    """Mean ms per step of each whole window of k consecutive steps: synced rungs are summarised like pipelined
    ones, whose single steps cannot be seen, so an occasional slow step counts the same in every rung."""
    return [sum(step_ms[i:i + k]) / k for i in range(0, len(step_ms) - k + 1, k)]


class Stamps(Protocol):
    """What the anatomy reads of the pipelined clock (a keras Callback, of a class made with the lane's keras)."""

    stamps: list[tuple[int, float]]


def pipelined_clock(keras: ModuleType, k: int, first: int = 0) -> Stamps:
    """A callback that notes (step, time) at step `first` and every `k` steps after it, in `.stamps`. It is async-safe:
    where Keras dispatches callbacks asynchronously (JAX, torch), it runs in a worker thread once that step's
    results are in, so the training loop never waits for a step."""

    class PipelinedClock(keras.callbacks.Callback):
        async_safe = True

        def __init__(self) -> None:
            super().__init__()
            self.stamps: list[tuple[int, float]] = []

        def on_train_batch_end(self, batch: int, logs: Logs | None = None) -> None:
            if batch >= first and (batch - first) % k == 0:
                self.stamps.append((batch, time.perf_counter()))

    return PipelinedClock()


class Anatomy:
    """The rungs of one compiled model on this lane's device."""

    def __init__(self, keras: ModuleType, model: Model, steps: Steps, source: Callable[[], Source],
                 batches: list[tuple[np.ndarray, np.ndarray]], lane: str, device: str) -> None:
        self.keras, self.model, self.steps, self.source = keras, model, steps, source
        self.host_batches, self.lane, self.device = batches, lane, device
        self.on_device: list[Batch] = [(steps.place(x), steps.place(y)) for x, y in batches]
        self.k = 2  # steps per window, set once the step time is known
        self.stack = MAX_WINDOW_STEPS  # batches the on-device loop's stack holds (any K up to it), fewer if big
        self._loop: DeviceLoop | None = None
        self._stacked: Batch | None = None

    # ---------------------------------------------------------------- fit, as Crossover and as a user run it

    def fit(self, windows: int, warmup: int = WARMUP_STEPS) -> list[float]:
        """Keras fit with Crossover's own per-step callback: ms per step, averaged over each window of K steps."""
        steps = windows * self.k
        clock = SegmentClock("anatomy", self.lane, self.device, self.steps.spec.backend, len(self.host_batches[0][1]),
                             (), 1, 0, time.perf_counter(), warmup)
        timer = make_batch_timer(self.keras, clock, emit=lambda _bundle: None, should_stop=lambda: False)
        # verbose=0 (silent) is documented; Keras' fit is unannotated, so the checker takes the type from the default.
        self.model.fit(self.source(), epochs=1, steps_per_epoch=warmup + steps, callbacks=[timer],
                       verbose=0, shuffle=False)  # pyright: ignore[reportArgumentType]  # verbose: see above
        return per_window([r.ms / max(r.batches, 1) for r in timer.records if not r.warmup], self.k)

    def fit_pipelined(self, windows: int, warmup: int = WARMUP_STEPS) -> list[float]:
        """Keras fit with a timestamp every K steps only, from an async-safe callback: where Keras dispatches
        callbacks asynchronously (JAX, torch) it runs in a worker thread once that step's results are in,
        so nothing waits for a step in the training loop."""
        k = self.k
        clock = pipelined_clock(self.keras, k, first=warmup - 1)
        self.model.fit(self.source(), epochs=1, steps_per_epoch=warmup + k * windows, callbacks=[clock],
                       verbose=0, shuffle=False)  # pyright: ignore[reportArgumentType]  # verbose: as in fit()
        stamps = sorted(clock.stamps)
        return [(b - a) * 1000.0 / k for (_, a), (_, b) in zip(stamps, stamps[1:])]

    # ---------------------------------------------------------------- the compiled step without fit

    def step_loop(self, windows: int, warmup: int = WARMUP_STEPS) -> list[float]:
        s, batches = self.steps, self.on_device
        state, out = s.begin(), []
        try:
            for i in range(warmup + windows * self.k):
                t0 = time.perf_counter()
                loss, state = s.step(state, batches[i % len(batches)])
                s.read(loss)
                if i >= warmup:
                    out.append((time.perf_counter() - t0) * 1000.0)
        finally:
            s.end(state)
        return per_window(out, self.k)

    def step_loop_pipelined(self, windows: int) -> list[float]:
        s, batches, k = self.steps, self.on_device, self.k
        state, out = s.begin(), []
        loss: Tensor | None = None
        try:
            for w in range(1 + windows):
                t0 = time.perf_counter()
                for j in range(k):
                    loss, state = s.step(state, batches[(w * k + j) % len(batches)])
                assert loss is not None, "a window holds K >= 2 steps"
                s.read(loss)
                if w:
                    out.append((time.perf_counter() - t0) * 1000.0 / k)
        finally:
            s.end(state)
        return out

    def device_loop(self, windows: int) -> list[float]:
        s, k = self.steps, self.k
        loop, (xs, ys) = self.loop(), self.stacked()
        state, out = s.begin(), []
        try:
            for w in range(1 + windows):  # the first call compiles (or captures)
                t0 = time.perf_counter()
                loss, state = loop(state, xs, ys, k)
                s.read(loss)
                if w:
                    out.append((time.perf_counter() - t0) * 1000.0 / k)
        finally:
            s.end(state)
        return out

    def loop(self) -> DeviceLoop:
        """The on-device loop of K steps, compiled once (raises Unsupported where the backend has none)."""
        if self._loop is None:
            self._loop = self.steps.device_loop()
        return self._loop

    def stacked(self) -> Batch:
        """The batches the on-device loop runs through, stacked: as many as any K may take (`stack`), so that the
        stack's shape, and with it the loop's program, does not change with K."""
        if self._stacked is None:
            picked = [self.host_batches[i % len(self.host_batches)] for i in range(max(self.stack, self.k))]
            self._stacked = (self.steps.place(np.stack([x for x, _ in picked])),
                             self.steps.place(np.stack([y for _, y in picked])))
        return self._stacked

    # ---------------------------------------------------------------- the same arithmetic on every rung

    def loss_after(self, rung: str, saved: list[np.ndarray]) -> float:
        """From the saved state, K steps on the first K batches by this rung; then the loss on batch 0."""
        self.steps.restore(saved)
        k = self.k
        if rung == "fit":
            self.fit(1, warmup=0)
        elif rung == "fit_pipelined":
            self.fit_pipelined(1, warmup=0)
        elif rung == "step_loop":
            self.step_loop(1, warmup=0)
        else:
            s = self.steps
            state: State = s.begin()
            loss: Tensor | None = None
            try:
                if rung == "device_loop":
                    loss, state = self.loop()(state, *self.stacked(), k)
                else:
                    for j in range(k):
                        loss, state = s.step(state, self.on_device[j % len(self.on_device)])
                assert loss is not None, "a window holds K >= 2 steps"
                s.read(loss)
            finally:
                s.end(state)
        return self.probe_loss()

    def probe_loss(self) -> float:
        """The loss on the first batch, in inference mode: equal weights give an equal loss."""
        ops, (x, y) = self.keras.ops, self.host_batches[0]
        pred = self.model(self.steps.place(x), training=False)
        loss = self.keras.losses.get(self.model.loss)  # as compiled: cross-entropy, or a regression's squared error
        return float(ops.convert_to_numpy(ops.mean(loss(self.steps.place(y), pred))))


class CallAnatomy:
    """The rungs of one served call (the predict task) on this lane's device: the predict ladder of
    core/analysis/anatomy.py, each a window of K calls on the same batches, host arrays in and out."""

    def __init__(self, model: Model, forward: Forward, place: Callable[[np.ndarray], Tensor],
                 batches: list[np.ndarray]) -> None:
        self.model, self.forward, self.host = model, forward, batches
        self.resident: list[Tensor] = [place(x) for x in batches]
        self.place = place
        self.k = 2
        self._loop: Callable[[Tensor], Tensor] | None = None
        self._stacked: Tensor | None = None

    def _each(self, call: Callable[[int], object], windows: int, warmup: int) -> list[float]:
        out = []
        for i in range(warmup + windows * self.k):
            t0 = time.perf_counter()
            call(i)
            if i >= warmup:
                out.append((time.perf_counter() - t0) * 1000.0)
        return per_window(out, self.k)

    def predict_on_batch(self, windows: int, warmup: int = WARMUP_STEPS) -> list[float]:
        host, model = self.host, self.model
        return self._each(lambda i: np.asarray(model.predict_on_batch(host[i % len(host)])), windows, warmup)

    def call_synced(self, windows: int, warmup: int = WARMUP_STEPS) -> list[float]:
        host, f = self.host, self.forward
        return self._each(lambda i: f.to_host(f(host[i % len(host)])), windows, warmup)

    def call_resident(self, windows: int, warmup: int = WARMUP_STEPS) -> list[float]:
        resident, f = self.resident, self.forward
        return self._each(lambda i: f.to_host(f(resident[i % len(resident)])), windows, warmup)

    def call_pipelined(self, windows: int) -> list[float]:
        resident, f, k, out = self.resident, self.forward, self.k, []
        for w in range(1 + windows):  # the first window warms up
            t0 = time.perf_counter()
            answer = None
            for j in range(k):
                answer = f(resident[(w * k + j) % len(resident)])
            f.to_host(answer)  # one wait, for the last answer: the others were in order before it
            if w:
                out.append((time.perf_counter() - t0) * 1000.0 / k)
        return out

    def device_loop(self, windows: int) -> list[float]:
        if self._loop is None:
            self._loop = self.forward.loop()
            self._stacked = self.place(np.stack([self.host[i % len(self.host)] for i in range(self.k)]))
        loop, xs, f, out = self._loop, self._stacked, self.forward, []
        for w in range(1 + windows):  # the first call compiles
            t0 = time.perf_counter()
            f.to_host(loop(xs))
            if w:
                out.append((time.perf_counter() - t0) * 1000.0 / self.k)
        return out

    def timers(self, windows: int) -> dict[str, Callable[[], list[float]]]:
        return {"predict_on_batch": lambda: self.predict_on_batch(windows),
                "call_synced": lambda: self.call_synced(windows),
                "call_resident": lambda: self.call_resident(windows),
                "call_pipelined": lambda: self.call_pipelined(windows),
                "device_loop": lambda: self.device_loop(windows)}


def _known(x: float) -> float | None:
    """A figure for the JSON a point travels in: None where it could not be measured (NaN)."""
    return round(x, 4) if math.isfinite(x) else None


def measure_anatomy(worker: LaneProcess, job: AnatomyJob,
                    describe: Callable[[BaseException, str], str]) -> AnatomyMeasured:
    """In the lane (`worker` is its process, a LaneWorker): time the rungs `job` asks for, of a training step or of
    a served call (its task's ladder); an answer saying why if it cannot. The lane lives on either way."""
    keras = worker.keras
    try:
        measure = _call_anatomy if job.config.train.task == Task.PREDICT else _step_anatomy
        return AnatomyMeasured(measure(worker, job, describe))
    except Exception as exc:  # every failure becomes an answer
        traceback.print_exc()
        if job.config.train.task != Task.PREDICT:  # the shelf's model may be left mid-step: the next get builds anew
            train = dataclasses.replace(job.config.train, steps_per_execution=1)
            worker.models.forget(job.config.model, train, jit=resolve_jit(worker.spec, train)[0])
        return AnatomyMeasured(None, describe(exc, worker.spec.name))
    finally:  # the model and its rungs went with the measuring function's frame
        keras.mixed_precision.set_dtype_policy("float32")
        keras.backend.clear_session()
        gc.collect()


def _settings(worker: LaneProcess, job: AnatomyJob, train: TrainSpec, data: Dataset, jit: bool, jit_source: str,
              machine: CpuSample | None, cache: tuple[int, int], **task: JsonValue) -> RunSettings:
    """What the point was measured with: the lane's settings, the speed settings of `train`, the data, the load
    on the lane's cores meanwhile, and whether the compiled programs came from the cache."""
    return RunSettings.from_json(json_safe(dict(
        worker.settings, jit_compile=jit, steps_per_execution=1, mixed_precision=train.mixed_precision,
        data_source=data.source, seconds_per_rung=job.seconds_per_rung, jit_source=jit_source,
        others_cpu=_known(others_share(machine, cpu_sample())), load_avg=_known(load_average()),
        compile_cache=compile_cache_word(cache, compile_cache_counts()), family=job.config.model.family, **task)))


def _step_anatomy(worker: LaneProcess, job: AnatomyJob, describe: Callable[[BaseException, str], str]) -> AnatomyPoint:
    """The training ladder (TRAIN_LADDER) of `job.config`, with the same-loss check when asked."""
    spec, keras, t_start, cache = worker.spec, worker.keras, time.perf_counter(), compile_cache_counts()
    config: RunConfig = job.config
    # Each rung times single steps; steps per execution is a knob of its own (sweep --ladder).
    train = dataclasses.replace(config.train, steps_per_execution=1)
    device = require_device(spec, worker.settings["threads"])
    data = worker.data(config)
    jit, jit_source = resolve_jit(spec, train)
    set_precision(keras, spec, train.mixed_precision)
    bs = train.batch_size
    fits = max(2, RESIDENT_BYTES // max(data.x[:bs].nbytes + data.y[:bs].nbytes, 1))
    n = min(steps_per_epoch(len(data), bs), MAX_BATCHES, fits)
    with keras.device(keras_device(spec)):
        # From the lane's shelf: a model a sweep point (or an earlier anatomy) built and traced is taken as it is,
        # reset to its first weights, so a sweep's floor and the Why tab after a run skip its build and trace.
        model, reused = worker.models.get(config.model, train, jit=jit)
        verify_placement(model, spec)
        source, feeding = input_factory(data.x, data.y, bs, spec, train.feeding)  # made once, each fit from 0
        anatomy = Anatomy(keras, model, steps_for(keras, model, spec), source,
                          [(data.x[i * bs:(i + 1) * bs], data.y[i * bs:(i + 1) * bs]) for i in range(n)],
                          spec.name, device)
        first = anatomy.fit(2, warmup=max(train.warmup_steps, 1))  # compiles the step, and sizes the rungs
        k, windows = window_plan(float(np.median(first)) / 1000.0, job.seconds_per_rung / ROUNDS)
        anatomy.k, anatomy.stack = min(k, fits), min(MAX_WINDOW_STEPS, fits)
        saved = anatomy.steps.snapshot() if job.check_loss else None
        timers: dict[str, Callable[[], list[float]]] = {
            "fit": lambda: anatomy.fit(windows), "fit_pipelined": lambda: anatomy.fit_pipelined(windows),
            "step_loop": lambda: anatomy.step_loop(windows),
            "step_loop_pipelined": lambda: anatomy.step_loop_pipelined(windows),
            "device_loop": lambda: anatomy.device_loop(windows)}
        wanted = [r for r in TRAIN_LADDER.rungs if r in job.rungs or not job.rungs]
        machine = cpu_sample()
        rungs, reasons = _time_rungs(timers, wanted, anatomy.k, spec.name, describe)
        losses = {name: anatomy.loss_after(name, saved) for name, rung in rungs.items()
                  if rung is not None} if saved is not None else {}
    notes = [TF_NOTE] if spec.backend == "tensorflow" and "fit_pipelined" in rungs else []
    if config.train.steps_per_execution != 1:
        notes.append(f"steps per execution {config.train.steps_per_execution} was set: the anatomy times "
                     "single steps")
    return AnatomyPoint(
        lane=spec.name, device=device, backend=spec.backend, widths=config.model.widths, batch_size=bs,
        flops_per_batch=config.flops_per_batch, rungs=rungs, reasons=reasons, notes=tuple(notes),
        window_steps=anatomy.k, losses=losses, seconds=time.perf_counter() - t_start,
        settings=_settings(worker, job, train, data, jit, jit_source, machine, cache, feeding=feeding,
                           model_reused=reused))


def _call_anatomy(worker: LaneProcess, job: AnatomyJob, describe: Callable[[BaseException, str], str]) -> AnatomyPoint:
    """The predict ladder (PREDICT_LADDER) of `job.config`: a served call, host array in, host array out, after a
    few untimed training steps so that the calls answer with trained weights, as a predict run's do."""
    spec, keras, t_start, cache = worker.spec, worker.keras, time.perf_counter(), compile_cache_counts()
    config: RunConfig = job.config
    train = config.train
    device = require_device(spec, worker.settings["threads"])
    data = worker.data(config)
    jit, jit_source = resolve_jit(spec, train)
    set_precision(keras, spec, train.mixed_precision)
    bs = train.batch_size
    fits = max(2, RESIDENT_BYTES // max(data.x[:bs].nbytes, 1))
    n = min(max(1, len(data) // bs), MAX_BATCHES, fits)
    with keras.device(keras_device(spec)):
        model = build_model(keras, config.model, train, jit=jit)
        verify_placement(model, spec)
        weights = train_weights(model, data.x, data.y, bs)
        batches = [data.x[i * bs:(i + 1) * bs] for i in range(n)]
        anatomy = CallAnatomy(model, forward_for(model, spec, jit), steps_for(keras, model, spec).place, batches)
        first = anatomy.predict_on_batch(2, warmup=max(train.warmup_steps, 1))  # compiles, and sizes the rungs
        k, windows = window_plan(float(np.median(first)) / 1000.0, job.seconds_per_rung / ROUNDS)
        anatomy.k = min(k, fits)
        wanted = [r for r in PREDICT_LADDER.rungs if r in job.rungs or not job.rungs]
        machine = cpu_sample()
        rungs, reasons = _time_rungs(anatomy.timers(windows), wanted, anatomy.k, spec.name, describe)
    notes = ["device_loop sums each answer inside the loop (one reduction per call), so that no pass is "
             "left out as unused"] if rungs.get("device_loop") is not None else []
    return AnatomyPoint(
        lane=spec.name, device=device, backend=spec.backend, widths=config.model.widths, batch_size=bs,
        flops_per_batch=config.flops_per_batch, rungs=rungs, reasons=reasons, notes=tuple(notes),
        window_steps=anatomy.k, seconds=time.perf_counter() - t_start, task=Task.PREDICT,
        settings=_settings(worker, job, train, data, jit, jit_source, machine, cache, feeding=PREDICT_FEEDING,
                           weights=weights))


def _time_rungs(timers: dict[str, Callable[[], list[float]]], wanted: list[str], k: int, lane: str,
                describe: Callable[[BaseException, str], str]) -> tuple[dict[str, RungTime | None], dict[str, str]]:
    """Each wanted rung timed in ROUNDS turns, the rungs interleaved so that a burst of other work on the machine
    lands on all of them; a rung that cannot run is a null with its reason, not a lost point."""
    samples: dict[str, list[float]] = {name: [] for name in wanted}
    reasons: dict[str, str] = {}
    for _round in range(ROUNDS):
        for name in (r for r in wanted if r not in reasons):
            try:
                samples[name] += timers[name]()
            except Unsupported as exc:
                reasons[name] = str(exc)
            except Exception as exc:
                traceback.print_exc()
                reasons[name] = describe(exc, lane)
    return {name: None if name in reasons else RungTime.of(samples[name], k) for name in wanted}, reasons
