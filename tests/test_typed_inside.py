"""Typed inside, converted at the edges (issue 59): no code compares a task, a stop reason or a schedule with its word,
and a model's hidden widths are a tuple of ints everywhere inside.

A task is a Task (core/config.py), what ended a segment a StopReason (core/lane/timing.py) and how the lanes share
the machine a Schedule (core/config.py): files, settings and the wire hold their words, read with Task(word) or
Schedule.named(word) where they come in. All are str enums, so `task == "predict"` would still work; this test keeps
the words out of the comparisons, and the schedule out of every `str` parameter, read from the syntax tree of every
module.
"""
from __future__ import annotations

import ast
import csv
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parent.parent
TASK_WORDS = {"train", "predict"}
STOP_WORDS = {"budget", "cancel", "switch"}
SCHEDULE_WORDS = {"interleaved", "side-by-side", "sequential", "concurrent"}  # "concurrent": side-by-side's old name


def sources() -> list[Path]:
    return sorted(p for folder in ("core", "gui") for p in (ROOT / folder).rglob("*.py")
                  if "__pycache__" not in p.parts) + [ROOT / "main.py"]


def word_compares(text: str, words: set[str]) -> list[int]:
    """The lines where a == or != has one of `words` as a literal on either side."""
    lines = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            if isinstance(op, (ast.Eq, ast.NotEq)) and any(
                    isinstance(x, ast.Constant) and x.value in words for x in operands[i:i + 2]):
                lines.append(node.lineno)
    return lines


def compares_in_tree(words: set[str]) -> list[str]:
    return [f"{path.relative_to(ROOT)}:{n}" for path in sources()
            for n in word_compares(path.read_text(encoding="utf-8"), words)]


def test_the_check_finds_a_word_compared():
    assert word_compares('if task == "predict" or "train" != t.task:\n    pass\n', TASK_WORDS) == [1, 1]
    assert word_compares('done = f"{1 if why != \'cancel\' else 2}"\n', STOP_WORDS) == [1]
    assert word_compares('x = "predict" in words or task is Task.PREDICT\n', TASK_WORDS) == []


def test_no_task_is_compared_with_its_word():
    assert compares_in_tree(TASK_WORDS) == []


def test_no_stop_reason_is_compared_with_its_word():
    assert compares_in_tree(STOP_WORDS) == []


def test_no_schedule_is_compared_with_its_word():
    assert compares_in_tree(SCHEDULE_WORDS) == []


def str_named(text: str, named: Callable[[str], bool], anywhere: bool = True) -> list[int]:
    """The lines where a parameter, or a field, whose name is `named` is annotated `str` (alone or in a union; with
    `anywhere`, also inside another type: `dict[str, int]`)."""
    def members(annotation: ast.expr) -> list[ast.expr]:  # `str | None` → str, None
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            return members(annotation.left) + members(annotation.right)
        return [annotation]

    def says_str(annotation: ast.expr | None) -> bool:
        if annotation is None:
            return False
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):  # "str | None", quoted
            annotation = ast.parse(annotation.value, mode="eval").body
        return any(isinstance(x, ast.Name) and x.id == "str"
                   for x in (ast.walk(annotation) if anywhere else members(annotation)))

    lines = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            lines += [node.lineno for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]
                      if named(arg.arg) and says_str(arg.annotation)]
        elif isinstance(node, ast.AnnAssign):
            target = node.target
            name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else ""
            if named(name) and says_str(node.annotation):
                lines.append(node.lineno)
    return lines


def str_schedules(text: str) -> list[int]:
    """The lines where a parameter, or a field, named `schedule` is annotated `str` (alone or in a union): inside,
    a schedule is a Schedule, its word read once where it comes in."""
    return str_named(text, lambda name: name == "schedule")


def test_the_check_finds_a_schedule_typed_str():
    assert str_schedules("def f(a, schedule: str = 'sequential'):\n    pass\n") == [1]
    assert str_schedules("async def f(*, schedule: 'str | None'):\n    pass\n") == [1]
    assert str_schedules("class R:\n    schedule: str\n    def __init__(self):\n        self.schedule: str = ''\n") == [2, 4]
    assert str_schedules("def f(schedule: Schedule, name: str):\n    schedule: Schedule = schedule\n") == []
    assert word_compares('if schedule != "concurrent" or result.schedule == "side-by-side":\n    pass\n',
                         SCHEDULE_WORDS) == [1, 1]


def test_no_schedule_is_a_str_inside():
    assert [f"{path.relative_to(ROOT)}:{n}" for path in sources()
            for n in str_schedules(path.read_text(encoding="utf-8"))] == []


def test_a_schedule_is_read_once_from_its_word_and_written_as_it():
    from crossover_lab.core.config import Schedule
    from crossover_lab.core.results import RunResult

    run = RunResult.from_json({"schedule": "concurrent", "lanes": {}})  # an old file's name for side-by-side
    assert run.schedule is Schedule.SIDE_BY_SIDE
    written = run.to_json()["schedule"]
    assert type(written) is str and written == "side-by-side"


def test_a_lanes_settings_are_read_by_their_type_alone_in_the_words():
    """Issue 59: a lane's settings are a RunSettings (core/records.py) on the wire and in memory, a flat object only in
    the sidecar; the words read its fields, never a key (`settings.get("threads")`) again."""
    path = ROOT / "core" / "words" / "settings.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    reads = [node.lineno for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
             and isinstance(node.func.value, ast.Name) and node.func.value.id == "settings"
             and node.args and isinstance(node.args[0], ast.Constant)]
    reads += [node.lineno for node in ast.walk(tree)
              if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "settings"]
    assert reads == [], f"core/words/settings.py reads a lane's settings by key at lines {reads}"


def str_widths(text: str) -> list[int]:
    """The lines where a parameter, or a field, named `widths` (or `..._widths`) is annotated `str`: inside, a
    model's hidden widths are a tuple of ints, (750, 150, 50, 50); only the per-batch CSV's cell joins them with "-",
    written and read back beside each other (core/records.py BatchTiming.row and from_csv_row)."""
    return str_named(text, lambda name: name == "widths" or name.endswith("_widths"), anywhere=False)


def test_the_check_finds_widths_typed_str():
    assert str_widths('def f(widths: str = "750-150-50"):\n    pass\n') == [1]
    assert str_widths("class R:\n    widths: str = ''\n    ramp_widths: 'str | None' = None\n") == [2, 3]
    assert str_widths("class R:\n    widths: tuple[int, ...] = ()\n    def f(self, text: str):\n        pass\n") == []
    assert str_widths("by_curve_widths: dict[tuple[str, str], set[int]] = {}\n") == []  # a str inside is no str


def test_no_widths_are_a_str_inside():
    assert [f"{path.relative_to(ROOT)}:{n}" for path in sources()
            for n in str_widths(path.read_text(encoding="utf-8"))] == []


@pytest.mark.parametrize("widths, cell", [((750, 150, 50, 50), "750-150-50-50"), ((16,), "16"), ((), "")])
def test_a_per_batch_rows_widths_are_written_joined_and_read_back_as_the_same_tuple(tmp_path, widths, cell):
    from crossover_lab.core.files.atomic import csv_text
    from crossover_lab.core.files.run_files import HEADER, read_batches_csv
    from crossover_lab.core.records import BatchTiming

    record = BatchTiming("r1", "cpu", "CPU", 1, 1, 1, 0.5, 2.25, 64, False, 0.5, widths=widths, batch_size=64)
    path = tmp_path / "t.csv"
    path.write_text(csv_text(HEADER, [record.row()]), encoding="utf-8")
    with open(path, newline="", encoding="utf-8") as fh:
        (row,) = csv.DictReader(fh)
    assert row["widths"] == cell  # the file's format: the column and its text as before
    (back,) = read_batches_csv(path)
    assert back.widths == widths and type(back.widths) is tuple and all(type(w) is int for w in back.widths)
    assert back == record


def test_an_old_rows_widths_read_as_before_and_a_damaged_cell_is_named():
    from crossover_lab.core.records import BatchTiming

    row = {"run_id": "r1", "lane": "cpu", "device": "CPU", "epoch": "1", "batch": "1", "step": "1",
           "start_s": "0.5", "ms": "2.25", "samples": "64", "warmup": "0", "loss": "0.5"}
    assert BatchTiming.from_csv_row(row).widths == ()  # a file older than the column
    assert BatchTiming.from_csv_row({**row, "widths": "512-512"}).widths == (512, 512)
    for damaged in ("evil", "16--32", "-16", "16,32", "1_000"):
        with pytest.raises(ValueError, match="widths is not"):
            BatchTiming.from_csv_row({**row, "widths": damaged})


def test_load_means_how_busy_the_machine_is_and_nothing_else():
    """Issue 59: "load" was also the requests arriving at a rate; that meaning is an arrival rate now (RatePoint in
    core/analysis/serving_rates.py, core/words/rates.py, core/cli/rate_sweep.py, RunSummary.arrivals_ended). No module
    or name of the serving meaning comes back, and the window's task chooser says "arrival rate"."""
    import re

    old = re.compile(r"\b(LoadPoints?|serving_load|load_sweep|load_ended|load_requests|LOAD_REQUESTS|load_point|"
                     r"print_load|load_row|LOAD_HEADER|serve_under_load)\b")
    found = [f"{path.relative_to(ROOT)}:{n}" for path in sources()
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if old.search(line.replace('"load_ended"', ""))]  # the old files' key, read where they come in
    assert found == [], found
    names = {p.stem for folder in ("core", "gui") for p in (ROOT / folder).rglob("*.py")}
    words = {p.stem for p in (ROOT / "core" / "words").glob("*.py")}
    assert not names & {"serving_load", "load_sweep"} and "load" not in words
    assert "under load" not in (ROOT / "gui" / "panels" / "model_form.py").read_text(encoding="utf-8")


def test_a_lanes_settings_are_a_type_on_the_wire_and_the_sidecar_keeps_what_was_recorded():
    """Issue 59: RunStarted (and Probed, and an anatomy's point) carries a RunSettings across the wire (its fields typed,
    every other key in `extra`), and to_json/from_json give the file's flat object back: on every lane of every stored
    run and every anatomy point under docs/results, the object read and written again is the one stored, less the
    keys that held a field's default (`paced: false`)."""
    import json

    from crossover_lab.core.messages import from_wire, to_wire
    from crossover_lab.core.records import RunSettings, RunStarted

    seen = 0
    for path in sorted((ROOT / "docs" / "results").rglob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(data, dict):
            continue
        runs, points = data.get("runs"), data.get("points")  # a sidecar's runs; an anatomy's points
        holders = [lane for run in (runs if isinstance(runs, list) else []) for lane in (run.get("lanes") or {}).values()]
        holders += [p for p in (points if isinstance(points, list) else []) if isinstance(p, dict)]
        for holder in holders:
            stored = holder.get("settings")
            if not isinstance(stored, dict):
                continue
            seen += 1
            typed = RunSettings.from_json(stored)
            kept = {k: v for k, v in stored.items() if not (k in ("paced", "xla_flags") and not v)}
            assert typed.to_json() == kept, (path, set(typed.to_json().items()) ^ set(kept.items()))
            started = RunStarted("r", "cpu", "CPU", typed)
            assert from_wire(json.loads(json.dumps(to_wire(started)))) == started
    assert seen > 100
    typed = RunSettings.from_json({"threads": 2, "backend": "jax", "jax_version": "0.10.2", "pid": 7})
    assert (typed.threads, typed.framework_version, typed.extra) == (2, "0.10.2", {"pid": 7})
