"""The action ids shared by every engine and environment: ``Discrete(256)``, and ``Move``, a placement as a value.

``a < 16`` picks own deck card ``a`` during the draft; ``a = 16 + 15*i + t`` places own
deck card ``i`` on tile ``t`` (16 + 16*15 = 256 ids in all). Actions name deck slots, not
hand slots, so an id means the same card for the whole game and a policy can learn what
each of its cards does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from trinity_env.core.board import EMPTY, TILES
from trinity_env.core.cards import Card
from trinity_env.core.checks import describe_value, is_int
from trinity_env.core.decks import DECK_SIZE
from trinity_env.core.errors import CardError, IllegalMoveError
from trinity_env.core.files import short
from trinity_env.core.rules import IN_HAND, Phase, Transition

if TYPE_CHECKING:
    from trinity_env.core.state import GameState

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
        raise IllegalMoveError(f"an action is an integer 0-{NUM_ACTIONS - 1}, got {describe_value(action)}")
    action = int(action)
    if 0 <= action < PLACE_OFFSET:
        return DecodedAction("pick", action, None)
    if PLACE_OFFSET <= action <= LAST_PLACE_ACTION:
        deck_index, tile = divmod(action - PLACE_OFFSET, TILES)
        return DecodedAction("place", deck_index, tile)
    shown = action if action.bit_length() <= 64 else describe_value(action)
    raise IllegalMoveError(f"action {shown} is outside the layout: 0-15 pick, 16-{LAST_PLACE_ACTION} place")


@dataclass(frozen=True, order=True, slots=True)
class Move:
    """A placement, as python-chess's ``Move`` is a chess move: the mover's ``card`` on ``tile``.

    Its text is ``"7A24@3"`` (the card's ``"TRBL"`` notation, ``@``, the tile 0-14): ``str`` writes it,
    ``Move.parse`` reads it back and ``repr`` pastes back into Python. A move names a card, not a deck
    slot, so identical copies in a hand are one move; ``to_action(state)`` is the action id that plays it
    (the first copy in hand) and ``Move.from_action(action, state)`` reads an id back. Moves sort as the
    ``(card, tile)`` pairs they were before: by the card's notation, then the tile."""

    card: Card
    tile: int

    def __post_init__(self) -> None:
        if not isinstance(self.card, Card):
            try:
                object.__setattr__(self, "card", Card(self.card))
            except CardError as err:
                raise IllegalMoveError(f"bad move card: {err}") from None
        if not is_int(self.tile) or not 0 <= self.tile < TILES:
            raise IllegalMoveError(f"a move's tile is a whole number 0-{TILES - 1}, got {describe_value(self.tile)}")
        object.__setattr__(self, "tile", int(self.tile))

    @classmethod
    def parse(cls, text: str) -> Move:
        """The move ``text`` writes (``"7A24@3"``; ``a`` accepted for ``A``); ``IllegalMoveError`` names bad text."""
        if not isinstance(text, str):
            raise IllegalMoveError(f"a move is text like '7A24@3', got {describe_value(text)}")
        card, at, tile = text.strip().partition("@")
        if not at or not tile.isdigit() or len(tile) > 2 or not 0 <= int(tile) < TILES:
            raise IllegalMoveError(
                f"bad move {short(text)}: a move is a card, '@' and a tile 0-{TILES - 1}, like '7A24@3'"
            )
        try:
            return cls(Card(card), int(tile))
        except CardError as err:
            raise IllegalMoveError(f"bad move {short(text)}: {err}") from None

    @classmethod
    def from_action(cls, action: int, state: GameState) -> Move:
        """The move that action id ``action`` plays in ``state``; ``IllegalMoveError`` unless it is legal there."""
        kind, deck_index, tile = decode_action(action)
        if tile is None:
            raise IllegalMoveError(f"action {action} picks deck card {deck_index}: it is no placement")
        if action not in state.legal_actions():
            raise IllegalMoveError(f"action {action} (deck card {deck_index} on tile {tile}) is not legal here")
        return cls(state.decks[state.to_move][deck_index], tile)

    def to_action(self, state: GameState) -> int:
        """The action id that plays this move in ``state`` (the first copy of the card in the mover's hand);
        ``IllegalMoveError`` says why it is not legal there."""
        if state.phase != Phase.PLAY:
            raise IllegalMoveError(f"move {self}: the game is in the {state.phase} phase, not play")
        player = state.to_move
        deck = state.decks[player]
        index = next((i for i, s in enumerate(state.status[player]) if s == IN_HAND and deck[i] == self.card), None)
        if index is None:
            raise IllegalMoveError(f"move {self}: card {self.card} is not in player {player}'s hand")
        if state.owners[self.tile] != EMPTY:
            raise IllegalMoveError(f"move {self}: tile {self.tile} is occupied by {state.cards[self.tile]}")
        return place_action(index, self.tile)

    @classmethod
    def placed(cls, step: Transition) -> Move | None:
        """The placement a ``Transition`` made (``None`` for a pick): how a replay's step is judged as a move."""
        return None if step.tile is None else cls(step.card, step.tile)

    def to_json(self) -> dict[str, str | int]:
        """``{"card": "7A24", "tile": 3}``: a move as the position, puzzle, accuracy and web files write it."""
        return {"card": self.card.notation, "tile": self.tile}

    def __str__(self) -> str:
        return f"{self.card.notation}@{self.tile}"

    def __repr__(self) -> str:
        return f"Move.parse({str(self)!r})"
