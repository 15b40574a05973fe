"""The demo drive's reading of the headline off a screenshot (benchmarks/demo_drive.py), without a screen: where the
headline wraps beside the Summary's scroll bar, OCR reads the bar's arrow as a token ("[a", "~") at the line's end;
it is left out, so the width on the next line is read (a CI run compared "widths: []" with the report's [128])."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from helpers import ROOT


def _drive():
    spec = importlib.util.spec_from_file_location("demo_drive", ROOT / "benchmarks" / "demo_drive.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["demo_drive"] = module
    spec.loader.exec_module(module)
    return module


def test_the_scroll_bars_arrow_at_a_wrapped_lines_end_is_not_read_into_the_headline(monkeypatch):
    demo = _drive()
    first = "No answer for cpu and cpul on this machine: cpul looked 1.4x faster at".split()
    second = "128 units, within the noise here.".split()

    def words(arrow: str) -> list:
        out, x = [], 10
        for text in [*first, arrow]:
            out.append(demo.Word(text, x, 100, 12 * len(text), 24, (1, 1, 1)))
            x += 12 * len(text) + 8
        x = 10
        for text in second:
            out.append(demo.Word(text, x, 130, 12 * len(text), 24, (1, 1, 2)))
            x += 12 * len(text) + 8
        return out

    for arrow in ("[a", "~", "^"):
        monkeypatch.setattr(demo, "ocr_words", lambda png, crop=None, scale=2, arrow=arrow: words(arrow))
        said = demo.key_words(demo.ocr_headline(Path("unused.png")))
        assert said == {"lanes": ["cpu", "cpu1"], "says": ["faster", "no answer"], "widths": [128]}, (arrow, said)
