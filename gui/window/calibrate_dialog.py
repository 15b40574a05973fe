"""Run > Calibrate the rule here: this machine's false-lead rate measured from the window (issue 57).

It runs the command line's `calibrate` as a process of its own (core/cli/calibrate.py): K sweeps of a lane against
its twin (cpu1 against cpu1#2, two equal lanes taking turns), each judged as `analyze` judges a file, the share that
named a lead kept in rule-here.json with its exact interval. From then on, every answer in the window, the report and
the command line quotes this machine's measured rate beside the simulated one. Stop keeps the sweeps that finished.
"""
from __future__ import annotations

import re
from typing import Sequence

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (QComboBox, QDialogButtonBox, QFormLayout, QLabel, QPlainTextEdit,
                               QProgressBar, QPushButton, QSizePolicy, QSpinBox, QVBoxLayout, QWidget)

from ...core.records import now_iso
from ...core.files.rule_here import MAX_SWEEPS, here_calibration, here_calibration_problem, here_path
from ...core.words.rule_here import calibration_lines
from ..widgets.command_dialog import CommandDialog
from ..widgets.command_process import EXIT_STOPPED, CommandFn, crossover_command

SWEEP_LINE = re.compile(r"^calibrate: twin sweep (\d+) of (\d+)(?:, about (.+) left)?$")
JUDGED_LINE = re.compile(r"^twin sweep (\d+) of (\d+): (.+)$")
DEFAULT_SWEEPS = 6  # as the command's (core/cli/calibrate.py): about 2.5 minutes each on a 2-core machine
ABOUT = ("Sweeps a lane against its twin: the same device in a second process, taking turns with it, so the two "
         "are equal and any lead the rule names between them is a false one. The share of sweeps with a false lead "
         "is this machine's measured rate, kept with its interval; every answer quotes it from then on. Each is a sweep "
         "of the default design (six widths in five passes): about 2.5 minutes on a 2-core machine; keep other work "
         "off the machine, or the rate is the busy machine's.")


def current_words() -> str:
    """What is kept now: the last calibration's sentence, or that there is none (and why it does not read)."""
    found = here_calibration()
    if found is not None:
        return "Kept now: " + " ".join(calibration_lines(found, str(here_path())))
    problem = here_calibration_problem()
    return f"Kept now: none ({problem})." if problem else "Kept now: none: this machine's rate has not been measured."


class CalibrateDialog(CommandDialog):
    """A lane and a count; Start; the command's progress and each sweep's outcome; Stop; the rate it kept."""

    def __init__(self, lanes: Sequence[str], parent: QWidget | None = None,
                 command: CommandFn = crossover_command) -> None:
        super().__init__(command, parent)
        self.setWindowTitle("Calibrate the rule on this machine")
        self.lane = QComboBox()
        for name in dict.fromkeys(["cpu1", *lanes]):  # cpu1 first: the command's default, one core a lane
            self.lane.addItem(name)
        self.lane.setToolTip("The lane swept against its twin (cpu1 against cpu1#2)")
        self.sweeps = QSpinBox()
        self.sweeps.setRange(1, MAX_SWEEPS)
        self.sweeps.setValue(DEFAULT_SWEEPS)
        self.sweeps.setToolTip("More sweeps narrow the interval: 0 false leads of 6 bounds the rate below 46%, 0 of "
                               "20 below 17%")
        form = QFormLayout()
        form.addRow("Lane", self.lane)
        form.addRow("Twin sweeps", self.sweeps)
        about = QLabel(ABOUT)
        about.setWordWrap(True)
        self.state = QLabel(current_words())
        self.state.setWordWrap(True)
        self.state.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.progress = QProgressBar()
        self.progress.setFormat("%v of %m twin sweeps")
        self.progress.setRange(0, self.sweeps.value())
        self.progress.setValue(0)
        self.sweeps.valueChanged.connect(lambda n: None if self.running else self.progress.setRange(0, n))
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(2000)
        self.log.setAccessibleName("What the calibrate command says")
        self.start = QPushButton("Start")
        self.stop = QPushButton("Stop")
        self.stop.setEnabled(False)
        self.stop.setToolTip("Stop as Ctrl-C does: the sweeps that finished are counted and kept")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        for button in (self.start, self.stop):
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.close)
        self.start.clicked.connect(self.begin)
        self.stop.clicked.connect(self.halt)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(about)
        layout.addWidget(self.state)
        layout.addWidget(self.progress)
        layout.addWidget(self.log, 1)
        layout.addWidget(buttons)
        self.resize(720, 480)
        self._false_leads = 0
        self._started_at = ""  # a calibration kept before this one started is not this one's

    def arguments(self) -> list[str]:
        return ["calibrate", "--lanes", self.lane.currentText(), "--sweeps", str(self.sweeps.value())]

    @Slot()
    def begin(self) -> None:
        if self.running:
            return
        self.exit_code, self._false_leads, self._started_at = None, 0, now_iso()
        self.log.clear()
        self.progress.setRange(0, self.sweeps.value())
        self.progress.setValue(0)
        self.state.setText("Starting the lane and its twin…")
        self._set_running(True)
        self.runner.start(self.arguments())

    @Slot()
    def halt(self) -> None:
        if not self.running:
            return
        self.runner.halt()
        self.state.setText("Stopping: the sweep in progress ends; the sweeps that finished are counted and kept.")
        self.stop.setEnabled(False)

    def _set_running(self, running: bool) -> None:
        for widget in (self.lane, self.sweeps, self.start):
            widget.setEnabled(not running)
        self.stop.setEnabled(running)

    def _read_line(self, line: str) -> None:
        self.log.appendPlainText(line)
        if m := SWEEP_LINE.match(line):
            number, total = int(m.group(1)), int(m.group(2))
            self.progress.setRange(0, total)
            self.progress.setValue(number - 1)
            left = f"; about {m.group(3)} left" if m.group(3) else ""
            leads = f" ({self._false_leads} false {'lead' if self._false_leads == 1 else 'leads'} so far)" \
                if number > 1 else ""
            self.state.setText(f"Twin sweep {number} of {total}{left}{leads}.")
        elif m := JUDGED_LINE.match(line):
            self.progress.setValue(int(m.group(1)))
            self._false_leads += "a false lead" in m.group(3)

    @Slot(int)
    def _on_ended(self, code: int) -> None:
        self._ended(code)
        self._set_running(False)
        found = here_calibration()
        stopped = "Stopped. " if code == EXIT_STOPPED else ""
        if code in (0, EXIT_STOPPED) and found is not None and found.measured_at >= self._started_at:
            self.state.setText(stopped + current_words())
            return
        last = next((line for line in reversed(self.log.toPlainText().splitlines())
                     if line.startswith(("error:", "calibrate:")) and not SWEEP_LINE.match(line)), "")
        self.state.setText(f"{stopped}No rate was kept" + (f": {last.split(': ', 1)[-1]}" if last else "."))

    @Slot(str)
    def _on_not_started(self, program: str) -> None:
        self._set_running(False)
        self.state.setText(f"The calibrate command did not start: {program} could not be run.")
