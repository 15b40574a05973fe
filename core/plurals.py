"""The one plural rule, for every layer of core and the window (core/words/numbers.py says it to the words)."""
from __future__ import annotations


def plural(n: float, noun: str, many: str = "") -> str:
    """`noun` for a count of `n`: itself for exactly one, else `many` (noun + "s" unless given). The one plural rule:
    "1 sample", "2 samples", "0 requests", "1.5 requests"."""
    return noun if n == 1 else many or f"{noun}s"


def fmt_count(n: int, noun: str, many: str = "") -> str:
    """A whole count with its noun, thousands separated: "1 request", "1,000 requests"."""
    return f"{n:,} {plural(n, noun, many)}"
