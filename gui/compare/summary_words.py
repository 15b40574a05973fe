"""What the summary says beside its table, from a live run: which segments a verdict compares, where a ramp's
lanes cross, and each line as a sentence."""
from __future__ import annotations

from typing import Container

from ...core.analysis.stats import has_steady
from ...core.words.sweep import run_crossing_lines, run_energy_lines
from ...core.results import by_batch_size
from ..live_run import LiveRun


def verdict_segments(live: LiveRun) -> tuple[dict, str]:
    """The segments to compare: each lane's latest on the newest model that every lane has trained (lanes
    taking turns are on different models at times), and that model's name when some lane has moved on."""
    lanes = {name: lane.segments for name, lane in live.lanes.items() if lane.segments}
    if len(lanes) < 2:
        return {}, ""
    latest: dict[tuple, dict] = {}
    for name, segments in lanes.items():
        for seg in segments:
            latest.setdefault((seg.label, seg.started.batch_size), {})[name] = seg
    common = [(key, segs) for key, segs in latest.items() if len(segs) == len(lanes)]
    if not common:
        return {}, ""
    common.sort(key=lambda item: min(seg.started.at for seg in item[1].values()), reverse=True)
    # The newest model every lane has steady batches of (a lane just switched is still warming up).
    key, pair = next(((k, p) for k, p in common
                      if all(has_steady(live.segment_summary(n, seg)) for n, seg in p.items())), common[0])
    moved_on = any(segments[-1] is not pair[name] for name, segments in lanes.items())
    if not (moved_on or len(live.plan) > 1):
        return pair, ""
    if by_batch_size(seg for segments in lanes.values() for seg in segments):  # a ramp through batch sizes
        return pair, f"{live.config.model.label()} at batch {key[1]:,}"
    return pair, f"model {key[0]}"


def crossing_lines(live: LiveRun) -> list[str]:
    """For a ramp (or a run whose model changed): where the lanes cross, once both have completed
    widths on either side (otherwise nothing), in time and, where it was measured, in energy per sample. The
    sentences are core's (core/words/sweep.py)."""
    if len(live.plan) < 2 and all(len(lane.segments) < 2 for lane in live.lanes.values()):
        return []
    return run_crossing_lines(live.result) + run_energy_lines(live.result)


def as_sentence(line: str, lanes: Container[str]) -> str:
    """A line as a sentence: a capital first letter, unless it starts with a lane's name (cpu1 stays cpu1)."""
    first = line.split(" ", 1)[0].rstrip(":,")
    return line if first in lanes or not line else line[:1].upper() + line[1:]
