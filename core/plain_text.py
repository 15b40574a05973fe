"""The one cleaner for every text that came from outside (a file someone sent, a remote lane): printable as is.

A profile's name, a lane's device string, a remote's error: each may hold ESC sequences (a terminal's colours,
its window title, a cleared screen), BEL, CR, NUL, or bidi overrides (U+202E turns "gpu0 slower" around). Every
text from outside passes through `printable` where it is read, so the terminal, the window and the report show
the characters, never their effect. Rich text (HTML) is the views' own concern: they escape what they insert.
"""
from __future__ import annotations

import unicodedata

KEEP = frozenset("\n\t")  # a traceback from a remote reads as one
ONE_LINE = frozenset()  # a name: a newline in it is escaped too


def printable(text: str, keep: frozenset[str] = KEEP) -> str:
    """`text` with every control, format (bidi included) and line/paragraph-separator character escaped as \\xNN
    or \\uNNNN, but those in `keep`: what came from outside may be printed, and never moves the cursor, sets a
    title, clears the screen or turns the text around."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch in keep or ch.isprintable() or unicodedata.category(ch) == "Zs":
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out)
