"""Run one configuration (or a plan of them) on several lanes and collect what happened; the pool of lanes.

The result types live in core/results.py and the turn-taking in core/engine/conductor.py; this module is
what the CLI and the window call.
"""
from __future__ import annotations

import threading
from typing import Callable, Sequence

from .conductor import Conductor, RunControl
from ..config import LaneSpec, RunConfig, Schedule
from .lanes import WATCHDOG_S, Channel, ChannelFactory, Lane, local_channel
from ..records import LaneEvent, now_iso
from .remote.channel import RemoteSettings, remote_lane_channel
from .tracking import RunTracker
from ..results import RunResult, new_run_id

# How every new pool reaches its lanes when it is given no `channels`: None, real processes (local, or over SSH).
# The one seam for a whole program run on scripted lanes (the CLI's and the window's tests set it), since the
# CLI and the window make their pools themselves.
default_channels: ChannelFactory | None = None

class LanePool:
    """Keeps one Lane per profile alive between runs, so a run does not pay a framework import.

    A lane on another machine (`ssh://host/LANE`) is reached as `remote` says when its process
    starts, so a changed remote Python applies from the next start. `channels` replaces how every lane's
    process is reached: a scripted lane that answers the same messages on a clock of its own (the tests'
    tests/scripted_lanes.py), where the default (`default_channels`) starts real processes.
    """

    def __init__(self, remote: RemoteSettings | None = None, watchdog_s: float = WATCHDOG_S,
                 channels: ChannelFactory | None = None) -> None:
        self._lanes: dict[str, Lane] = {}
        self._lock = threading.Lock()
        self.remote = remote or RemoteSettings()
        self.watchdog_s = watchdog_s  # see core/engine/lanes.py: silence after which a running lane is killed
        self._channels = channels or default_channels or self._real_channel

    def _real_channel(self, spec: LaneSpec) -> Channel:
        return remote_lane_channel(spec, self.remote) if spec.host else local_channel(spec)

    def get(self, spec: LaneSpec) -> Lane:
        with self._lock:
            lane = self._lanes.get(spec.name)
            if lane is None:
                lane = self._lanes[spec.name] = Lane(spec, channel_factory=self._channels, watchdog_s=self.watchdog_s)
            return lane

    def ready(self, specs: Sequence[LaneSpec], cancel: threading.Event | None = None,
              data_of: RunConfig | None = None) -> None:
        """Start every lane of `specs` at once and wait until each answers: their framework imports overlap one
        another, and none of them overlaps a lane being timed (sweeps and anatomies time one lane at a time).
        With `data_of`, every lane then loads the data that config trains on, all at once: a study's first point
        is not timed while another lane still makes its data set (each used to, when its first turn came).
        A lane that cannot start, or load its data, says so when it is given its job."""
        lanes = [self.get(spec) for spec in specs]
        for lane in lanes:
            lane.start()
        for lane in lanes:
            if cancel is not None and cancel.is_set():
                return
            if not lane.busy and not lane.up:
                lane.probe(cancel=cancel)
        if data_of is None or (cancel is not None and cancel.is_set()):
            return
        # One thread a lane (each Lane is used from one thread at a time), so that their loading overlaps.
        loaders = [threading.Thread(target=lane.prepare, args=(data_of, cancel), name=f"prepare-{lane.name}")
                   for lane in lanes if lane.up and not lane.busy]
        for thread in loaders:
            thread.start()
        for thread in loaders:
            thread.join()
        # Each lane's idle power, one lane after another with every lane's data made: none of the study's lanes
        # trains (or makes data) while a counter reads the idle baseline (at once, where no counter reads).
        for lane in lanes:
            if cancel is not None and cancel.is_set():
                return
            if lane.up and not lane.busy:
                lane.prepare(data_of, cancel, idle=True)

    def lanes(self) -> list[Lane]:
        with self._lock:
            return list(self._lanes.values())

    def close(self, timeout: float = 2.0) -> None:
        """Close every lane at once (in parallel), each given `timeout` to leave before it is killed."""
        closers = [threading.Thread(target=lane.close, kwargs={"timeout": timeout}, name=f"close-{lane.name}")
                   for lane in self.lanes()]
        for thread in closers:
            thread.start()
        for thread in closers:
            thread.join(timeout + 3.0)


def run_comparison(pool: LanePool, specs: list[LaneSpec], config: RunConfig, *,
                   schedule: Schedule = Schedule.SEQUENTIAL, run_id: str | None = None,
                   on_event: Callable[[LaneEvent], None] | None = None,
                   cancel: threading.Event | None = None, plan: Sequence[RunConfig] = (),
                   control: RunControl | None = None, tracker: RunTracker | None = None) -> RunResult:
    """Run `config` (or each config of `plan` in turn: a ramp) on every lane; returns what each produced.
    Blocks: call it from a worker thread.

    Every event is folded into one RunTracker, then told to `on_event`: `tracker` when the caller keeps
    one (it finishes it), else a new one, finished here. Setting `cancel` (or `control.cancel`) stops the
    runs at their next batch end (lanes that don't answer are killed); lanes that have not had their
    turn are reported cancelled. `control.switch()` changes the model while it trains (see
    core/engine/conductor.py).
    """
    control = control or RunControl(cancel)
    if cancel is not None and control.cancel is not cancel:
        raise ValueError("give the cancel flag through control or cancel, not both")
    plan = tuple(plan) or (config,)
    own = tracker is None
    if tracker is None:
        tracker = RunTracker(run_id or new_run_id(), plan[0], list(specs), schedule, now_iso(), plan)
    folding = tracker

    def fold(event: LaneEvent) -> None:
        folding.apply([event])
        if on_event is not None:
            on_event(event)

    conduct(pool, list(specs), plan, schedule, tracker.run_id, fold, control)
    return tracker.finish() if own else tracker.result


def conduct(pool: LanePool, specs: list[LaneSpec], plan: Sequence[RunConfig], schedule: Schedule, run_id: str,
            on_event: Callable[[LaneEvent], None], control: RunControl) -> None:
    """Carry out a run, telling `on_event` every event in order and folding none: for a caller that folds
    them into its own RunTracker on its own thread (the window's LiveRun). Blocks.

    Lanes that take turns (interleaved, sequential) are all started first, and the first turn waits until each has
    loaded its framework (or could not): a lane importing TensorFlow takes the cores a lane being timed needs, and
    is no "other work" the load meter sees. Every lane then makes the first config's data, all at once (MNIST-shaped
    synthetic data and its input pipeline take a lane about 1 s here): the next lane's first turn no longer waits for
    it while the first lane's turn ends. Side by side, every lane starts as before."""
    if len(specs) > 1 and schedule is not Schedule.SIDE_BY_SIDE:
        pool.ready(specs, control.cancel, data_of=plan[0] if plan else None)
    Conductor(pool, list(specs), plan, schedule, run_id, on_event, control).run()
