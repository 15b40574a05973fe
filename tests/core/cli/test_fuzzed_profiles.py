"""Issue 56's proof: profiles someone sends, damaged every way a file can be (values of the wrong kind anywhere,
terminal escapes and bidi overrides in every text, HTML in names, lanes naming hosts, huge numbers, nesting), read
by `predict`, `report --profile` and the window's "From a profile file…". Each ends with exit 0, or exit 2 and a
sentence; never a traceback, never a raw control character on the terminal, never an exception out of a slot.
Seeded, so a failure repeats; a sample in the fast set, the whole count in the thorough set."""
from __future__ import annotations

import json
import random

import pytest
from helpers import ROOT, cli_in_process

SHIPPED = ROOT / "resources" / "profiles" / "h200-2026-11-30.json"
SWEEP = ROOT / "docs" / "results" / "cpu-2026-12-03" / "sweep.csv"
NASTY = ["\x1b[2J\x1b]0;owned\x07", "\u202egpu0 slower", "\r\x00", "<b style='color:red'>VERDICT</b><img src=x>",
         "ssh://attacker@evil.example:2222/cpu", "../../etc/passwd", "cpu; rm -rf ~", "\ud800"]
WRONG = [None, "", -1, 0, float("inf"), [], {}, [[[[]]]], 10**400, True, 1e308, "x" * 5000]
CONTROL = set("\x1b\x07\x00\r\u202e")
CASES = [pytest.param(12, id="sample"), pytest.param(80, id="thorough", marks=pytest.mark.thorough)]


def paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from paths(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node[:3]):
            yield from paths(value, prefix + (i,))


def put(node, path, value):
    if not path:
        return value
    node[path[0]] = put(node[path[0]], path[1:], value)
    return node


def damaged(rng: random.Random) -> dict:
    data = json.loads(SHIPPED.read_text())
    where = list(paths(data))
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(where[1:])
        value = rng.choice(NASTY + WRONG)
        try:
            data = put(data, path, value)
        except (TypeError, KeyError, IndexError):
            continue
    return data


def write(tmp_path, k: int, data: dict) -> str:
    path = tmp_path / f"sent-{k}.json"
    path.write_text(json.dumps(data, allow_nan=True), encoding="utf-8", errors="surrogatepass")
    return str(path)


def clean(text: str) -> bool:
    return not (CONTROL & set(text)) and not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


@pytest.mark.parametrize("cases", CASES)
def test_damaged_profiles_through_predict_and_report_are_a_sentence_and_print_no_control(capsys, tmp_path, cases):
    rng = random.Random(56)
    for k in range(cases):
        profile = write(tmp_path, k, damaged(rng))
        out = cli_in_process(capsys, "predict", "--profile", profile, "--preset", "qa")
        assert out.returncode in (0, 2) and "Traceback" not in out.stderr, (k, out.stderr[-1500:])
        assert clean(out.stdout + out.stderr), (k, out.stdout[-500:], out.stderr[-500:])
        if k % 4 == 0:  # the report is slower: a quarter of the cases
            report = cli_in_process(capsys, "report", str(SWEEP), "-o", str(tmp_path / f"r{k}.html"), "--profile",
                                    profile)
            assert report.returncode in (0, 2) and "Traceback" not in report.stderr, (k, report.stderr[-1500:])
            assert clean(report.stdout + report.stderr)
            page = tmp_path / f"r{k}.html"
            if page.exists():
                html = page.read_text(encoding="utf-8")
                assert "<b style='color:red'>VERDICT" not in html and not (CONTROL & set(html)), k


def test_the_windows_profile_menu_says_a_damaged_files_problem_and_never_raises(make_window, tmp_path):
    window = make_window()
    predicted = window.compare.map.predicted
    rng = random.Random(57)
    for k in range(12):
        profile = write(tmp_path, k, damaged(rng))
        said = predicted.add_named(profile, "jax:gpu0")  # a sentence, or "" where the damage left it readable
        assert isinstance(said, str)
        assert clean(window.status.message()), window.status.message()
