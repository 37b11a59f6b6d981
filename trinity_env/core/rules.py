"""The rules a game state and a loaded position share: what each deck slot holds, the phases, the
capture rule, lane scores and how a game ends.

``GameState`` (``core.state``) plays by these and the position reader (``core.position``)
settles a loaded board by them. ``core.state`` imports the position reader and the text
renderer (``core.render``); they import this module, never ``core.state``, so the core has
no import cycle.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from trinity_env.core.board import EMPTY, LANE_TILES, LANES, POSITIONS, TILES
from trinity_env.core.cards import A, Card

try:
    from enum import StrEnum
except ImportError:  # Python 3.10

    class StrEnum(str, Enum):  # type: ignore[no-redef]
        __str__ = str.__str__
        __format__ = str.__format__


UNPICKED, IN_HAND, PLAYED = 0, 1, 2
"""Status of a deck slot."""


class Phase(StrEnum):
    """Where a game stands. Members are strings (``Phase.DRAFT == "draft"``), so JSON and old
    comparisons keep working; the fast engine numbers them in this order."""

    DRAFT = "draft"
    PLAY = "play"
    OVER = "over"


class Termination(StrEnum):
    """How a game ended (docs/rules.md, how a game ends).

    Numbered 1, 2, 3 in this order (``code``; 0: not over): the fast engine's numbers and the envs'
    ``termination_code`` info."""

    LANE_CONTROL = "lane_control"
    FULL_BOARD = "full_board"
    NO_MOVES = "no_moves"

    @property
    def code(self) -> int:
        """1 ``lane_control``, 2 ``full_board``, 3 ``no_moves`` (0 is a game not over)."""
        return _TERMINATION_ORDER.index(self) + 1


_TERMINATION_ORDER = tuple(Termination)


DRAFT, PLAY, OVER = Phase.DRAFT, Phase.PLAY, Phase.OVER
LANE_CONTROL, FULL_BOARD, NO_MOVES = Termination.LANE_CONTROL, Termination.FULL_BOARD, Termination.NO_MOVES


def beats(side: int, facing: int) -> bool:
    """The capture rule: a higher side wins, and ``A`` against ``A`` wins too."""
    return side > facing or side == facing == A


@dataclass(frozen=True, slots=True)
class Transition:
    """What one action did, for renderers, logs and replays.

    ``captured`` holds the tiles flipped directly by the placed card, ``domino`` the tiles
    flipped by those captured cards (one level), each in ascending tile order. Both are
    empty for a pick.
    """

    player: int
    action: int
    deck_index: int
    card: Card
    tile: int | None = None
    captured: tuple[int, ...] = ()
    domino: tuple[int, ...] = ()

    @property
    def flipped(self) -> tuple[int, ...]:
        return self.captured + self.domino


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended. ``winner`` is ``None`` for a draw (only positions loaded from JSON
    can draw); ``lane`` is the fully controlled lane on a lane-control win."""

    termination: Termination
    winner: int | None
    scores: tuple[int, int]
    lane: int | None = None


def lane_scores(owners: Sequence[int]) -> tuple[int, int]:
    """Lane-majority scores: a lane's majority owner scores its card count, ties score nothing."""
    white = black = 0
    for start in range(0, TILES, POSITIONS):  # a lane's tiles are contiguous (board.tile_index)
        lane = list(owners[start : start + POSITIONS])
        zero, one = lane.count(0), lane.count(1)
        if zero > one:
            white += zero
        elif one > zero:
            black += one
    return white, black


def scored(termination: str, owners: Sequence[int], lane: int | None = None, winner: int | None = None) -> Outcome:
    scores = lane_scores(owners)
    if termination != LANE_CONTROL:
        winner = 0 if scores[0] > scores[1] else 1 if scores[1] > scores[0] else None
    return Outcome(termination, winner, scores, lane)


def controlled_lanes(owners: Sequence[int], player: int) -> list[int]:
    return [lane for lane, tiles in enumerate(LANE_TILES) if all(owners[t] == player for t in tiles)]


def after_placement(
    owners: list[int], status: list[tuple[int, ...]], mover: int, changed_lanes: Iterable[int] = range(LANES)
) -> tuple[str, int, Outcome | None]:
    """Phase, next mover and outcome once ``mover``'s placement and captures are done.

    Only lanes where a tile changed owner can have become complete, so only those are checked.
    """
    opponent = 1 - mover
    for lane in sorted(changed_lanes):
        if all(owners[t] == mover for t in LANE_TILES[lane]):
            return OVER, opponent, scored(LANE_CONTROL, owners, lane, mover)
    if EMPTY not in owners:
        return OVER, opponent, scored(FULL_BOARD, owners)
    if IN_HAND in status[opponent]:
        return PLAY, opponent, None
    if IN_HAND in status[mover]:
        return PLAY, mover, None  # the opponent has no card left and passes
    return OVER, opponent, scored(NO_MOVES, owners)
