"""Run > Measure a device profile: this machine's lanes measured into a profile file (issue 47), from the window.

It runs the command line's `profile` as a process of its own (the window's process never imports a framework, and the
command already says its expected length, keeps every sweep's files, and makes a profile of what was measured when
stopped), shows its progress and time left from the lines it prints, and, once written, offers to draw the profile's
lanes on the crossover map as predicted lanes. Stop (or closing the dialog) asks the command to stop as Ctrl-C does:
the point being measured ends, and the sweeps measured so far make the profile.
"""
from __future__ import annotations

import datetime as _dt
import os
import re
from pathlib import Path
from typing import Callable, Sequence

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (QCheckBox, QDialogButtonBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                               QPlainTextEdit, QProgressBar, QPushButton, QSizePolicy, QVBoxLayout, QWidget)

from ...core.config import ConfigError
from ...core.files.device_profile import DeviceProfile, read_profile
from ...core.paths import crossover_home
from ...core.study.profile import plan_named
from ..widgets.command_dialog import CommandDialog
from ..widgets.command_process import EXIT_STOPPED, CommandFn, crossover_command
from ..widgets.file_dialogs import FileDialogs

# The command's lines this dialog reads (core/cli/profile.py says them).
PLAN_LINE = re.compile(r"^profile: (\d+) sweeps? .*expected length: about ([^;]+);")
SWEEP_LINE = re.compile(r"^profile: sweep (\d+) of (\d+), (\S+) .*about (.+) left$")
WROTE_LINE = re.compile(r"^wrote (.+\.json)$")  # a sweep's "wrote A.csv, B.csv, C.json" too: see written_profile
profile_command = crossover_command  # the name the tests and older callers know


def written_profile(line: str, target: str | os.PathLike) -> Path | None:
    """The profile file a line of the command says it wrote: only the command's own final `wrote PROFILE.json`
    (core/cli/profile.py _write_profile), naming the -o it was given; None for every other line. Each sweep it
    runs says `wrote …/mlp-2.csv, …/mlp-2-batches.csv, …/mlp-2.json` too, and a stop that made no profile was then
    said as a profile that "does not read back"."""
    m = WROTE_LINE.match(line)
    if m is None:
        return None
    said = Path(m.group(1))
    try:  # the command prints -o as it expanded it; either may be relative to the same folder, or pass a link
        same = os.path.samefile(said.expanduser(), Path(target).expanduser())
    except OSError:  # not there (or unreadable): compare the names as written
        same = said.expanduser().absolute() == Path(target).expanduser().absolute()
    return said if same else None


def default_profile_path(now: _dt.datetime | None = None) -> Path:
    """Where a profile goes unless the user chooses: the app's folder, named by host and time."""
    stamp = (now or _dt.datetime.now()).strftime("%Y%m%d-%H%M")
    host = re.sub(r"[^A-Za-z0-9._-]+", "-", os.uname().nodename if hasattr(os, "uname") else "this-machine")[:40]
    return crossover_home() / "profiles" / f"{host}-{stamp}.json"


def no_profile_words(last: str, stopped: bool) -> str:
    """The dialog's sentence when the command ended without writing a profile: plainly that none was written, and
    why from the command's last `error:` or `profile:` line that is no progress (`last`, "" when it said none)."""
    why = last.removeprefix("error: ").removeprefix("profile: ")
    if stopped and why.startswith("nothing was measured"):
        return "Stopped before any sweep was measured: no profile was written."
    if why.startswith("no profile was written"):  # the command's own words say it, with the reason
        return f"Stopped: {why}" if stopped else f"N{why[1:]}"
    return f"{'Stopped: no' if stopped else 'No'} profile was written" + (f": {why}" if why else ".")


class ProfileDialog(CommandDialog):
    """Lanes, dense-only, a file; Start; the command's progress; Stop; then the profile's lanes onto the map."""

    def __init__(self, lanes: Sequence[str], dialogs: FileDialogs | None,
                 add_lanes: Callable[[DeviceProfile], None], parent: QWidget | None = None,
                 command: CommandFn = profile_command) -> None:
        super().__init__(command, parent)
        self.setWindowTitle("Measure a device profile")
        self._dialogs, self._add_lanes = dialogs, add_lanes
        self.lanes = QLineEdit(",".join(lanes) or "cpu,cpu1")
        self.lanes.setToolTip("The lanes to profile, as the command line names them (cpu, cpu1, jax:cpu, gpu0 …)")
        self.quick = QCheckBox("Dense models only (about half the time)")
        self.quick.setToolTip("Leave out the convolution, LSTM and transformer sweeps: a prediction for those "
                              "families on this profile is then said as an extrapolation")
        self.path = QLineEdit(str(default_profile_path()))
        choose = QPushButton("Choose…")
        choose.clicked.connect(self._on_choose_clicked)
        where = QHBoxLayout()
        where.addWidget(self.path, 1)
        where.addWidget(choose)
        form = QFormLayout()
        form.addRow("Lanes", self.lanes)
        form.addRow("", self.quick)
        form.addRow("Profile file", where)
        self.state = QLabel("Measures six short sweeps (dense models at three depths and batch sizes, a CNN, an "
                            "LSTM and a transformer) on each lane, one lane at a time, into a file you can send. "
                            "Each sweep's files are kept beside it.")
        self.state.setWordWrap(True)
        # Its wrapped lines in full: a word-wrapped label's height otherwise gives way to the log's stretch.
        self.state.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.progress = QProgressBar()
        self.progress.setFormat("%v of %m sweeps")
        self._show_plan()
        self.quick.toggled.connect(self._show_plan)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(2000)
        self.log.setAccessibleName("What the profile command says")
        self.start = QPushButton("Start")
        self.stop = QPushButton("Stop")
        self.stop.setEnabled(False)
        self.stop.setToolTip("Stop as Ctrl-C does: the point being measured ends; the sweeps measured so far make "
                             "the profile")
        self.add = QPushButton("Add its lanes to the crossover map")
        self.add.setEnabled(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        for button in (self.start, self.stop, self.add):
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.close)
        self.start.clicked.connect(self.begin)
        self.stop.clicked.connect(self.halt)
        self.add.clicked.connect(self._on_add_clicked)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.state)
        layout.addWidget(self.progress)
        layout.addWidget(self.log, 1)
        layout.addWidget(buttons)
        self.resize(720, 480)
        self._expected = ""
        self._written: Path | None = None
        self.profile: DeviceProfile | None = None

    # ------------------------------------------------------------------ the command

    def arguments(self) -> list[str]:
        out = ["profile", "--lanes", self.lanes.text().strip(), "-o", self.path.text().strip()]
        return out + (["--quick"] if self.quick.isChecked() else [])

    @Slot()
    def begin(self) -> None:
        """Start the command (nothing when one runs, or the settings are not a profile's)."""
        if self.running:
            return
        lanes, path = self.lanes.text().strip(), self.path.text().strip()
        problem = ("Name at least one lane." if not lanes else "Choose a .json file for the profile."
                   if not path.endswith(".json") else "")
        if problem:
            self.state.setText(problem)
            return
        try:
            Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.state.setText(f"The profile cannot go in {Path(path).parent}: {exc.strerror or exc}.")
            return
        self._written, self.profile, self.exit_code = None, None, None
        self.log.clear()
        self._show_plan()
        self.state.setText("Starting the lanes…")
        self.add.setEnabled(False)
        self._set_running(True)
        self.runner.start(self.arguments())

    def _set_running(self, running: bool) -> None:
        """The settings and Start while nothing runs; Stop while the command does."""
        for widget in (self.lanes, self.quick, self.path, self.start):
            widget.setEnabled(not running)
        self.stop.setEnabled(running)

    @Slot()
    def _show_plan(self) -> None:
        """The bar at none of the plan's sweeps (the command's own count replaces it once it starts)."""
        self.progress.setRange(0, len(plan_named(None, self.quick.isChecked())))
        self.progress.setValue(0)

    @Slot()
    def halt(self) -> None:
        """Ask the command to stop as Ctrl-C does; again after HURRY_AFTER_MS if it has not ended."""
        if not self.runner.running:
            return
        self.runner.halt()
        self.state.setText("Stopping: the point being measured ends, then the profile is made of the sweeps measured.")
        self.stop.setEnabled(False)

    def _read_line(self, line: str) -> None:
        if not line:
            return
        self.log.appendPlainText(line)
        if m := PLAN_LINE.match(line):
            self._expected = m.group(2)
            self.progress.setRange(0, int(m.group(1)))
            self.state.setText(f"Expected length: about {self._expected}.")
        elif m := SWEEP_LINE.match(line):
            done, total = int(m.group(1)) - 1, int(m.group(2))
            self.progress.setRange(0, total)
            self.progress.setValue(done)
            self.state.setText(f"Sweep {done + 1} of {total}: {m.group(3)}; about {m.group(4)} left "
                               f"(expected length: about {self._expected}).")
        elif written := written_profile(line, self.path.text().strip()):
            self._written = written

    @Slot(int)
    def _on_ended(self, code: int) -> None:
        self._ended(code)
        self._set_running(False)
        if self._written is not None:
            try:
                self.profile = read_profile(self._written)
            except ConfigError as exc:
                self.state.setText(f"The command wrote {self._written}, but it does not read back: {exc}")
                return
            if self.exit_code == 0:
                self.progress.setValue(self.progress.maximum())
            stopped = "Stopped. " if self.exit_code == EXIT_STOPPED else ""
            lanes = ", ".join(dict.fromkeys(x.lane for x in self.profile.lanes))
            self.state.setText(f"{stopped}Profile {self.profile.name} written to {self._written} (lanes {lanes}). "
                               "Send the file to compare machines, or add its lanes to the crossover map.")
            self.add.setEnabled(True)
            return
        last = next((line for line in reversed(self.log.toPlainText().splitlines())  # why, not a progress line
                     if line.startswith(("error:", "profile:")) and not PLAN_LINE.match(line)
                     and not SWEEP_LINE.match(line) and not line.startswith("profile: stopped with")), "")
        self.state.setText(no_profile_words(last, self.exit_code == EXIT_STOPPED))

    @Slot(str)
    def _on_not_started(self, program: str) -> None:
        self._set_running(False)
        self.state.setText(f"The profile command did not start: {program} could not be run.")

    # ------------------------------------------------------------------ the rest

    @Slot()
    def _on_choose_clicked(self) -> None:
        if self._dialogs is None:
            return
        path = self._dialogs.save_path(self, "Write the device profile to", Path(self.path.text()).name,
                                       "Device profiles (*.json)", ".json")
        if path:
            self.path.setText(path)

    @Slot()
    def _on_add_clicked(self) -> None:
        if self.profile is not None:
            self._add_lanes(self.profile)
            self.add.setEnabled(False)
