"""The fast engine's state layout: a batch of games as six flat numpy arrays.

Every array has the game index first, so a batch is a struct of arrays that numba loops
over without Python objects. The core's ``GameState`` maps onto it one to one
(``trinity_env.fast.convert``); the differential tests compare the two after every move.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from trinity_env.core import DECK_SIZE, HAND_SIZE, NEIGHBOURS, NUM_ACTIONS, PLACE_OFFSET, TILES, A, Phase, Termination
from trinity_env.core import state as _core

__all__ = ["DECK_SIZE", "HAND_SIZE", "NUM_ACTIONS", "PLACE_OFFSET", "TILES", "A"]  # the core's, for the kernels

# slot status (the core's values, plus ABSENT for slots past a short deck)
UNPICKED, IN_HAND, PLAYED = _core.UNPICKED, _core.IN_HAND, _core.PLAYED
ABSENT = max(UNPICKED, IN_HAND, PLAYED) + 1
# phases and terminations: the core's enums, numbered in their order (0 for a game not over)
PHASES = tuple(Phase)
DRAFT, PLAY, OVER = (PHASES.index(p) for p in (Phase.DRAFT, Phase.PLAY, Phase.OVER))
NOT_OVER = 0
TERMINATIONS = {code: termination for code, termination in enumerate(Termination, start=1)}
LANE_CONTROL, FULL_BOARD, NO_MOVES = (
    1 + tuple(Termination).index(t) for t in (Termination.LANE_CONTROL, Termination.FULL_BOARD, Termination.NO_MOVES)
)
# marks of the last placement
PLACED, CAPTURED, DOMINO = 1, 2, 3

# columns of the per-game scalar array `info`
TO_MOVE, PHASE, FIRST_PLAYER, MAX_A, A_HELD0, A_HELD1, HAND0, HAND1 = range(8)
WINNER, TERMINATION, LANE, SCORE0, SCORE1, DECK_SIZE0, DECK_SIZE1 = range(8, 15)
INFO_COLUMNS = 15

# neighbour table: NEIGHBOUR[t, k] = (tile or -1, side of t facing it, side of it facing t)
NEIGHBOUR = np.full((TILES, 4, 3), -1, dtype=np.int64)
for _t, _found in enumerate(NEIGHBOURS):
    for _k, (_n, _mine, _theirs) in enumerate(_found):
        NEIGHBOUR[_t, _k] = (_n, _mine, _theirs)


class Batch(NamedTuple):
    """B games. ``decks[b, p, i]`` are the sides of player p's deck card i (0 past the deck);
    ``owner[b, t]`` is -1 for an empty tile; ``info[b]`` holds the scalar columns above."""

    decks: np.ndarray  # int8 [B, 2, 16, 4]
    status: np.ndarray  # int8 [B, 2, 16]
    sides: np.ndarray  # int8 [B, 15, 4]
    owner: np.ndarray  # int8 [B, 15]
    marks: np.ndarray  # int8 [B, 15]
    info: np.ndarray  # int8 [B, INFO_COLUMNS]

    @classmethod
    def empty(cls, size: int) -> Batch:
        return cls(
            np.zeros((size, 2, DECK_SIZE, 4), np.int8),
            np.full((size, 2, DECK_SIZE), ABSENT, np.int8),
            np.zeros((size, TILES, 4), np.int8),
            np.full((size, TILES), -1, np.int8),
            np.zeros((size, TILES), np.int8),
            np.zeros((size, INFO_COLUMNS), np.int8),
        )

    @property
    def size(self) -> int:
        return self.info.shape[0]
