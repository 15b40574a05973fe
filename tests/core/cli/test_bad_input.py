"""Bad input is refused before any lane starts, with exit 2 and a sentence; bad files never crash `analyze`.

A refusal ends before any lane starts, so most are asked of the CLI's main() in this process (`cli_in_process`);
a few go through `python main.py` in a process of its own, so the exit code is proved end to end.
"""
from __future__ import annotations

import os
import stat
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest
from helpers import cli, cli_in_process

from crossover_lab.core.files.atomic import atomic_write_text
from crossover_lab.core.files.live import OutputClaim, RunFiles
from crossover_lab.core.files.npz_check import DataError, inspect_npz

def refused(r: subprocess.CompletedProcess, words: str) -> None:
    assert r.returncode == 2, r.stdout + r.stderr
    assert words in r.stderr, r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    assert "started on" not in r.stderr  # no lane ran


RUN = ("run", "--lanes", "cpu1", "--data", "synthetic", "--samples", "256", "--widths", "8")


@pytest.mark.parametrize("csv, words", [
    ("", "--csv is empty"),
    ("/nope/x.csv", "the folder /nope does not exist"),
    ("{tmp}", "is a folder"),
    ("{tmp}/ro/x.csv", "is not writable"),
    ("/proc/x.csv", "the folder /proc is not writable"),
    ("{tmp}/out.json", "its JSON sidecar would be the file itself"),
])
def test_bad_output_paths_are_refused_before_any_lane_starts(tmp_path, capsys, csv, words):
    (tmp_path / "ro").mkdir()
    os.chmod(tmp_path / "ro", 0o500)
    if os.geteuid() == 0 and "/ro/" in csv:
        pytest.skip("root can write into a read-only folder")
    r = cli_in_process(capsys, *RUN, "--csv", csv.format(tmp=tmp_path))
    refused(r, words)


@pytest.mark.lanes
def test_a_path_being_written_by_another_run_is_refused(tmp_path):
    target = tmp_path / "t.csv"
    claim = OutputClaim(target)
    try:  # another process, as another Crossover would be; and the exit code, end to end
        refused(cli(*RUN, "--csv", str(target), timeout=120), "is being written by another Crossover process")
    finally:
        claim.release()
    assert not claim.lock_path.exists()


@pytest.mark.parametrize("args, words", [
    (("run", "--widths", ""), "no widths given"),
    (("run", "--lanes", "cpu99"), "cpu99: this machine has"),
    (("sweep", "--layers", "0", "--widths", "8"), "0 hidden layers: choose 1-8"),
    (("sweep", "--batch-sizes", "32,abc", "--widths", "8"), "batch size 'abc' (item 2 of 2)"),
    (("sweep", "--widths", "8,x"), "sweep width 'x' (item 2 of 2)"),
])
def test_silently_ignored_input_is_refused(capsys, args, words):
    refused(cli_in_process(capsys, *args, "--data", "synthetic", "--samples", "256"), words)


def _npz(path: Path, **arrays) -> str:
    np.savez(path, **arrays)
    return str(path)


def bad_data_files(tmp: Path) -> dict[str, tuple[str, str]]:
    x = np.zeros((20, 784), np.float32)
    y = np.arange(20) % 10
    text = tmp / "text.npz"
    text.write_text("not a zip\n")
    (tmp / "folder.npz").mkdir()
    good = _npz(tmp / "good.npz", x_train=x, y_train=y)
    truncated = tmp / "truncated.npz"
    truncated.write_bytes(Path(good).read_bytes()[:2000])
    huge = tmp / "huge.npz"
    with zipfile.ZipFile(huge, "w") as z:  # a header that declares 10^12 samples, and no data
        with z.open("x_train.npy", "w") as fh:
            np.lib.format.write_array_header_1_0(fh, {"descr": "<f4", "fortran_order": False,
                                                      "shape": (10 ** 12, 784)})
        with z.open("y_train.npy", "w") as fh:
            np.lib.format.write_array_header_1_0(fh, {"descr": "<i8", "fortran_order": False, "shape": (10 ** 12,)})
    nan_x = x.copy()
    nan_x[3, 5] = np.nan
    return {
        "text": (str(text), "is not a NumPy archive (.npz)"),
        "folder": (str(tmp / "folder.npz"), "is a folder, not a .npz file"),
        "missing": (str(tmp / "none.npz"), "does not exist"),
        "truncated": (str(truncated), "is damaged"),
        "huge": (str(huge), "more than this machine's free memory"),
        "empty": (_npz(tmp / "empty.npz", x_train=np.zeros((0, 784)), y_train=np.zeros(0)), "holds no samples"),
        "nan pixels": (_npz(tmp / "nanx.npz", x_train=nan_x, y_train=y), "NaN or infinite"),
        "inf pixels": (_npz(tmp / "infx.npz", x_train=np.full((20, 784), np.inf, np.float32), y_train=y),
                       "NaN or infinite"),
        "nan labels": (_npz(tmp / "nany.npz", x_train=x, y_train=np.where(y == 3, np.nan, y)), "labels are NaN"),
        "float labels": (_npz(tmp / "floaty.npz", x_train=x, y_train=y + 0.5), "labels are fractions"),
        "bad labels": (_npz(tmp / "badlabel.npz", x_train=x, y_train=y + 5), "labels must be 0-9"),
        "objects": (_npz(tmp / "obj.npz", x_train=np.array([object()] * 20, dtype=object), y_train=y),
                    "holds Python objects"),
        "shape": (_npz(tmp / "shape.npz", x_train=np.zeros((20, 100)), y_train=y), "inputs have 100 features"),
        "count": (_npz(tmp / "count.npz", x_train=x, y_train=y[:10]), "20 inputs but 10 labels"),
    }


def test_every_bad_data_file_gets_its_own_sentence(tmp_path):
    for name, (path, words) in bad_data_files(tmp_path).items():
        with pytest.raises(DataError) as err:
            inspect_npz(path)
        assert words in str(err.value), name
        assert "allow_pickle" not in str(err.value), name
    inspect_npz(_npz(tmp_path / "ok.npz", x_train=np.zeros((20, 28, 28), np.uint8), y_train=np.arange(20) % 10))
    # Whole-number float labels (and one-hot rows) are class numbers.
    inspect_npz(_npz(tmp_path / "ok2.npz", x_train=np.zeros((20, 784)), y_train=(np.arange(20) % 10) * 1.0))
    inspect_npz(_npz(tmp_path / "ok3.npz", x_train=np.zeros((20, 784)), y_train=np.eye(10)[np.arange(20) % 10]))


def test_the_cli_refuses_bad_data_before_any_lane_starts(tmp_path, capsys):
    files = bad_data_files(tmp_path)
    for name in ("text", "folder", "nan labels", "huge"):
        path, words = files[name]
        r = cli_in_process(capsys, "run", "--lanes", "cpu1", "--widths", "8", "--data", path)
        refused(r, words)


@pytest.mark.parametrize("content, words", [
    (b"", "is empty: it holds no points"),
    (b"lane,width,flops_per_batch,median_ms\n", "holds no points"),
    (None, "is not a text CSV file"),
])
def test_analyze_bad_files_exit_2_with_a_sentence(tmp_path, capsys, content, words):
    path = tmp_path / "b.csv"
    path.write_bytes(content if content is not None else os.urandom(3000))
    r = cli_in_process(capsys, "analyze", str(path))
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.lanes
def test_analyze_drops_absurd_rows_and_says_how_many_and_why(tmp_path):
    path = tmp_path / "s.csv"
    rows = ["lane,width,flops_per_batch,median_ms,p10_ms,p90_ms"]
    for lane, ms in (("cpu", 1.0), ("gpu0", 0.5)):
        rows += [f"{lane},{w},{w * 1000},{ms * w / 16},,," for w in (16, 64, 256)]
    rows += ["cpu,1e400,1,1,,", "cpu,32,1,nan,,", "cpu,32,1,-4,,", "gpu0,40,x,1,,", "cpu,10,1000,1e99,,"]
    path.write_text("\n".join(rows) + "\n")
    r = cli("analyze", str(path), "--json", timeout=120)  # in a process of its own: exit 0, end to end
    assert r.returncode == 0, r.stderr
    assert "dropped 5 of 11 rows" in r.stderr
    assert "3 whose median_ms is not a positive time under a day" in r.stderr
    assert "1 whose width is not a whole number" in r.stderr  # 1e400
    assert "1 whose flops_per_batch is not a whole number" in r.stderr  # x


def test_replacing_a_file_keeps_its_permissions_and_long_names_work(tmp_path):
    target = tmp_path / ("x" * 240 + ".csv")  # 244 bytes: legal; a temporary name built from it would not be
    atomic_write_text(target, "a\n")
    os.chmod(target, 0o600)
    atomic_write_text(target, "b\n")
    assert target.read_text() == "b\n" and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_run_files_refuse_a_csv_that_is_its_own_sidecar(tmp_path):
    from crossover_lab.core.config import ConfigError

    with pytest.raises(ConfigError, match="its JSON sidecar would be the file itself"):
        RunFiles(tmp_path / "out.json", {})


def test_an_unwritable_log_folder_is_named_and_lanes_log_to_the_terminal(monkeypatch):
    from crossover_lab.core.paths import lane_log_path, log_dir_problem

    monkeypatch.setenv("CROSSOVER_HOME", "/proc/nope")
    assert "cannot create /proc/nope/logs" in log_dir_problem()
    assert lane_log_path("cpu") is None


@pytest.mark.lanes
def test_a_run_with_an_unwritable_home_still_trains_and_says_where_logs_go(tmp_path):
    r = cli(*RUN, env={"CROSSOVER_HOME": "/proc/nope"}, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "note: lane logs go to the terminal: cannot create /proc/nope/logs" in r.stderr
    assert "cpu1" in r.stdout and "completed" in r.stdout


def test_a_model_too_big_for_this_machine_is_refused_before_any_lane_starts(capsys):
    """8 × 16,384 units is 1.9 G weights: with Adam at least 28 GiB per lane (weights, gradients, 2 slots)."""
    from crossover_lab.core.cli.common import check_memory
    from crossover_lab.core.config import ConfigError, LaneSpec, ModelSpec, RunConfig, TrainSpec

    huge = RunConfig(ModelSpec((16384,) * 8), TrainSpec(batch_size=128))
    need = huge.model.min_memory_bytes(128, "adam")
    assert need == 4 * (huge.model.params * 4 + 2 * 128 * sum(huge.model.layer_sizes)) and need > 28 * 2**30
    assert huge.model.min_memory_bytes(128, "sgd") < need / 1.9  # SGD keeps no slots: weights and gradients only
    cpu, cpu1, gpu = LaneSpec.parse("cpu"), LaneSpec.parse("cpu1"), LaneSpec.parse("gpu")
    small = RunConfig(ModelSpec((128,)), TrainSpec())
    check_memory([small, huge], [cpu], free=need)  # it fits in one lane, exactly
    with pytest.raises(ConfigError, match=r"needs at least 28\.\d GiB to train with adam .* in each of 2 lanes"):
        check_memory([small, huge], [cpu, cpu1], free=need)  # two CPU lanes hold a copy each
    check_memory([huge], [gpu], free=0)  # a GPU lane's memory is its device's: not this check's
    predict = RunConfig(huge.model, TrainSpec(task="predict"))
    with pytest.raises(ConfigError, match="a predict run trains its weights a few steps first"):
        check_memory([predict], [cpu1], free=need // 2)
    from crossover_lab.core.files.npz_check import available_bytes
    if need <= available_bytes():  # checked first: on such a machine the sweep would really train it
        pytest.skip("this machine holds 28 GiB per lane: the refusal cannot be seen from the command line here")
    out = cli_in_process(capsys, "sweep", "--widths", "16,16384", "--layers", "8", "--lanes", "cpu1",
                         "--data", "synthetic")
    assert out.returncode == 2 and "lower the widths or the layers" in out.stderr and "sweep:" not in out.stdout


def test_a_model_too_big_for_a_gpu_lanes_device_is_refused_by_the_memory_the_driver_reports(monkeypatch):
    from crossover_lab.core.cli.common import check_memory
    from crossover_lab.core.config import ConfigError, LaneSpec, ModelSpec, RunConfig, TrainSpec
    from crossover_lab.core.engine import devices

    huge = RunConfig(ModelSpec((16384,) * 8), TrainSpec(batch_size=128))  # at least 28 GiB with Adam
    gpu, gpu1 = LaneSpec.parse("gpu0"), LaneSpec.parse("gpu1")
    monkeypatch.setattr(devices, "nvidia_gpus", lambda: [{"name": "big", "driver": "1", "memory": "143771 MiB"},
                                                         {"name": "small", "driver": "1", "memory": "16384 MiB"}])
    check_memory([huge], [gpu], free=0)  # 140 GiB on gpu0 holds it
    with pytest.raises(ConfigError, match=r"on gpu1, whose GPU has 16\.0 GiB in all"):
        check_memory([huge], [gpu1], free=0)
    monkeypatch.setattr(devices, "nvidia_gpus", lambda: [])  # no driver listing: not known, not refused
    check_memory([huge], [gpu1], free=0)
