"""Open and save dialogs that start where the user last chose a file, and say so for the next launch."""
from __future__ import annotations

import os

from PySide6.QtWidgets import QFileDialog, QWidget

from crossover_lab.gui.settings import AppSettings


class FileDialogs:
    """One per window: every export and open dialog goes through here, so they share the last folder."""

    def __init__(self, settings: AppSettings) -> None:
        self._settings = settings

    def folder(self, default: str = "") -> str:
        folder = self._settings.text("dialogs/folder", "")
        return folder if folder and os.path.isdir(folder) else (default or os.path.expanduser("~"))

    def _remember(self, path: str) -> None:
        if path:
            self._settings.set_text("dialogs/folder", os.path.dirname(os.path.abspath(path)))

    def save_path(self, parent: QWidget, title: str, name: str, filters: str, suffix: str = "") -> str:
        """A path to write (with `suffix` added when the user typed none), or "" when cancelled."""
        path, _ = QFileDialog.getSaveFileName(parent, title, os.path.join(self.folder(), name), filters)
        if path and suffix and not path.lower().endswith(suffix):
            path += suffix
        self._remember(path)
        return path

    def open_path(self, parent: QWidget, title: str, filters: str, default_folder: str = "") -> str:
        path, _ = QFileDialog.getOpenFileName(parent, title, self.folder(default_folder), filters)
        self._remember(path)
        return path
