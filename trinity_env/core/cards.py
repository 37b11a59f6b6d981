"""Cards and their ``"TRBL"`` notation.

A card is four side values, top-right-bottom-left. ``A`` ranks above 9 and is stored as
10 so that captures are plain integer comparisons. ``Card`` subclasses ``tuple`` because
the rules engine indexes sides on its hot path; its ``str`` is the notation and its
``repr`` pastes back into Python.
"""

from __future__ import annotations

from collections.abc import Iterable

from trinity_env.core.errors import CardError
from trinity_env.core.files import short

A = 10
"""The value of an ``A`` side."""

TOP, RIGHT, BOTTOM, LEFT = 0, 1, 2, 3
SIDE_NAMES = ("top", "right", "bottom", "left")

_CHAR_TO_VALUE = {str(v): v for v in range(1, 10)} | {"A": A, "a": A}
_VALUE_TO_CHAR = {v: str(v) for v in range(1, 10)} | {A: "A"}


class Card(tuple):
    """One card: ``Card("7A24")`` has top 7, right A (10), bottom 2, left 4."""

    __slots__ = ()
    _cache: dict[str, Card] = {}

    def __new__(cls, notation: str | Card) -> Card:
        if isinstance(notation, Card):
            return notation
        if not isinstance(notation, str):
            kind = type(notation).__name__
            raise CardError(f"a card is a 4-character string like '7A24', got {short(notation)} ({kind})")
        cached = cls._cache.get(notation)
        if cached is not None:
            return cached
        if len(notation) != 4:
            raise CardError(
                f"bad card {short(notation)}: a card has exactly 4 side values "
                f"(top, right, bottom, left), like '7A24'; got {len(notation)} characters"
            )
        values = []
        for ch in notation:
            value = _CHAR_TO_VALUE.get(ch)
            if value is None:
                raise CardError(f"bad card {short(notation)}: side value {ch!r} is not one of 1-9 or A")
            values.append(value)
        card = tuple.__new__(cls, values)
        if len(cls._cache) < 100_000:
            cls._cache[notation] = card
        return card

    @classmethod
    def from_sides(cls, top: int, right: int, bottom: int, left: int) -> Card:
        """Build a card from integer side values (1-10, 10 meaning ``A``)."""
        sides = (top, right, bottom, left)
        for name, value in zip(SIDE_NAMES, sides):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= A:
                raise CardError(f"bad {name} side value {value!r}: sides are integers 1-10")
        return cls("".join(_VALUE_TO_CHAR[v] for v in sides))

    @property
    def notation(self) -> str:
        return "".join(_VALUE_TO_CHAR[v] for v in self)

    @property
    def is_a_card(self) -> bool:
        """True for an A card: one with at least one ``A`` side (the A limit counts these)."""
        return A in self

    @property
    def strength(self) -> int:
        """Sum of the four sides (A counting 10): a rough strength used by heuristics."""
        return sum(self)

    def dominates(self, other: Card) -> bool:
        """True when this card is at least as strong as ``other`` on all four sides."""
        return all(mine >= theirs for mine, theirs in zip(self, other))

    def __reduce__(self) -> tuple[type[Card], tuple[str]]:
        # pickle and copy rebuild a card from its notation (the tuple's own protocol would
        # pass the side values, which are not notation)
        return Card, (self.notation,)

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: dict) -> Card:
        return self

    def __str__(self) -> str:
        return self.notation

    def __repr__(self) -> str:
        return f"Card({self.notation!r})"


def parse_card(notation: str | Card) -> Card:
    """Parse ``"TRBL"`` notation (``a`` accepted for ``A``); raise ``CardError`` naming the string."""
    return Card(notation)


def parse_cards(notations: Iterable[str | Card]) -> tuple[Card, ...]:
    """Parse a sequence of cards, naming the position of the first bad one."""
    if isinstance(notations, str):
        raise CardError(f"expected a list of cards, got the string {short(notations)}")
    cards = []
    for i, notation in enumerate(notations):
        try:
            cards.append(Card(notation))
        except CardError as err:
            raise CardError(f"card {i}: {err}") from None
    return tuple(cards)
