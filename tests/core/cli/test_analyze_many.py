"""`analyze` of many sweep files (issue 56 item 9): beyond four lanes, a table per width (the fastest lane, its
runner-up, the ratio and the one rule on that lead) instead of every pair in prose, and work that grows with the
files, not with their pairs: at most one pair judged per width, no bootstrap of fitted lines."""
from __future__ import annotations

import json

import pytest
from helpers import cli_in_process

from crossover_lab.core.analysis import fits, leaders, verdict
from crossover_lab.core.files.sweeps.rows import SweepRow, sweep_rows_text
from crossover_lab.core.words import sweep as sweep_words

WIDTHS = [16, 64, 256, 1024, 4096]
FILES = 20
FAST = 7  # the file whose lanes run at half the time of every other's


def cost_ms(lane: str, width: int) -> float:
    # cpu1 leads at small widths (less overhead), cpu at large ones (more throughput): the fastest lane changes near
    # 512 units, far enough from every width measured that one lane leads clearly at each.
    return 0.1 + width / 400 if lane == "cpu1" else 0.868 + width / 1000


def write_files(folder, n: int = FILES) -> list[str]:
    """N sweep files without sidecars (so each is a machine of its own, its lanes FILE/cpu and FILE/cpu1), their
    times 0–20% apart, and file FAST's at half."""
    paths = []
    for i in range(n):
        scale = 0.5 if i == FAST else 1 + 0.2 * ((i * 7) % n) / n
        rows = [SweepRow(lane, "CPU", w, 0, 1000 * w, 128, ms, ms * 0.95, ms * 1.05, 200)
                for lane in ("cpu", "cpu1") for w in WIDTHS for ms in [scale * cost_ms(lane, w)]]
        path = folder / f"sweep{i:02d}.csv"
        path.write_text(sweep_rows_text(rows))
        paths.append(str(path))
    return paths


@pytest.fixture
def work(monkeypatch) -> dict[str, int]:
    """How many pairs the one rule judged and how many bootstraps of fitted lines ran, however they were reached."""
    counts = {"judged": 0, "bootstraps": 0}

    def counted(function, key):
        def wrapper(*args, **kwargs):
            counts[key] += 1
            return function(*args, **kwargs)
        return wrapper

    judge = counted(verdict.curve_verdict, "judged")
    monkeypatch.setattr(verdict, "curve_verdict", judge)
    monkeypatch.setattr(leaders, "curve_verdict", judge)
    monkeypatch.setattr(sweep_words, "crossover_interval", counted(fits.crossover_interval, "bootstraps"))
    return counts


def table_rows(text: str) -> dict[str, str]:
    """The table's rows by the width they start with."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("width (units)"))
    return {line.split()[0]: line for line in lines[start + 2:] if line.strip() and line.split()[0][0].isdigit()}


def test_many_files_get_a_table_per_width_naming_the_fastest_lane(tmp_path, capsys, work):
    out = cli_in_process(capsys, "analyze", *write_files(tmp_path))
    assert out.returncode == 0, out.stderr
    assert len(out.stdout) < 20_000, f"{len(out.stdout):,} bytes: every pair in prose again?"
    rows = table_rows(out.stdout)
    assert list(rows) == ["16", "64", "256", "1,024", "4,096"]  # one row per width, in width order
    for width, line in rows.items():
        fastest = "cpu1" if width in ("16", "64", "256") else "cpu"
        assert line.split()[1] == f"sweep{FAST:02d}/{fastest}", line
        assert line.endswith("clear"), line  # half the time of every other lane: the rule finds the lead
    assert "40 lanes make 780 pairs" in out.stdout
    assert "--lanes " in out.stdout  # where every pair's sentence is
    assert " too close to call" not in out.stdout and " is faster " not in out.stdout  # no pair in prose
    # The work a user waits for: one pair per width at most, never the 780 pairs or a bootstrap for each.
    assert work["judged"] <= len(WIDTHS)
    assert work["bootstraps"] == 0


def test_many_files_as_json_are_the_same_table(tmp_path, capsys, work):
    out = cli_in_process(capsys, "analyze", *write_files(tmp_path), "--json")
    assert out.returncode == 0, out.stderr
    assert len(out.stdout) < 60_000
    found = json.loads(out.stdout)
    table = found["leaders"]["all"]["time"]
    assert [r["width"] for r in table["widths"]] == WIDTHS
    assert [r["lane"] for r in table["widths"]] == [f"sweep{FAST:02d}/{lane}" for lane in
                                                    ("cpu1", "cpu1", "cpu1", "cpu", "cpu")]
    assert all(r["leader"] == r["lane"] and r["ratio"] > 1.3 for r in table["widths"])
    assert table["pairs"] == 780 and len(table["judged"]) <= len(WIDTHS)
    assert len(found["files"]) == FILES
    assert work["judged"] <= len(WIDTHS) and work["bootstraps"] == 0


def test_lanes_picks_a_pair_to_say_in_full(tmp_path, capsys):
    out = cli_in_process(capsys, "analyze", *write_files(tmp_path), "--lanes", f"sweep{FAST:02d}/cpu,sweep00/cpu")
    assert out.returncode == 0, out.stderr
    assert f"sweep{FAST:02d}/cpu is faster from 16 to 4,096 units" in out.stdout
    assert "runner-up" not in out.stdout


def test_lanes_naming_no_lane_of_the_files_is_refused_with_a_sentence(tmp_path, capsys):
    out = cli_in_process(capsys, "analyze", *write_files(tmp_path, 6), "--lanes", "sweep00/cpu,gpu9")
    assert out.returncode != 0
    assert "gpu9 is not a lane of these files" in out.stderr and "(12 in all)" in out.stderr


def test_two_files_of_two_lanes_keep_every_pair_in_prose(tmp_path, capsys):
    out = cli_in_process(capsys, "analyze", *write_files(tmp_path, 2))
    assert out.returncode == 0, out.stderr
    assert "runner-up" not in out.stdout
    # Four lanes, six pairs, each in its sentence (the second file's times 10% above the first's throughout: measured
    # apart, in one pass each, no lead the rule can say; issue 57).
    assert "sweep00/cpu and sweep01/cpu" in out.stdout
    assert out.stdout.count(" (one run per width; at most a 5% chance of any false lead") == 6


def test_a_tie_in_the_table_is_said_as_the_verdict_decided_it(tmp_path, capsys):
    """Issue 57 #5: a width where the two fastest lanes tie says what the equivalence test found ("equal within ±X%"
    where the data bound the difference closely, else "no answer: up to X% could hide"), never "within noise" from
    a threshold of the words'."""
    paths = write_files(tmp_path)
    fast = tmp_path / f"sweep{FAST:02d}.csv"
    twin = tmp_path / "sweep99.csv"
    twin.write_text(fast.read_text())  # a second file as fast as the fastest: the two tie at every width
    out = cli_in_process(capsys, "analyze", *paths, str(twin))
    assert out.returncode == 0, out.stderr
    cells = [line.rpartition("  ")[2] for line in table_rows(out.stdout).values()]
    assert cells and all(c.startswith(("equal within ±", "no answer: up to ")) for c in cells), cells
    assert "within noise" not in out.stdout and "noisy" not in out.stdout
