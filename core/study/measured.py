"""Points measured before on these lanes (since the window opened, or within one command), kept with the steady
batches behind them, so that a refinement takes a width as it was measured instead of timing it again.

A point is lent only for the same measurement: the same lane, the whole config its point trains with (model,
batch size, data, every speed setting, the steady batches and time a point gets), and measured alone on the
lane's cores (a ramp's segment that overlapped another lane on shared cores, or ran beside a GPU lane's host
thread, is not). Sweeps, refined sweeps, ramps and sweep files read back all give their runs here.
"""
from __future__ import annotations

import dataclasses
import datetime
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from ..analysis.contention import contended, host_cores_shared
from ..config import LaneSpec, RunConfig
from ..machine import HostInfo
from ..messages import Calibrated
from ..records import BatchTiming, Status
from ..results import LaneResult, RunResult, Segment
from ..files.sweeps.rows import SweepRow


def point_key(config: RunConfig) -> RunConfig:
    """What makes two points the same measurement: the whole config, a model factory by its file, function and
    width (not by the widths a lane had counted when the point was asked for)."""
    factory = config.model.factory
    if factory is None or not factory.built:
        return config
    return dataclasses.replace(config, model=dataclasses.replace(config.model,
                                                                 factory=dataclasses.replace(factory, built=())))


@dataclass(frozen=True)
class Measured:
    """One lane's point measured before: the config it trained with, its row, the steady batches behind it (a
    ramp's: its segment's only) and the run that holds them."""

    config: RunConfig
    row: SweepRow
    records: tuple[BatchTiming, ...]
    run: RunResult
    segment: int = 1

    @property
    def lane(self) -> str:
        return self.row.lane


class Ledger:
    """The points measured so far that a refinement may take as they are, and each lane's latest calibration."""

    def __init__(self) -> None:
        self._points: list[Measured] = []
        self._seen: set[tuple[str, str, int]] = set()  # (run_id, lane, segment): a run given twice counts once
        self.calibration: dict[str, Calibrated] = {}

    def __len__(self) -> int:
        return len(self._points)

    def copy(self) -> Ledger:
        """Another ledger with the same points, for a thread to read while this one grows."""
        other = Ledger()
        other._points, other._seen, other.calibration = list(self._points), set(self._seen), dict(self.calibration)
        return other

    def add(self, runs: Iterable[RunResult], calibration: Mapping[str, Calibrated] | None = None) -> int:
        """Every completed, uncontended point of `runs` (a sweep's, a ramp, a file's): how many were kept."""
        before = len(self._points)
        for run in runs:
            for point in points_of(run):
                key = (run.run_id, point.lane, point.segment)
                if key not in self._seen:
                    self._seen.add(key)
                    self._points.append(point)
        self.calibration.update(calibration or {})
        return len(self._points) - before

    def lend(self, lanes: Sequence[LaneSpec], configs: Mapping[int, RunConfig]) -> dict[int, list[Measured]]:
        """For each x whose point config was measured before on every one of `lanes`: those points (a width
        measured twice lends both: its batches add up). `configs`: x → the config its point would train with."""
        names = {lane.name for lane in lanes}
        out: dict[int, list[Measured]] = {}
        for x, config in configs.items():
            key = point_key(config)
            found = [m for m in self._points if m.lane in names and point_key(m.config) == key]
            if {m.lane for m in found} == names:
                out[x] = found
        return out


def measured_here_since(runs: Iterable[RunResult], host: HostInfo, this_host: HostInfo,
                        since: float) -> list[RunResult]:
    """The runs of a file that this machine measured (its sidecar names this host, versions and all) since
    `since` (time.time(): when the window opened); none of a file from elsewhere or from before."""
    if host == HostInfo() or host != this_host:
        return []
    out = []
    for run in runs:
        try:
            started = datetime.datetime.fromisoformat(run.started_at).timestamp()
        except (TypeError, ValueError):
            continue
        if started >= since:
            out.append(run)
    return out


def points_of(run: RunResult) -> list[Measured]:
    """A run's points: each lane's completed segments (one for a sweep point, one per width for a ramp), except
    those that shared cores with another lane's while they trained."""
    if host_cores_shared(run):
        return []
    busy = contended(run)
    out = []
    for name, lane in run.lanes.items():
        for segment in lane.segments or [None]:
            if segment is not None and (segment.ended is None or (name, segment.index) in busy):
                continue
            point = _point(run, name, lane, segment)
            if point is not None:
                out.append(point)
    return out


def _point(run: RunResult, name: str, lane: LaneResult, segment: Segment | None) -> Measured | None:
    if segment is None:  # a run saved before segments were: the lane's one summary
        if lane.summary is None:
            return None
        row, config, index = SweepRow.from_result(run, name), run.config, 1
    else:
        row, index = SweepRow.from_segment(run, name, segment), segment.index
        model = run.config.model if not segment.started.widths else \
            dataclasses.replace(run.config.model, widths=segment.started.widths)
        config = dataclasses.replace(run.config, model=model,
                                     train=dataclasses.replace(run.config.train,
                                                               batch_size=segment.started.batch_size))
    if row.status != Status.COMPLETED or not row.usable:
        return None
    records = tuple(r for r in lane.records if not r.warmup and (segment is None or r.segment == index))
    return Measured(config, row, records, run, index)


def trimmed(run: RunResult, keep: set[tuple[str, int]]) -> RunResult:
    """`run` with only the segments `keep` names ((lane, segment)) and their records: what a refinement that
    took some of a ramp's widths keeps in its files, not the ramp's other widths."""
    lanes = {}
    for name, lane in run.lanes.items():
        segments = [s for s in lane.segments if (name, s.index) in keep]
        if not segments:
            continue
        last = segments[-1].ended
        lanes[name] = LaneResult(name, lane.started, [r for r in lane.records if (name, r.segment) in keep],
                                 last.summary if last is not None else None, segments=segments)
    return dataclasses.replace(run, lanes=lanes)
