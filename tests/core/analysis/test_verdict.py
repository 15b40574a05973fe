"""The one crossing rule: leads only outside the noise, ties merged into ranges, crossings only where one
lane's lead gives way to the other's, in width order, and "too close to call" when nothing is clear."""
from __future__ import annotations

import random

from crossover_lab.core.analysis.crossings import SweepPoint
from crossover_lab.core.analysis.verdict import State, pair_verdict, verdicts
from crossover_lab.core.words.verdict import pair_words

WIDTHS = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096]


def point(lane: str, width: int, ms: float, spread: float = 0.05, n: int = 200) -> SweepPoint:
    return SweepPoint(lane, width, 6.0 * 784 * width * 128, ms, ms * (1 - spread), ms * (1 + spread), n_batches=n)


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
    points = [point("cpu", w, 0.5 + w / 1000) for w in WIDTHS] + [point("cpu1", w, 0.25 + w / 250) for w in WIDTHS]
    v = pair_verdict(points, "cpu", "cpu1")
    assert v.state is State.CROSSES and len(v.changes) == 1
    (c,) = v.changes
    assert (c.faster_below, c.faster_above) == ("cpu1", "cpu")
    assert c.width_lo < c.width < c.width_hi and c.flops_per_batch is not None
    words = pair_words(v)
    assert words.startswith("cpu is faster above about ") and words.endswith("cpu1 below")
    assert "MFLOP per batch" in words and "; then" not in words


def test_a_tie_between_two_leads_is_one_merged_range_and_the_crossing_is_not_made_up():
    cpu1 = [0.5, 0.6, 0.7, 1.0, 1.0, 1.0, 1.4, 1.8, 2.2]
    points = [point("cpu", w, 1.0) for w in WIDTHS] + [point("cpu1", w, m) for w, m in zip(WIDTHS, cpu1)]
    v = pair_verdict(points, "cpu", "cpu1")
    assert v.state is State.CROSSES
    (c,) = v.changes
    assert c.width is None and (c.width_lo, c.width_hi) == (64, 1024)
    ties = [s for s in v.stretches if s.leader is None]
    assert [(t.width_lo, t.width_hi) for t in ties] == [(128, 512)]
    assert [s.leader for s in v.stretches] == ["cpu1", None, "cpu"]
    assert pair_words(v) == ("cpu1 is faster up to 64 units and cpu from 1,024 units; "
                             "between, they are equal within noise")


def test_one_lane_ahead_with_a_tie_inside_is_a_lead_not_two_crossings():
    cpu1 = [1.5, 1.8, 1.0, 1.3, 2.0, 2.0, 2.0, 2.0, 2.0]
    points = [point("cpu", w, 1.0) for w in WIDTHS] + [point("cpu1", w, m) for w, m in zip(WIDTHS, cpu1)]
    v = pair_verdict(points, "cpu", "cpu1")
    assert v.state is State.LEADS and v.leader == "cpu" and not v.changes
    words = pair_words(v)
    assert words.index("from 16 to 32 units") < words.index("equal within noise at 64 units") \
        < words.index("from 128 to 4,096 units")


def test_more_batches_turn_a_tie_into_a_lead():
    few = [point("cpu", 256, 1.0, 0.3, 10), point("cpu1", 256, 1.08, 0.3, 10)]
    many = [point("cpu", 256, 1.0, 0.3, 5000), point("cpu1", 256, 1.08, 0.3, 5000)]
    assert pair_verdict(few, "cpu", "cpu1").state is State.TOO_CLOSE
    assert pair_verdict(many, "cpu", "cpu1").state is State.LEADS


def test_no_common_width_is_said_plainly_and_every_pair_gets_a_verdict():
    points = [point("cpu", 16, 1.0), point("gpu0", 32, 1.0), point("cpu1", 16, 2.0)]
    pairs = {v.lanes: v.state for v in verdicts(points)}
    assert pairs == {("cpu", "cpu1"): State.LEADS, ("cpu", "gpu0"): State.NOT_ENOUGH,
                     ("cpu1", "gpu0"): State.NOT_ENOUGH}
    assert "no width measured on both" in pair_words(pair_verdict(points, "cpu", "gpu0"))


def test_lanes_side_by_side_are_compared_on_the_stretch_when_both_trained():
    from crossover_lab.core.analysis.contention import MIN_COMMON_STEPS, common_stretch
    from crossover_lab.core.config import ModelSpec, RunConfig, TrainSpec
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
    result = RunResult("r", RunConfig(ModelSpec((64,)), TrainSpec()), "side-by-side", "", {"cpu": cpu, "cpu1": cpu1})
    stretch = common_stretch(result)
    assert stretch is not None and stretch.reason == "" and 0.25 < stretch.seconds < 0.31
    assert stretch.summaries["cpu"].median_ms == 3.0 and stretch.summaries["cpu1"].median_ms == 3.0
    late = RunResult("r", result.config, "side-by-side", "", {"cpu": cpu, "cpu1": lane("cpu1", 1010.0, [3.0] * 5)})
    assert common_stretch(late).summaries == {} and "trained at the same time for 0.0 s only" in common_stretch(late).reason
    assert common_stretch(RunResult("r", result.config, "interleaved", "", result.lanes)) is None
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
    """A ramp on a busy machine: cpu1 ahead at 16, a tie at 64, cpu1 ahead at 256, a tie at 1,024, cpu ahead at
    4,096. Every stretch is said, in width order; the crossing is the change of lead; a tie names both lanes."""
    cpu = {16: 2.6, 64: 2.45, 256: 5.3, 1024: 8.6, 4096: 26.3}
    cpu1 = {16: 2.35, 64: 2.44, 256: 3.6, 1024: 8.5, 4096: 29.7}
    points = ([point("cpu", w, ms, 0.02) for w, ms in cpu.items()]
              + [point("cpu1", w, ms, 0.02) for w, ms in cpu1.items()])
    v = pair_verdict(points, "cpu", "cpu1")
    assert v.state is State.CROSSES
    said = pair_words(v)
    assert said.startswith("cpu1 is faster at 16 units (1.1x); then equal within noise at 64 units"), said
    assert said.endswith("then cpu1 is faster up to 256 units and cpu from 4,096 units; between, they are equal "
                         "within noise"), said
    ties_first = pair_verdict([p for p in points if p.width != 16], "cpu", "cpu1")
    assert pair_words(ties_first).startswith("cpu and cpu1 are equal within noise at 64 units")


def test_a_lead_inside_the_lanes_run_to_run_noise_is_a_tie_however_many_batches():
    """Batches of one run are correlated: a second run of the same width may land 20% away, which 200 batches'
    spread cannot show. Where a lane measured a width in two runs and they disagreed, that disagreement bounds
    every one of its medians (fewer for a width pooled from more runs); where they agreed, the leads stand."""
    import dataclasses
    import math

    from crossover_lab.core.analysis.leads import pair_sites, run_noise
    from crossover_lab.core.analysis.points import time_curves

    def lanes(between: float) -> list[SweepPoint]:
        cpu = [point("cpu", w, 1.0, spread=0.05, n=200) for w in WIDTHS]
        cpu[4] = dataclasses.replace(cpu[4], runs=2, between_runs=between, n_batches=400)  # 256, measured twice
        return cpu + [point("cpu1", w, 1.1 if w < 300 else 0.9, spread=0.05, n=200) for w in WIDTHS]

    steady = pair_verdict(lanes(0.005), "cpu", "cpu1")
    assert steady.state is State.CROSSES and len(steady.changes) == 1  # 10% leads, outside a 1% noise
    noisy = pair_verdict(lanes(0.2), "cpu", "cpu1")
    assert noisy.state is State.TOO_CLOSE and not noisy.changes, pair_words(noisy)
    assert pair_words(noisy).endswith("(medians up to 11% apart from 16 to 4,096 units, inside the noise): one "
                                      "width's runs scattered "
                                      "on cpu by about ±22%")
    assert "runs scattered" not in pair_words(steady)
    assert math.isclose(run_noise(time_curves(lanes(0.2))["cpu"].values()), 0.2)
    assert math.isnan(run_noise(time_curves(lanes(0.2))["cpu1"].values()))  # no width measured twice
    sites = {s.width: s for s in pair_sites(time_curves(lanes(0.2)), "cpu", "cpu1", {})}
    # The width pooled from two runs is bounded by the noise over √2; a single run by the whole noise.
    assert sites[256].half < sites[512].half
    assert math.isclose(sites[512].half, 1.96 * math.hypot(0.2, max(1.2533 * math.log(1.05 / 0.95) / 2.563 /
                                                                    math.sqrt(200), 0.01)), rel_tol=1e-6)


def test_lanes_moved_together_by_load_are_judged_by_their_ratio_not_each_lane_apart():
    """Lanes taking turns meet the same load seconds apart: a busy second run slows both by 40%. Each lane's runs
    scatter by ±40%, and bounding each lane by that ties every width; their ratio scattered by 2%, and bounding by
    that keeps cpu1's 1.5x lead. The noise behind the verdict is the pair's, and says so."""
    import math

    from crossover_lab.core.analysis.leads import ratio_noise

    quiet = {64: {"cpu": 3.0, "cpu1": 2.0}, 256: {"cpu": 9.0, "cpu1": 6.0}}
    busy = {w: {lane: ms * 1.4 * (1.02 if lane == "cpu" else 1.0) for lane, ms in m.items()} for w, m in quiet.items()}
    runs = [(w, m) for run in (quiet, busy) for w, m in run.items()]
    noise, used = ratio_noise(runs, "cpu", "cpu1")
    assert used == 4 and 0.01 < noise < 0.02  # log(1.02) / √2: the ratio moved 2% between the two runs
    alone = math.log(1.4) / math.sqrt(2)  # what each lane's own runs scatter by
    pooled = [SweepPoint(lane, w, 6.0 * 784 * w * 128, math.sqrt(quiet[w][lane] * busy[w][lane]),
                         n_batches=400, runs=2, between_runs=alone,
                         p10_ms=quiet[w][lane] * 0.97, p90_ms=busy[w][lane] * 1.03) for w in quiet for lane in ("cpu", "cpu1")]
    apart = pair_verdict(pooled, "cpu", "cpu1")
    assert apart.state is State.TOO_CLOSE  # each lane's ±24% wipes out a 1.5x lead
    together = pair_verdict(pooled, "cpu", "cpu1", pair_noise=(noise, used))
    assert together.state is State.LEADS and together.leader == "cpu1", together
    assert together.pair_noise == noise and together.pair_noise_runs == 4
    once, none = ratio_noise(runs[:2], "cpu", "cpu1")  # the quiet run alone: no width measured twice
    assert math.isnan(once) and none == 0


def test_a_wide_gap_inside_the_noise_is_said_as_noise_and_a_narrow_one_as_too_close():
    """"Equal (within 130%)" read as "they differ by less than 130%". A 2.2x gap that the noise swallows is no
    answer, with what looked faster and what scattered; lanes really within a few percent are too close to call."""
    wide = [point("cpu", 64, 9.84, spread=0.9, n=3), point("cpu1", 64, 4.36, spread=0.9, n=3)]
    v = pair_verdict(wide, "cpu", "cpu1")
    assert v.state is State.TOO_CLOSE and v.widest_lane == "cpu1" and v.widest_width == 64
    words = pair_words(v)
    assert words == ("no answer for cpu and cpu1 on this machine: cpu1 looked 2.3x faster at 64 units, but each "
                     "lane's batches spread wider than the gap; measure again when the machine is quiet"), words
    assert "within" not in words and "equal" not in words
    close = [point("cpu", 64, 1.00, spread=0.3, n=20), point("cpu1", 64, 1.03, spread=0.3, n=20)]
    assert pair_words(pair_verdict(close, "cpu", "cpu1")).startswith("cpu and cpu1 are too close to call")
    # A small lead that is measured is given to its digits: 1.03x, not "1x".
    sure = pair_words(pair_verdict([point("cpu", 64, 1.00), point("cpu1", 64, 1.03)], "cpu", "cpu1"))
    assert sure == "cpu is faster at 64 units (1.03x)", sure


def test_neighbouring_widths_that_each_lean_one_way_inside_the_noise_lead_together_when_their_sum_is_beyond_it():
    """Issue 36: a pattern across neighbouring widths is evidence where that is sound. Each width below is 6% apart
    with a wide spread from few batches: a tie alone (interval ±9%). Four neighbours leaning the same way pool to
    ±4.5%: cpu1 leads, and the words say it rests on the pattern. Two such widths, an alternating lean, or four
    widths 3% apart stay ties."""
    def verdict(gaps: list[float]):
        points = [point("cpu", w, 1.0, spread=0.1, n=10) for w in WIDTHS[:len(gaps)]]
        points += [point("cpu1", w, 1.0 / g, spread=0.1, n=10) for w, g in zip(WIDTHS, gaps)]
        return pair_verdict(points, "cpu", "cpu1")

    alone = verdict([1.06])
    assert alone.state is State.TOO_CLOSE  # one width: inside its noise
    four = verdict([1.06] * 4)
    assert four.state is State.LEADS and four.leader == "cpu1" and four.stretches[0].pattern == 4
    assert pair_words(four) == ("cpu1 is faster from 16 to 128 units (1.06x; 4 neighbouring widths lean its way, "
                                "each inside the noise alone, beyond it together)")
    assert four.to_json()["stretches"][0]["pattern"] == 4
    assert verdict([1.06] * 2).state is State.TOO_CLOSE  # two widths are no pattern
    assert verdict([1.06, 1 / 1.06] * 2).state is State.TOO_CLOSE  # no lean
    assert verdict([1.03] * 4).state is State.TOO_CLOSE  # the pooled lead still inside the noise
    # A lead at its own width beside the pattern: one stretch, one leader.
    mixed = verdict([1.06, 1.06, 1.06, 1.5])
    assert mixed.state is State.LEADS and len(mixed.stretches) == 1 and mixed.stretches[0].pattern == 3
    # A crossing whose one side rests on a pattern says so.
    crossing = verdict([1.06, 1.06, 1.06, 1 / 1.5])
    assert crossing.state is State.CROSSES
    assert pair_words(crossing).endswith("cpu1 below (cpu1's lead from 16 to 64 units rests on 3 neighbouring widths "
                                         "together, each inside the noise alone)"), pair_words(crossing)
