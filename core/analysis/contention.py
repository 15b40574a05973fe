"""Which measurements overlapped in time with another lane on the same CPU cores, so include that contention.

Two lanes of this machine that both train on CPUs compete for its cores (`cpu1` is pinned to one
of the cores `cpu` uses): a segment that ran while the other lane was training is contended, and
its figures say less about either lane alone. A lane and its twin (cpu1#2, jax:gpu0#2) share their device
whatever it is. A GPU lane's work is on the GPU, but its host thread still shares the CPU: that is noted, not
counted as contention.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from ..config import ConfigError, DeviceKind, LaneSpec, Schedule
from ..records import BatchTiming, RunSummary
from ..run_stats import summarize
from ..results import LaneResult, RunResult


def shares_cores(a: LaneSpec, b: LaneSpec) -> bool:
    """Whether two lanes compete for this machine's CPU cores when they train at once."""
    return a.kind == DeviceKind.CPU and b.kind == DeviceKind.CPU and not a.host and not b.host


def shares_device(a: LaneSpec, b: LaneSpec) -> bool:
    """Whether two lanes slow each other when they train at once: they share this machine's CPU cores, or they are
    twins of one lane (cpu1 and cpu1#2, jax:gpu0 and jax:gpu0#2, a remote lane's), two processes on one device."""
    return shares_cores(a, b) or a.original == b.original


def _spec(lane: str) -> LaneSpec | None:
    try:
        return LaneSpec.parse(lane)
    except ConfigError:  # a lane named LABEL/LANE by a multi-file analysis: another machine's
        return None


def share_device(a: str, b: str) -> bool:
    """shares_device of two lanes named as a result names them (False for a lane another machine's file names)."""
    sa, sb = _spec(a), _spec(b)
    return sa is not None and sb is not None and shares_device(sa, sb)


def contended(result: RunResult, now: float | None = None) -> set[tuple[str, int]]:
    """(lane, segment) of every segment that overlapped in time with a segment of a lane sharing its cores (or its
    device: a twin's)."""
    now = time.time() if now is None else now
    names = list(result.lanes)
    found: set[tuple[str, int]] = set()
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if not share_device(a, b):
                continue
            if not (result.lanes[a].segments and result.lanes[b].segments):
                if result.schedule is Schedule.SIDE_BY_SIDE:  # a run saved before segments were: both ran at once
                    found |= {(a, 1), (b, 1)}
                continue
            for sa in result.lanes[a].segments:
                for sb in result.lanes[b].segments:
                    if any(a0 < b1 and b0 < a1 for a0, a1 in sa.spans(now) for b0, b1 in sb.spans(now)):
                        found |= {(a, sa.index), (b, sb.index)}
    return found


def host_cores_shared(result: RunResult) -> bool:
    """A GPU lane trained at the same time as a CPU lane of this machine (the GPU's host thread needs a core)."""
    specs = [s for s in (_spec(name) for name in result.lanes) if s is not None and not s.host]
    if result.schedule is not Schedule.SIDE_BY_SIDE:
        return False
    return any(s.kind == DeviceKind.GPU for s in specs) and any(s.kind == DeviceKind.CPU for s in specs)


# Lanes trained side by side are compared on the stretch during which all of them trained: a lane that
# started late or ended early would otherwise be compared on a quieter (or busier) machine than the others.
MIN_COMMON_STEPS = 10


@dataclass(frozen=True)
class CommonStretch:
    """The figures of each lane over the time all of them trained (their last segments), or why not."""

    summaries: dict[str, RunSummary]
    seconds: float
    reason: str = ""  # why there is no common stretch ("" when there is)


def _wall_records(lane: LaneResult) -> list[tuple[float, float, BatchTiming]]:
    """The last segment's records with their wall-clock span: the lane clock's zero on the wall clock plus each
    record's start (older files: the segment's start, less its first record's)."""
    if not lane.segments or not lane.records:
        return []
    segment = lane.segments[-1]
    records = [r for r in lane.records if r.segment == segment.index]
    if not records:
        return []
    base = segment.started.clock_at or segment.started.at - records[0].start_s
    return [(base + r.start_s, base + r.start_s + r.ms / 1000.0, r) for r in records]


def common_stretch(result: RunResult) -> CommonStretch | None:
    """For lanes trained side by side: each lane summarised over the stretch when every lane trained (warm-up
    left out, as always), or the reason it cannot be (None: not a side-by-side run of two lanes or more)."""
    if result.schedule is not Schedule.SIDE_BY_SIDE or len(result.lanes) < 2:
        return None
    walls = {name: _wall_records(lane) for name, lane in result.lanes.items()}
    if any(not w for w in walls.values()):
        return CommonStretch({}, 0.0, "a lane has no records to compare")
    begin = max(w[0][0] for w in walls.values())
    end = min(w[-1][1] for w in walls.values())
    summaries = {}
    for name, records in walls.items():
        inside = [r for start, stop, r in records if start >= begin and stop <= end]
        steady = [r for r in inside if not r.warmup]
        if len(steady) < MIN_COMMON_STEPS:
            return CommonStretch({}, max(end - begin, 0.0), f"the lanes trained at the same time for "
                                 f"{max(end - begin, 0.0):.1f} s only: too few steady steps of {name} in it")
        lane = result.lanes[name]
        summaries[name] = summarize(inside, run_id=result.run_id, lane=name,
                                    device=lane.started.device if lane.started else name,
                                    status=lane.status, flops_per_batch=lane.segments[-1].started.flops_per_batch,
                                    wall_s=end - begin)
    return CommonStretch(summaries, end - begin)
