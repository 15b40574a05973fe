"""Whether a lane's summary has a steady median to compare (its figures: core/records.py summarize)."""
from __future__ import annotations

import math

from ..records import RunSummary


def has_steady(s: RunSummary) -> bool:
    """The run has a steady-state median to compare."""
    return math.isfinite(s.median_ms) and s.median_ms > 0
