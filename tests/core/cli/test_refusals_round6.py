"""Issue 56, items 10, 12, 13 and 15, on the command line: a full disk while --csv's lock is taken is a sentence that
leaves no lock file; a damaged or odd rule-calibration file is named as the fault, never blamed on the user's CSV,
never a hang; a report's profile texts are plain characters and a Markdown report's picture links work whatever
its name; `~nouser`, `--layers -1`, a link that loops and two profiles of one name are each said plainly."""
from __future__ import annotations

import errno
import json
import os
import re
import threading
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest
from helpers import H200_SWEEP_CSV, ROOT, cli_in_process

from crossover_lab.core.files import live, rule_calibration

CPU_SWEEP = ROOT / "docs" / "results" / "cpu-2026-12-03" / "sweep.csv"
CPU_PROFILE = ROOT / "resources" / "profiles" / "cpu-2026-12-03.json"


# ---------------------------------------------------------------- item 10: a full disk while the lock is taken


class _FullDisk:
    """The os module as live.py sees it, but a disk with no room for the lock file's few bytes: os.write says
    ENOSPC (creating the empty file still works, as it does on a real full disk)."""

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    @staticmethod
    def write(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("command", [["run", "--task", "predict"], ["sweep"]])
def test_a_full_disk_while_the_csv_is_claimed_is_a_sentence_and_leaves_no_lock_file(capsys, monkeypatch, tmp_path,
                                                                                       command):
    """It was an OSError traceback from OutputClaim._take, and an empty .crossover-….lock left at every try."""
    monkeypatch.setattr(live, "os", _FullDisk())
    out = cli_in_process(capsys, *command, "--data", "synthetic", "--csv", str(tmp_path / "t.csv"))
    assert out.returncode == 2, out.stderr  # as for any output that cannot be written, before anything is measured
    assert f"error: cannot write {tmp_path / 't.csv'}: {os.strerror(errno.ENOSPC)}" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no lock file, no CSV, no sidecar

    missing = cli_in_process(capsys, *command, "--data", "synthetic", "--csv", str(tmp_path / "no" / "t.csv"))
    assert missing.returncode == out.returncode  # the code of another unwritable --csv


def test_a_claim_that_fails_on_its_second_path_releases_the_first(monkeypatch, tmp_path):
    writes = []

    class SecondFull(_FullDisk):
        @staticmethod
        def write(fd: int, data: bytes) -> int:
            writes.append(fd)
            if len(writes) > 1:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return os.write(fd, data)

    monkeypatch.setattr(live, "os", SecondFull())
    with pytest.raises(live.ExportError, match="No space left on device"):
        live.OutputClaim(tmp_path / "a.csv", tmp_path / "a.json")
    assert len(writes) == 2 and list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- item 12: the rule's calibration file


def _analyze_with_calibration(capsys, monkeypatch, path: Path):
    monkeypatch.setattr(rule_calibration, "calibration_path", lambda: path)
    return cli_in_process(capsys, "analyze", str(H200_SWEEP_CSV))


def test_a_deeply_nested_calibration_file_is_named_and_the_answer_still_comes(capsys, monkeypatch, tmp_path):
    """It exited 2 blaming the user's CSV (a RecursionError while the answer's words were made)."""
    deep = tmp_path / "rule-calibration.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    out = _analyze_with_calibration(capsys, monkeypatch, deep)
    assert out.returncode == 0, out.stderr
    assert str(H200_SWEEP_CSV) not in out.stderr
    assert (f"not measured (the rule's calibration cannot be used: {deep} nests 100000 levels deep, more than the "
            "64 Crossover reads") in out.stdout, out.stdout
    assert "at most a 5% chance of any false lead" in out.stdout  # the rule's own design rate stands


def test_a_fifo_as_calibration_file_is_named_and_never_hangs(capsys, monkeypatch, tmp_path):
    fifo = tmp_path / "rule-calibration.json"
    os.mkfifo(fifo)

    def release() -> None:  # before the fix the open waited for a writer for ever: one comes, so the test fails
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)

    timer = threading.Timer(30.0, lambda: _quietly(release))
    timer.start()
    try:
        out = _analyze_with_calibration(capsys, monkeypatch, fifo)
    finally:
        timer.cancel()
    assert out.returncode == 0, out.stderr
    assert (f"not measured (the rule's calibration cannot be used: {fifo} is a named pipe (fifo), not a regular "
            "file") in out.stdout, out.stdout


def _quietly(job) -> None:
    try:
        job()
    except OSError:  # no reader waits: it did not hang
        pass


@pytest.mark.parametrize("text, words", [
    ('{"format": "crossover-rule-calibration/1", "worst_false_lead": ' + "1" * 5000 + "}",
     "holds a number thousands of digits long"),
    ('{"format": "something else", "worst_false_lead": 0.01}', "is not a rule calibration"),
    ('{"format": "crossover-rule-calibration/1", "worst_false_lead": 7}', "gives no false-lead rate between 0 and 1"),
    ("\xff\xfe not text", "is not UTF-8 text"),
], ids=["a 5,000-digit number", "another format", "a rate of 7", "not UTF-8"])
def test_a_damaged_calibration_file_says_what_is_wrong_with_it(tmp_path, text, words):
    path = tmp_path / "rule-calibration.json"
    path.write_bytes(text.encode("latin-1"))
    assert rule_calibration.calibrated_false_leads(path) is None
    problem = rule_calibration.calibration_problem(path)
    assert problem.startswith(str(path)) and words in problem, problem
    missing = tmp_path / "none.json"  # never measured here: no damage to name
    assert rule_calibration.calibrated_false_leads(missing) is None and rule_calibration.calibration_problem(missing) == ""
    shipped = rule_calibration.calibrated_false_leads()
    assert shipped is not None and 0 <= shipped[0] <= 1 and rule_calibration.calibration_problem() == ""


# ---------------------------------------------------------------- item 13: the report's texts and pictures


EVIL = "\x1b[31mred\x07\u202egpu0 slower\u2066x\r\n"


def _evil_profile(tmp_path: Path) -> Path:
    data = json.loads(CPU_PROFILE.read_text(encoding="utf-8"))
    data["name"] = "evil" + EVIL
    data["command"] = "cmd" + EVIL
    data["host"].update(machine="vm" + EVIL, cpu="cpu" + EVIL, keras="3.15" + EVIL)
    for lane in data["lanes"]:
        lane["device"] = "dev" + EVIL
        lane["settings"] = {k: v + EVIL for k, v in lane["settings"].items()}
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _hidden(text: str) -> list[str]:
    """Control, format (bidi) and separator characters other than a line break or a tab."""
    return [f"U+{ord(c):04X}" for c in text if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


def test_an_html_reports_predictions_show_a_profiles_control_and_bidi_characters_never_their_effect(capsys, tmp_path):
    out_path = tmp_path / "report.html"
    out = cli_in_process(capsys, "report", str(CPU_SWEEP), "-o", str(out_path), "--profile", str(_evil_profile(tmp_path)))
    assert out.returncode == 0, out.stderr
    html = out_path.read_text(encoding="utf-8")
    predictions = html[html.index(">Predictions<"):]
    assert "evil" in predictions and "dev" in predictions
    assert _hidden(predictions) == [] and _hidden(html) == []
    assert "\\x1b[31mred\\x07\\u202egpu0 slower" in predictions  # shown as characters, not dropped


@pytest.mark.parametrize("name", ["my report.md", "two\nlines (draft) [x].md", "a:b <c>.md"],
                         ids=["a space", "a newline and brackets", "a colon and angles"])
def test_every_picture_link_of_a_markdown_report_leads_to_its_picture_whatever_the_reports_name(capsys, tmp_path,
                                                                                                  name):
    from markdown_it import MarkdownIt  # rich's own Markdown parser: a CommonMark reader as a reader's viewer is

    target = tmp_path / name
    out = cli_in_process(capsys, "report", str(H200_SWEEP_CSV), "-o", str(target))
    assert out.returncode == 0, out.stderr
    pictures = sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".svg")
    assert pictures, list(tmp_path.iterdir())
    tokens = MarkdownIt().parse(target.read_text(encoding="utf-8"))
    links = [str(child.attrs["src"]) for t in tokens if t.type == "inline" for child in t.children or ()
             if child.type == "image"]
    assert len(links) == len(pictures), (links, pictures)  # each is a picture, not text with brackets in it
    assert sorted(unquote(link) for link in links) == pictures
    assert all((tmp_path / unquote(link)).is_file() and not re.search(r"[\s<>()]", link) for link in links)


# ---------------------------------------------------------------- item 15: predict and profile's own refusals


@pytest.mark.parametrize("args, words", [
    (["profile", "-o", "~nouser-crossover/x.json", "--from", str(CPU_SWEEP)],
     "-o ~nouser-crossover/x.json: there is no such user's home folder"),
    (["run", "--task", "predict", "--data", "synthetic", "--csv", "~nouser-crossover/x.csv"],
     "--csv ~nouser-crossover/x.csv: there is no such user's home folder"),
    (["report", str(CPU_SWEEP), "-o", "~nouser-crossover/x.html"],
     "-o ~nouser-crossover/x.html: there is no such user's home folder"),
], ids=["profile -o", "run --csv", "report -o"])
def test_a_home_folder_of_no_user_is_a_sentence(capsys, args, words):
    """pathlib's RuntimeError ("Could not determine home directory") was a traceback."""
    out = cli_in_process(capsys, *args)
    assert out.returncode == 2 and f"error: {words}" in out.stderr, out.stderr


@pytest.mark.parametrize("layers", ["-1", "0", "9", "1000000000"])
def test_predict_refuses_a_depth_it_cannot_predict_saying_the_option(capsys, layers):
    """-1 was said as "0 hidden layers: choose 1-8", naming no option; a billion built a tuple of a billion widths."""
    out = cli_in_process(capsys, "predict", "--profile", "cpu-2026-12-03", "--along", "16,64", "--layers", layers)
    assert out.returncode == 2, out.stderr
    assert f"error: --layers {layers}: give the hidden layers of --along's models, 1 to 8" in out.stderr, out.stderr
    assert "cpu-2026-12-03:" not in out.stdout  # refused before any profile is said


def test_a_profile_that_is_a_link_in_a_loop_is_said_to_be_one(capsys, tmp_path):
    (tmp_path / "one.json").symlink_to(tmp_path / "two.json")
    (tmp_path / "two.json").symlink_to(tmp_path / "one.json")
    out = cli_in_process(capsys, "predict", "--profile", str(tmp_path / "one.json"))
    assert out.returncode == 2
    assert f"{tmp_path / 'one.json'} is a symbolic link that leads round in a loop" in out.stderr, out.stderr
    assert "Too many levels" not in out.stderr


def test_two_profiles_of_one_name_have_columns_told_apart_by_their_files(capsys, tmp_path):
    (tmp_path / "other").mkdir()
    for path in (tmp_path / "a.json", tmp_path / "b.json", tmp_path / "other" / "a.json"):
        path.write_bytes(CPU_PROFILE.read_bytes())  # each holds the profile named cpu-2026-12-03
    out = cli_in_process(capsys, "predict", "--profile", str(tmp_path / "a.json"), "--profile",
                         str(tmp_path / "b.json"), "--along", "16,64", "--lanes", "cpu")
    assert out.returncode == 0, out.stderr
    header = next(line for line in out.stdout.splitlines() if line.startswith("width "))
    assert header.split("  ")[0] == "width" and "cpu (a.json)" in header and "cpu (b.json)" in header, header
    assert "between cpu (a.json) and cpu (b.json)" in out.stdout

    out = cli_in_process(capsys, "predict", "--profile", str(tmp_path / "a.json"), "--profile",
                         str(tmp_path / "other" / "a.json"), "--profile", "cpu-2026-12-03", "--lanes", "cpu")
    said = [line for line in out.stdout.splitlines() if line.startswith("  cpu on ")]
    assert [line.split(":")[0] for line in said] == [f"  cpu on {tmp_path / 'a.json'}",
                                                      f"  cpu on {tmp_path / 'other' / 'a.json'}",
                                                      "  cpu on cpu-2026-12-03.json"], said

    # One file given twice is one profile: one column, not two alike.
    out = cli_in_process(capsys, "predict", "--profile", str(tmp_path / "a.json"), "--profile",
                         str(tmp_path / "a.json"), "--lanes", "cpu")
    assert [line for line in out.stdout.splitlines() if line.startswith("  cpu on ")] == \
        [line for line in out.stdout.splitlines() if line.startswith("  cpu on cpu-2026-12-03:")] != []
