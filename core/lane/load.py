"""How busy the machine was while a lane measured: the CPU time other processes took on the lane's own cores,
read from /proc (Linux), and the load average. A lead measured on a busy machine may not hold.

/proc/stat counts each core's busy time since boot; /proc/self/stat counts this process's own (all its
threads). What the lane's cores were busy with, less what the lane itself used and its share of what the
app that started it used (the window drawing, spread over every core), is other work: another lane
training at once, or anything else on the machine. Where /proc cannot be read (macOS, Windows)
nothing is guessed: the figures are NaN.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

from ..records import BUSY_SHARE as BUSY_SHARE  # what counts as busy, beside how it is measured

try:
    _TICKS = os.sysconf("SC_CLK_TCK")
except (AttributeError, ValueError, OSError):  # not a POSIX system
    _TICKS = 100



@dataclass(frozen=True)
class CpuSample:
    at: float  # time.monotonic()
    busy_ticks: int  # the cores' busy time, summed
    own_ticks: int  # this process's user + system time
    cores: int
    app_ticks: int = 0  # the parent's (the app's) user + system time
    all_cores: int = 1


def _core_busy(lines: list[str], cores: set[int]) -> int:
    total = 0
    for line in lines:
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu":
            continue
        try:
            index = int(name[3:])
        except ValueError:
            continue
        if index in cores:
            v = [int(x) for x in rest.split()]
            # user nice system idle iowait irq softirq steal …: busy is all but idle and iowait
            total += sum(v[:3]) + sum(v[5:8])
    return total


def sample(cores: list[int] | None = None) -> CpuSample | None:
    """Now: the busy time of `cores` (default: those this process may run on) and this process's own."""
    try:
        chosen = set(cores if cores is not None else os.sched_getaffinity(0))
        with open("/proc/stat", encoding="ascii") as fh:
            busy = _core_busy(fh.read().splitlines(), chosen)
        own = _ticks("/proc/self/stat")
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    try:
        app = _ticks(f"/proc/{os.getppid()}/stat")
    except (OSError, ValueError, IndexError):
        app = 0
    return CpuSample(time.monotonic(), busy, own, len(chosen), app, os.cpu_count() or 1)


def _ticks(stat_path: str) -> int:
    with open(stat_path, encoding="ascii") as fh:
        fields = fh.read().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))


def others_share(start: CpuSample | None, end: CpuSample | None) -> float:
    """The share of the cores' time between two samples that other processes used (0–1); NaN unknown."""
    if start is None or end is None or end.at <= start.at or start.cores != end.cores:
        return math.nan
    capacity = (end.at - start.at) * _TICKS * end.cores
    app = (end.app_ticks - start.app_ticks) * end.cores / max(end.all_cores, 1)  # its share on these cores
    others = (end.busy_ticks - start.busy_ticks) - (end.own_ticks - start.own_ticks) - app
    return min(max(others / capacity, 0.0), 1.0) if capacity > 0 else math.nan


def others_share_of(pieces: list[tuple[CpuSample | None, CpuSample | None]]) -> float:
    """others_share over several stretches taken together (a segment's training, its turns waited out left out:
    while a lane waits, the lane whose turn it is uses the cores, and that is no other work on this one's)."""
    others = capacity = 0.0
    for start, end in pieces:
        if start is None or end is None or end.at <= start.at or start.cores != end.cores:
            return math.nan
        capacity += (end.at - start.at) * _TICKS * end.cores
        app = (end.app_ticks - start.app_ticks) * end.cores / max(end.all_cores, 1)
        others += (end.busy_ticks - start.busy_ticks) - (end.own_ticks - start.own_ticks) - app
    return min(max(others / capacity, 0.0), 1.0) if capacity > 0 else math.nan


def load_average() -> float:
    """The 1-minute load average; NaN where the system has none."""
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return math.nan
