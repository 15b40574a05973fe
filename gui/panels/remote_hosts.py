"""Other machines in the Lanes panel: add a host reached over SSH (its lanes are listed) with its Python, or remove it.

Listing asks the host through the system ssh, in the background, one host at a time
(core/engine/remote/devices.py); a host that cannot be reached says why in its row, and the lanes of
this machine are untouched.
"""
from __future__ import annotations

import json
import threading
from typing import Callable

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (QGridLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSizePolicy, QVBoxLayout,
                               QWidget)

from ...core.config import ConfigError
from ...core.engine.devices import LaneOption
from ...core.engine.remote.channel import RemoteSettings
from ...core.engine.remote.devices import RemoteMachine, host_of, list_remote_lanes
from ...core.engine.remote.wire import DEFAULT_PYTHON
from ..jobs import JobOutcome, JobRunner
from ..widgets.layouts import empty_layout
from ..settings import AppSettings
from ...core.words.numbers import fmt_count

KEY = "remote/hosts"
Lister = Callable[[str, RemoteSettings, float, threading.Event], RemoteMachine]


class RemoteHosts(QWidget):
    """The hosts added, each with its Python and what listing it found; `options()` are their lanes."""

    changed = Signal()  # a host was added, listed or removed: options() and settings() are new

    def __init__(self, parent: QWidget | None = None, lister: Lister | None = None) -> None:
        super().__init__(parent)
        self._list_lanes = lister or list_remote_lanes
        self._pythons: dict[str, str] = {}  # host → its Python ("" = python3), in the order added
        self._found: dict[str, RemoteMachine | str] = {}  # host → what listing found, or why it could not
        self._listing: tuple[str, str] = ("", "")  # the host being listed, and with which Python
        self._runner = JobRunner("hosts", 200, self)
        self._runner.job_ended.connect(self._on_runner_job_ended)
        self.host_edit = QLineEdit(placeholderText="ssh://user@host:port")
        self.host_edit.setToolTip("Another machine with Crossover installed, reached with your SSH keys and "
                                  "~/.ssh/config (never a password prompt)")
        self.host_edit.setAccessibleName("Remote host")
        self.python_edit = QLineEdit(placeholderText=DEFAULT_PYTHON)
        self.python_edit.setAccessibleName("Python on the remote host")
        self.python_edit.setToolTip("The Python that has Crossover on that machine")
        self.python_edit.setMaximumWidth(110)
        # In a narrow side panel the Python gives way first: the host is what must stay readable.
        self.host_edit.setMinimumWidth(self.host_edit.fontMetrics().horizontalAdvance("user@host") + 12)
        self.python_edit.setMinimumWidth(self.python_edit.fontMetrics().horizontalAdvance(DEFAULT_PYTHON) + 12)
        self.add_button = QPushButton("Add host")
        self.add_button.clicked.connect(self._on_add_clicked)
        self.host_edit.returnPressed.connect(self._on_add_clicked)
        self.note = QLabel()
        self.note.setObjectName("hintLabel")
        self.note.setWordWrap(True)
        self._rows = QGridLayout()
        self._rows.setContentsMargins(0, 0, 0, 0)
        form = QHBoxLayout()
        form.addWidget(self.host_edit, 1)
        form.addWidget(self.python_edit)
        form.addWidget(self.add_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._rows)
        layout.addLayout(form)
        layout.addWidget(self.note)

    # ------------------------------------------------------------------ what the panel reads

    def hosts(self) -> list[str]:
        return list(self._pythons)

    def options(self) -> list[LaneOption]:
        return [o for found in self._found.values() if isinstance(found, RemoteMachine) for o in found.options]

    def settings(self) -> RemoteSettings:
        return RemoteSettings(pythons={h: p for h, p in self._pythons.items() if p})

    def save_state(self, settings: AppSettings) -> None:
        settings.set_text(KEY, json.dumps(self._pythons))

    def restore_state(self, settings: AppSettings) -> None:
        try:
            saved = json.loads(settings.text(KEY, "{}") or "{}")
        except ValueError:
            saved = {}
        for host, python in (saved.items() if isinstance(saved, dict) else ()):
            self.add_host(str(host), str(python))

    # ------------------------------------------------------------------ adding, listing, removing

    def add_host(self, text: str, python: str = "") -> bool:
        """Add a host and list its lanes in the background; False (and a sentence) if the name is not one."""
        try:
            host = host_of(text)
        except ConfigError as exc:
            self.note.setText(f"{exc}.")
            return False
        self._pythons[host] = python.strip()
        self._found.pop(host, None)
        self.note.setText("")
        self._next()
        self._render()
        self.changed.emit()
        return True

    def remove_host(self, host: str) -> None:
        if self._listing[0] == host:
            self._runner.cancel()
        self._pythons.pop(host, None)
        self._found.pop(host, None)
        self._render()
        self.changed.emit()

    def shutdown(self, timeout_ms: int = 1500) -> None:
        """Stop a listing in progress (the window is closing)."""
        self._runner.shutdown(timeout_ms)
        self._runner.wait_stuck(timeout_ms)

    def threads(self) -> list:
        return self._runner.threads()

    def _next(self) -> None:
        """List the first host not yet listed, unless a listing is running."""
        if self._runner.running:
            return
        host = next((h for h in self._pythons if h not in self._found), "")
        if not host:
            return
        self._listing, settings, lister = (host, self._pythons[host]), self.settings(), self._list_lanes

        def work(cancel: threading.Event) -> RemoteMachine:
            return lister(host, settings, 300.0, cancel)

        self._runner.start_quiet(work)

    @Slot()
    def _on_add_clicked(self) -> None:
        if self.add_host(self.host_edit.text(), self.python_edit.text()):
            self.host_edit.clear()

    @Slot(JobOutcome)
    def _on_runner_job_ended(self, outcome: JobOutcome) -> None:
        (host, python), self._listing = self._listing, ("", "")
        if self._pythons.get(host) == python and host not in self._found and not outcome.cancelled:
            self._found[host] = outcome.result if outcome.result is not None else outcome.error
            self._render()
            self.changed.emit()
        self._next()

    def _render(self) -> None:
        empty_layout(self._rows)
        for row, (host, python) in enumerate(self._pythons.items()):
            found = self._found.get(host)
            if isinstance(found, RemoteMachine):
                text = f"{found.url} · {found.machine.get('machine') or ''} · {fmt_count(len(found.options), 'lane')}"
            elif isinstance(found, str):
                text = found  # the sentence names the host
            else:
                text = f"ssh://{host}: asking for its lanes…"
            label = QLabel(text, wordWrap=True)
            label.setObjectName("hintLabel" if found is None else "")
            # A long host name is one word that cannot wrap: the column's width decides, not the name.
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            label.setToolTip(f"{text}\nPython there: {python or DEFAULT_PYTHON}")
            if isinstance(found, str):
                label.setStyleSheet("color: #b00020;")
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            remove = QPushButton("×")
            remove.setToolTip(f"Remove ssh://{host} and its lanes")
            remove.setMaximumWidth(28)
            remove.clicked.connect(lambda _=False, h=host: self.remove_host(h))
            self._rows.addWidget(label, row, 0)
            self._rows.addWidget(remove, row, 1, Qt.AlignmentFlag.AlignTop)
