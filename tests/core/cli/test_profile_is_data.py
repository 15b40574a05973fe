"""Hardened, round 6 (issue 56): a profile someone sends is data, never a command, and no output replaces what was
measured. Each attack below opened SSH connections, replaced a run's sidecar, flipped an answer or gave a traceback
before; each is now a sentence and exit 2, with the files it would have replaced unchanged."""
from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from helpers import ROOT, cli_in_process

from crossover_lab.core.config import ConfigError
from crossover_lab.core.engine.devices import host_info
from crossover_lab.core.files.device_profile import find_profile, profile_from_files, read_profile
from crossover_lab.core.plain_text import printable

SHIPPED = ROOT / "resources" / "profiles" / "h200-2026-11-30.json"
CPU_RESULTS = ROOT / "docs" / "results" / "cpu-2026-12-03"


def _profile(tmp_path, file: str = "sent.json", **change) -> str:
    data = json.loads(SHIPPED.read_text())
    for key, value in change.items():
        if key == "lane0":
            data["lanes"][0]["lane"] = value
        elif key == "host":
            data["host"] = value
        else:
            data[key] = value
    path = tmp_path / file
    path.write_text(json.dumps(data))
    return str(path)


def _digest(*paths) -> list[str]:
    return [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]


def test_a_profiles_lane_that_names_a_host_is_refused_and_measure_never_connects(capsys, tmp_path, monkeypatch):
    # The host copied from this machine, so that predict would offer --measure on its lanes.
    host = {**host_info(), "gpus": []}
    evil = _profile(tmp_path, lane0="ssh://attacker@evil.example:2222/cpu", host=host)
    ran: list = []
    monkeypatch.setattr("subprocess.Popen", lambda *a, **k: ran.append(a) or pytest.fail(f"a process ran: {a}"))
    out = cli_in_process(capsys, "predict", "--profile", evil, "--preset", "qa", "--measure")
    assert out.returncode == 2 and not ran
    assert "names another machine over SSH" in out.stderr and "never a host to connect to" in out.stderr
    with pytest.raises(ConfigError, match="not a lane's name"):
        read_profile(_profile(tmp_path, "odd.json", lane0="cpu; rm -rf ~"))


@pytest.mark.parametrize("out_name,source", [("sweep-batches.json", "sweep.csv"), ("sweep-batches.csv", "sweep.csv"),
                                             ("seed-blog-small.json", "seed-blog-small.csv")])
def test_no_output_replaces_a_measurement_or_an_input(capsys, tmp_path, out_name, source):
    for name in ("sweep.csv", "sweep-batches.csv", "sweep-batches.json", "seed-blog-small.csv",
                 "seed-blog-small.json"):
        shutil.copy(CPU_RESULTS / name, tmp_path / name)
    kept = sorted(tmp_path.iterdir())
    before = _digest(*kept)
    target = str(tmp_path / out_name)
    for args in (("profile", "--from", str(tmp_path / source), "-o", target),
                 ("report", str(tmp_path / source), "-o", target, "--format", "html"),
                 ("rule", str(tmp_path / source), "--json", target)):
        out = cli_in_process(capsys, *args)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        said = ("would replace what was measured", "never replaces a measurement", "a profile is a .json file")
        assert any(words in out.stderr for words in said), out.stderr
    # Another file's measurement, not this command's input: refused as well.
    other = cli_in_process(capsys, "profile", "--from", str(tmp_path / "sweep.csv"), "-o",
                           str(tmp_path / "seed-blog-small.json"))
    assert other.returncode == 2 and "never replaces a measurement" in other.stderr
    assert _digest(*kept) == before and sorted(tmp_path.iterdir()) == kept


def test_a_name_never_reads_a_planted_file_and_the_output_says_which_file_it_read(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _profile(tmp_path, "h200-2026-11-30", name="planted")  # a file of the shipped profile's name, no suffix
    _profile(tmp_path, "h200-2026-11-30.json", name="planted")
    assert find_profile("h200-2026-11-30").path == str(SHIPPED)
    out = cli_in_process(capsys, "predict", "--profile", "h200-2026-11-30", "--preset", "qa")
    assert out.returncode == 0 and "planted" not in out.stdout and f"(read from {SHIPPED})" in out.stdout
    path = cli_in_process(capsys, "predict", "--profile", "./h200-2026-11-30.json", "--preset", "qa")
    assert path.returncode == 0 and "planted" in path.stdout
    assert f"(read from {tmp_path / 'h200-2026-11-30.json'})" in path.stdout
    # The user's own folder is found by name too.
    mine = tmp_path / "home" / "profiles"
    mine.mkdir(parents=True)
    monkeypatch.setenv("CROSSOVER_HOME", str(tmp_path / "home"))
    _profile(mine, "lab-box.json", name="lab-box")
    assert find_profile("lab-box").name == "lab-box"


ESCAPES = "\x1b[2J\x1b]0;owned\x07\r\x00\u202eslower"


def test_texts_of_a_profile_are_printed_as_characters_never_as_terminal_commands(capsys, tmp_path):
    host = json.loads(SHIPPED.read_text())["host"]
    sent = _profile(tmp_path, name=f"lab{ESCAPES}", host={**host, "cpu": f"Xeon{ESCAPES}"})
    out = cli_in_process(capsys, "predict", "--profile", sent, "--preset", "qa")
    assert out.returncode == 0, out.stderr
    for ch in "\x1b\x07\r\x00\u202e":
        assert ch not in out.stdout + out.stderr
    assert "\\x1b[2J" in out.stdout and "\\u202e" in out.stdout
    assert printable("a\nb", frozenset()) == "a\\x0ab" and printable("plain text") == "plain text"


@pytest.mark.parametrize("content", [b"[" * 50_000 + b"]" * 50_000, b'{"format": "\xff\xfe"}',
                                     b'{"format": "crossover-profile/1", "name": "\\ud800", "lanes": [{"lane": '
                                     b'"\\ud800"}]}'])
def test_damaged_profiles_are_a_sentence_not_a_traceback(capsys, tmp_path, content):
    path = tmp_path / "damaged.json"
    path.write_bytes(content)
    for args in (("predict", "--profile", str(path), "--preset", "qa"),
                 ("report", str(CPU_RESULTS / "sweep.csv"), "-o", str(tmp_path / "r.html"), "--profile", str(path))):
        out = cli_in_process(capsys, *args)
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        assert "damaged.json" in out.stderr and "sweep.csv" not in out.stderr, out.stderr


def test_profile_outputs_that_cannot_be_written_are_a_sentence(capsys, tmp_path):
    (tmp_path / "p-sweeps").write_text("a file where the sweeps' folder goes")
    (tmp_path / "folder.json").mkdir()
    (tmp_path / "null.json").symlink_to("/dev/null")
    cases = {"p.json": "is a file", "folder.json": "folder", "null.json": "not a regular file"}
    for name, words in cases.items():
        out = cli_in_process(capsys, "profile", "--lanes", "cpu1", "-o", str(tmp_path / name), "--quick")
        assert out.returncode == 2 and words in out.stderr and "Traceback" not in out.stderr, (name, out.stderr)


def test_a_profile_is_of_one_machine_by_cores_and_gpus_not_the_cpu_string_alone(tmp_path):
    for name in ("sweep.csv", "sweep-batches.csv", "sweep-batches.json"):
        shutil.copy(CPU_RESULTS / name, tmp_path / name)
    other = tmp_path / "other"
    other.mkdir()
    for name in ("sweep.csv", "sweep-batches.csv"):
        shutil.copy(CPU_RESULTS / name, other / name)
    side = json.loads((tmp_path / "sweep-batches.json").read_text())
    side["host"]["cpu_cores"] = 16
    side["host"]["gpus"] = [{"name": "NVIDIA H200", "driver": "", "memory": ""}]
    (other / "sweep-batches.json").write_text(json.dumps(side))
    with pytest.raises(ConfigError, match="measured on 2 machines"):
        profile_from_files([str(tmp_path / "sweep.csv"), str(other / "sweep.csv")], "x", "", "")
    (other / "sweep-batches.json").unlink()
    with pytest.raises(ConfigError, match="no machine recorded"):
        profile_from_files([str(tmp_path / "sweep.csv"), str(other / "sweep.csv")], "x", "", "")
