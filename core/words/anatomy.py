"""What the user reads about the anatomy of a step, the two clocks, the floor crossover and the knob ladder.

A sibling of core/words/ (which is at its size limit): the same formatter, the same voice.
Nothing here measures; it only says what core/analysis/anatomy.py and the lanes found.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

from ..analysis.points import SweepPoint
from ..analysis.verdict import State, verdicts
from ..analysis.anatomy import AnatomyPoint, Part, floor_points, parts_of, point_from_json, stacked
from ..records import BUSY_SHARE
from ..config import Task
from ..json_data import JsonObject, JsonValue, as_map, as_seq
from .numbers import MISSING, fmt_num, fmt_range
from .verdict import change_words, unit_of

APPROX_ZERO = "≈0"
SYNCED_CLOCK = "synced clock"
PIPELINED_CLOCK = "pipelined clock"
CLOCKS = {
    SYNCED_CLOCK: "the loss is read after every step, so each step waits for the device: how Crossover times a "
                  "run (its ms per batch)",
    PIPELINED_CLOCK: "a timestamp every K steps only, so the host queues the next step while the device works: what "
                     "a plain model.fit gets",
}
PART_LABELS = {
    "fit_and_input": "Keras fit machinery and input",
    "synchronisation": "waiting for the result",
    "host_dispatch": "host dispatch",
    "device_work": "device working",
    "pipelining_gain": "what pipelining gives back",
    # a served call (the predict ladder)
    "predict_machinery": "Keras predict machinery",
    "input_transfer": "taking the input in (on a GPU, its copy there)",
    "answer_back": "waiting for the answer and its copy back",
}
NOT_MEASURED = f"{MISSING}, press Why"
PER_CALL_CLOCK = "per-call clock"
CALL_CLOCKS = {
    PER_CALL_CLOCK: "each call is timed begin to end, its input from host memory and its answer back on the host: "
                    "a call's latency, what a server waits for (a predict run's ms per call)",
}


def clocks_of(points: Sequence[AnatomyPoint]) -> dict[str, str]:
    """The clocks these anatomies are read by: a served call's, or a training step's two."""
    return dict(CALL_CLOCKS) if points and all(p.task == Task.PREDICT for p in points) else dict(CLOCKS)


def clock_lines(points: Sequence[AnatomyPoint]) -> list[str]:
    """What each clock costs, per training point (a call has one clock, said by clocks_of)."""
    return [timing_cost_sentence(p) for p in points if p.task != Task.PREDICT]


def fmt_part(part: Part | None) -> str:
    if part is None:
        return MISSING
    return APPROX_ZERO if part.within_spread else fmt_num(part.ms)


def fmt_rung(point: AnatomyPoint, name: str) -> str:
    """"0.412 (0.39–0.45)": median and p10–p90 ms per step; "–" where the rung could not run."""
    rung = point.rung(name)
    if rung is None:
        return MISSING
    return f"{fmt_num(rung.median_ms)} ({fmt_range(rung.p10_ms, rung.p90_ms, 2)})"


def device_word(point: AnatomyPoint) -> str:
    return "the GPU" if point.device.startswith("GPU") else "the CPU"


# Per ladder: what its top rung is called in words, the parts said together as overhead, the parts said alone.
WHY_WORDS = {Task.TRAIN: ("fit", ("fit_and_input", "host_dispatch"), ("synchronisation",)),
             Task.PREDICT: ("predict", ("predict_machinery", "host_dispatch"), ("input_transfer", "answer_back"))}


def why_sentence(point: AnatomyPoint) -> str:
    """"On gpu0, 1.37 ms per step: 0.05 ms is the GPU working; 1.1 ms is Keras fit and dispatch; 0.2 ms is
    waiting for the result." — the synced step (a served call: "per call", Keras predict and dispatch, taking the
    input in, waiting for the answer) split into its parts, ≈0 parts left out."""
    ladder, top = point.ladder, point.top
    keras_word, overhead_parts, own_parts = WHY_WORDS[ladder.task]
    unit = ladder.unit
    if top is None:
        return (f"On {point.lane}, the {unit} could not be timed with {ladder.top}: "
                f"{point.reasons.get(ladder.top, 'no reason given')}.")
    segments = dict(stacked(point))
    said = []
    if "device_work" in segments:
        device, loop = segments["device_work"], point.rung("device_loop")
        assert loop is not None, "the device's work is what the device_loop rung measured"
        said.append(f"{fmt_num(device)} ms is {device_word(point)} working" if device < top.median_ms else
                    f"all of it is {device_word(point)} working (an on-device loop takes "
                    f"{fmt_num(loop.median_ms)} ms per {unit}, within the spread)")
    overhead = sum(segments.get(name, 0.0) for name in overhead_parts)
    if overhead > 0:
        what = (f"Keras {keras_word} and dispatch" if point.rung("device_loop") is not None
                else f"Keras {keras_word}, dispatch and the device together")
        said.append(f"{fmt_num(overhead)} ms is {what}")
    said += [f"{fmt_num(segments[name])} ms is {PART_LABELS[name]}" for name in own_parts if name in segments]
    if said and "rest" in segments:  # parts shown as ≈0 still took their (uncertain) time
        said.append(f"{fmt_num(segments['rest'])} ms is within the rungs' spread, not attributed")
    return (f"On {point.lane}, {fmt_num(top.median_ms)} ms per {unit}: " + "; ".join(said or ["no part stands out"])
            + ".")


def floor_sentence(points: Sequence[AnatomyPoint]) -> str:
    """"With an on-device loop this model would take 0.06 ms per step on gpu0 against 0.7 ms on cpu."""
    floors = [(p.lane, p.rung("device_loop")) for p in points]
    known = [(lane, rung.median_ms) for lane, rung in floors if rung is not None]
    if not known:
        return ""
    known.sort(key=lambda item: item[1])
    first, rest = known[0], known[1:]
    against = "".join(f" against {fmt_num(ms)} ms on {lane}" for lane, ms in rest)
    missing = [f"{lane} has none ({p.reasons.get('device_loop', 'not measured')})"
               for p in points for lane in [p.lane] if p.rung("device_loop") is None]
    tail = f" ({'; '.join(missing)})" if missing else ""
    unit = points[0].ladder.unit if points else "step"
    return (f"With an on-device loop this model would take {fmt_num(first[1])} ms per {unit} on {first[0]}"
            f"{against}{tail}.")


def timing_cost_sentence(point: AnatomyPoint) -> str:
    """The cost of Crossover's clock: "cpu1 (16-16): fit with the loss read every step takes 1.05x the time of fit
    timed every K steps"."""
    cost = point.timing_cost
    where = f"{point.lane} ({'-'.join(map(str, point.widths)) or 'the saved model'})"
    if point.task == Task.PREDICT:
        return f"{where}: a call has one clock, the {PER_CALL_CLOCK}: a server waits for each answer"
    if not math.isfinite(cost):
        return f"{where}: the cost of timing each step could not be measured"
    return (f"{where}: fit with the loss read every step (the {SYNCED_CLOCK}) takes {fmt_num(cost)}x the time of "
            f"fit timed every {point.window_steps} steps (the {PIPELINED_CLOCK})")


# ---------------------------------------------------------------- the two clocks in the summary

def clock_parts(medians: Mapping[str, float], anatomy: Mapping[str, AnatomyPoint]) -> tuple[str, str, bool]:
    """The verdict's clock in words, what the pipelined clock says (not measured, agrees, or which lane it
    names instead), and whether it disagrees."""
    base = f"by the {SYNCED_CLOCK} (each step waited for)"
    piped = {lane: p.rung("fit_pipelined") for lane, p in anatomy.items() if lane in medians}
    known = {lane: r.median_ms for lane, r in piped.items() if r is not None}
    synced = {lane: ms for lane, ms in medians.items() if math.isfinite(ms) and ms > 0}
    if len(known) < 2 or len(synced) < 2 or set(known) != set(synced):
        return base, f"the {PIPELINED_CLOCK} is not measured for this model (press Why)", False
    fast_synced, fast_piped = min(synced, key=lambda lane: synced[lane]), min(known, key=lambda lane: known[lane])
    if fast_synced == fast_piped:
        return base, f"the {PIPELINED_CLOCK} agrees", False
    return base, (f"the {PIPELINED_CLOCK} disagrees: {fast_piped} is faster when steps are not waited for "
                  f"({fmt_num(known[fast_piped])} against {fmt_num(known[fast_synced])} ms per step)"), True


def clock_note(medians: Mapping[str, float], anatomy: Mapping[str, AnatomyPoint]) -> str:
    """The verdict's clause on clocks: which one it uses, and whether the pipelined clock names another lane."""
    base, other, _ = clock_parts(medians, anatomy)
    return f"{base}; {other}"


# ---------------------------------------------------------------- the floor crossover of a sweep

def floor_crossover_lines(groups: Mapping[str, Sequence[SweepPoint]]) -> list[str]:
    """"with an on-device loop jax:gpu0 would win above about 20 units", per group and pair of lanes, by the
    one crossing rule (core/analysis/verdict.py)."""
    lines = []
    for label, points in groups.items():
        prefix = f"{label}: " if len(groups) > 1 else ""
        unit = unit_of(points)
        for v in verdicts(floor_points(points)):
            if v.state is State.NOT_ENOUGH:
                continue
            # Along batch size the x's are batch sizes: say so, not "widths".
            span = (f"{v.widths[0]:,} to {v.widths[-1]:,} {unit}" if unit == "samples per batch" else
                    f"widths {v.widths[0]:,} to {v.widths[-1]:,}")
            if v.state is State.CROSSES:
                lines += [f"{prefix}with an on-device loop "
                          + change_words(c, unit).replace(" is faster ", " would win ") for c in v.changes]
            elif v.state is State.LEADS:
                lines.append(f"{prefix}with an on-device loop {v.leader} would be faster wherever they differ "
                             f"({span}): the floors do not cross")
            else:
                lines.append(f"{prefix}with an on-device loop {v.lanes[0]} and {v.lanes[1]} would be equal within "
                             f"noise ({span})")
    return lines


def floor_notes(groups: Mapping[str, Sequence[SweepPoint]]) -> list[str]:
    """Why a figure that looks impossible is shown: a floor (the on-device loop) above its own step. A part of
    a step cannot cost more than the step, so it is within the spread of the two, or it was measured apart
    (the loop and the step are timed at different moments, and the machine may have been busier then)."""
    lines = []
    for label, points in groups.items():
        prefix = f"{label}: " if len(groups) > 1 else ""
        unit = unit_of(points)  # along batch size the x is a batch size, not a width in units
        for p in points:
            if not (math.isfinite(p.floor_ms) and math.isfinite(p.median_ms) and p.floor_ms > p.median_ms):
                continue
            within = math.isfinite(p.p90_ms) and p.floor_ms <= p.p90_ms
            why = ("within the step's spread (its p90 is " + fmt_num(p.p90_ms) + " ms)" if within else
                   "beyond the step's spread: the loop was timed at another moment, on a machine that was busier "
                   "then; measure again on a quiet machine")
            at = ("1 sample per batch" if p.width == 1 and unit == "samples per batch" else f"{p.width:,} {unit}")
            lines.append(f"{prefix}{p.lane} at {at}: the floor ({fmt_num(p.floor_ms)} ms) came out above "
                         f"the step ({fmt_num(p.median_ms)} ms), {why}")
    return lines


def anatomy_notes(point: AnatomyPoint) -> list[str]:
    """Every note a reader needs beside one lane's anatomy, in the same words wherever it is shown (the CLI's
    `anatomy`, the Why tab): the lane's own notes; a figure that looks impossible — a rung with less to do that
    came out slower than the rung above it, such as the pipelined tick beyond the synced bar — said to be within
    the spread or beyond it; a part that could not be worked out; and other work on the lane's cores."""
    parts, part_notes = parts_of(point.rungs, point.ladder)
    lines = list(point.notes)
    for name, part in parts.items():
        if name in part_notes:
            lines.append(part_notes[name])
            continue
        above, below = point.ladder.parts[name]
        if part is None or not below or not part.raw_ms < 0:
            continue
        upper, lower = point.rung(above), point.rung(below)
        spread = max(upper.half_spread_ms if upper else 0.0, lower.half_spread_ms if lower else 0.0)
        what = ("the pipelined tick (fit_pipelined) came out beyond the synced bar (fit)" if name == "pipelining_gain"
                else f"{below} came out slower than {above}, the rung above it")
        lines.append(f"{what} by {fmt_num(-part.raw_ms)} ms, within their spread (±{fmt_num(spread)} ms): read them "
                     "as the same time")
    busy, load = point.settings.others_cpu, point.settings.load_avg
    if busy is not None and busy > BUSY_SHARE:
        lines.append(f"other work used {100 * busy:.0f}% of {point.lane}'s cores while it was measured"
                     + (f" (load {fmt_num(load, 2)})" if load is not None else "")
                     + ": the parts may not hold; measure again on a quiet machine")
    return lines


def anatomy_json(points: Sequence[AnatomyPoint], failures: Sequence[JsonObject] = ()) -> JsonObject:
    """The anatomy file (`anatomy --json-file`, the window's report): every point, what failed, and the clocks."""
    return {"points": [p.to_json() for p in points], "failures": list(failures), "clocks": clocks_of(points)}


def anatomy_of_json(data: Mapping[str, JsonValue]) -> tuple[tuple[AnatomyPoint, ...], tuple[JsonObject, ...],
                                                             dict[str, str]]:
    """The anatomy file as anatomy_json wrote it, read back beside its writer: (points, failures, clocks). A point of
    the wrong shape raises (KeyError, TypeError, ValueError), and the caller says so."""
    points = tuple(point_from_json(dict(as_map(p))) for p in as_seq(data.get("points")))
    failures = tuple(f for f in as_seq(data.get("failures")) if isinstance(f, dict))
    clocks = {str(k): str(v) for k, v in as_map(data.get("clocks")).items()}
    return points, failures, clocks


# ---------------------------------------------------------------- the Why tab against the runs of the same model

AGREES = 1.15  # the top rung and a run's median within this ratio of each other read as one figure


def run_agreement(point: AnatomyPoint, run: SweepPoint | None) -> str:
    """The anatomy's top rung (fit, or predict_on_batch: the clock a run uses) beside what the runs of the same model
    measured on that lane: "cpu1: fit here 1.7 ms a step, as its run measured (1.74 ms, median of 462 steady
    steps)", or, where they are apart, how far and what differed (the load on the lane's cores each time). ""
    where no run of this model was measured on the lane, or the rung could not run."""
    top = point.top
    if run is None or top is None or not (math.isfinite(run.median_ms) and run.median_ms > 0):
        return ""
    unit = point.ladder.unit
    rung, ms = point.ladder.top, top.median_ms
    runs = f"{run.runs} runs" if run.runs > 1 else "its run"
    basis = f"median of {run.n_batches:,} steady {unit}s" + (f" over {run.runs} runs" if run.runs > 1 else "")
    ratio = ms / run.median_ms
    if 1 / AGREES <= ratio <= AGREES:
        apart = max(ratio, 1 / ratio) - 1
        how = "as" if apart < 0.05 else f"within {100 * apart:.0f}% of what"
        return (f"{point.lane}: {rung} here {fmt_num(ms)} ms a {unit}, {how} {runs} of this model measured "
                f"({fmt_num(run.median_ms)} ms, {basis})")
    now, then = point.settings.others_cpu, run.others_cpu
    said = (f"{point.lane}: {rung} here {fmt_num(ms)} ms a {unit}, {fmt_num(max(ratio, 1 / ratio))}x "
            f"{'slower' if ratio > 1 else 'faster'} than {runs} of this model measured ({fmt_num(run.median_ms)} ms, "
            f"{basis}). Both time the same {rung} with the same clock, so the machine changed between them")
    if now is not None and math.isfinite(then):
        said += (f": other work used {100 * now:.0f}% of {point.lane}'s cores during this study and "
                 f"{100 * then:.0f}% during the run")
        if max(now, then) > BUSY_SHARE:
            return said + "; measure both again when the machine is quiet"
        return said + " (neither busy: another process's bursts, or the CPU's clock); measure again to see which holds"
    return said + "; measure both again when the machine is quiet"
