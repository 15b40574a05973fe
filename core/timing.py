"""The Keras callback that times every training step, flags warm-up, and honours cancel and limits.

Warm-up rule: the first `warmup_steps` training steps of a run (default 5) are warm-up. The
first step traces and compiles the step function; the next few touch memory, caches and
allocators for the first time. With steps per execution N, a record that holds any of those
steps is warm-up. Warm-up records are kept and exported, flagged, and left out of steady-state
statistics (core/analysis.py).
"""
from __future__ import annotations

import time
from typing import Any, Callable

from crossover_lab.core.messages import Bundle
from crossover_lab.core.records import BatchTiming, EpochEnded

FLUSH_INTERVAL_S = 0.05  # send records in small bundles: one queue put per batch costs more


def make_batch_timer(keras: Any, *, run_id: str, lane: str, device: str, backend: str,
                     batch_size: int, warmup_steps: int, emit: Callable[[Bundle], None],
                     should_stop: Callable[[], bool], max_steps: int | None = None,
                     max_seconds: float | None = None, on_phase: Callable[[str], None] | None = None) -> Any:
    """A keras.callbacks.Callback instance (the class needs the lane's keras, imported late).

    `on_phase("training")` is called when the first step has ended and `on_phase("finishing")` when
    the last has; `stopped_by_cancel` says whether a cancel, rather than the run's end, stopped it.
    """
    phase = on_phase or (lambda _name: None)

    class BatchTimer(keras.callbacks.Callback):
        def __init__(self) -> None:
            super().__init__()
            self.records: list[BatchTiming] = []
            self.epoch_logs: dict[str, float] = {}
            self._pending: list[Any] = []
            self._last_flush = 0.0
            self._t0 = 0.0
            self._epoch = 0
            self._begin = 0.0
            self._begin_batch = 0
            self._prev_end: float | None = None
            self._steps = 0
            self._steady_s = 0.0
            self.stopped_by_cancel = False

        def on_train_begin(self, logs: Any = None) -> None:
            self._t0 = self._last_flush = time.perf_counter()

        def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
            self._epoch, self._prev_end = epoch, None

        def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
            self._begin_batch = batch
            self._begin = time.perf_counter()

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            # Fetching the loss waits for the device: the step has really finished now.
            loss = float((logs or {}).get("loss", float("nan")))
            end = time.perf_counter()
            start = self._begin if self._prev_end is None else self._prev_end
            self._prev_end = end
            n = max(1, batch - self._begin_batch + 1)
            warmup = self._steps < warmup_steps
            record = BatchTiming(run_id=run_id, lane=lane, device=device, epoch=self._epoch + 1,
                                 batch=batch + 1, step=self._steps + n, start_s=start - self._t0,
                                 ms=(end - start) * 1000.0, samples=n * batch_size, warmup=warmup,
                                 loss=loss, batches=n, backend=backend)
            if self._steps == 0:
                phase("training")
            self._steps += n
            if not warmup:
                self._steady_s += end - start
            self.records.append(record)
            self._pending.append(record)
            if end - self._last_flush >= FLUSH_INTERVAL_S:
                self.flush()
            if (max_steps is not None and self._steps >= max_steps) or \
                    (max_seconds is not None and self._steady_s >= max_seconds):
                self.model.stop_training = True
            elif should_stop():
                self.model.stop_training = self.stopped_by_cancel = True

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            self.epoch_logs = {k: float(v) for k, v in (logs or {}).items()}
            self._pending.append(EpochEnded(run_id, lane, epoch + 1, self.epoch_logs.get("loss", float("nan")),
                                            self.epoch_logs.get("accuracy", float("nan"))))
            self.flush()

        def on_train_end(self, logs: Any = None) -> None:
            phase("finishing")
            self.flush()

        def flush(self) -> None:
            if self._pending:
                emit(Bundle(tuple(self._pending)))
                self._pending = []
            self._last_flush = time.perf_counter()

    return BatchTimer()
