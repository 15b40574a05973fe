"""The families' cost model (core/analysis/prediction.py): what a step pays beside its FLOPs is counted from the code
that counts FLOPs, a line takes the memory term only where its own points support it, and its interval comes from
the chosen model's leave-one-out error and covers new measurements as often as it says."""
from __future__ import annotations

import math
import random

import pytest

from crossover_lab.core.analysis.prediction import LINE, MEMORY, LinePoint, Term, choose, fit_line, predict, shape
from crossover_lab.core.analysis.special import stdtrit
from crossover_lab.core.config import ModelSpec

WIDTHS = (8, 16, 24, 32, 48)  # the profile plan's CNN line (core/study/profile.py)
HELD_OUT = (12, 20, 40)  # benchmarks/profile_accuracy.py's, between them


def cnn_flops(width: int) -> int:
    return ModelSpec(widths=(width, width), family="cnn").flops_per_batch(64)


def truth(width: int, fixed: float = 5.0, per_gflop: float = 20.0, per_mb: float = 1.0) -> float:
    flops = cnn_flops(width)
    return fixed + per_gflop * flops / 1e9 + per_mb * shape("cnn", "train", 64, flops, 2).bytes / 1e6


def cnn_line(seed: int, noise: float, **cost: float):
    rng = random.Random(seed)
    points = [LinePoint(w, 2, cnn_flops(w), truth(w, **cost) * math.exp(rng.gauss(0, noise))) for w in WIDTHS]
    return fit_line("cnn", "train", 64, points, noise)


def test_the_bytes_a_step_moves_are_counted_as_a_roofline_counts_them():
    # An MLP 784 → 128 → 128 → 10 at batch 32: 118,282 weights, each touched 10 times a training step (read
    # forward and backward, its gradient written, Adam's seven), and 266 activations per sample, each touched 4 times.
    flops = ModelSpec(widths=(128, 128)).flops_per_batch(32)
    assert shape("mlp", "train", 32, flops, 2).bytes == 4 * (118_282 * 10 + 266 * 32 * 4)
    # A forward call reads each weight once and writes each activation for the next layer to read.
    forward = ModelSpec(widths=(128, 128)).flops_per_batch(32, forward=True)
    assert shape("mlp", "predict", 32, forward, 2).bytes == 4 * (118_282 + 266 * 32 * 2)
    # The dense arithmetic is ModelSpec's: at every width and depth the width is found again from its FLOPs.
    for width in (1, 33, 700, 4096):
        for depth in (1, 3, 8):
            spec = ModelSpec(widths=(width,) * depth)
            got = shape("mlp", "train", 64, spec.flops_per_batch(64), depth).bytes
            assert got == 4 * (spec.params * 10 + (depth * width + 10) * 64 * 4), (width, depth)
    # A recurrent cell's weights serve each of the 28 steps: an LSTM moves more per weight than a dense layer.
    lstm = shape("lstm", "train", 64, ModelSpec(widths=(64,), family="rnn").flops_per_batch(64), 1)
    assert lstm.layer_ops == 28  # its cost per layer is per step along the sequence


@pytest.mark.parametrize("kind, family, cell, heads", [("mlp", "mlp", "lstm", 4), ("cnn", "cnn", "lstm", 4),
                                                       ("lstm", "rnn", "lstm", 4), ("gru", "rnn", "gru", 4),
                                                       ("transformer 4 heads", "transformer", "lstm", 4)])
def test_the_width_is_found_from_the_flops_the_project_counts(kind, family, cell, heads):
    """A point keeps only its FLOPs: the model behind them is found again exactly, and a model of FLOPs between two
    widths' moves bytes between theirs."""
    def at(width: int):
        spec = ModelSpec(widths=(width, width), family=family, cell=cell, heads=heads)
        return shape(kind, "train", 64, spec.flops_per_batch(64), 2)

    for width in (8, 64, 512):
        assert at(width).bytes < at(width + heads).bytes  # more width, more bytes: found, not a constant
    lo, hi = at(64), at(64 + heads)
    middle = shape(kind, "train", 64, (lo.flops + hi.flops) / 2, 2)
    assert lo.bytes < middle.bytes < hi.bytes
    assert math.isnan(shape("saved model.keras", "train", 64, lo.flops, 2).bytes)  # no family: no bytes
    assert math.isnan(shape(kind, "train", 0, lo.flops, 2).bytes)  # a line across batch sizes: no one batch


def test_a_line_whose_steps_pay_for_bytes_takes_the_memory_term_and_predicts_closer_than_the_cost_line():
    line = cnn_line(seed=0, noise=0.02)
    assert line is not None and line.terms == (Term.FIXED, Term.FLOPS, Term.BYTES)
    assert line.loo_log_sd < line.line_loo_log_sd
    alone = fit_line("cnn", "train", 64, line.points, 0.02, models=(LINE,))
    assert alone is not None and alone.terms == (Term.FIXED, Term.FLOPS)

    def error(of) -> float:  # the mean absolute log error at the held-out widths
        return sum(abs(math.log(predict([of], "cnn", "train", 64, cnn_flops(w) / 64, 2).ms / truth(w)))
                   for w in HELD_OUT) / len(HELD_OUT)

    assert error(line) < 0.5 * error(alone)


def test_a_line_that_pays_nothing_for_bytes_keeps_the_cost_line():
    kept = [cnn_line(seed, noise=0.05, per_mb=0.0).terms for seed in range(30)]
    assert kept.count((Term.FIXED, Term.FLOPS)) >= 27  # the simplest model, unless a richer one is clearly better


def test_the_simplest_model_is_taken_unless_a_richer_one_is_better_by_more_than_its_standard_error():
    simple = [0.10, -0.12, 0.08, -0.09, 0.11]
    slightly_better = [0.10, -0.115, 0.08, -0.09, 0.11]
    much_better = [0.01, -0.02, 0.01, -0.01, 0.02]
    assert choose([simple, slightly_better]) == 0
    assert choose([simple, much_better]) == 1
    assert choose([None, simple]) == 1  # a model that cannot be fitted is never taken
    assert choose([None, None]) == 0


def test_the_interval_is_the_chosen_models_leave_one_out_error_with_the_noise_and_its_t():
    line = cnn_line(seed=3, noise=0.1)
    assert line is not None
    p = predict([line], "cnn", "train", 64, cnn_flops(20) / 64, 2)
    t = float(stdtrit(line.n - len(line.terms), 0.975))
    assert math.isclose(math.log(p.hi / p.ms), t * math.hypot(line.loo_log_sd, line.noise), rel_tol=1e-9)


@pytest.mark.parametrize("noise", [0.05, 0.15])
def test_the_interval_covers_new_measurements_at_least_as_often_as_it_says(noise):
    """New measurements (the same noise as the line's points) at widths no line was built from fall inside the 95%
    interval at least 95% of the time, with the model each line chose."""
    inside = total = 0
    for seed in range(60):
        line = cnn_line(seed, noise)
        assert line is not None
        rng = random.Random(10_000 + seed)
        for w in HELD_OUT:
            p = predict([line], "cnn", "train", 64, cnn_flops(w) / 64, 2)
            assert p.has_interval
            inside += p.contains(truth(w) * math.exp(rng.gauss(0, noise)))
            total += 1
    assert inside / total >= 0.95


def test_a_profile_of_dense_lines_predicts_as_the_cost_line_did():
    """The shipped profiles' dense lines keep the cost line where their points do not support more: the same
    figures as before the families' terms (checked on the H200 sweeps in tests/core/files/test_profile.py)."""
    rng = random.Random(0)
    points = []
    for layers in (1, 2, 4):
        for width in (32, 128, 512, 2048):
            flops = ModelSpec(widths=(width,) * layers).flops_per_batch(128)
            ms = (1.0 + 0.2 * layers + flops / 50e6) * math.exp(rng.gauss(0, 0.03))
            points.append(LinePoint(width, layers, flops, ms))
    line = fit_line("mlp", "train", 128, points)
    alone = fit_line("mlp", "train", 128, points, models=(LINE,))
    assert line is not None and alone is not None
    assert line.terms == alone.terms == (Term.FIXED, Term.LAYER, Term.FLOPS)
    assert MEMORY[:3] == LINE  # the memory model is the cost line and one term more
    flops = ModelSpec(widths=(300, 300, 300)).flops_per_batch(128)
    assert predict([line], "mlp", "train", 128, flops / 128, 3) == predict([alone], "mlp", "train", 128, flops / 128, 3)


def test_a_long_lines_error_rests_on_an_even_sample_so_a_huge_profile_is_bounded_work():
    """Issue 56 #11: a profile of 1,000 points a line (3.9 MB, within every bound) took predict 5 min of CPU, each
    point left out costing a fit of the others: a line's leave-one-out error now rests on LOO_MAX of its points,
    evenly spaced; a real line (5-30 points) leaves every point out as before."""
    from crossover_lab.core.analysis import prediction

    assert prediction._left_out(20) == list(range(20))
    sample = prediction._left_out(1000)
    assert len(sample) == prediction.LOO_MAX and sample[0] == 0 and sample[-1] == 999
    shapes = [prediction.shape("mlp", "train", 128, 6.0 * 128 * (784 * w + w * w + 10 * w), 2)
              for w in range(16, 1016)]
    ms = [1.0 + s.flops / 5e9 for s in shapes]
    errors = prediction.loo_errors(shapes, ms, prediction.terms_for(prediction.LINE, shapes))
    assert errors is not None and len(errors) == prediction.LOO_MAX
