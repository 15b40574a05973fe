"""What the summary says beside its table, from a live run: which segments a verdict compares, where a ramp's
lanes cross, and each line as a sentence."""
from __future__ import annotations

from typing import Container

from ...core.run_stats import has_steady
from ...core.files.findings import Findings
from ...core.words.sweep import answer_words, run_crossing_lines, run_energy_lines
from ...core.results import by_batch_size
from ..live_run import LiveRun
from .map_points import firm_rows


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


def changed_model(live: LiveRun) -> bool:
    """A ramp, or a run whose model changed while it trained: its headline is where the lanes cross."""
    return len(live.plan) > 1 or any(len(lane.segments) > 1 for lane in live.lanes.values())


def crossing_lines(live: LiveRun, findings: Findings | None = None) -> list[str]:
    """For a ramp (or a run whose model changed): where the lanes cross, once both have completed widths of the
    run's kind (otherwise nothing). With the window's `findings`: its answer on that kind of model, over every
    completed point of it (earlier runs', ramps' and sweeps' too), as the map and the Sweep tab say it; without,
    the run's own. The sentences are core's (core/words/sweep.py)."""
    if not changed_model(live):
        return []
    if findings is None:
        return run_crossing_lines(live.result)
    rows = firm_rows(live.result)
    findings.put(rows)
    return [answer_words(a) for a in findings.answers_about(rows) if len(a.verdict.widths) >= 2]


def energy_crossing_lines(live: LiveRun) -> list[str]:
    """For a ramp: where the lane that uses less energy per sample changes, where it was measured."""
    return run_energy_lines(live.result) if changed_model(live) else []


def as_sentence(line: str, lanes: Container[str]) -> str:
    """A line as a sentence: a capital first letter, unless it starts with a lane's name (cpu1 stays cpu1)."""
    first = line.split(" ", 1)[0].rstrip(":,")
    return line if first in lanes or not line else line[:1].upper() + line[1:]
