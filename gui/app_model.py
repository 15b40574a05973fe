"""The window's one state, held once and rendered by every view: the model being set up, the lanes chosen and the
findings (every completed point measured since the window opened, with its one answer per pair of lanes).

Qt-free (a test keeps it so): the views subscribe to one `changed` notification, told what changed, as Acconeer
Exploration Tool's app model does; the panels write into it and keep no copy of their own. The exported report reads
the same findings (gui/window/main_window.py answer_runs), so it says what the window says, over the same widths.
"""
from __future__ import annotations

import enum
from typing import Callable, Iterable

from ..core.config import LaneSpec, RunConfig
from ..core.files.findings import Findings

Listener = Callable[[frozenset["Change"]], None]


class Change(enum.Enum):
    """What changed in the state, as a subscriber is told it."""

    CONFIG = "config"  # the model panel's configuration, or its problem while a setting is invalid
    LANES = "lanes"  # the chosen lanes
    FINDINGS = "findings"  # a completed point joined or left the findings: the answer may have changed


class AppModel:
    """The current configuration (None while a setting is invalid, `problem` then says why), the chosen lanes and
    the findings. A change of setting is told at once; a change of the findings is told through `defer` (the window
    passes one that waits for the event loop), so a view that puts points while it draws is told once it has drawn,
    and points put together are told once."""

    def __init__(self, config: RunConfig | None = None, problem: str = "", findings: Findings | None = None,
                 defer: Callable[[Callable[[], None]], None] | None = None) -> None:
        self.config, self.problem = config, problem
        self.lanes: tuple[LaneSpec, ...] = ()
        self.findings = findings if findings is not None else Findings()
        self.findings.on_change = lambda: self._changed(Change.FINDINGS)
        self._listeners: list[Listener] = []
        self._defer = defer
        self._pending: set[Change] = set()

    def subscribe(self, listener: Listener, *only: Change) -> None:
        """Call `listener` with what changed, after every change (or only after a change of `only`)."""
        if only:
            wanted = frozenset(only)
            self._listeners.append(lambda changes: listener(changes) if changes & wanted else None)
        else:
            self._listeners.append(listener)

    def set_config(self, config: RunConfig | None, problem: str = "") -> None:
        """The model panel's configuration (or None and why not)."""
        if (config, problem) != (self.config, self.problem):
            self.config, self.problem = config, problem
            self._changed(Change.CONFIG)

    def set_lanes(self, lanes: Iterable[LaneSpec]) -> None:
        lanes = tuple(lanes)
        if lanes != self.lanes:
            self.lanes = lanes
            self._changed(Change.LANES)

    def _changed(self, change: Change) -> None:
        if change is not Change.FINDINGS or self._defer is None:
            self._tell(frozenset({change}))  # a setting the user changed: every view follows at once
            return
        first = not self._pending
        self._pending.add(change)
        if first:
            self._defer(self._tell_pending)

    def _tell_pending(self) -> None:
        changes, self._pending = frozenset(self._pending), set()
        if changes:
            self._tell(changes)

    def _tell(self, changes: frozenset[Change]) -> None:
        for listener in list(self._listeners):
            listener(changes)
