"""The action ids shared by every engine and environment: ``Discrete(256)``.

``a < 16`` picks own deck card ``a`` during the draft; ``a = 16 + 15*i + t`` places own
deck card ``i`` on tile ``t`` (16 + 16*15 = 256 ids in all). Actions name deck slots, not
hand slots, so an id means the same card for the whole game and a policy can learn what
each of its cards does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from trinity_env.core.board import TILES
from trinity_env.core.checks import describe, is_int
from trinity_env.core.decks import DECK_SIZE
from trinity_env.core.errors import IllegalMoveError

NUM_ACTIONS = 256
PLACE_OFFSET = DECK_SIZE
LAST_PLACE_ACTION = PLACE_OFFSET + DECK_SIZE * TILES - 1


class DecodedAction(NamedTuple):
    """``kind`` is ``"pick"`` or ``"place"``; ``tile`` is ``None`` for a pick."""

    kind: str
    deck_index: int
    tile: int | None


def pick_action(deck_index: int) -> int:
    if not is_int(deck_index) or not 0 <= deck_index < DECK_SIZE:
        raise IllegalMoveError(f"deck index {deck_index} is outside 0-{DECK_SIZE - 1}")
    return deck_index


def place_action(deck_index: int, tile: int) -> int:
    if not is_int(deck_index) or not 0 <= deck_index < DECK_SIZE:
        raise IllegalMoveError(f"deck index {deck_index} is outside 0-{DECK_SIZE - 1}")
    if not is_int(tile) or not 0 <= tile < TILES:
        raise IllegalMoveError(f"tile {tile} is outside 0-{TILES - 1}")
    return PLACE_OFFSET + TILES * deck_index + tile


def decode_action(action: int) -> DecodedAction:
    """Split an action id into its parts; raise ``IllegalMoveError`` for ids outside the layout."""
    if not is_int(action):
        raise IllegalMoveError(f"an action is an integer 0-{NUM_ACTIONS - 1}, got {describe(action)}")
    action = int(action)
    if 0 <= action < PLACE_OFFSET:
        return DecodedAction("pick", action, None)
    if PLACE_OFFSET <= action <= LAST_PLACE_ACTION:
        deck_index, tile = divmod(action - PLACE_OFFSET, TILES)
        return DecodedAction("place", deck_index, tile)
    shown = action if action.bit_length() <= 64 else describe(action)
    raise IllegalMoveError(f"action {shown} is outside the layout: 0-15 pick, 16-{LAST_PLACE_ACTION} place")


@dataclass(frozen=True, slots=True)
class Move:
    """A placement, as python-chess's ``Move`` is a chess move: the mover's deck card ``card`` (its index in the
    deck, as action ids name it) on ``tile``. ``action`` is its id; ``Move.from_action`` reads one back."""

    card: int
    tile: int

    def __post_init__(self) -> None:
        place_action(self.card, self.tile)  # the one check of a placement's parts

    @property
    def action(self) -> int:
        """The action id that plays this move."""
        return PLACE_OFFSET + TILES * self.card + self.tile

    @classmethod
    def from_action(cls, action: int) -> Move:
        """The move of a placement's action id; ``IllegalMoveError`` for a pick or an id outside the layout."""
        kind, deck_index, tile = decode_action(action)
        if tile is None:
            raise IllegalMoveError(f"action {action} picks deck card {deck_index}: it is no placement")
        return cls(deck_index, tile)

    def notation(self, deck) -> tuple[str, int]:
        """``(card, tile)`` with the card written out from the mover's ``deck`` (as ``GameState.legal_moves``)."""
        return deck[self.card].notation, self.tile

    def __str__(self) -> str:
        return f"card {self.card} on tile {self.tile}"
