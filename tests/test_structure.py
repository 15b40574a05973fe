"""The shape of the code: no import circles, a Qt-free core, modules of a readable size that say what they own."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "crossover_lab"
FOLDERS = ("core", "gui")


def modules() -> dict[str, Path]:
    out = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).glob("*.py")):
            name = f"{PACKAGE}.{folder}" if path.stem == "__init__" else f"{PACKAGE}.{folder}.{path.stem}"
            out[name] = path
    return out


def imports_of(name: str, path: Path) -> set[str]:
    """Every module this one imports, at the top or inside a function (a lazy import still makes a circle)."""
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: {m for m in imports_of(name, path) if m in mods and m != name} for name, path in mods.items()}


def find_cycle(g: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(g[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = 2
        stack.pop()
        return []

    for node in sorted(g):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return []


def test_no_import_circles_in_core_and_gui():
    assert find_cycle(graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []


def test_core_never_imports_qt_or_the_gui():
    for name, path in modules().items():
        if not name.startswith(f"{PACKAGE}.core"):
            continue
        bad = {m for m in imports_of(name, path)
               if m.split(".")[0] in ("PySide6", "pyqtgraph") or m.startswith(f"{PACKAGE}.gui")}
        assert not bad, f"{path.name} imports {sorted(bad)}"


def test_modules_are_small_and_say_what_they_own():
    for name, path in modules().items():
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) <= 300, f"{path.relative_to(ROOT)} has {len(text.splitlines())} lines"
        assert ast.get_docstring(ast.parse(text)), f"{path.relative_to(ROOT)} has no docstring"


def test_rows_and_messages_are_typed():
    for folder in FOLDERS:
        for path in (ROOT / folder).glob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert 'row["' not in text, f"{path.name} reads a row by a string key"
            if folder == "core":
                assert '"kind"' not in text, f"{path.name} dispatches on a string kind"
