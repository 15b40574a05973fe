"""Sweeps from several machines side by side, and cost per sample: constructed files with known answers."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from helpers import cli, cli_in_process

from crossover_lab.core.analysis.points import SweepPoint
from crossover_lab.core.config import ConfigError
from crossover_lab.core.analysis.costs import (cost_analysis, cost_crossovers, dollars_per_million, parse_prices,
                                               price_for)
from crossover_lab.core.files.sweeps.sets import load_sets, parse_labels
from crossover_lab.core.words.sweep import cost_lines, describe_cost_pair

WIDTHS = (16, 64, 256, 1024, 4096)
HEADER = "lane,device,width,params,flops_per_batch,batch_size,median_ms,p10_ms,p90_ms,n_batches"


def laptop_ms(width: float) -> float:
    """The laptop's step: 2 ms at 128 units, growing with the cube of the width."""
    return 2.0 * (width / 128) ** 3


def write_sweep(path: Path, lane: str, device: str, ms, machine: str | None = None,
                prices: dict | None = None) -> Path:
    """A sweep CSV with one lane whose median at width w is ms(w), and a sidecar naming its machine."""
    rows = [HEADER] + [f"{lane},{device},{w},0,{w * 1e6},128,{ms(w)},,,50" for w in WIDTHS]
    path.write_text("\n".join(rows) + "\n")
    if machine is not None:
        sidecar = {"format": "crossover-batches/1", "host": {"machine": machine}, "runs": []}
        if prices:
            sidecar["prices"] = prices
        path.with_name(path.stem + "-batches.json").write_text(json.dumps(sidecar))
    return path


def laptop_and_server(folder: Path, **kw) -> tuple[Path, Path]:
    """Both files have a `cpu` lane: the laptop's grows with the cube of the width, the server's is a flat 2 ms. They
    cross at exactly 128 units (the difference is linear in log width), 8x apart at 64 and 256: lanes of two sessions
    are compared beyond the sessions' own offset (core/analysis/significance.py SESSION_PRIOR)."""
    folder.mkdir(exist_ok=True)
    return (write_sweep(folder / "a.csv", "cpu", "CPU (laptop)", lambda w: laptop_ms(w), "laptop", **kw),
            write_sweep(folder / "b.csv", "cpu", "GPU:0 (server)", lambda w: 2.0, "server"))


def test_analyze_two_files_finds_the_crossing_between_same_named_lanes(tmp_path, capsys):
    a, b = laptop_and_server(tmp_path)
    r = cli_in_process(capsys, "analyze", str(a), str(b), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out["lanes"]) == {"laptop/cpu", "server/cpu"}
    (cross,) = out["crossovers"]
    assert cross["lanes"] == ["laptop/cpu", "server/cpu"] and cross["faster_above"] == "server/cpu"
    assert cross["width"] == pytest.approx(128, rel=1e-6)
    assert out["files"]["laptop"] == {"path": str(a), "machine": "laptop", "devices": ["CPU (laptop)"], "points": 5}
    text = cli_in_process(capsys, "analyze", str(a), str(b), "--label", "b.csv=lab").stdout
    assert "lab: " in text and "lab/cpu is faster above about 130 units" in text and "laptop/cpu below" in text


def test_labels_fall_back_to_the_file_stem_and_never_repeat(tmp_path):
    one = write_sweep(tmp_path / "x.csv", "cpu", "c", lambda w: 1.0)
    (tmp_path / "other").mkdir()
    two = write_sweep(tmp_path / "other" / "x.csv", "cpu", "c", lambda w: 2.0)
    sets = load_sets([str(one), str(two)])
    assert [s.label for s in sets] == ["x", "x#2"]
    assert [s.rows[0].lane for s in sets] == ["x/cpu", "x#2/cpu"]
    assert load_sets([str(one)], parse_labels([f"{one}=mine"]))[0].label == "mine"
    with pytest.raises(ConfigError, match="not one of the files"):
        load_sets([str(one)], {"nope.csv": "n"})
    with pytest.raises(ConfigError, match="FILE=NAME"):
        parse_labels(["a.csv"])


def test_a_sweep_file_keeps_one_point_per_lane_and_width_however_often_it_was_measured(tmp_path):
    path = write_sweep(tmp_path / "x.csv", "cpu", "c", lambda w: 1.0)
    with open(path, "a") as fh:  # every width measured twice more: a long file of few points
        for ms in (2.0, 3.0):
            fh.writelines(f"cpu,c,{w},0,{w * 1e6},128,{ms},,,50\n" for w in WIDTHS)
        fh.write(f"cpu,c,{WIDTHS[0]},0,1,128,,,,0\n")  # a failed point replaces nothing
    (only,) = load_sets([str(path)])
    assert [(r.width, r.median_ms) for r in only.rows] == [(w, 3.0) for w in WIDTHS]


def test_single_file_output_is_unchanged(tmp_path, capsys):
    a, _ = laptop_and_server(tmp_path)
    out = json.loads(cli_in_process(capsys, "analyze", str(a), "--json").stdout)
    assert set(out) == {"lanes", "crossovers", "predicted_crossovers"} and set(out["lanes"]) == {"cpu"}


# ---------------------------------------------------------------- cost per sample


def test_dollars_per_million_samples():
    # 1 ms per sample at $3.60 an hour: a million samples take 1000 s, which cost $1.
    assert dollars_per_million(1000.0, 1000, 3.6) == pytest.approx(1.0)
    assert math.isnan(dollars_per_million(float("nan"), 128, 1.0))


def points(lane: str, ms) -> list[SweepPoint]:
    return [SweepPoint(lane, w, w * 1e6, ms(w), batch_size=128) for w in WIDTHS]


def test_the_cost_crossover_sits_where_price_times_time_crosses():
    # cpu: laptop_ms at $1/h; gpu0: a flat 2 ms at $64/h. Faster above 128 units (2·(w/128)³ = 2), cheaper above 512
    # (1 × 2·(w/128)³ = 64 × 2).
    pts = points("cpu", laptop_ms) + points("gpu0", lambda w: 2.0)
    prices = {"cpu": 1.0, "gpu0": 64.0}
    (cheap,) = cost_crossovers(pts, prices)
    assert cheap.faster_above == "gpu0" and cheap.width == pytest.approx(512, rel=1e-6)
    assert describe_cost_pair(pts, prices, "cpu", "gpu0") == (
        "gpu0 is faster than cpu above about 130 units and cheaper above about 510")
    costs = cost_analysis(pts, prices)  # typed, and as the analysis JSON writes it
    assert costs.prices == prices and costs.crossovers[0].faster_above == "gpu0"
    assert costs.dollars_per_million["gpu0"][16] == pytest.approx(dollars_per_million(2.0, 128, 64.0))
    written = costs.to_json()
    assert written["dollars_per_million_samples"]["gpu0"]["16"] == pytest.approx(dollars_per_million(2.0, 128, 64.0))
    assert written["crossovers"][0]["cheaper_above"] == "gpu0"
    # Priced at 100,000 times the CPU's, the GPU is never the cheaper one in this range.
    assert cost_lines({"all": pts}, {"cpu": 1.0, "gpu0": 100_000.0}) == [
        "per sample, cpu is cheaper than gpu0 throughout (widths 16 to 4,096)"]
    assert cost_lines({"all": pts}, {"cpu": 1.0}) == []  # one priced lane: nothing to compare


def test_prices_parse_match_lanes_and_reach_the_analysis(tmp_path, capsys):
    assert parse_prices("gpu0=2.50, ssh://me@lab:22/cpu=$0.40") == {"gpu0": 2.5, "ssh://me@lab:22/cpu": 0.4}
    for bad in ("gpu0", "gpu0=free", "gpu0=-1", ""):
        with pytest.raises(ConfigError, match="DOLLARS_PER_HOUR"):
            parse_prices(bad)
    assert price_for("laptop/cpu1", {"cpu1": 0.4}) == 0.4 and price_for("laptop/cpu1", {"laptop/cpu1": 1.0}) == 1.0
    assert price_for("jax:cpu", {"cpu": 1.0}) is None
    # Prices recorded in a file's sidecar apply to its lanes; --price adds to them.
    a, b = laptop_and_server(tmp_path, prices={"cpu": 1.0})
    r = cli_in_process(capsys, "analyze", str(a), str(b), "--price", "server/cpu=64")
    assert r.returncode == 0, r.stderr
    assert "server/cpu is faster than laptop/cpu above about 130 units and cheaper above about 510." in r.stdout
    assert "dollars per million samples" in r.stdout
    out = json.loads(cli_in_process(capsys, "analyze", str(a), str(b), "--json", "--price", "server/cpu=64").stdout)
    assert out["cost"]["prices"] == {"laptop/cpu": 1.0, "server/cpu": 64.0}
    assert cli_in_process(capsys, "analyze", str(a), "--price", "cpu=x").returncode == 2


def test_a_sweeps_prices_are_recorded_in_its_sidecar_and_read_back(tmp_path):
    from crossover_lab.core.files.sweeps.files import export_sweep
    from crossover_lab.core.files.sweeps.sets import file_prices, sidecar_of

    written = export_sweep(tmp_path / "s.csv", [], {"machine": "laptop"}, {"cpu": 0.4, "ssh://lab/gpu0": 2.5})
    assert [p.name for p in written] == ["s.csv", "s-batches.csv", "s-batches.json"]
    assert file_prices(sidecar_of(tmp_path / "s.csv")) == {"cpu": 0.4, "ssh://lab/gpu0": 2.5}
    export_sweep(tmp_path / "n.csv", [], {})
    assert "prices" not in sidecar_of(tmp_path / "n.csv")
