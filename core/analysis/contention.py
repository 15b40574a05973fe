"""Which measurements overlapped in time with another lane on the same CPU cores, so include that contention.

Two lanes of this machine that both train on CPUs compete for its cores (`cpu1` is pinned to one
of the cores `cpu` uses): a segment that ran while the other lane was training is contended, and
its figures say less about either lane alone. A GPU lane's work is on the GPU, but its host thread
still shares the CPU: that is noted, not counted as contention.
"""
from __future__ import annotations

import time

from ..config import ConfigError, LaneSpec
from ..results import RunResult


def shares_cores(a: LaneSpec, b: LaneSpec) -> bool:
    """Whether two lanes compete for this machine's CPU cores when they train at once."""
    return a.kind == "cpu" and b.kind == "cpu" and not a.host and not b.host


def _spec(lane: str) -> LaneSpec | None:
    try:
        return LaneSpec.parse(lane)
    except ConfigError:  # a lane named LABEL/LANE by a multi-file analysis: another machine's
        return None


def share_cores(a: str, b: str) -> bool:
    sa, sb = _spec(a), _spec(b)
    return sa is not None and sb is not None and shares_cores(sa, sb)


def contended(result: RunResult, now: float | None = None) -> set[tuple[str, int]]:
    """(lane, segment) of every segment that overlapped in time with a segment of a lane sharing its cores."""
    now = time.time() if now is None else now
    names = list(result.lanes)
    found: set[tuple[str, int]] = set()
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if not share_cores(a, b):
                continue
            if not (result.lanes[a].segments and result.lanes[b].segments):
                if result.schedule == "side-by-side":  # a run saved before segments were: both ran at once
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
    if result.schedule != "side-by-side":
        return False
    return any(s.kind == "gpu" for s in specs) and any(s.kind == "cpu" for s in specs)
