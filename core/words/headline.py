"""A headline a room can read: the answer's sentence without what it rests on, and one short line of how sure.

The one rule's sentences carry their statistics in parentheses ("cpu1 is 1.4x faster than cpu on this model (one
run of each lane; at most a 5% chance of any false lead at this width, 3.5% measured (rule calibration, …)))").
A headline shows the sentence alone, a line below it the first words of each statistic, and the whole sentence a
hover (and the report) away. Nothing is dropped: the views keep the whole sentence beside.
"""
from __future__ import annotations

import re

SURE_PARTS = 2  # statistics said in the short line; the rest is in the whole sentence


def split_parentheses(text: str) -> tuple[str, list[str]]:
    """`text` without its top-level parenthesised parts, and those parts (nested ones kept inside them)."""
    kept, parts, depth, part = [], [], 0, []
    for ch in text:
        if ch == "(":
            if depth:
                part.append(ch)
            else:
                part = []
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if depth:
                part.append(ch)
            else:
                parts.append("".join(part).strip())
        elif depth:
            part.append(ch)
        else:
            kept.append(ch)
    if depth:  # an unclosed "(": the text as it is
        return text, []
    plain = re.sub(r"\s+([.,;:])", r"\1", re.sub(r"\s{2,}", " ", "".join(kept))).strip()
    return plain, parts


# "no answer for A and B on this machine: B looked 1.3x faster at 128 units, but <why the noise swamps it>; measure
# again when the machine is quiet": a room reads the gap and that it is noise; the why is in the whole sentence.
_NOISE = re.compile(r"^(no answer for .+?: \S+ looked \S+ faster at .+?), but [^;]+(;.*)?$", re.IGNORECASE)


def headline(text: str) -> tuple[str, str]:
    """The sentence(s) a room reads, and the short line of how sure ("" where the text says none)."""
    plain, parts = split_parentheses(text)
    if (m := _NOISE.match(plain.rstrip("."))) is not None:
        plain = f"{m.group(1)}, within the noise here" + ("." if plain.endswith(".") else "")
    sure: list[str] = []
    for part in parts:
        for piece in part.split("; "):
            bare, _ = split_parentheses(piece)
            bare = bare.split(", ", 1)[0] if len(bare) > 60 else bare
            if bare and bare not in sure and not re.fullmatch(r"[≈\d.,–\- ]+\w*( per batch)?", bare):
                sure.append(bare)
    sure.sort(key=lambda said: "chance" not in said)  # the error rate first: it is what "how sure" asks
    return plain, "; ".join(sure[:SURE_PARTS])
