"""The tests' own shape: test modules import from the support modules, never from one another; fixtures come
from conftest.py's pytest_plugins, not from imports; every test file's name is its own."""
from __future__ import annotations

import ast
import collections
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SUPPORT = {"conftest", "helpers", "gui_fixtures", "ssh_server", "refine_fakes", "drag_target", "scripted_lanes"}
FIXTURE_MODULES = ("gui_fixtures", "ssh_server")


def modules_of_tests() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if "__pycache__" not in p.parts)


def imported_modules(path: Path) -> dict[str, set[str]]:
    """Top-level module name → the names imported from it (anywhere in the file, inside functions too)."""
    found: dict[str, set[str]] = collections.defaultdict(set)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.name.split(".")[0]]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found[node.module.split(".")[0]] |= {alias.name for alias in node.names}
    return found


def fixtures_in(module: str) -> set[str]:
    """The functions of a support module decorated as pytest fixtures."""
    tree = ast.parse((TESTS / f"{module}.py").read_text(encoding="utf-8"))
    out = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                target = deco.func if isinstance(deco, ast.Call) else deco
                if isinstance(target, ast.Attribute) and target.attr == "fixture":
                    out.add(node.name)
    return out


def test_test_modules_never_import_one_another():
    names = {p.stem for p in modules_of_tests()}
    for path in modules_of_tests() + [TESTS / f"{m}.py" for m in sorted(SUPPORT)]:
        others = set(imported_modules(path)) & names
        assert not others, f"{path.relative_to(TESTS)} imports the test module(s) {sorted(others)}: " \
                           "move what they share to tests/helpers.py"


def test_fixtures_are_plugins_not_imports():
    fixtures = {m: fixtures_in(m) for m in FIXTURE_MODULES}
    assert fixtures["gui_fixtures"] >= {"gui_home", "make_window"} and fixtures["ssh_server"] >= {"server"}
    for path in modules_of_tests():
        for module, names in imported_modules(path).items():
            wrongly = names & fixtures.get(module, set())
            assert not wrongly, f"{path.relative_to(TESTS)} imports the fixture(s) {sorted(wrongly)} from {module}: " \
                                "name them as arguments (conftest.py registers the module)"
    conftest = ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8"))
    plugins = [node.value for node in conftest.body if isinstance(node, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in node.targets)]
    assert len(plugins) == 1 and set(ast.literal_eval(plugins[0])) == set(FIXTURE_MODULES)


def test_every_test_file_name_is_its_own_and_no_folder_is_a_package():
    stems = collections.Counter(p.name for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)
    assert [name for name, n in stems.items() if n > 1] == []  # rootdir-relative imports: one module per name
    assert not list(TESTS.rglob("__init__.py"))


def test_the_long_files_the_lanes_set_starts_with_exist():
    """conftest.py's LONG_FILES_FIRST orders the tests of realness longest first: a file renamed there would
    silently fall back to the collection's order."""
    from pathlib import Path

    from conftest import LONG_FILES_FIRST

    root = Path(__file__).resolve().parents[1]
    assert all((root / path).is_file() for path in LONG_FILES_FIRST), LONG_FILES_FIRST
