"""Hostile output paths (issue 20): special files, planted links, names too long, two writers of one sidecar.

Each refusal is asked of the CLI's main() in this process, with the lane pool replaced by one that fails the
test if it is ever made: every refusal comes before any lane starts.
"""
from __future__ import annotations

import csv
import hashlib
import io
import os
import stat
import subprocess
from pathlib import Path

import pytest
from helpers import cli_in_process

from crossover_lab.core.files import autosave
from crossover_lab.core.files.atomic import (ExportError, LineTooLong, append_lines, atomic_write_text,
                                             complete_lines, split_lines)
from crossover_lab.core.files.live import OutputClaim, RunFiles
from crossover_lab.core.files.run_files import export_runs, read_batches_csv
from crossover_lab.core.records import BatchTiming

RUN = ("run", "--preset", "tiny", "--lanes", "cpu1", "--samples", "256", "--data", "synthetic")
ROOT = os.geteuid() == 0


@pytest.fixture(autouse=True)
def no_lanes(monkeypatch):
    """A lane pool made at all fails the test: what is refused is refused before any lane starts."""
    def never(*args, **kwargs):
        raise AssertionError("a lane pool was started for a command that should have been refused")

    for module in ("run", "sweep", "anatomy"):
        monkeypatch.setattr(f"crossover_lab.core.cli.{module}.LanePool", never)


def refused(r: subprocess.CompletedProcess, *words: str) -> None:
    assert r.returncode == 2, r.stdout + r.stderr
    for word in words:
        assert word in r.stderr, r.stderr
    assert "Traceback" not in r.stderr, r.stderr


def special(tmp_path: Path, kind: str) -> Path:
    node = tmp_path / f"{kind}.csv"
    if kind == "fifo":
        os.mkfifo(node)
    elif kind == "chardev":
        if not ROOT:
            pytest.skip("making a device node needs root")
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
    elif kind == "link-to-device":
        node.symlink_to("/dev/null")
    return node


@pytest.mark.parametrize("kind, words", [("fifo", "named pipe"), ("chardev", "character device"),
                                         ("link-to-device", "character device")])
def test_a_special_file_is_never_replaced_by_run_csv(tmp_path, capsys, kind, words):
    node = special(tmp_path, kind)
    before = os.lstat(node)
    refused(cli_in_process(capsys, *RUN, "--csv", str(node)), words, "not a regular file")
    after = os.lstat(node)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    assert not (tmp_path / f"{kind}.json").exists()


def test_sweep_and_anatomy_refuse_a_special_file_too(tmp_path, capsys):
    fifo = special(tmp_path, "fifo")
    refused(cli_in_process(capsys, "sweep", "--lanes", "cpu1", "--widths", "8", "--data", "synthetic",
                           "--csv", str(fifo)), "named pipe")
    refused(cli_in_process(capsys, "anatomy", "--lanes", "cpu1", "--data", "synthetic",
                           "--json-file", str(fifo)), "named pipe")
    os.mkfifo(tmp_path / "s-batches.json")  # the sweep's sidecar, not its CSV
    refused(cli_in_process(capsys, "sweep", "--lanes", "cpu1", "--widths", "8", "--data", "synthetic",
                           "--csv", str(tmp_path / "s.csv")), "s-batches.json", "named pipe")


def test_a_folder_where_the_sidecar_goes_is_refused_before_training(tmp_path, capsys):
    (tmp_path / "out.json").mkdir()
    refused(cli_in_process(capsys, *RUN, "--csv", str(tmp_path / "out.csv")), "sidecar", "out.json", "is a folder")
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("stem_bytes, words", [(251, "sidecar"), (252, "256 bytes long")])
def test_names_too_long_are_refused_before_training(tmp_path, capsys, stem_bytes, words):
    name = "é" * (stem_bytes // 2) + "x" * (stem_bytes % 2) + ".csv"  # counted in bytes, not characters
    assert len(name.encode()) == stem_bytes + 4
    refused(cli_in_process(capsys, *RUN, "--csv", str(tmp_path / name)), words, "255")
    assert list(tmp_path.iterdir()) == []


def test_the_pair_is_claimed_so_two_csv_names_cannot_share_a_sidecar(tmp_path, capsys):
    first = RunFiles(tmp_path / "res.csv", {})  # a run writing res.csv and res.json
    try:
        refused(cli_in_process(capsys, *RUN, "--csv", str(tmp_path / "res")), "being written by another")
    finally:
        first.close()
    assert not list(tmp_path.glob(".crossover-*.lock"))


def test_a_sweep_claims_its_sidecar_against_a_run(tmp_path, capsys):
    first = RunFiles(tmp_path / "s-batches.csv", {})  # a run's pair is the sweep's per-batch pair
    try:
        refused(cli_in_process(capsys, "sweep", "--lanes", "cpu1", "--widths", "8", "--data", "synthetic",
                               "--csv", str(tmp_path / "s.csv")), "being written by another")
    finally:
        first.close()


def lock_of(path: Path) -> Path:
    return path.parent / f".crossover-{hashlib.sha1(path.name.encode()).hexdigest()[:12]}.lock"


@pytest.mark.parametrize("plant", ["symlink", "hardlink"])
def test_a_planted_lock_file_never_overwrites_its_victim(tmp_path, plant):
    victim = tmp_path / "victim.txt"
    victim.write_text("IMPORTANT DATA")
    lock = lock_of(tmp_path / "t.csv")
    if plant == "symlink":
        lock.symlink_to(victim)
    else:
        os.link(victim, lock)
    with pytest.raises(ExportError, match="lock file"):
        OutputClaim(tmp_path / "t.csv", tmp_path / "t.json")
    assert victim.read_text() == "IMPORTANT DATA"


def test_records_are_never_appended_through_a_symlink(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("IMPORTANT DATA")
    (tmp_path / "t.csv").symlink_to(victim)
    with pytest.raises(ExportError, match="symbolic link"):
        append_lines(tmp_path / "t.csv", "a,b", ["1,2\n"])
    os.mkfifo(tmp_path / "f.csv")
    with pytest.raises(ExportError, match="named pipe"):
        append_lines(tmp_path / "f.csv", "a,b", ["1,2\n"])  # no reader: must not hang either
    assert victim.read_text() == "IMPORTANT DATA"


def record(step: int, backend: str = "tensorflow") -> BatchTiming:
    return BatchTiming("r1", "cpu1", "CPU", 0, step, step, 0.1 * step, 1.5, 64, False, 0.5, backend=backend)


def test_after_the_pair_could_not_be_written_nothing_is_appended_at_the_path(tmp_path):
    files = RunFiles(tmp_path / "t.csv", {}, claim=False)
    (tmp_path / "t.json").mkdir()  # after the checks: the first pair cannot be written
    files.begin([])
    files.add_records([record(1)])
    files.flush_records()
    files.writer.flush(10)
    assert "folder" in files.writer.error
    assert not (tmp_path / "t.csv").exists()  # no CSV of records alone, beside no sidecar
    files.close()


def test_the_window_export_refuses_a_special_file(tmp_path):
    fifo = special(tmp_path, "fifo")
    with pytest.raises(ExportError, match="named pipe"):
        export_runs(fifo, [], {})
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.skipif(not ROOT, reason="giving a file to another user needs root")
def test_root_replacing_a_file_keeps_its_owner_and_mode(tmp_path):
    target = tmp_path / "theirs.csv"
    target.write_text("old\n")
    os.chown(target, 12345, 23456)
    os.chmod(target, 0o640)
    atomic_write_text(target, "new\n")
    st = os.stat(target)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (12345, 23456, 0o640)
    assert target.read_text() == "new\n"


def test_a_broken_autosave_folder_is_refused_before_training(tmp_path, capsys, monkeypatch):
    (tmp_path / "home").write_text("a file where the folder goes")
    monkeypatch.setenv("CROSSOVER_HOME", str(tmp_path / "home"))
    assert "not a folder" in autosave.rescue_problem()
    refused(cli_in_process(capsys, *RUN, "--csv", str(tmp_path / "t.csv")), "autosave folder", "CROSSOVER_HOME")


def test_live_appends_split_lines_at_newline_only(tmp_path):
    assert split_lines("a\u2028b\x85c\nd\n") == ["a\u2028b\x85c\n", "d\n"]
    files = RunFiles(tmp_path / "t.csv", {}, claim=False)
    files.begin([])
    files.add_records([record(1, "tensorflow\u2028"), record(2, "jax\x85"), record(3)])
    files.flush_records()
    files.writer.flush(10)
    files.close()
    assert files.writer.error == ""
    assert [r.backend for r in read_batches_csv(tmp_path / "t.csv")] == ["tensorflow\u2028", "jax\x85", "tensorflow"]


def test_a_line_without_end_is_read_no_further_than_the_bound():
    endless = io.StringIO("x" * 5000, newline="")
    with pytest.raises(LineTooLong):
        list(complete_lines(endless, max_chars=1000))
    assert endless.tell() <= 1001
    lines = list(complete_lines(io.StringIO('a,b\n"1\r2",3\ncut', newline="")))
    assert [row for row in csv.reader(lines)] == [["a", "b"], ["1\r2", "3"]]


def test_appended_pieces_that_splitlines_cut_at_u2028_are_joined_back(tmp_path):
    text = 'a,b\n"tensorflow\u2028",1\n"jax\x85",2\n'
    append_lines(tmp_path / "s.csv", "a,b", text.splitlines(keepends=True)[1:])  # as core/files/sweeps/files.py does
    assert (tmp_path / "s.csv").read_bytes().decode("utf-8") == text


@pytest.mark.lanes  # a Python process of its own: a test of realness
def test_a_stale_lock_left_by_kill_9_is_taken_over_with_a_note(tmp_path):
    """A process killed with kill -9 while it holds a claim leaves its lock file (the kernel drops the lock, not
    the file): the next claim takes it over, says whose it was, and writes its own pid in it."""
    import sys
    import textwrap
    script = textwrap.dedent(f"""
        import os, signal
        from crossover_lab.core.files.live import OutputClaim
        OutputClaim({str(tmp_path / 't.csv')!r}, {str(tmp_path / 't.json')!r})
        print(os.getpid(), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == -9, r.stderr
    dead = r.stdout.strip()
    lock = lock_of(tmp_path / "t.csv")
    assert lock.read_text() == dead  # left behind
    claim = OutputClaim(tmp_path / "t.csv", tmp_path / "t.json")
    try:
        assert any(f"pid {dead}" in note and "took over" in note for note in claim.notes), claim.notes
        assert lock.read_text() == str(os.getpid())
    finally:
        claim.release()
    fresh = OutputClaim(tmp_path / "t.csv", tmp_path / "t.json")
    try:
        assert fresh.notes == []  # a claim released properly leaves no lock to take over
    finally:
        fresh.release()


def test_the_cli_says_when_it_takes_over_a_stale_lock(tmp_path, capsys):
    lock_of(tmp_path / "t.csv").write_text("424242")  # as a kill -9 leaves it
    from crossover_lab.core.cli.common import open_run_files
    files = open_run_files(str(tmp_path / "t.csv"), {})
    assert files is not None
    try:
        err = capsys.readouterr().err
        assert f"took over the lock of {tmp_path / 't.csv'} left by pid 424242" in err and err.count("note:") == 1
    finally:
        files.close()
