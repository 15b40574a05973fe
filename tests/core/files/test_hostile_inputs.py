"""Hostile input files (issue 20): only regular files are read, every CSV line has a bound, an archive's declared
size is held against the memory there is, times the lanes that load it.

Refusals are asked of the CLI's main() in this process; a lane pool made at all fails the test.
"""
from __future__ import annotations

import io
import os
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest
from helpers import cli_in_process

from crossover_lab.core.files import npz_check
from crossover_lab.core.files.inputs import InputError, read_text_bounded
from crossover_lab.core.files.npz_check import DataError, cgroup_bytes_left, inspect_npz
from crossover_lab.core.files.run_files import read_runs
from crossover_lab.core.files.sweeps.sets import sidecar_of
from crossover_lab.core.lane.data import _load_npz

RUN = ("run", "--preset", "tiny", "--lanes", "cpu1", "--samples", "256")


@pytest.fixture(autouse=True)
def no_lanes(monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("a lane pool was started for a command that should have been refused")

    monkeypatch.setattr("crossover_lab.core.cli.run.LanePool", never)


def within(seconds: float, call):
    """`call()`'s value, failing the test (not hanging it) when it takes longer: a fifo must never be waited on."""
    out: list = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            out.append(call())
        except BaseException as exc:  # raised again in the test's own thread
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the reader waited on a fifo (or read an endless file)"
    if errors:
        raise errors[0]
    return out[0]


def refused(r, *words: str) -> None:
    assert r.returncode == 2, r.stdout + r.stderr
    for word in words:
        assert word in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def hostile(tmp_path: Path, name: str, kind: str) -> Path:
    path = tmp_path / name
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    return path


@pytest.mark.parametrize("kind, words", [("fifo", "named pipe"), ("zero", "character device")])
def test_a_data_file_that_is_not_a_regular_file_is_refused_unread(tmp_path, capsys, kind, words):
    path = hostile(tmp_path, "d.npz", kind)
    refused(within(10, lambda: cli_in_process(capsys, *RUN, "--data", str(path))), words, "regular file")
    with pytest.raises(DataError, match="regular file"):
        within(10, lambda: _load_npz(str(path)))  # the lane's own check: the file may have changed since


@pytest.mark.parametrize("kind, words", [("fifo", "named pipe"), ("zero", "character device")])
def test_analyze_refuses_a_file_that_is_not_a_regular_file(tmp_path, capsys, kind, words):
    path = hostile(tmp_path, "s.csv", kind)
    refused(within(10, lambda: cli_in_process(capsys, "analyze", str(path))), words)
    good = tmp_path / "good.csv"
    good.write_text("lane,width\n")
    refused(within(10, lambda: cli_in_process(capsys, "analyze", str(good), str(path))), words)


def test_a_sidecar_that_is_not_a_regular_file_is_never_read(tmp_path):
    hostile(tmp_path, "s-batches.json", "fifo")
    assert within(10, lambda: sidecar_of(tmp_path / "s.csv")) == {}
    (tmp_path / "r.csv").write_text("run_id,lane\n")
    hostile(tmp_path, "r.json", "zero")
    with pytest.raises(InputError, match="character device"):
        within(10, lambda: read_runs(tmp_path / "r.csv"))
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 2000)
    with pytest.raises(InputError, match="longer than"):
        read_text_bounded(big, limit=1000)


def test_a_csv_line_without_end_is_refused_with_a_sentence(tmp_path, capsys):
    path = tmp_path / "endless.csv"
    path.write_text("lane" + "x" * (5 << 20))  # one 5 MB line, no newline
    refused(cli_in_process(capsys, "analyze", str(path)), "longer than", "endless.csv")


def bomb(path: Path, rows: int, stored_rows: int) -> Path:
    """An archive whose x_train declares `rows` samples but holds `stored_rows` (a zip bomb's declared size,
    without the bytes); y_train holds all its labels."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "|u1", "fortran_order": False, "shape": (rows, 784)})
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("x_train.npy", header.getvalue()  # the magic, then the header
                         + bytes(stored_rows * 784))
        labels = io.BytesIO()
        np.save(labels, (np.arange(rows) % 10).astype(np.uint8))
        archive.writestr("y_train.npy", labels.getvalue())
    return path


def test_a_declared_size_beyond_the_memory_is_refused_for_each_lane_that_loads_it(tmp_path, capsys, monkeypatch):
    path = bomb(tmp_path / "b.npz", 10_000, 10_000)  # 7.8 MB declared (15.7 MB as float32)
    monkeypatch.setattr(npz_check, "available_bytes", lambda: 20 << 20)  # the cap this test sets
    inspect_npz(str(path), loaders=1)
    with pytest.raises(DataError, match="each of 2 lanes"):
        inspect_npz(str(path), loaders=2)
    refused(cli_in_process(capsys, "run", "--preset", "tiny", "--lanes", "cpu,cpu1", "--data", str(path)),
            "each of 2 lanes", "free memory")


def test_the_cgroup_limit_counts(tmp_path):
    (tmp_path / "memory.max").write_text("1000\n")
    (tmp_path / "memory.current").write_text("400\n")
    assert cgroup_bytes_left(str(tmp_path)) == 600
    (tmp_path / "memory.max").write_text("max\n")
    assert cgroup_bytes_left(str(tmp_path)) is None


def test_a_lane_reads_only_the_rows_a_run_uses(tmp_path):
    path = bomb(tmp_path / "b.npz", 1_000_000, 20)  # declares 784 MB, holds 16 kB: only 20 rows can be read
    x, y, _ = _load_npz(str(path), samples=20)
    assert x.shape == (20, 784) and list(y[:3]) == [0, 1, 2]
