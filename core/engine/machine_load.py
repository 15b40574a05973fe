"""How busy this machine is while a run goes: the CPU time that processes other than the app and its lanes
used, between two readings (psutil). A lead measured while other work shares the cores may not hold."""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

import psutil

from ..records import BUSY_SHARE


@dataclass(frozen=True)
class Reading:
    at: float  # time.monotonic()
    busy_s: float  # every core's busy time since boot, summed
    ours_s: float  # the app's and its lanes' CPU time (user + system)


def _ours_s() -> float:
    me = psutil.Process()
    total = 0.0
    for proc in [me, *me.children(recursive=True)]:
        try:
            t = proc.cpu_times()
            total += t.user + t.system
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return total


def read() -> Reading:
    t = psutil.cpu_times()
    idle = t.idle + getattr(t, "iowait", 0.0)
    return Reading(time.monotonic(), sum(t) - idle, _ours_s())


class LoadWatch:
    """Call `share()` now and then (the window does every 2 s): the share of the machine's cores that other
    work used since the last call (0–1), NaN at the first call. A lane that ended between two readings takes
    its CPU time with it, so a reading may count a little of it as other work: figures are rounded."""

    def __init__(self) -> None:
        self._last: Reading | None = None

    def share(self) -> float:
        now = read()
        last, self._last = self._last, now
        if last is None or now.at <= last.at:
            return math.nan
        capacity = (now.at - last.at) * (os.cpu_count() or 1)
        others = (now.busy_s - last.busy_s) - (now.ours_s - last.ours_s)
        return min(max(others / capacity, 0.0), 1.0)


def busy_words(share: float, load: float) -> str:
    """The status bar's note, or "" when the machine is quiet enough."""
    if not (math.isfinite(share) and share > BUSY_SHARE):
        return ""
    return (f"⚠ Busy: other work uses {100 * share:.0f}% of this machine's CPU (load {load:.1f}): "
            "a lead measured now may not hold")


def busy_start_words(share: float, load: float, what: str = "this study") -> str:
    """Said as a study starts on a busy machine (before its first figure), or "" when it is quiet enough: "Other
    work is using 46% of this machine's CPU as this sweep starts (load 3.2): its figures, and any lead or crossing
    they show, may not hold; each point says how busy it was"."""
    if not (math.isfinite(share) and share > BUSY_SHARE):
        return ""
    return (f"⚠ Other work is using {100 * share:.0f}% of this machine's CPU as {what} starts (load {load:.1f}): its "
            "figures, and any lead or crossing they show, may not hold; each point says how busy it was")

