"""What the window remembers between launches (QSettings, an INI file in crossover_home()), read typed."""
from __future__ import annotations

import json
import os
from typing import Any

from PySide6.QtCore import QByteArray, QSettings

from crossover_lab.core.config import ConfigError, RunConfig
from crossover_lab.core.lanes import crossover_home


def settings_path() -> str:
    """$CROSSOVER_HOME/settings.ini: next to the logs and autosaves, so tests can point it elsewhere."""
    return os.path.join(crossover_home(), "settings.ini")


class AppSettings:
    """Typed reads and writes of the window's state; a damaged or missing value reads as its default."""

    def __init__(self, path: str | None = None) -> None:
        self._qs = QSettings(path or settings_path(), QSettings.Format.IniFormat)

    @property
    def path(self) -> str:
        return self._qs.fileName()

    def config(self) -> RunConfig | None:
        text = self._qs.value("run/config", "", str)
        if not text:
            return None
        try:
            return RunConfig.from_dict(json.loads(text))
        except (ValueError, ConfigError, TypeError, AttributeError):
            return None  # a config saved by another version: start from the defaults instead

    def set_config(self, config: RunConfig) -> None:
        self._qs.setValue("run/config", json.dumps(config.to_dict()))

    def lanes(self) -> list[str] | None:
        text = self._qs.value("run/lanes", "", str)
        try:
            names = json.loads(text) if text else None
        except ValueError:
            return None
        return [str(n) for n in names] if isinstance(names, list) else None

    def set_lanes(self, names: list[str] | None) -> None:
        """The chosen lanes; None forgets them, so the machine's default applies at the next launch."""
        if names is None:
            self._qs.remove("run/lanes")
        else:
            self._qs.setValue("run/lanes", json.dumps(list(names)))

    def text(self, key: str, default: str = "") -> str:
        value = self._qs.value(key, default)
        if isinstance(value, (list, tuple)):  # an unquoted "16,64" in a hand-edited INI reads as a list
            return ",".join(map(str, value))
        return str(value)

    def set_text(self, key: str, value: str) -> None:
        self._qs.setValue(key, value)

    def flag(self, key: str, default: bool = False) -> bool:
        return self._qs.value(key, default, bool)

    def set_flag(self, key: str, value: bool) -> None:
        self._qs.setValue(key, bool(value))

    def state(self, key: str) -> QByteArray | None:
        value: Any = self._qs.value(key)
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_state(self, key: str, value: QByteArray) -> None:
        self._qs.setValue(key, value)

    def clear(self) -> None:
        self._qs.clear()

    def sync(self) -> None:
        self._qs.sync()
