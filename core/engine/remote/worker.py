"""The far end of a remote lane: `python -m crossover_lab.core.engine.remote.worker`, started by the app through ssh.

It says who it is before importing any framework, refuses an app of another version, then runs
the lane as a local lane process does (core/lane/worker.py), with in-process queues: the lane
times its own steps here, so the network never enters a measurement. Messages go out on the
real stdout as JSON lines (framework chatter is moved to stderr), written by a thread so that
training never waits on the network. It leaves when its SSH channel closes (stdin ends), so no
process stays behind.
"""
from __future__ import annotations

import os
import platform
import queue
import signal
import sys
import threading
from typing import BinaryIO

from ... import APP_VERSION
from ..devices import discover, host_info
from ...lane.worker import lane_main
from ...messages import (AnatomyJob, CalibrateJob, CloseLane, InspectJob, ModelChunk, PrepareJob, ProbeJob, RunJob,
                         Wirable)
from ...paths import received_models_dir
from .model_files import ModelStore
from .wire import (PROTOCOL, DevicesListed, ListDevices, OpenLane, Refused, RemoteHello, SetCancel, decode, encode,
                   version_problem)
from ..pool import LanePool
from ...lane.steering import STEERS, Counter

EXIT_GRACE_S = 2.0  # after the channel closed, a run in progress has this long to stop before the process ends


class Wire:
    """Messages to the app, one JSON line each, written by one thread; `put` never blocks."""

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self._queue: queue.SimpleQueue[Wirable] = queue.SimpleQueue()  # None: the end
        self._thread = threading.Thread(target=self._run, name="crossover-wire", daemon=True)
        self._thread.start()

    def put(self, message: Wirable) -> None:
        self._queue.put(message)

    def _run(self) -> None:
        while True:
            message = self._queue.get()
            if message is None:
                return
            try:
                self._out.write(encode(message))
                self._out.flush()
            except (OSError, ValueError):
                os._exit(0)  # the connection has gone, and with it whoever would read the results

    def close(self, timeout: float) -> None:
        self._queue.put(None)
        self._thread.join(timeout)


def read_jobs(stdin: BinaryIO, jobs: queue.Queue, cancel: threading.Event, attention: Counter,
              store: ModelStore | None = None) -> None:
    """Jobs from the app into the lane's queue, cancel into its flag, steering counted (core/lane/steering.py),
    a user's model file kept in `store` and each job given this machine's copy of it; at EOF, stop and leave."""
    store = store or ModelStore(received_models_dir())
    for line in iter(stdin.readline, b""):
        try:
            message = decode(line)
        except ValueError:
            break  # not our app: treat it as the end of the conversation
        if isinstance(message, ModelChunk):
            store.take(message)
            if store.error:
                print(store.error, file=sys.stderr, flush=True)  # the app logs this end's stderr
                store.error = ""
        elif isinstance(message, SetCancel):
            if message.on:
                cancel.set()
            else:
                cancel.clear()
        elif isinstance(message, STEERS):
            jobs.put(store.localized(message))
            attention.value += 1
        elif isinstance(message, (RunJob, ProbeJob, PrepareJob, CalibrateJob, AnatomyJob, InspectJob, CloseLane)):
            jobs.put(store.localized(message))
    cancel.set()
    jobs.put(CloseLane())
    # A run stops at its next batch end; a framework still importing, or a stuck step, does not:
    # the process ends regardless, so a dropped connection never leaves it behind.
    timer = threading.Timer(EXIT_GRACE_S, os._exit, (0,))
    timer.daemon = True
    timer.start()


def main() -> int:
    wire_fd = os.dup(1)
    os.dup2(2, 1)  # anything printed (TensorFlow's chatter) goes to stderr, which the app logs
    # Ctrl-C at the app reaches the app; this end only stops when told or when its channel closes.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    wire = Wire(os.fdopen(wire_fd, "wb", buffering=0))
    machine = {**host_info(), "machine": platform.node()}
    wire.put(RemoteHello(APP_VERSION, PROTOCOL, sys.executable, machine))
    stdin = sys.stdin.buffer
    try:
        first = decode(stdin.readline() or b"null")
    except ValueError:
        first = None
    if not isinstance(first, (OpenLane, ListDevices)):
        wire.put(Refused(f"{platform.node()} expected a Crossover app to open a lane, and got {type(first).__name__}"))
        wire.close(5.0)
        return 3
    problem = version_problem((APP_VERSION, PROTOCOL), (first.app_version, first.protocol), platform.node(),
                              sys.executable)
    if problem:
        wire.put(Refused(problem))
        wire.close(5.0)
        return 3
    if isinstance(first, ListDevices):
        gone = threading.Event()  # the app stopped waiting: end the probes rather than finish them
        threading.Thread(target=lambda: (stdin.read(), gone.set()), name="crossover-stdin", daemon=True).start()
        pool = LanePool()
        try:
            options = discover(pool, cancel=gone)
        finally:
            pool.close()
        wire.put(DevicesListed(tuple(options)))
        wire.close(10.0)
        return 0
    jobs: queue.Queue = queue.Queue()
    cancel = threading.Event()
    attention = Counter()
    threading.Thread(target=read_jobs, args=(stdin, jobs, cancel, attention), name="crossover-jobs",
                     daemon=True).start()
    lane_main(first.spec, jobs, wire, cancel, None, attention)
    wire.close(10.0)
    return 0


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    # The wire is flushed; skipping the interpreter's teardown (a framework's exit handlers take
    # a second or more) lets the SSH channel, and with it the lane, close at once.
    os._exit(code)
