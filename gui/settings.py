"""What the window remembers between launches (QSettings, an INI file beside the autosaves), read typed.

Each panel saves and restores its own part (`save_state`/`restore_state`); this class only
reads and writes typed values, so a damaged or missing value reads as its default.
"""
from __future__ import annotations

import json
from typing import Any, cast

from PySide6.QtCore import QByteArray, QSettings

from ..core.config import ConfigError, RunConfig
from ..core.paths import settings_path


class AppSettings:
    """Typed reads and writes of the window's state; a damaged or missing value reads as its default."""

    def __init__(self, path: str | None = None) -> None:
        self._qs = QSettings(path or str(settings_path()), QSettings.Format.IniFormat)

    def config(self) -> RunConfig | None:
        text = cast(str, self._qs.value("run/config", "", str))  # typed object: with type=str it is a str
        if not text:
            return None
        try:
            return RunConfig.from_dict(json.loads(text))
        except (ValueError, ConfigError, TypeError, AttributeError):
            return None  # a config saved by another version: start from the defaults instead

    def set_config(self, config: RunConfig) -> None:
        self._qs.setValue("run/config", json.dumps(config.to_dict()))

    def lanes(self) -> list[str] | None:
        text = cast(str, self._qs.value("run/lanes", "", str))
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
        return cast(bool, self._qs.value(key, default, bool))

    def set_flag(self, key: str, value: bool) -> None:
        self._qs.setValue(key, bool(value))

    def state(self, key: str) -> QByteArray | None:
        value: Any = self._qs.value(key)
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_state(self, key: str, value: QByteArray) -> None:
        self._qs.setValue(key, value)

    def sync(self) -> None:
        self._qs.sync()
