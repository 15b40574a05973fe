"""`crossover --install-desktop` / `--uninstall-desktop`: the entry validates, runs what was installed, and goes away."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import MAIN, cli

from crossover_lab.core.cli import desktop_entry
from crossover_lab.core.cli.desktop_entry import APP_ID, entry_text, exec_arg, install, launcher_command, uninstall
from crossover_lab.core.paths import resource_dir

def validate(path: Path) -> str:
    """desktop-file-validate's errors and warnings ("" when none); skipped where desktop-file-utils is not
    installed (.ci/run installs it). Its one hint, that Science and Education are both main categories
    (the entry shows under each), is what the entry asks for."""
    tool = shutil.which("desktop-file-validate")
    if tool is None:
        pytest.skip("desktop-file-validate is not installed (apt-get install desktop-file-utils)")
    out = subprocess.run([tool, str(path)], capture_output=True, text=True)
    complaints = [line for line in (out.stdout + out.stderr).splitlines() if ": hint: " not in line]
    return "\n".join(complaints) + ("" if out.returncode == 0 else f" (exit {out.returncode})")


def keys(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def test_install_writes_a_valid_entry_and_the_icon_and_uninstall_removes_both(tmp_path):
    files = install(["/opt/crossover/bin/crossover-window"], home=tmp_path)
    assert files.entry == tmp_path / "applications" / f"{APP_ID}.desktop"
    assert files.icon == tmp_path / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"
    assert files.icon.read_bytes() == (resource_dir() / "crossover.svg").read_bytes()
    entry = keys(files.entry.read_text(encoding="utf-8"))
    assert entry["Categories"] == "Science;Education;"
    assert entry["Icon"] == APP_ID  # a theme name: the launcher finds it in hicolor/scalable/apps
    assert entry["Exec"] == entry["TryExec"] == "/opt/crossover/bin/crossover-window"
    assert entry["Terminal"] == "false" and entry["Type"] == "Application"
    assert validate(files.entry) == ""
    assert sorted(uninstall(home=tmp_path)) == sorted([files.entry, files.icon])
    assert not files.entry.exists() and not files.icon.exists()
    assert uninstall(home=tmp_path) == []


def test_the_reverse_dns_name_is_a_valid_desktop_file_id():
    parts = APP_ID.split(".")
    assert len(parts) >= 3 and all(p and (p[0].isalpha() or p[0] == "_") for p in parts)
    assert all(c.isalnum() or c in "_-" for p in parts for c in p)


@pytest.mark.parametrize("path", ["/home/a b/.local/bin/crossover-window", "/tmp/it's/$HOME/x\"y`z\\w",
                                  "/srv/100%/crossover-window"])
def test_exec_quotes_what_the_spec_asks_and_still_validates(tmp_path, path):
    files = install([path, "--flag"], home=tmp_path)
    text = files.entry.read_text(encoding="utf-8")
    assert validate(files.entry) == ""
    assert exec_args(keys(text)["Exec"]) == [path, "--flag"]


def exec_args(value: str) -> list[str]:
    """The Exec key read back as a launcher does: the string's escapes, then the arguments (a backslash
    inside double quotes takes the next character as it is), then %% as %."""
    value = value.replace("\\\\", "\\")
    args, current, quoted, i = [], None, False, 0
    while i < len(value):
        c = value[i]
        if quoted and c == "\\":
            current, i = current + value[i + 1], i + 2
            continue
        if c == '"':
            quoted, current = not quoted, current or ""
        elif c == " " and not quoted:
            if current is not None:
                args.append(current)
            current = None
        else:
            current = (current or "") + c
        i += 1
    if current is not None:
        args.append(current)
    return [a.replace("%%", "%") for a in args]


def test_a_plain_path_is_left_as_it_is_and_a_line_break_is_refused():
    assert exec_arg("/usr/bin/crossover-window") == "/usr/bin/crossover-window"
    with pytest.raises(desktop_entry.DesktopEntryError):
        entry_text(["/tmp/a\nb"])


def test_the_launcher_is_the_gui_script_beside_the_crossover_that_ran(tmp_path, monkeypatch):
    bin_dir = tmp_path / "pipx" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("crossover", "crossover-window"):
        (bin_dir / name).write_text("#!/bin/sh\n")
        (bin_dir / name).chmod(0o755)
    link_dir = tmp_path / "local-bin"  # pipx links ~/.local/bin/crossover to its environment's script
    link_dir.mkdir()
    (link_dir / "crossover").symlink_to(bin_dir / "crossover")
    monkeypatch.setattr(sys, "argv", [str(link_dir / "crossover"), "--install-desktop"])
    assert launcher_command() == [str(bin_dir / "crossover-window")]
    (link_dir / "crossover-window").symlink_to(bin_dir / "crossover-window")
    assert launcher_command() == [str(link_dir / "crossover-window")]  # the name the user's PATH has


def test_without_an_installed_gui_script_the_entry_runs_main_py(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(MAIN)])
    monkeypatch.setattr(desktop_entry.sysconfig, "get_path", lambda name: str(tmp_path))
    assert launcher_command() == [sys.executable, str(MAIN)]


@pytest.mark.lanes
def test_the_command_line_installs_and_uninstalls(tmp_path):
    env = {"XDG_DATA_HOME": str(tmp_path)}
    out = cli("--install-desktop", env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    entry = tmp_path / "applications" / f"{APP_ID}.desktop"
    assert f"entry  {entry}" in out.stdout and "crossover --uninstall-desktop" in out.stdout
    # From a checkout the entry runs the editable install's gui-script, or this Python with main.py.
    command = launcher_command()
    assert keys(entry.read_text())["TryExec"] == command[0]
    out = cli("--uninstall-desktop", env=env, timeout=60)
    assert out.returncode == 0 and str(entry) in out.stdout and not entry.exists()
    out = cli("--uninstall-desktop", env=env, timeout=60)
    assert out.returncode == 0 and "Nothing to remove" in out.stdout
    out = cli("--install-desktop", "extra", env=env, timeout=60)
    assert out.returncode == 2 and "usage" in out.stderr


def test_an_unwritable_data_folder_is_a_sentence_and_exit_1(tmp_path, monkeypatch, capsys):
    blocked = tmp_path / "file"
    blocked.write_text("")  # a file where the folder should be
    monkeypatch.setenv("XDG_DATA_HOME", str(blocked))
    assert desktop_entry.main(["--install-desktop"]) == 1
    assert "error:" in capsys.readouterr().err
