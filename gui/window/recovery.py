"""The offer, at launch, of runs autosaved by an earlier session: a status-bar strip, never a blocking dialog."""
from __future__ import annotations

import os
from typing import Callable

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QStatusBar, QWidget

from ...core.files import autosave
from ...core.plurals import plural


class RecoveryOffer(QWidget):
    """"N runs from an earlier session were saved in … [Restore] [Discard]"."""

    restore_requested = Signal(list)  # run ids to read back into history and map

    def __init__(self, run_ids: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run_ids = list(run_ids)
        n = len(self.run_ids)
        self.label = QLabel(f"{n} {plural(n, 'run')} from an earlier session "
                            f"{'are' if n != 1 else 'is'} saved.")
        self.label.setToolTip(f"Autosaved in {autosave.autosave_dir()} (per-batch CSV and JSON sidecar).")
        self.restore = QPushButton("Restore")
        self.restore.setToolTip("Put them back into the history and the crossover map.")
        self.discard = QPushButton("Discard")
        self.discard.setToolTip("Delete their autosaved files.")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.restore)
        layout.addWidget(self.discard)
        self.restore.clicked.connect(self._on_restore_clicked)
        self.discard.clicked.connect(self._on_discard_clicked)

    @classmethod
    def for_saved_runs(cls) -> RecoveryOffer | None:
        """An offer of whatever the autosave folder holds; None when it holds nothing."""
        run_ids = autosave.saved_run_ids()
        return cls(run_ids) if run_ids else None

    @classmethod
    def install(cls, status_bar: QStatusBar, on_restore: Callable[[list[str]], object],
                offer: bool | None) -> RecoveryOffer | None:
        """Put the offer in the status bar when there is something to offer. `offer=None` means yes,
        unless CROSSOVER_NO_RESTORE_PROMPT=1 (tests, screenshots)."""
        if offer is None:
            offer = os.environ.get("CROSSOVER_NO_RESTORE_PROMPT", "") != "1"
        recovery = cls.for_saved_runs() if offer else None
        if recovery is not None:
            recovery.restore_requested.connect(on_restore)
            status_bar.addWidget(recovery)
        return recovery

    @Slot()
    def _on_restore_clicked(self) -> None:
        self.hide()
        self.restore_requested.emit(self.run_ids)

    @Slot()
    def _on_discard_clicked(self) -> None:
        for run_id in self.run_ids:
            autosave.delete_run(run_id)
        self.hide()
