"""The pieces a report is made of, before it is rendered: a table, a figure (its picture and its numbers), a source's
section, and a file's settings in groups with its sidecar one link away."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from markupsafe import Markup

from ..words.settings import SettingsGroup
from .svg import Bar, Plot, bars_svg, plot_svg

Cell = str


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]


@dataclass(frozen=True)
class Figure:
    """A picture, its numbers in a table under it, and the file name it takes beside a Markdown report."""

    title: str
    svg: Markup
    standalone: Markup
    table: Table
    file_name: str


@dataclass(frozen=True)
class Section:
    """One source's part of the report: what it measured, its pictures, and its facts."""

    title: str
    kind: str  # sweep | run | anatomy
    lines: tuple[str, ...]  # sentences in the app's words
    figures: tuple[Figure, ...]
    tables: tuple[tuple[str, Table], ...] = ()  # (caption, table): fits, prices, energy


@dataclass(frozen=True)
class FileSettings:
    """One source file's settings, those that apply to it, in groups (core/words/settings.py); and its sidecar, which
    keeps every key as recorded: `sidecar` its path, made relative to the report where the report is written."""

    name: str
    groups: tuple[SettingsGroup, ...]
    sidecar: str = ""
    sidecar_name: str = ""


def sentence(text: str) -> str:
    """A line as the CLI prints it: the words as they are (a lane's name keeps its case), with a full stop."""
    text = text.strip()
    return text + ("" if text.endswith(".") else ".") if text else ""


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> Table:
    return Table(tuple(header), tuple(tuple(r) for r in rows))


def slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")[:60] or "figure"


def figure(title: str, svg_of: Plot | tuple[str, Sequence[Bar], str], numbers: Table, name: str) -> Figure:
    if isinstance(svg_of, Plot):
        return Figure(title, plot_svg(svg_of), plot_svg(svg_of, standalone=True), numbers, name)
    t, bars, unit = svg_of
    return Figure(title, bars_svg(t, bars, unit), bars_svg(t, bars, unit, standalone=True), numbers, name)
