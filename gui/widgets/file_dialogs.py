"""Open and save dialogs that start where the user last chose a file, and never hang on special files.

Qt's own dialog asks its icon provider for every listed file's type, and the default provider finds
it by reading the file's first bytes: in /proc, /sys or /dev a read can block forever (/proc/kmsg
does), which froze the window. The provider here names types from the file name alone.
"""
from __future__ import annotations

import os

from PySide6.QtCore import QFileInfo
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QFileDialog, QFileIconProvider, QWidget

from ..settings import AppSettings

_KINDS = {"csv": "CSV file", "json": "JSON file", "png": "PNG image", "svg": "SVG image", "npz": "NumPy archive"}


class NameOnlyIconProvider(QFileIconProvider):
    """Icons and types from a file's name and kind (folder or file), never from its content."""

    def icon(self, what: QFileIconProvider.IconType | QFileInfo) -> QIcon:  # noqa: D401 (Qt's two overloads)
        if isinstance(what, QFileInfo):
            kind = QFileIconProvider.IconType.Folder if what.isDir() else QFileIconProvider.IconType.File
            return super().icon(kind)
        return super().icon(what)

    def type(self, info: QFileInfo) -> str:
        if info.isDir():
            return "Folder"
        return _KINDS.get(info.suffix().lower(), "File")


class FileDialogs:
    """One per window: every export and open dialog goes through here, so they share the last folder."""

    def __init__(self, settings: AppSettings) -> None:
        self._settings = settings
        self._icons = NameOnlyIconProvider()  # kept: the dialog does not own it

    def folder(self, default: str = "") -> str:
        folder = self._settings.text("dialogs/folder", "")
        return folder if folder and os.path.isdir(folder) else (default or os.path.expanduser("~"))

    def _remember(self, path: str) -> None:
        if path:
            self._settings.set_text("dialogs/folder", os.path.dirname(os.path.abspath(path)))

    def _ask(self, parent: QWidget, title: str, start: str, filters: str, save: bool) -> str:
        dialog = QFileDialog(parent, title, start, filters)
        dialog.setIconProvider(self._icons)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave if save else QFileDialog.AcceptMode.AcceptOpen)
        dialog.setFileMode(QFileDialog.FileMode.AnyFile if save else QFileDialog.FileMode.ExistingFile)
        if save:
            dialog.selectFile(os.path.basename(start))
        self.last_dialog = dialog  # tests reach the dialog that is open
        path = dialog.selectedFiles()[0] if dialog.exec() and dialog.selectedFiles() else ""
        dialog.deleteLater()
        return path

    def save_path(self, parent: QWidget, title: str, name: str, filters: str, suffix: str = "") -> str:
        """A path to write (with `suffix` added when the user typed none), or "" when cancelled."""
        path = self._ask(parent, title, os.path.join(self.folder(), name), filters, save=True)
        if path and suffix and not path.lower().endswith(suffix):
            path += suffix
        self._remember(path)
        return path

    def open_path(self, parent: QWidget, title: str, filters: str, default_folder: str = "") -> str:
        path = self._ask(parent, title, self.folder(default_folder), filters, save=False)
        self._remember(path)
        return path
