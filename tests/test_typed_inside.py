"""Typed inside, converted at the edges (issue 59): no code compares a task or a stop reason with its word.

A task is a Task (core/config.py) and what ended a segment a StopReason (core/lane/timing.py): files, settings and
the wire hold their words, read with Task(word) where they come in. Both are str enums, so `task == "predict"`
would still work; this test keeps the words out of the comparisons, read from the syntax tree of every module.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TASK_WORDS = {"train", "predict"}
STOP_WORDS = {"budget", "cancel", "switch"}


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
