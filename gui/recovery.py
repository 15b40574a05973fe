"""The offer, at launch, of runs autosaved by an earlier session: a status-bar strip, never a blocking dialog."""
from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from crossover_lab.gui import autosave


class RecoveryOffer(QWidget):
    """"N runs from an earlier session were saved in … [Restore] [Discard]"."""

    restore_requested = Signal(list)  # run ids to read back into history and map
    discarded = Signal(list)  # run ids whose files were deleted

    def __init__(self, run_ids: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run_ids = list(run_ids)
        n = len(self.run_ids)
        self.label = QLabel(f"{n} run{'s' if n != 1 else ''} from an earlier session "
                            f"{'are' if n != 1 else 'is'} saved.")
        self.label.setToolTip(f"Autosaved in {autosave.describe_folder()} (per-batch CSV and JSON sidecar).")
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

    @Slot()
    def _on_restore_clicked(self) -> None:
        self.hide()
        self.restore_requested.emit(self.run_ids)

    @Slot()
    def _on_discard_clicked(self) -> None:
        for run_id in self.run_ids:
            autosave.delete_run(run_id)
        self.hide()
        self.discarded.emit(self.run_ids)
