"""The wheel: one import name with its resources inside, both entry points, and a window that starts from
an installed copy (not this checkout) with its style sheet and icons."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from helpers import H200_SWEEP_CSV as SWEEP_CSV, ROOT

from crossover_lab.core.cli.desktop_entry import APP_ID
from crossover_lab.core.paths import RESOURCES, missing_resources, resource_dir

# Not copied for the build: what is not the source, and build/ (setuptools would pack its stale files).
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__", "artifacts",
                                    ".pytest_cache", "docs", "tests", "benchmarks")
PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
# An installed copy alone: -S skips site-packages' .pth files, and with them this checkout's editable install,
# which would otherwise lend crossover_lab.core (a namespace package) any module the wheel lacks.
INSTALLED_PYTHON = [sys.executable, "-S"]

# Runs in the installed copy: start the window as `crossover-window` does, off-screen, then report.
START_WINDOW = """
import json, sys
import crossover_lab
from crossover_lab.main import window
code = window(["--screenshot", sys.argv[1], "--after", "0.3"])
from PySide6.QtWidgets import QApplication
from crossover_lab.core.paths import missing_resources, resource_dir
from crossover_lab.gui.resources import icon
app = QApplication.instance()
import crossover_lab.core, crossover_lab.gui
paths = [p for m in (crossover_lab, crossover_lab.core, crossover_lab.gui) for p in m.__path__]
print(json.dumps({"code": code, "paths": paths, "resources": str(resource_dir()),
                  "missing": missing_resources(), "style_sheet": app.styleSheet(),
                  "window_icon": not app.windowIcon().isNull(), "desktop_file": app.desktopFileName(),
                  "icons": {n: not icon(n).isNull() for n in ("start", "stop", "export", "clear", "delete")}}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel pip builds from a copy of this checkout (no network: no build isolation, no dependencies)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    out = subprocess.run(PIP + ["wheel", "--no-deps", "--no-build-isolation", "--quiet", "-w", str(work / "dist"),
                                str(source)], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    (path,) = (work / "dist").glob("*.whl")
    return path


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The wheel installed into a bare folder, as pip install --target does (scripts in bin/)."""
    target = tmp_path_factory.mktemp("target")
    out = subprocess.run(PIP + ["install", "--no-deps", "--no-index", "--quiet", "--target", str(target), str(wheel)],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    return target


def installed_env(target: Path, tmp_path: Path) -> dict[str, str]:
    """The installed copy, then the dependencies (PySide6, pyqtgraph…) from this environment's site-packages."""
    libraries = dict.fromkeys([str(target), sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(libraries), "QT_QPA_PLATFORM": "offscreen",
            "CROSSOVER_HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "data"),
            "CROSSOVER_NO_RESTORE_PROMPT": "1"}


def test_every_file_in_resources_is_listed_and_there():
    assert missing_resources() == []
    assert sorted(p.name for p in resource_dir().iterdir() if p.suffix in (".svg", ".qss")) == sorted(RESOURCES)


@pytest.mark.lanes  # builds the wheel with pip, a process of its own
def test_the_wheel_holds_one_package_with_its_resources_and_both_entry_points(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"crossover_lab", wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1] + ".dist-info"}
    for name in RESOURCES:
        assert f"crossover_lab/resources/{name}" in names, f"{name} is not in the wheel"
    for profile in (ROOT / "resources" / "profiles").glob("*.json"):  # the shipped device profiles (issue 47)
        assert f"crossover_lab/resources/profiles/{profile.name}" in names, f"{profile.name} is not in the wheel"
    for module in ("main.py", "core/cli/main.py", "core/cli/desktop_entry.py", "gui/app.py", "gui/theme/scheme.py",
                   "core/report/html.py", "core/report/templates/report.html.j2", "core/report/templates/report.md.j2"):
        assert f"crossover_lab/{module}" in names
    assert not [n for n in names if n.startswith(("crossover_lab/tests/", "crossover_lab/docs/",
                                                   "crossover_lab/benchmarks/"))]
    info = next(n for n in names if n.endswith("entry_points.txt"))
    entry_points = zipfile.ZipFile(wheel).read(info).decode()
    assert "[console_scripts]\ncrossover = crossover_lab.main:main" in entry_points
    assert "[gui_scripts]\ncrossover-window = crossover_lab.main:window" in entry_points


@pytest.mark.lanes  # the installed app as a process of its own
def test_the_installed_window_starts_with_its_style_sheet_and_icons(installed, tmp_path):
    picture = tmp_path / "window.png"
    out = subprocess.run(INSTALLED_PYTHON + ["-W", "error:Crossover resource missing", "-c", START_WINDOW,
                          str(picture)], cwd=tmp_path, env=installed_env(installed, tmp_path), capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["code"] == 0 and picture.stat().st_size > 10_000
    assert all(p.startswith(str(installed)) for p in report["paths"]), report["paths"]  # not this checkout
    assert report["resources"] == str(installed / "crossover_lab" / "resources") and report["missing"] == []
    assert "QLabel#verdictLabel" in report["style_sheet"]
    assert report["window_icon"] and all(report["icons"].values()) and report["desktop_file"] == APP_ID


@pytest.mark.lanes  # the installed command as a process of its own
def test_the_installed_command_line_works_and_installs_its_desktop_entry(installed, tmp_path):
    env = installed_env(installed, tmp_path)
    crossover = installed / "bin" / "crossover"
    out = subprocess.run(INSTALLED_PYTHON + [str(crossover), "analyze", str(SWEEP_CSV)], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "GFLOP/s" in out.stdout and "jax:gpu0 from 512 units" in out.stdout, out.stdout
    # Installed, help and install hints speak of `crossover` and pipx, not of a checkout's main.py and pip -e.
    out = subprocess.run(INSTALLED_PYTHON + [str(crossover), "--help"], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.startswith("usage: crossover ") and "main.py" not in out.stdout, out.stdout[:300]
    out = subprocess.run(INSTALLED_PYTHON + ["-c", "from crossover_lab.core.machine import INSTALL_HINT, GPU_HINT; "
                                             "print(INSTALL_HINT['torch']); print(GPU_HINT['tensorflow'])"],
                         env=env, capture_output=True, text=True, timeout=60)
    # (installed with pip --target, not by pipx: the hint is pip's)
    assert "pip install torch" in out.stdout and "-e '." not in out.stdout, out.stdout + out.stderr
    out = subprocess.run(INSTALLED_PYTHON + [str(crossover), "--install-desktop"], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    entry = (tmp_path / "data" / "applications" / f"{APP_ID}.desktop").read_text()
    assert f"Exec={installed / 'bin' / 'crossover-window'}\n" in entry  # what was installed, by its full path
    assert (tmp_path / "data" / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg").is_file()
