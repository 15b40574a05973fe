"""A user's model factory as the model panel holds it: the widths lanes have built and counted, and, for a width
with no figures yet, why (it could not be built, or it waits for the lanes to be free). No Qt: the panel shows it."""
from __future__ import annotations

from ...core.config import FactoryModel


def same_factory(a: FactoryModel, b: FactoryModel) -> bool:
    """Whether two factories are one file's one function (what a lane found of one holds for the other)."""
    return (a.path, a.sha256, a.function) == (b.path, b.sha256, b.function)


class FactoryWidths:
    """The factory shown (None before one is opened), what lanes found of it, and the notes on its other widths."""

    def __init__(self) -> None:
        self.factory: FactoryModel | None = None  # with every width a lane counted so far
        self._notes: dict[int, str] = {}  # why a width has no figures (while none came)
        self._waiting: set[int] = set()  # widths noted as waiting for the lanes (asked again once free)

    def show(self, factory: FactoryModel, fresh: bool = False) -> FactoryModel:
        """Hold `factory`; the same factory keeps the widths already counted; with `fresh`, another factory's notes
        are dropped (a factory just opened; a saved configuration restored keeps them). Returns what is held."""
        same = self.factory is not None and same_factory(self.factory, factory)
        if fresh and not same:
            self._notes, self._waiting = {}, set()
        self.factory = self.factory.with_built(factory.built) if same and self.factory is not None else factory
        return self.factory

    def add(self, found: FactoryModel) -> bool:
        """What a lane found of the factory held: kept, and those widths' notes dropped; False (and nothing kept)
        for another factory (one opened meanwhile)."""
        if self.factory is None or not same_factory(self.factory, found):
            return False
        for b in found.built:
            self._notes.pop(b.width, None)
            self._waiting.discard(b.width)
        self.factory = self.factory.with_built(found.built)
        return True

    def note(self, width: int, note: str, waiting: bool = False) -> None:
        """Why `width` has no figures; with `waiting`, it is asked again once the lanes are free (free)."""
        self._notes[width] = note
        if waiting:
            self._waiting.add(width)
        else:
            self._waiting.discard(width)

    def free(self) -> None:
        """The lanes are free: the widths that waited for them are no longer noted, so they are asked again."""
        for width in self._waiting:
            self._notes.pop(width, None)
        self._waiting = set()

    def wanted(self, width: int) -> bool:
        """Whether a lane should build `width`: none has counted it and nothing stands in its way."""
        return self.factory is not None and self.factory.at(width) is None and width not in self._notes

    def cost_words(self, width: int) -> str:
        """What the panel says in place of a width's cost while it has no figures."""
        function = self.factory.function if self.factory is not None else "FUNCTION"
        return self._notes.get(width, f"counting {function}({width})…")
