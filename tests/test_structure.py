"""The shape of the house: subpackages that say what they own, no name prefix standing in for a folder,
the wheel's package list matching the folders, and layer contracts that a kept tool reads.

The contracts themselves (import-linter, [tool.importlinter] in pyproject.toml) and the types (pyright,
[tool.pyright]) run in `make test` before pytest; the last test here checks that import-linter really
sees the package's imports, so a contract can break.
"""
from __future__ import annotations

import ast
import collections
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("core", "gui")
MAX_TOP_MODULES = 14  # a newcomer reads the top of core/ or gui/ in one look


def packages() -> list[Path]:
    return sorted(p.parent for folder in FOLDERS for p in (ROOT / folder).rglob("__init__.py")
                  if "__pycache__" not in p.parts)


def test_every_module_says_what_it_owns():
    for package in packages():
        for path in package.glob("*.py"):
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
            assert doc, f"{path.relative_to(ROOT)} has no docstring"
            if path.name == "__init__.py" and package != ROOT / "gui":
                assert "\n" not in doc.strip(), f"{path.relative_to(ROOT)}: one line of what the package owns"


def test_the_top_of_core_and_gui_is_short():
    for folder in FOLDERS:
        top = [p.name for p in (ROOT / folder).glob("*.py") if p.name != "__init__.py"]
        assert len(top) <= MAX_TOP_MODULES, f"{folder}/ has {len(top)} modules at its top: {sorted(top)}"


def test_no_name_prefix_stands_in_for_a_folder():
    for package in packages():
        stems = [p.stem for p in package.glob("*.py") if p.stem != "__init__"]
        prefixes = collections.Counter(s.split("_")[0] for s in stems if "_" in s)
        families = {prefix: n for prefix, n in prefixes.items()
                    if n + (prefix in stems) >= 3}  # sweep.py, sweep_rows.py, sweep_files.py: a family
        assert not families, f"{package.relative_to(ROOT)}: {families} want a subpackage"


def test_the_wheel_names_every_package():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"crossover_lab." + ".".join(p.relative_to(ROOT).parts) for p in packages()}
    assert found <= listed, f"pyproject.toml's packages lack {sorted(found - listed)}"


def test_imports_inside_the_package_are_relative():
    """So that pyright and other static readers follow them in a plain checkout, installed or not."""
    absolute = re.compile(r"^\s*(from|import)\s+crossover_lab\b", re.MULTILINE)
    for package in packages():
        for path in package.glob("*.py"):
            assert not absolute.search(path.read_text(encoding="utf-8")), \
                f"{path.relative_to(ROOT)} imports crossover_lab by name"


def test_import_linter_sees_the_imports_so_a_contract_can_break(tmp_path):
    """A contract that the code breaks on purpose (the CLI uses the engine) is reported broken: the tool
    reads real arrows, not an empty graph."""
    config = tmp_path / "contracts.toml"
    config.write_text('[tool.importlinter]\nroot_packages = ["crossover_lab"]\n\n'
                      '[[tool.importlinter.contracts]]\nname = "the CLI never uses the engine (false)"\n'
                      'type = "forbidden"\nsource_modules = ["crossover_lab.core.cli"]\n'
                      'forbidden_modules = ["crossover_lab.core.engine"]\n')
    lint = Path(sys.executable).parent / "lint-imports"
    out = subprocess.run([str(lint), "--config", str(config), "--no-cache"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "BROKEN" in out.stdout and "crossover_lab.core.cli.run -> crossover_lab.core.engine" in out.stdout


def test_no_contract_writes_an_arrow_down_as_an_exception():
    """Issue 59: a layer contract that lists an import it forgives (`ignore_imports`) keeps an arrow back up in the
    house; each was removed instead (results.py's tails: core/run_stats.py; the messages' anatomy point: its reply
    lives beside it in core/analysis/anatomy.py)."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    assert contracts and all(not c.get("ignore_imports") for c in contracts), \
        [c["name"] for c in contracts if c.get("ignore_imports")]


def test_signatures_say_what_they_take():
    """At most 20 parameters or returns typed Any or object in all of core/ and gui/ (issue 37): what is left takes
    any value by nature (a user's function's return, a job's result, a type hint, pyqtgraph's keyword arguments);
    the rest are real types the checker follows (a lane worker's Protocol, a channel's, typed results, JSON)."""
    loose = []
    for package in packages():
        for path in package.glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    args = node.args
                    annotations = [a.annotation for a in args.posonlyargs + args.args + args.kwonlyargs]
                    annotations += [args.vararg.annotation if args.vararg else None,
                                    args.kwarg.annotation if args.kwarg else None, node.returns]
                    loose += [f"{path.relative_to(ROOT)}:{node.lineno}" for a in annotations
                              if a is not None and re.search(r"\b(Any|object)\b", ast.unparse(a))]
    assert len(loose) <= 20, loose


def test_a_run_sidecars_keys_are_read_by_its_types_alone():
    """Issue 37: one writer and one reader per file shape. A run's sidecar entry is written by RunResult.to_json and
    read by RunResult.from_json (core/results.py), its file by core/files/run_files.py, its host by HostInfo
    (core/machine.py): no other module reads those keys out of the JSON by hand."""
    owners = {ROOT / "core" / "results.py", ROOT / "core" / "files" / "run_files.py", ROOT / "core" / "machine.py"}
    keys = "host|runs|run_noise|run_noise_from|n_records|clock_at|pauses|first_step|started_at|ended_at"
    pattern = re.compile(rf'(\.get\(|\[)"({keys})"')
    readers = [f"{path.relative_to(ROOT)}:{n}" for package in packages() for path in package.glob("*.py")
               if path not in owners
               for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert readers == [], readers
