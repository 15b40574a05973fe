"""A control (a widget or a menu's action) that cannot be used now says why in its tooltip, and its own tooltip comes back once it can."""
from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

_OWN = "crossoverOwnTip"  # the control's own tooltip, kept on it the first time a reason is added


def say_why_not(widget: QWidget | QAction, reason: str) -> None:
    """`widget`'s (or an action's) own tooltip, with `reason` on a line of its own below it ("" takes the reason away)."""
    own = widget.property(_OWN)
    if own is None:
        own = widget.toolTip()
        widget.setProperty(_OWN, own)
    text = f"{own}\n{reason}".strip() if reason else str(own)
    if widget.toolTip() != text:
        widget.setToolTip(text)
