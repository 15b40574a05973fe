"""Predictions from a profile's lines (core/analysis/prediction.py): a figure inside what was measured carries an
interval that covers the truth; anything outside is an extrapolation with no interval; crossings are found where
the predicted faster lane changes."""
from __future__ import annotations

import math
import random

from crossover_lab.core.analysis.predicted_crossing import crossing
from crossover_lab.core.analysis.prediction import LinePoint, fit_line, predict


def truth(flops: float, layers: int, fixed=1.0, per_layer=0.2, gflops=50.0) -> float:
    return fixed + per_layer * layers + flops / (gflops * 1e6)


def points(batch: int, seed: int = 0, noise: float = 0.03, **cost) -> list[LinePoint]:
    rng = random.Random(seed)
    out = []
    for layers in (1, 2, 4):
        for width in (32, 128, 512, 2048):
            flops = 6.0 * width * (784 + width * (layers - 1)) * batch
            out.append(LinePoint(width, layers, flops, truth(flops, layers, **cost) * math.exp(rng.gauss(0, noise))))
    return out


def test_a_model_between_the_measured_sizes_is_predicted_inside_an_interval_that_covers_its_truth():
    line = fit_line("mlp", "train", 128, points(128))
    assert line is not None and line.n == 12 and math.isfinite(line.loo_log_sd)
    for width, layers in ((100, 3), (700, 2), (1500, 1)):
        flops = 6.0 * width * (784 + width * (layers - 1)) * 128
        p = predict([line], "mlp", "train", 128, flops / 128, layers)
        assert p.has_interval and not p.outside, p
        assert p.contains(truth(flops, layers)), (width, layers, p)
        assert abs(p.ms / truth(flops, layers) - 1) < 0.15


def test_the_interval_never_claims_less_than_the_rules_noise_floor():
    line = fit_line("mlp", "train", 128, points(128, noise=0.0))
    p = predict([line], "mlp", "train", 128, 6.0 * 300 * 784, 1)
    assert p.hi / p.ms > math.exp(0.05 * 1.9)  # ±5% run-to-run noise at least, times t


def test_what_the_profile_never_measured_is_an_extrapolation_without_an_interval():
    line = fit_line("mlp", "train", 128, points(128))
    other_kind = predict([line], "cnn", "train", 128, 1e6, 2)
    assert [o.what for o in other_kind.outside] == ["kind"] and not other_kind.has_interval
    assert math.isfinite(other_kind.ms)  # said, as an extrapolation
    other_batch = predict([line], "mlp", "train", 1024, 6.0 * 300 * 784, 2)
    assert "batch" in [o.what for o in other_batch.outside] and not other_batch.has_interval
    far = predict([line], "mlp", "train", 128, 1e13, 2)
    assert "flops" in [o.what for o in far.outside]
    deep = predict([line], "mlp", "train", 128, 6.0 * 300 * 784, 16)
    assert "depth" in [o.what for o in deep.outside]
    assert predict([line], "mlp", "predict", 128, 1e6, 2).refused == "no task"
    few = fit_line("mlp", "train", 128, points(128)[:4])
    assert few is not None and [o.what for o in predict([few], "mlp", "train", 128, 6.0 * 64 * 784, 1).outside] == ["few"]


def test_a_batch_size_between_two_lines_lies_between_their_predictions():
    lines = [fit_line("mlp", "train", b, points(b, seed=b)) for b in (32, 128)]
    per_sample = 6.0 * 256 * 784
    p = predict([x for x in lines if x], "mlp", "train", 64, per_sample, 1)
    assert p.has_interval and len(p.lines) == 2
    ends = [predict([x], "mlp", "train", x.batch_size, per_sample, 1).ms for x in lines if x]
    assert min(ends) <= p.ms <= max(ends)


def test_two_lanes_cross_where_their_predicted_times_meet():
    widths = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    fast_start = fit_line("mlp", "train", 128, points(128, fixed=0.2, per_layer=0.0, gflops=20))
    fast_math = fit_line("mlp", "train", 128, points(128, seed=1, fixed=2.0, per_layer=0.0, gflops=2000))
    assert fast_start and fast_math
    a = [predict([fast_start], "mlp", "train", 128, 6.0 * w * 784, 1) for w in widths]
    b = [predict([fast_math], "mlp", "train", 128, 6.0 * w * 784, 1) for w in widths]
    c = crossing(widths, a, b, "cpu", "gpu")
    assert c is not None and c.faster_below == "cpu" and c.faster_above == "gpu"
    true = 1.8 / (6.0 * 784 * 128 * (1 / 20e6 - 1 / 2000e6))  # width where 0.2 + F/20e6 = 2.0 + F/2000e6
    assert c.tie_from <= true <= c.tie_to and abs(math.log(c.width / true)) < math.log(1.5)
    assert c.clear_below and c.clear_above and c.tie_from < c.tie_to
    assert crossing(widths, a, a, "cpu", "cpu1") is None


def test_between_two_lines_a_step_that_is_a_fixed_cost_plus_a_cost_per_sample_is_predicted_as_one():
    # Issue 58: a step's time is a fixed cost plus a cost per sample; a straight line in log time and log batch size
    # (a power law) between the lines at 128 and 512 put batch 256 above it: here 3.3 ms fixed and 0.01 ms a sample,
    # 5.86 ms at 256, predicted 6.21 ms (+6%) that way.
    def step(batch: int) -> float:
        return 3.3 + 0.01 * batch

    lines = [fit_line("mlp", "train", b, [LinePoint(w, 1, 6.0 * w * 784 * b, step(b) * (1 + w / 1e6))
                                            for w in (32, 64, 128, 256, 512)]) for b in (128, 512)]
    p = predict([x for x in lines if x], "mlp", "train", 256, 6.0 * 100 * 784, 1)
    assert len(p.lines) == 2
    assert abs(p.ms / (step(256) * (1 + 100 / 1e6)) - 1) < 0.005, p.ms
