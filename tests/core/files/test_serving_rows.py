"""Serving points in a sweep file: along batch size at one width, never crossed with training points. The sweeps
here run on scripted lanes whose costs cross at a known batch size (the logic is what is tested; a real predict
run is tests/core/engine/test_predict.py's)."""
from __future__ import annotations

import pytest
from helpers import cli_in_process

from crossover_lab.core.files.sweeps.rows import SweepRow, group_rows, sweep_rows_text
from crossover_lab.core.files.sweeps.files import read_sweep_rows
from crossover_lab.core.words.sweep import describe_pair


def row(lane: str, batch: int, ms: float, task: str = "predict", width: int = 512) -> SweepRow:
    return SweepRow(lane, "CPU", width, 0, 1000 * batch * width, batch, ms, ms * 0.98, ms * 1.02, 200, layers=2,
                    task=task, p99_ms=ms * 1.5)


# cpu1 answers small batches faster (less fixed cost), cpu large ones (more cores): a crossing near batch 200,
# each batch size 1.5-2x from equal (one run's, beyond the rule's floor for a noise nothing measured).
CURVE = [row(lane, b, ms) for lane, series in (("cpu", [2.0, 2.2, 2.6, 6.0]), ("cpu1", [1.0, 1.1, 1.3, 12.0]))
         for b, ms in zip((1, 8, 64, 512), series)]


def verdict_lines(out: str) -> list[str]:
    """The one rule's sentences in a command's output: each ends with what it rests on and its error rate."""
    return [x for x in out.splitlines() if "chance of any false lead" in x]


def test_a_sweep_along_batch_size_crosses_in_samples_per_batch():
    (label, points), = group_rows(CURVE).items()
    assert label == "all" and {p.axis for p in points} == {"batch"}
    assert sorted({p.width for p in points}) == [1, 8, 64, 512]  # the x is the batch size
    said = describe_pair(points, "cpu", "cpu1")
    assert said.startswith("cpu is faster above about ") and " samples per batch (" in said and "cpu1 below (" in said
    assert "64–512 within the noise" in said and "chance of any false lead over these 4 " in said, said


def test_training_and_predict_points_are_never_crossed(tmp_path, capsys):
    trained = [row(lane, 128, ms, task="train", width=w) for lane, series in (("cpu", [3.0, 30.0]), ("cpu1", [2.0, 60.0]))
               for w, ms in zip((16, 2048), series)]
    groups = group_rows(CURVE + trained)
    assert set(groups) == {"predict · width 512", "train · batch 128"}  # each curve named by what differs
    assert {p.axis for p in groups["train · batch 128"]} == {"width"}
    assert {p.axis for p in groups["predict · width 512"]} == {"batch"}
    path = tmp_path / "both.csv"
    path.write_text(sweep_rows_text(CURVE + trained))
    out = cli_in_process(capsys, "analyze", str(path)).stdout
    predict_part, train_part = out[out.index("predict · width 512:"):out.index("train · batch 128:")], \
        out[out.index("train · batch 128:"):]
    assert "samples per batch" in predict_part and " units" not in predict_part
    assert " units" in train_part and "samples per batch" not in train_part
    back = SweepRow.from_csv_row(dict(zip(path.read_text().splitlines()[0].split(","),
                                          path.read_text().splitlines()[1].split(","))))
    assert back.task == "predict" and back.p99_ms == pytest.approx(3.0)


def test_a_predict_sweep_along_batch_size_says_what_analyze_of_its_file_says(tmp_path, capsys, scripted_pool):
    path = tmp_path / "serve.csv"
    wrote = cli_in_process(capsys, "sweep", "--task", "predict", "--lanes", "cpu,cpu1", "--widths", "256", "--layers", "1",
                "--batch-sizes", "1,256", "--seconds-per-point", "0.4", "--data", "synthetic", "--csv", str(path))
    assert wrote.returncode == 0, wrote.stderr[-2000:]
    assert "p99 ms" in wrote.stdout and "ms/call" in wrote.stdout + wrote.stderr
    said = verdict_lines(wrote.stdout)
    assert said and all("samples per batch" in x for x in said), wrote.stdout  # the one rule's sentence, along batch size
    read = cli_in_process(capsys, "analyze", str(path))
    assert read.returncode == 0 and [x for x in read.stdout.splitlines() if x in said] == said


def test_a_predict_sweep_along_batch_size_is_refined_in_batch_sizes(tmp_path, capsys, scripted_pool):
    """--refine on one width and several batch sizes adds batch sizes, not widths, and says its answer in
    samples per batch; analyze of the file says the same."""
    path = tmp_path / "refined.csv"
    wrote = cli_in_process(capsys, "sweep", "--task", "predict", "--lanes", "cpu,cpu1", "--widths", "256", "--layers", "1",
                "--batch-sizes", "1,2048", "--seconds-per-point", "0.4", "--refine", "0.3", "--budget-s", "30",
                "--data", "synthetic", "--csv", str(path))
    assert wrote.returncode == 0, wrote.stderr[-2000:]
    rows = read_sweep_rows(str(path))[0]
    assert {r.width for r in rows} == {256} and {r.task for r in rows} == {"predict"}
    stop = next(x for x in wrote.stdout.splitlines() if x.startswith("Refinement stopped after"))
    assert " units" not in stop and " batch sizes: " in stop
    refined = {r.batch_size for r in rows if r.stage == "refine"}
    new = refined - {1, 2048}  # a batch size given may be measured again, for more batches
    assert all(1 < b < 2048 for b in new), refined  # it moved along batch size, inside the range
    # cpu's lower fixed cost wins a call of one sample, cpu1's throughput a call of 2,048: refinement added batch
    # sizes between.
    assert new, (refined, stop)
    read = cli_in_process(capsys, "analyze", str(path))
    assert read.returncode == 0 and stop in read.stdout.splitlines()
    said = verdict_lines(wrote.stdout)
    assert said and all(" per batch" in x and x in read.stdout.splitlines() for x in said), (wrote.stdout, read.stdout)
