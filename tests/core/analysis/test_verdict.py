"""The one crossing rule: leads only outside the noise, ties merged into ranges, crossings only where one
lane's lead gives way to the other's, in width order, and "too close to call" when nothing is clear."""
from __future__ import annotations

import dataclasses
import math
import random
import re
import statistics

from crossover_lab.core.analysis.crossings import SweepPoint
from crossover_lab.core.analysis.significance import FEW_WIDTHS_FLOOR, PRIOR_NOISE
from crossover_lab.core.analysis.verdict import PairVerdict, State, pair_verdict, verdicts
from crossover_lab.core.words.verdict import error_words, pair_words

WIDTHS = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
# Each run's load on the machine, a factor on every median of that run: the lanes take turns, so the same run moves
# both (each lane's own by a percent or so more): the pair's ratio scatters by about 1% between runs.
LOAD = (0.97, 0.99, 1.0, 1.02, 1.04)  # five passes: the default design
LOAD1 = (0.98, 0.99, 1.01, 1.02, 1.04)
NOISY = (0.75, 1.2, 0.95, 1.25, 0.85)  # five passes that scatter by about ±20%


def point(lane: str, width: int, ms: float, spread: float = 0.05, n: int = 200) -> SweepPoint:
    return SweepPoint(lane, width, 6.0 * 784 * width * 128, ms, ms * (1 - spread), ms * (1 + spread), n_batches=n)


def pooled(lane: str, width: int, ms: float, spread: float = 0.05, n: int = 200,
           load: tuple[float, ...] = LOAD) -> SweepPoint:
    """A width measured in len(load) runs of n batches each, pooled as the findings pool them: each run's median
    kept (the pair's runs line up), the pooled median their logs' mean."""
    medians = tuple(ms * f for f in load)
    logs = [math.log(m) for m in medians]
    return dataclasses.replace(point(lane, width, math.exp(statistics.fmean(logs)), spread, n * len(load)),
                               runs=len(load), between_runs=statistics.stdev(logs), run_medians=medians)


def sentence(v: PairVerdict) -> str:
    """The verdict's words before the bracket every verdict ends with (what it rests on and its error rate), the
    bracket checked to be there."""
    words = pair_words(v)
    rests = f" ({error_words(v)})"
    assert words.endswith(rests) and "chance of any false lead" in rests, words
    return words[:-len(rests)]


def test_pure_noise_is_too_close_to_call_and_has_no_crossing():
    rng = random.Random(3)
    points = [point(lane, w, 1.0 + 0.04 * rng.random()) for lane in ("cpu", "cpu1") for w in WIDTHS]
    v = pair_verdict(points, "cpu1", "cpu")
    assert v.state is State.TOO_CLOSE and v.changes == () and v.lanes == ("cpu", "cpu1")
    assert len(v.stretches) == 1 and v.stretches[0].leader is None
    words = pair_words(v)
    assert words.startswith("cpu and cpu1 are too close to call on this machine (medians up to ")
    assert "apart from 16 to 4,096 units, inside the noise" in words


def test_a_nine_percent_difference_inside_the_spread_is_noise_not_a_crossing():
    # The plain sweep used to call this "cpu1 is faster above about 26 units (16–180)".
    points = ([point("cpu", w, 1.0, spread=0.4, n=20) for w in WIDTHS]
              + [point("cpu1", w, 1.09 if w < 32 else 0.92, spread=0.4, n=20) for w in WIDTHS])
    v = pair_verdict(points, "cpu", "cpu1")
    assert v.state is State.TOO_CLOSE and not v.changes


def test_one_clear_crossing_gives_one_sentence_in_width_order():
    # cpu1's fixed cost is lower and its cost per unit higher: 1.3x ahead at 32 units, 1.3x behind at 64 (a width
    # near the crossing, 10% apart, would be inside one run's noise and leave a range, not a point).
    # Measured in three runs, so that the pair's run-to-run noise is measured, not the unmeasured floor.
    points = [pooled("cpu", w, 0.5 + w / 1000) for w in WIDTHS] + [pooled("cpu1", w, 0.1 + w / 100, load=LOAD1)
                                                                   for w in WIDTHS]
    v = pair_verdict(points, "cpu", "cpu1")
    assert v.state is State.CROSSES and len(v.changes) == 1
    (c,) = v.changes
    assert (c.faster_below, c.faster_above) == ("cpu1", "cpu")
    assert (c.width_lo, c.width_hi) == (32, 64)
    assert c.width_lo < c.width < c.width_hi and c.flops_per_batch is not None
    words = sentence(v)
    assert words.startswith("cpu is faster above about ") and words.endswith("cpu1 below")
    assert "MFLOP per batch" in words and "; then" not in words


def test_a_tie_between_two_leads_is_one_merged_range_and_the_crossing_is_not_made_up():
    # cpu1's time against cpu's grows 16% a doubling, a straight line in log width (no bend for the sweep's shape
    # to count as noise): 1.35x ahead at 64 units, 1.16x at 128 (inside one run's noise), even at 256, 1.35x
    # behind at 1,024.
    cpu1 = [math.exp(0.15 * (math.log2(w) - 8)) for w in WIDTHS]
    # Three runs each, the pair's ratio scattering by about 12% between them: a noise the rule measures.
    points = [pooled("cpu", w, 1.0) for w in WIDTHS] + [pooled("cpu1", w, m, load=(0.88, 1.0, 1.15))
                                                        for w, m in zip(WIDTHS, cpu1)]
    v = pair_verdict(points, "cpu", "cpu1")
    assert v.state is State.CROSSES
    (c,) = v.changes
    assert c.width is None and (c.width_lo, c.width_hi) == (64, 1024)
    ties = [s for s in v.stretches if s.leader is None]
    assert [(t.width_lo, t.width_hi) for t in ties] == [(128, 512)]
    assert [s.leader for s in v.stretches] == ["cpu1", None, "cpu"]
    assert sentence(v) == ("cpu1 is faster up to 64 units and cpu from 1,024 units; "
                           "between, the noise cannot tell them apart")


def test_one_lane_ahead_with_a_tie_inside_is_a_lead_not_two_crossings():
    """cpu 1.8x ahead at every width but 64, measured five times each; at 64 the lanes are within the noise, cpu1
    15% ahead or cpu 5%. Either way a tie inside cpu's one lead, never two crossings (and never taken into the lead
    by the test of the whole sweep: the other widths lead alone and speak for themselves)."""
    def verdict(at_64: float) -> PairVerdict:
        cpu1 = [at_64 if w == 64 else 1.8 for w in WIDTHS]
        points = [pooled("cpu", w, 1.0) for w in WIDTHS]
        # At 64 the five passes scatter by about ±20%: the width's own noise is wide there (each width's passes are
        # its noise, issue 57), and 15% either way is inside it.
        return pair_verdict(points + [pooled("cpu1", w, m, load=NOISY if w == 64 else LOAD1)
                                      for w, m in zip(WIDTHS, cpu1)], "cpu", "cpu1")

    v = verdict(0.85)
    assert v.state is State.LEADS and v.leader == "cpu" and not v.changes
    assert [(s.leader, s.width_lo, s.width_hi) for s in v.stretches] == [("cpu", 16, 32), (None, 64, 64),
                                                                         ("cpu", 128, 4096)]
    words = sentence(v)
    # At 64 the tie is bound by the equivalence test: equal within a stated margin, or no answer (issue 57).
    tie = re.search(r"(equal within ±[\d.]+%|no answer) at 64 units", words)
    assert tie is not None, words
    assert words.index("from 16 to 32 units") < tie.start() < words.index("from 128 to 4,096 units")
    along = verdict(1.05)
    assert along.state is State.LEADS and along.leader == "cpu" and not along.changes
    assert [(s.leader, s.width_lo, s.width_hi, s.pattern) for s in along.stretches] == [
        ("cpu", 16, 32, 0), (None, 64, 64, 0), ("cpu", 128, 4096, 0)]


def test_more_batches_turn_a_tie_into_a_lead():
    few = [point("cpu", 256, 1.0, 0.3, 10), point("cpu1", 256, 1.45, 0.3, 10)]
    many = [point("cpu", 256, 1.0, 0.3, 5000), point("cpu1", 256, 1.45, 0.3, 5000)]
    assert pair_verdict(few, "cpu", "cpu1").state is State.TOO_CLOSE
    assert pair_verdict(many, "cpu", "cpu1").state is State.LEADS
    # But no number of batches shows a run's own noise: 25% apart in one run stays inside the floor of ±12% a run
    # of one model has (issue 57: a design that cannot measure the noise says less).
    close = [point("cpu", 256, 1.0, 0.3, 5000), point("cpu1", 256, 1.25, 0.3, 5000)]
    tie = pair_verdict(close, "cpu", "cpu1")
    assert tie.state is State.TOO_CLOSE and tie.noise is not None and tie.noise.tau == FEW_WIDTHS_FLOOR


def test_no_common_width_is_said_plainly_and_every_pair_gets_a_verdict():
    points = [point("cpu", 16, 1.0), point("gpu0", 32, 1.0), point("cpu1", 16, 2.0)]
    pairs = {v.lanes: v.state for v in verdicts(points)}
    assert pairs == {("cpu", "cpu1"): State.LEADS, ("cpu", "gpu0"): State.NOT_ENOUGH,
                     ("cpu1", "gpu0"): State.NOT_ENOUGH}
    assert "no width measured on both" in pair_words(pair_verdict(points, "cpu", "gpu0"))


def test_lanes_side_by_side_are_compared_on_the_stretch_when_both_trained():
    from crossover_lab.core.analysis.contention import MIN_COMMON_STEPS, common_stretch
    from crossover_lab.core.config import ModelSpec, RunConfig, Schedule, TrainSpec
    from crossover_lab.core.records import BatchTiming, SegmentStarted
    from crossover_lab.core.results import LaneResult, RunResult, Segment

    def lane(name: str, begins_at: float, ms: list[float]) -> LaneResult:
        records, t = [], 0.0
        for i, m in enumerate(ms):
            records.append(BatchTiming("r", name, name, 1, i + 1, i + 1, t, m, 64, i < 2, 0.1))
            t += m / 1000.0
        started = SegmentStarted("r", name, 1, (64,), 64, 10**6, 0, begins_at)
        return LaneResult(name, records=records, segments=[Segment(started)])

    # cpu trains alone for its first 100 steps at 1 ms (a quiet machine), then both at once at 3 ms each;
    # cpu1 starts 0.1 s late and ends with it. Over the whole run cpu looks 2.6x faster; at the same time, equal.
    cpu = lane("cpu", 1000.0, [1.0] * 100 + [3.0] * 100)
    cpu1 = lane("cpu1", 1000.1, [3.0] * 100)
    result = RunResult("r", RunConfig(ModelSpec((64,)), TrainSpec()), Schedule.SIDE_BY_SIDE, "", {"cpu": cpu, "cpu1": cpu1})
    stretch = common_stretch(result)
    assert stretch is not None and stretch.reason == "" and 0.25 < stretch.seconds < 0.31
    assert stretch.summaries["cpu"].median_ms == 3.0 and stretch.summaries["cpu1"].median_ms == 3.0
    late = RunResult("r", result.config, Schedule.SIDE_BY_SIDE, "", {"cpu": cpu, "cpu1": lane("cpu1", 1010.0, [3.0] * 5)})
    assert common_stretch(late).summaries == {} and "trained at the same time for 0.0 s only" in common_stretch(late).reason
    assert common_stretch(RunResult("r", result.config, Schedule.INTERLEAVED, "", result.lanes)) is None
    assert MIN_COMMON_STEPS >= 10


def test_money_is_a_curve_of_its_own_never_dollars_in_a_field_of_milliseconds():
    from crossover_lab.core.analysis.costs import cost_crossovers, cost_curves
    from crossover_lab.core.analysis.points import CurvePoint

    # gpu0 is 10x faster per step but costs 40x as much per hour: cpu is cheaper everywhere.
    points = [SweepPoint(lane, w, 6.0 * 784 * w * 128, ms * k, ms * k * 0.95, ms * k * 1.05, batch_size=128,
                         n_batches=200) for w, ms in zip(WIDTHS, [1.0] * 9) for lane, k in (("cpu", 10.0), ("gpu0", 1.0))]
    money = cost_curves(points, {"cpu": 1.0, "gpu0": 40.0})
    assert all(isinstance(p, CurvePoint) for p in money)
    assert {p.lane: round(p.value, 4) for p in money if p.width == 16} == {"cpu": 0.0217, "gpu0": 0.0868}
    assert cost_crossovers(points, {"cpu": 1.0, "gpu0": 40.0}) == []
    assert pair_verdict(points, "cpu", "gpu0").leader == "gpu0"  # faster, by the same rule


def test_a_lead_and_a_tie_before_a_crossing_are_said_in_width_order_with_who_is_equal():
    """A ramp on a busy machine, measured three times: cpu1 ahead at 16, a tie at 64, cpu1 ahead at 256, a tie at
    1,024, cpu ahead at 4,096. Every stretch is said, in width order; the crossing is the change of lead; a tie
    names both lanes."""
    cpu = {16: 2.6, 64: 2.45, 256: 5.3, 1024: 8.6, 4096: 26.3}
    cpu1 = {16: 1.75, 64: 2.44, 256: 3.6, 1024: 8.5, 4096: 39.0}
    points = ([pooled("cpu", w, ms, 0.02) for w, ms in cpu.items()]
              + [pooled("cpu1", w, ms, 0.02, load=LOAD1) for w, ms in cpu1.items()])
    v = pair_verdict(points, "cpu", "cpu1")
    assert v.state is State.CROSSES
    said = sentence(v)
    # The tie at 64 is equal within a margin where its interval is narrow enough, else no answer with what could hide.
    assert re.match(r"cpu1 is faster at 16 units \(1\.5x\); then (equal within ±[\d.]+%|no answer) at 64 units", said), said
    assert said.endswith("then cpu1 is faster up to 256 units and cpu from 4,096 units; between, the noise cannot "
                         "tell them apart"), said
    ties_first = pair_verdict([p for p in points if p.width != 16], "cpu", "cpu1")
    # Opening on the tie, it names who it is about: equal within a margin, or (here, with fewer widths and so a wider
    # interval) no answer, and how large a difference could hide.
    assert re.match(r"(cpu and cpu1 are equal within ±[\d.]+%|for cpu and cpu1, no answer) at 64 units",
                    sentence(ties_first)), sentence(ties_first)


def test_a_lead_inside_the_lanes_run_to_run_noise_is_a_tie_however_many_batches():
    """Batches of one run are correlated: a second run of the same width may land 30% away, which 400 batches'
    spread cannot show. Where both lanes measured widths in two runs and those disagreed (each lane's runs
    scattering, their ratio's not kept), that disagreement is the pair's noise and bounds every width (less for a
    width pooled from more runs); where they agreed, the floor of ±5% a run stands, and so do the leads."""
    from crossover_lab.core.analysis.verdict import pair_test, run_noise
    from crossover_lab.core.analysis.points import time_curves

    def lanes(between: float) -> list[SweepPoint]:
        # cpu1 1.5x ahead at 64 units and 1.5x behind at 1,024, a straight line in log width; every width but 16
        # measured twice.
        return [dataclasses.replace(point(lane, w, 1.0 if lane == "cpu" else math.exp(0.2 * (math.log2(w) - 8)),
                                          n=200 if w == 16 else 400), runs=1 if w == 16 else 2,
                                    between_runs=math.nan if w == 16 else between)
                for lane in ("cpu", "cpu1") for w in WIDTHS]

    steady = pair_verdict(lanes(0.005), "cpu", "cpu1")
    assert steady.state is State.CROSSES and len(steady.changes) == 1, pair_words(steady)  # outside a 5% noise
    assert steady.noise is not None and steady.noise.tau == PRIOR_NOISE and steady.noise.repeat_widths == 8
    noisy = pair_verdict(lanes(0.3), "cpu", "cpu1")
    assert noisy.state is State.TOO_CLOSE and not noisy.changes, pair_words(noisy)
    assert noisy.noise is not None and noisy.noise.tau > 0.3 and noisy.noise.repeat_widths == 8
    assert "one run's ratio of the two is uncertain by ±" in pair_words(noisy)
    assert "8 widths measured in several runs" in pair_words(noisy)
    assert math.isclose(run_noise(time_curves(lanes(0.3))["cpu"].values()), 0.3)
    assert math.isnan(run_noise(time_curves([p for p in lanes(0.3) if p.width == 16])["cpu"].values()))
    data, test = pair_test(time_curves(lanes(0.3)), "cpu", "cpu1")
    # A width pooled from two runs is bounded by the pair's noise over √2; a single run's by the whole noise.
    tau = test.noise.tau
    assert math.isclose(test.widths[0].se, math.sqrt(data[0].within + tau ** 2), rel_tol=1e-9)
    assert math.isclose(test.widths[1].se, math.sqrt(data[1].within + tau ** 2 / 2), rel_tol=1e-9)
    assert test.widths[1].se < test.widths[0].se


def test_lanes_moved_together_by_load_are_judged_by_their_ratio_not_each_lane_apart():
    """Lanes taking turns meet the same load seconds apart: a busy second run slows both by 40%. Each lane's runs
    scatter by ±40%, and bounding by both lanes' scatters ties every width; their ratio scattered by 2%, and where
    each run's median is kept the pair's noise comes from that: cpu1's 1.5x lead stands. The noise behind the
    verdict is the pair's, and says what it rests on."""
    quiet = {64: {"cpu": 3.0, "cpu1": 2.0}, 256: {"cpu": 9.0, "cpu1": 6.0}}
    busy = {w: {lane: ms * 1.4 * (1.02 if lane == "cpu" else 1.0) for lane, ms in m.items()} for w, m in quiet.items()}

    def points(keep_runs: bool) -> list[SweepPoint]:
        return [SweepPoint(lane, w, 6.0 * 784 * w * 128, math.sqrt(quiet[w][lane] * busy[w][lane]), n_batches=400,
                           runs=2, between_runs=math.log(1.4) / math.sqrt(2), p10_ms=quiet[w][lane] * 0.97,
                           p90_ms=busy[w][lane] * 1.03,
                           run_medians=(quiet[w][lane], busy[w][lane]) if keep_runs else ())
                for w in quiet for lane in ("cpu", "cpu1")]

    apart = pair_verdict(points(False), "cpu", "cpu1")
    assert apart.state is State.TOO_CLOSE, pair_words(apart)  # both lanes' ±24% added wipe out a 1.5x lead
    assert apart.noise is not None and apart.noise.tau > 0.3 and apart.noise.repeat_widths == 2
    together = pair_verdict(points(True), "cpu", "cpu1")
    assert together.state is State.LEADS and together.leader == "cpu1", pair_words(together)
    # The ratio moved 2% between the runs: inside the floor, which two repeats cannot lower below the unmeasured
    # one of two widths (they often show a third of the noise), resting on their own two degrees of freedom.
    assert together.noise is not None and together.noise.tau == FEW_WIDTHS_FLOOR and together.noise.repeat_widths == 2
    assert together.noise.dof == max(together.noise.repeat_dof, together.noise.prior_dof) == 4
    assert together.runs == 2 and sentence(together).startswith("cpu1 is faster from 64 to 256 units")
    assert error_words(together).startswith("up to 2 runs per width; at most a 5% chance of any false lead over "
                                            "these 2 widths")


def test_a_wide_gap_inside_the_noise_is_said_as_noise_and_a_narrow_one_as_too_close():
    """"Equal (within 130%)" read as "they differ by less than 130%". A 2.2x gap that the noise swallows is no
    answer, with what looked faster and what scattered; lanes really within a few percent are too close to call."""
    wide = [point("cpu", 64, 9.84, spread=0.9, n=3), point("cpu1", 64, 4.36, spread=0.9, n=3)]
    v = pair_verdict(wide, "cpu", "cpu1")
    assert v.state is State.TOO_CLOSE and v.widest_lane == "cpu1" and v.widest_width == 64
    words = sentence(v)
    assert words.startswith("no answer for cpu and cpu1 on this machine: cpu1 looked 2.3x faster at 64 units, but "), \
        words
    assert words.endswith("; measure again when the machine is quiet"), words
    assert "within" not in words and "equal" not in words
    # What swallowed the gap is three batches each spread ±90% (a median uncertain by about ±40% a lane), not the
    # pair's run-to-run noise of ±5%: the reason said must be the batches'.
    assert "batches" in words, words
    close = [point("cpu", 64, 1.00, spread=0.3, n=20), point("cpu1", 64, 1.03, spread=0.3, n=20)]
    assert sentence(pair_verdict(close, "cpu", "cpu1")).startswith("cpu and cpu1 are too close to call")


def test_a_small_lead_that_is_measured_is_given_to_its_digits():
    """8% apart is inside one run's noise; measured in seven runs whose ratio agreed, it is a lead, said as 1.08x
    (not "1.1x", and never "1x")."""
    load, load1 = (0.97, 1.0, 1.04, 0.99, 1.02, 0.98, 1.0), (0.98, 0.99, 1.05, 0.98, 1.01, 0.99, 1.0)
    once = pair_verdict([point("cpu", 64, 1.00), point("cpu1", 64, 1.08)], "cpu", "cpu1")
    assert once.state is State.TOO_CLOSE
    sure = pair_verdict([pooled("cpu", 64, 1.00, load=load), pooled("cpu1", 64, 1.08, load=load1)], "cpu", "cpu1")
    assert sure.state is State.LEADS and sure.leader == "cpu" and sure.runs == 7
    assert sentence(sure) == "cpu is faster at 64 units (1.08x)", sentence(sure)
    assert error_words(sure).startswith("7 runs of each lane; at most a 5% chance of any false lead at this width")


def test_neighbouring_widths_that_each_lean_one_way_inside_the_noise_lead_together_when_their_sum_is_beyond_it():
    """Issues 36 and 57, by the test of the whole sweep: each width below is 6% apart, inside one run's noise alone.
    Measured in one pass, nine widths leaning the same way are no lead: an offset that every width of a pass shares
    (a load one lane feels more) would look the same, and one pass cannot measure it. Measured in five passes
    whose means agree, they lead together, and the words say it rests on the whole sweep. One width, two widths (no
    test of the sweep), an alternating lean, or nine widths 3% apart stay ties; a width leading the other way keeps
    the sweep's lead off the others."""
    def verdict(gaps: list[float], passes: bool = True) -> PairVerdict:
        make = pooled if passes else (lambda lane, w, ms, load=LOAD: point(lane, w, ms))
        points = [make("cpu", w, 1.0) for w in WIDTHS[:len(gaps)]]
        points += [make("cpu1", w, 1.0 / g, load=LOAD1) for w, g in zip(WIDTHS, gaps)]
        return pair_verdict(points, "cpu", "cpu1")

    alone = verdict([1.06])
    assert alone.state is State.TOO_CLOSE  # one width: inside its noise
    assert verdict([1.06] * 9, passes=False).state is State.TOO_CLOSE  # one pass: a shared offset would look alike
    nine = verdict([1.06] * 9)
    assert nine.state is State.LEADS and nine.leader == "cpu1" and nine.stretches[0].pattern == 9
    assert nine.noise is not None and nine.noise.passes == 5
    assert sentence(nine) == ("cpu1 is faster from 16 to 4,096 units (1.06x; the sweep's widths together, those "
                              "inside the noise alone too: the test of the whole sweep)"), sentence(nine)
    assert nine.to_json()["stretches"][0]["pattern"] == 9
    assert verdict([1.06] * 2).state is State.TOO_CLOSE  # two widths are no sweep to test as one
    assert verdict([1.06, 1 / 1.06] * 4 + [1.06]).state is State.TOO_CLOSE  # no lean
    # A lead at its own width beside the others: the widths speak for themselves (the whole sweep's mean may rest
    # on that one), the others ties.
    mixed = verdict([1.03] * 8 + [1.5])
    assert mixed.state is State.LEADS and mixed.leader == "cpu1"
    assert [(s.leader, s.width_lo, s.width_hi, s.pattern) for s in mixed.stretches] == [
        (None, 16, 2048, 0), ("cpu1", 4096, 4096, 0)]
    # A width leaning the other way beyond its own standard error: the whole sweep's lead is a mean over a curve,
    # not a lead at every width; the widths speak for themselves, each a tie, and no lead is made up from the mean.
    from crossover_lab.core.analysis.verdict import pair_test
    from crossover_lab.core.analysis.points import time_curves
    gaps = [1.08] * 8 + [1 / 1.06]
    points = [pooled("cpu", w, 1.0) for w in WIDTHS] + [pooled("cpu1", w, 1.0 / g, load=LOAD1)
                                                        for w, g in zip(WIDTHS, gaps)]
    _, test = pair_test(time_curves(points), "cpu", "cpu1")
    assert test.sweep is not None and test.sweep.lead and not any(t.lead for t in test.widths)
    against = verdict(gaps)
    assert against.state is State.TOO_CLOSE and not against.changes
    assert [(s.leader, s.pattern) for s in against.stretches] == [(None, 0)]
    assert verdict([1.08] * 9).stretches[0].pattern == 9  # the same lean without the contrary width: a lead


def test_equal_is_said_only_where_the_verdicts_equivalence_bound_holds():
    """Issue 57 #5: "equal within ±X%" is the verdict's equivalence bound at the rule's level (Stretch.equal), never
    the words' reading of a tie: equal lanes measured in 6 runs a width are bound within ±9% and said equal; in 3
    runs the bound is ±14%, wider than EQUAL_WITHIN, and the same medians are too close to call, not equal."""
    tight = [pooled(lane, w, 1.0, spread=0.02, n=400, load=(1.0,) * 6) for lane in ("cpu", "cpu1") for w in WIDTHS]
    v = pair_verdict(tight, "cpu", "cpu1")
    assert v.state is State.TOO_CLOSE and v.stretches[0].equal
    assert sentence(v) == ("cpu and cpu1 are equal within ±9% on this machine from 16 to 4,096 units (medians up to 0% "
                           "apart)")
    assert v.to_json()["stretches"][0]["equal_within"] == v.stretches[0].within
    loose = [pooled(lane, w, 1.0, spread=0.02, n=400, load=(1.0,) * 3) for lane in ("cpu", "cpu1") for w in WIDTHS]
    v = pair_verdict(loose, "cpu", "cpu1")
    assert v.state is State.TOO_CLOSE and not v.stretches[0].equal
    assert sentence(v).startswith("cpu and cpu1 are too close to call on this machine") and "equal" not in sentence(v)
