"""Damaged files meet a sentence, never a traceback: sidecars of a run and of a sweep with values of the wrong kind
put anywhere in them (null, "", text, -1, infinity, NaN, lists, objects, 10^400, nesting), and sweep CSVs with
damaged cells ("", nan, inf, 1e400, 1e-320, -1, text), read by `analyze` and `report`. Each ends with exit 0, or
exit 2 and an `error:` sentence. Seeded, so a failure repeats; the mutations start from files this machine wrote
(docs/results/cpu-2026-12-03)."""
from __future__ import annotations

import csv
import io
import json
import random
import shutil
from pathlib import Path

import pytest
from helpers import ROOT, cli_in_process

SOURCE = ROOT / "docs" / "results" / "cpu-2026-12-03"
WRONG = [None, "", "x", -1, 0, float("inf"), float("nan"), [], {}, [[[[]]]], 10**400, True, {"@": "RunJob"}]
CELLS = ["", "nan", "inf", "-inf", "1e400", "1e-320", "-1", "x", "0", "999999999999999999999999"]
# Cases per file: a seeded sample in the fast set, the whole count in `make test`'s second set (marked `thorough`),
# the sample's cases first among them.
CASES = [pytest.param(16, id="sample"), pytest.param(80, id="thorough", marks=pytest.mark.thorough)]


def json_paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from json_paths(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node[:3]):
            yield from json_paths(value, prefix + (i,))


def put(node, path, value):
    if not path:
        return value
    node[path[0]] = put(node[path[0]], path[1:], value)
    return node


def read_back(capsys, folder: Path, csv_name: str) -> list[tuple[str, int, str]]:
    out = []
    for args in (["analyze", str(folder / csv_name)],
                 ["report", str(folder / csv_name), "-o", str(folder / "r.html")]):
        done = cli_in_process(capsys, *args)  # an exception would fail the test with its traceback
        out.append((args[0], done.returncode, done.stderr))
    return out


@pytest.mark.parametrize("cases", CASES)
@pytest.mark.parametrize("csv_name", ["seed-blog-small.csv", "sweep-batches.csv"], ids=["run", "sweep"])
def test_damaged_sidecars_give_exit_2_and_a_sentence(tmp_path, capsys, csv_name, cases):
    meta = json.loads((SOURCE / csv_name.replace(".csv", ".json")).read_text(encoding="utf-8"))
    paths = list(json_paths(meta))
    rng = random.Random(csv_name)
    for case in range(cases):
        damaged = json.loads(json.dumps(meta))
        for _ in range(rng.randint(1, 3)):
            try:
                damaged = put(damaged, rng.choice(paths), rng.choice(WRONG))
            except (KeyError, IndexError, TypeError):  # an earlier change removed what this path went through
                pass
        folder = tmp_path / str(case)
        folder.mkdir()
        shutil.copy(SOURCE / csv_name, folder / csv_name)
        (folder / csv_name.replace(".csv", ".json")).write_text(json.dumps(damaged), encoding="utf-8")
        for command, code, err in read_back(capsys, folder, csv_name):
            assert code in (0, 2), (case, command, err[-800:])
            assert code == 0 or err.startswith("error: ") or "\nerror: " in err, (case, command, err[-800:])


@pytest.mark.parametrize("cases", CASES)
def test_damaged_cells_of_a_sweep_csv_give_exit_0_or_2_never_a_traceback(tmp_path, capsys, cases):
    with open(SOURCE / "sweep.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    rng = random.Random("cells")
    for case in range(cases):
        damaged = [list(row) for row in body]
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(len(damaged))][rng.randrange(len(header))] = rng.choice(CELLS)
        folder = tmp_path / str(case)
        folder.mkdir()
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerows([header, *damaged])
        (folder / "sweep.csv").write_text(text.getvalue(), encoding="utf-8")
        for command, code, err in read_back(capsys, folder, "sweep.csv"):
            assert code in (0, 2), (case, command, err[-800:])
