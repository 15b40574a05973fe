"""The one number formatter, and counts, rates, durations, ranges, FLOPs, dollars, joules and times, so a figure reads
the same everywhere (the one plural rule too: `plural`)."""
from __future__ import annotations

import datetime as _dt
import math
from typing import Iterable

from ..plurals import fmt_count, plural  # the one plural rule, said here to the words

MISSING = "–"


def fmt_num(x: float | None, sig: int = 3) -> str:
    """`sig` significant figures, no exponent, thousands separated; "–" when missing."""
    if x is None or not isinstance(x, (int, float)) or not math.isfinite(x):
        return MISSING
    if x == 0:
        return "0"
    if abs(x) >= 10 ** sig:
        return f"{round(x, sig - 1 - math.floor(math.log10(abs(x)))):,.0f}"
    if abs(x) < 1e-4:
        return f"{x:.{sig - 1}e}"
    digits = sig - 1 - math.floor(math.log10(abs(x)))
    text = f"{round(x, digits):.{max(digits, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_rate(rate: float, noun: str = "request", sig: int = 3) -> str:
    """A rate per second with its noun in the number's count as written: "1 request/s", "1.5 requests/s"."""
    text = fmt_num(rate, sig)
    return f"{text} {plural(1 if text == '1' else 2, noun)}/s"


def fmt_rates(rates: Iterable[float], noun: str = "request", sig: int = 3) -> str:
    """Several rates of one unit: "1 request/s" alone, "50, 100, 200 requests/s" together."""
    texts = [fmt_num(r, sig) for r in rates]
    return f"{', '.join(texts)} {plural(1 if texts == ['1'] else 2, noun)}/s"


def fmt_flops(x: float) -> str:
    """A FLOP count with its unit: 26.2 MFLOP, 1.07 TFLOP."""
    for unit, name in ((1e12, "TFLOP"), (1e9, "GFLOP"), (1e6, "MFLOP"), (1e3, "kFLOP")):
        if abs(x) >= unit:
            return f"{fmt_num(x / unit)} {name}"
    return f"{fmt_num(x)} FLOP"


def fmt_range(lo: float, hi: float, sig: int = 2) -> str:
    """A spread as its range, "290–1200": log-scale spreads are rarely symmetric, so never "±"."""
    return f"{fmt_num(lo, sig)}–{fmt_num(hi, sig)}"


MIN_SPREAD_BATCHES = 10  # a p10–p90 from fewer batches is one or two of them: a table shows "–" and the count beside


def fmt_spread(lo: float, hi: float, n: int, sig: int = 3) -> str:
    """A p10–p90 spread where it rests on enough batches (MIN_SPREAD_BATCHES), else "–": "1,120–1,120" from one
    batch read as a measured spread."""
    if n < MIN_SPREAD_BATCHES or not (math.isfinite(lo) and math.isfinite(hi)):
        return "–"
    return fmt_range(lo, hi, sig)


def fmt_duration(seconds: float | None) -> str:
    """A time left or taken: 42 s, 3 min 5 s, 1 h 2 min."""
    if seconds is None or not math.isfinite(seconds):
        return MISSING
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def local_time(iso: str) -> str:
    """An ISO time as the user's clock shows it: 14:05:09 today, else 2026-11-30 14:05."""
    try:
        when = _dt.datetime.fromisoformat(iso).astimezone()
    except ValueError:
        return iso
    today = _dt.datetime.now().astimezone().date()
    return when.strftime("%H:%M:%S" if when.date() == today else "%Y-%m-%d %H:%M")


# ---------------------------------------------------------------- two lanes on one model


def fmt_dollars(x: float | None) -> str:
    """Money as people write it, never in exponents: $1.20, $1,234.50, $0.42, $0.0000955."""
    if x is None or not math.isfinite(x):
        return MISSING
    if abs(x) >= 1:
        return f"${x:,.2f}"
    if 0 < abs(x) < 1e-4:
        return f"${x:.{2 - math.floor(math.log10(abs(x)))}f}"
    return f"${fmt_num(x)}"


def fmt_joules(x: float | None) -> str:
    """Energy with its unit: 850 J, 1.2 kJ, 3.4 MJ; "–" when missing."""
    if x is None or not math.isfinite(x):
        return MISSING
    for unit, name in ((1e9, "GJ"), (1e6, "MJ"), (1e3, "kJ")):
        if abs(x) >= unit:
            return f"{fmt_num(x / unit)} {name}"
    return f"{fmt_num(x)} J"
