"""Sentences about a run: which lane is faster, why (in the run's own numbers), contention, and the outcome.

The CLI, the window and the exports all take their words from here; nothing here measures, it only
says what core/analysis/ found.
"""
from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

from ..analysis.fits import CostFit, predicted_crossover
from ..analysis import tails
from .. import run_stats
from ..run_stats import has_steady
from ..config import DeviceKind, LaneSpec, Schedule, Task
from ..machine import usable_cores
from ..analysis.contention import CommonStretch, common_stretch, contended, host_cores_shared
from ..analysis.energy import energy_scope
from ..analysis.points import SweepPoint
from ..analysis.verdict import PairVerdict, State, pair_verdict
from ..records import BUSY_SHARE, RunSummary, Status
from ..results import RunResult
from .numbers import fmt_count, fmt_flops, fmt_joules, fmt_num
from .sweep import unlike_words
from .verdict import error_words
from ..plurals import plural


def _point(s: RunSummary) -> SweepPoint:
    return SweepPoint(s.lane, 1, float(s.flops_per_batch), s.median_ms, s.p10_ms, s.p90_ms, s.device,
                      n_batches=s.n_batches)


def busy_note(summaries: Sequence[RunSummary]) -> str:
    """ "other work used 40% of cpu1's cores while it was measured: the lead may not hold", or ""."""
    busy = [s for s in summaries if math.isfinite(s.others_cpu) and s.others_cpu > BUSY_SHARE]
    if not busy:
        return ""
    worst = max(busy, key=lambda s: s.others_cpu)
    names = " and ".join(f"{s.lane}'s" for s in busy)
    return (f"other work used {100 * worst.others_cpu:.0f}% of {names} cores while measured "
            f"(load {fmt_num(worst.load_avg, 2)}): the lead may not hold")


def _noise_words(lanes: Sequence[str], noise: Mapping[str, float]) -> str:
    """"cpu ±12%, cpu1 ±20%": each lane's run-to-run noise as this machine's sweep measured it."""
    return ", ".join(f"{lane} ±{fmt_num(100 * (math.exp(noise[lane]) - 1), 2)}%" for lane in lanes)


def _floor_words(v: PairVerdict, known: Mapping[str, float]) -> str:
    """"the rule counts ±13% of run-to-run noise a run, more than this machine measured" where the rule counted more
    than the lanes' measured noise (its floor for the design, core/analysis/significance.py), else "": a gap of 25%
    is never said to lie inside a noise of ±1%."""
    measured = math.hypot(*(known[lane] for lane in v.lanes))
    if v.noise is None or not v.noise.tau > 1.01 * measured:
        return ""
    floor = fmt_num(100 * (math.exp(v.noise.tau) - 1), 2)
    return f"the rule counts ±{floor}% of run-to-run noise a run, more than this machine measured"


def verdict(a: RunSummary, b: RunSummary, model: str = "this model", task: Task = Task.TRAIN,
            noise: Mapping[str, float] | None = None) -> str:
    """Which lane trains `model` faster (for the predict task: answers one call faster), by the one rule
    (core/analysis/verdict.py): a lead only where the interval of the two medians' ratio leaves out 1, else too
    close to call. With `noise` (this machine's run-to-run noise per lane, RunResult.run_noise) for both lanes, the
    interval is widened by it, as a sweep's is, and the words say so."""
    if not (has_steady(a) and has_steady(b)):
        return f"not enough steady batches yet to compare {a.lane} and {b.lane}"
    fast, slow = (a, b) if a.median_ms <= b.median_ms else (b, a)
    ratio = slow.median_ms / fast.median_ms
    bounded = noise is not None and all(math.isfinite(noise.get(s.lane, math.nan)) for s in (a, b))
    known = dict(noise or {}) if bounded else None
    apart = f"medians {fmt_num(100 * (ratio - 1), 2)}% apart"
    v = pair_verdict([_point(a), _point(b)], a.lane, b.lane, known_noise=known)
    rests = error_words(v)
    floor = _floor_words(v, known) if bounded and known is not None else ""
    if v.state is not State.LEADS:
        if floor:
            return (f"{a.lane} and {b.lane} are too close to call on {model} ({apart}, inside what one run of each "
                    f"lane can show: {floor} ({_noise_words((a.lane, b.lane), known or {})}); {rests})")
        if bounded and known is not None:
            return (f"{a.lane} and {b.lane} are too close to call on {model} ({apart}, inside this "
                    f"machine's run-to-run noise: {_noise_words((a.lane, b.lane), known)}; {rests})")
        return (f"{a.lane} and {b.lane} are too close to call on {model} ({apart}, inside the noise "
                f"one run cannot rule out; {rests})")
    shown = _times(ratio)
    beyond = ""
    if floor:
        beyond = (f", beyond what one run of each lane can show ({floor}: "
                  f"{_noise_words((fast.lane, slow.lane), known or {})})")
    elif bounded and known is not None:
        beyond = f", beyond this machine's run-to-run noise ({_noise_words((fast.lane, slow.lane), known)})"
    if task == Task.PREDICT:
        return (f"{fast.lane} answers {shown}x faster than {slow.lane} on {model} (median latency of one call)"
                f"{beyond} ({rests})")
    return f"{fast.lane} is {shown}x faster than {slow.lane} on {model}{beyond} ({rests})"  # rests: "one run of each lane; …"


def tail_words(q: int, value: float, calls: int) -> str:
    """"p99 ≈ 3.20 ms", an estimate from independent calls (a closed loop's plain percentile; a rate's tail is a
    bound, core/words/rates.py bound_words), or why it is not given: "p99 needs ≥ 662 calls (have 59)"
    (core/analysis/tails.py). The sentence it sits in says the calls it is from."""
    if run_stats.known(q, calls) and math.isfinite(value):
        return f"p{q} ≈ {fmt_num(value)} ms"
    return tails.withheld(q, calls)


def latency_words(s: RunSummary, batch: int = 0) -> str:
    """One lane's latency, the tail beside the median, over how many calls, and the calls it held per second
    (one client, one call at a time): "cpu answers a batch of 8 in 1.37 ms (p90 ≈ 2.58 ms, p99 ≈ 3.20 ms, from 700
    calls; 730 calls/s measured, one call at a time)"."""
    size = f"a batch of {batch:,}" if batch > 0 else "a call"
    return (f"{s.lane} answers {size} in {fmt_num(s.median_ms)} ms ({tail_words(90, s.p90_ms, s.n_batches)}, "
            f"{tail_words(99, s.p99_ms, s.n_batches)}, from {s.n_batches:,} calls; "
            f"{fmt_num(s.requests_per_s, 3)} calls/s measured, one call at a time)")


def latency_lines(summaries: Sequence[RunSummary], batch: int = 0) -> list[str]:
    """Each measured lane's latency, median and tail, and where the tail says what the median does not: a p99
    more than twice the median (a slow call in a hundred that a server's users feel), where the tail rule gives
    a p99 at all."""
    usable = [s for s in summaries if has_steady(s)]
    lines = [latency_words(s, batch) for s in usable]
    for s in usable:
        if run_stats.known(99, s.n_batches) and math.isfinite(s.p99_ms) and s.p99_ms > 2 * s.median_ms:
            lines.append(f"the slowest call in a hundred on {s.lane} takes {fmt_num(s.p99_ms / s.median_ms, 2)}x its "
                         "median: the tail, not the median, is what a server's users wait for")
    return lines


def verdict_lines(summaries: Sequence[RunSummary], contended: set[str] | frozenset = frozenset(),
                  model: str = "this model", task: Task = Task.TRAIN,
                  noise: Mapping[str, float] | None = None) -> list[str]:
    """"A is N× faster than B on this model", the fastest lane against each other lane, by median synced
    step time; a pair measured at the same time on shared CPU cores (`contended` lanes) is said to be."""
    return _pair_lines(summaries, contended, lambda fast, other: verdict(fast, other, model, task, noise))


def provisional_lines(summaries: Sequence[RunSummary], contended: set[str] | frozenset = frozenset(),
                      model: str = "this model", task: Task = Task.TRAIN) -> list[str]:
    """While the lanes still measure: a lead is said as provisional, with the steady batches it rests on, never with
    the rule's error rate (that rate is the design's, over a finished measurement: a lead from 9 batches quoted at
    "at most a 5% chance" jumped 3.8x, 1.4x, 1.8x in 45 s). "Too close to call" claims no lead and is said as the
    rule says it."""
    def say(fastest: RunSummary, other: RunSummary) -> str:
        line = verdict(fastest, other, model, task)
        if " too close to call " in line:
            return line
        verb = "answers" if task == Task.PREDICT else "is"
        return (f"So far {fastest.lane} {verb} {_times(other.median_ms / fastest.median_ms)}x faster than "
                f"{other.lane} on {model} (provisional: "
                f"{fmt_count(fastest.n_batches, 'steady batch', 'steady batches')} and "
                f"{fmt_count(other.n_batches, 'steady batch', 'steady batches')} so far; the rule judges the "
                "lead when the run ends)")

    return _pair_lines(summaries, contended, say)


def _pair_lines(summaries: Sequence[RunSummary], contended: set[str] | frozenset,
                say: Callable[[RunSummary, RunSummary], str]) -> list[str]:
    """The fastest lane against each other lane with steady batches, as `say` words a pair; a pair measured at once
    on shared CPU cores said to be; then the busy note."""
    usable = [s for s in summaries if has_steady(s)]
    if len(usable) < 2:
        return []
    fastest = min(usable, key=lambda s: s.median_ms)
    lines = []
    for other in usable:
        if other is fastest:
            continue
        line = say(fastest, other)
        if fastest.lane in contended and other.lane in contended:
            line += " (contended: both trained at once on the same CPU cores)"
        lines.append(line)
    return lines + (busy_lines(usable) if lines else [])


def _times(ratio: float) -> str:
    """A ratio as "1.08" or "2.3": two decimals under 1.1, where "1.0x faster" would read as a tie."""
    return f"{ratio:.2f}" if ratio < 1.1 else f"{ratio:.1f}"


def compared_summaries(result: RunResult, stretch: CommonStretch | None = None) -> list[RunSummary]:
    """What a finished run's verdict compares: each lane's summary over the stretch every lane trained at once
    where the lanes ran side by side (`stretch`: common_stretch's, made here unless the caller has it), else each
    lane's whole run; failed lanes left out."""
    summaries = [lane.summary for lane in result.lanes.values()
                 if lane.summary is not None and lane.summary.status != Status.FAILED]
    stretch = stretch if stretch is not None else common_stretch(result)
    return list(stretch.summaries.values()) if stretch and stretch.summaries else summaries


def run_headline(result: RunResult, compared: Sequence[RunSummary] | None = None) -> list[str]:
    """A finished run of one model, in the words the CLI prints, the report answers and the window's summary
    heads a finished run with: the verdict on its model (contended pairs said so, bounded by this machine's
    noise where the run recorded it), then the busy note. Made here once for every view (`compared`:
    compared_summaries', where the caller has them)."""
    return verdict_lines(compared if compared is not None else compared_summaries(result),
                         {lane for lane, _ in contended(result)}, task=result.config.train.task,
                         noise=result.run_noise)


def busy_lines(summaries: Sequence[RunSummary]) -> list[str]:
    """The busy note as a sentence of its own beside a verdict ("Other work used 40% …"), or none."""
    busy = busy_note(summaries)
    return [busy[:1].upper() + busy[1:]] if busy else []


def energy_words(s: RunSummary) -> str:
    """A lane's energy per million samples, total and above idle, and the counter behind it; or why it was not
    measured; "" while nothing is known (a live summary, a failed lane)."""
    if s.energy_measured:
        above = s.joules_per_msample_above_idle
        idle = (f"{fmt_joules(above)} above idle at {fmt_num(s.idle_w)} W" if math.isfinite(above)
                else "idle power not measured")
        note = f"; {s.energy_note}" if s.energy_note else ""
        warm = (f"; the GPU at {s.gpu_temp_begin_c:.0f} °C when the window began, {s.gpu_temp_end_c:.0f} °C when it "
                "ended" if math.isfinite(s.gpu_temp_begin_c) and math.isfinite(s.gpu_temp_end_c) else "")
        return (f"{s.lane} uses {fmt_joules(s.joules_per_msample)} per million samples ({idle}; "
                f"{fmt_num(s.mean_w)} W mean, {s.energy_counter}{note}{warm})")
    if s.energy_note:
        return f"{s.lane}'s energy: {s.energy_note}"
    return ""


def energy_lines(summaries: Sequence[RunSummary]) -> list[str]:
    """Each lane's energy_words; lanes that share one reason it was not measured say it once."""
    measured = [energy_words(s) for s in summaries if s.energy_measured]
    read = [s for s in summaries if s.energy_measured and energy_scope(s.energy_counter)]
    if len({energy_scope(s.energy_counter) for s in read}) > 1:  # a package beside a board: unlike things
        a, b = read[0], next(s for s in read if energy_scope(s.energy_counter) != energy_scope(read[0].energy_counter))
        measured.append(unlike_words(a.lane, energy_scope(a.energy_counter), b.lane, energy_scope(b.energy_counter)))
    notes: dict[str, list[str]] = {}
    for s in summaries:
        if not s.energy_measured and s.energy_note:
            notes.setdefault(s.energy_note, []).append(s.lane)
    return measured + [f"{' and '.join(lanes)}'s energy: {note}" if len(lanes) < len(summaries) or measured
                       else f"energy {note}" for note, lanes in notes.items()]


def contention_lines(result: RunResult, now: float | None = None) -> list[str]:
    """Notes for a run's figures: lanes that shared CPU cores while measured; a GPU lane's shared host."""
    lanes = sorted({lane for lane, _ in contended(result, now)})
    out = []
    if lanes:
        out.append(f"note: {' and '.join(lanes)} trained at the same time on this machine's CPU cores, so their "
                   "figures include that contention; --schedule interleaved (lanes take turns) gives uncontended "
                   "figures.")
    if host_cores_shared(result):
        out.append("note: the GPU lane's host thread shared this machine's CPU cores with the CPU lane while both "
                   "trained.")
    return out


COLD_START_GAP = 1.5  # one lane's first step this many times another's: a difference one sample each can show


def cold_start_lines(result: RunResult) -> list[str]:
    """Beside the steady answer, the time to the first answer: each lane's first step (or call) of the run, from a
    lane process already started (its framework imported), which traces and compiles the model; and, where the lane
    that is first to answer is not the one that wins the steady steps, that it differs cold and warm (a GPU often
    loses the first call and wins every later one)."""
    firsts: dict[str, float] = {}
    for name, lane in result.lanes.items():
        first = next((r for r in lane.records if r.segment == 1), None)
        if first is not None and math.isfinite(first.ms):
            firsts[name] = first.ms
    if len(firsts) < 2:
        return []
    step = "call" if result.config.train.task == Task.PREDICT else "step"
    parts = ", ".join(f"{fmt_num(ms)} ms on {name}" for name, ms in firsts.items())
    lines = [f"Cold start: the first {step} took {parts} (one {step} each, from a lane already started: it traces "
             "and compiles the model, and is kept apart as warm-up)"]
    summaries = [lane.summary for name, lane in result.lanes.items() if name in firsts and lane.summary is not None
                 and has_steady(lane.summary)]
    if len(summaries) >= 2:
        cold = min(firsts, key=lambda name: firsts[name])
        warm = min(summaries, key=lambda s: s.median_ms).lane
        # One first step a lane: no spread to judge by. Only a clear gap (half as long again) is a lead; a trace and
        # compile vary by more than that between runs of one model.
        clear = max(firsts.values()) >= COLD_START_GAP * min(firsts.values())
        if cold != warm and clear:
            lines.append(f"{cold} answers first, and {warm} is faster at every {step} after: which lane to use "
                         f"depends on how many {step}s you run")
    return lines


def compared_lines(stretch: CommonStretch | None) -> list[str]:
    """Over what a side-by-side run's verdict compared its lanes: the time every lane trained, or why whole runs."""
    if stretch and stretch.summaries:
        return [f"Compared over the {fmt_num(stretch.seconds, 2)} s during which every lane trained"]
    if stretch:
        return [f"Not compared on the same time: {stretch.reason}; the verdict compares whole runs"]
    return []


def one_run_line(result: RunResult) -> str:
    """What a run's verdict rests on: one run, bounded by this machine's run-to-run noise where a sweep here measured
    it (RunResult.run_noise), else by that run's own spread only, said as such."""
    lanes = [name for name, lane in result.lanes.items() if lane.summary is not None and has_steady(lane.summary)]
    if lanes and all(name in result.run_noise for name in lanes):
        return (f"This verdict rests on one run of each lane, its interval widened by this machine's run-to-run "
                f"noise ({_noise_words(lanes, result.run_noise)}) as {result.run_noise_from or 'a sweep here'} "
                "measured it")
    return ("This verdict rests on one run of each lane: its interval is that run's own step-to-step spread. Runs "
            "of one model can differ by more on a busy machine, and no sweep on this machine has measured by how "
            "much for these lanes yet (a sweep measures one point twice, and later runs are bounded by it)")


def explain(a: RunSummary, b: RunSummary, fits: Mapping[str, CostFit] | None = None, task: Task = Task.TRAIN,
            general: bool = True) -> str:
    """2-4 sentences on fixed per-step cost versus throughput, with the runs' own figures (per call, for the
    predict task). Without `general`, the sentence on fixed cost in general is said only beside `fits` that
    measured it (the report says only what its figures show: one model at one size fits no cost line)."""
    if not (has_steady(a) and has_steady(b)):
        return f"Not enough steady batches yet to explain the timings of {a.lane} and {b.lane}."
    flops = a.flops_per_batch or b.flops_per_batch
    step = "call" if task == Task.PREDICT else "step"
    out = [f"Per {'predict call' if task == Task.PREDICT else 'training step'}, {a.lane} spends "
           f"{fmt_num(a.median_ms)} ms and {b.lane} {fmt_num(b.median_ms)} ms (medians of steady "
           f"{'calls' if task == Task.PREDICT else 'batches'})."]
    if flops:
        out.append(f"With {fmt_flops(flops)} per {step}, that is {fmt_num(a.gflops)} GFLOP/s on {a.lane} "
                   f"and {fmt_num(b.gflops)} GFLOP/s on {b.lane}.")
    fa, fb = (fits or {}).get(a.lane), (fits or {}).get(b.lane)
    if general or (fa and fb):
        out.append(f"Every {step} also pays a fixed cost (dispatch, kernel launches, synchronisation) "
                   "that does not shrink with the model: for a small model it dominates, so the lane "
                   "with the lower fixed cost wins; as FLOPs grow, throughput dominates and the lane "
                   "with more GFLOP/s pulls ahead.")
    if fa and fb:
        fit_text = (f"Fitted over the model sizes measured, {a.lane} costs {fmt_num(fa.overhead_ms)} ms intercept "
                    f"plus {fmt_num(fa.gflops)} GFLOP/s, and {b.lane} {fmt_num(fb.overhead_ms)} ms plus "
                    f"{fmt_num(fb.gflops)} GFLOP/s")
        cross = predicted_crossover(fa, fb)
        if cross is None:
            low = a.lane if fa.predict_ms(flops or 1.0) <= fb.predict_ms(flops or 1.0) else b.lane
            out.append(f"{fit_text}; the lines do not cross, so {low} is predicted faster at every size.")
        else:
            side = ("below it, where fixed cost dominates" if flops < cross
                    else "above it, where throughput dominates")
            out.append(f"{fit_text}; those fitted lines cross near {fmt_flops(cross)} per step (the measured "
                       f"crossing can differ), and this model ({fmt_flops(flops)}) sits {side}.")
    return " ".join(out)


def run_outcome(statuses: Mapping[str, Status], failures: Mapping[str, str], map_points: int) -> tuple[str, bool]:
    """How a run ended, for the status bar: (sentence, is_error)."""
    points = f"{map_points} {plural(map_points, 'point')} added to the crossover map"
    failed = [f"{lane}: {failures.get(lane, '')}" for lane, status in statuses.items() if status == Status.FAILED]
    if failed:
        return "Finished with failures — " + "; ".join(failed), True
    if Status.CANCELLED in statuses.values():
        return f"Stopped; what was measured is kept ({points}).", False
    return f"Run finished; {points}.", False


def contention_note(specs: list[LaneSpec], schedule: Schedule) -> str:
    """A sentence when side-by-side lanes share CPU cores (or a GPU lane's host does, or a twin its GPU); "" when
    the figures are uncontended. Lanes on other machines share none of this machine's cores."""
    specs = [s for s in specs if not s.host]
    cpu = [s for s in specs if s.kind == DeviceKind.CPU]
    if schedule is not Schedule.SIDE_BY_SIDE or len(specs) < 2:
        return ""
    names = ", ".join(s.name for s in specs)
    if len(cpu) >= 2:
        return (f"Side by side, {names} share this machine's {len(usable_cores())} CPU cores: the figures "
                "include that contention. Choose Take turns for uncontended figures.")
    twin = next((s for s in specs if s.twin), None)
    if twin is not None and twin.original in specs:
        return (f"Side by side, {twin.name} shares its GPU with {twin.original.name}, whose twin it is: the figures "
                "include that contention. Choose Take turns for uncontended figures.")
    if cpu:
        return f"Side by side, the GPU lane's host thread shares this machine's CPU cores with {cpu[0].name}."
    return ""
