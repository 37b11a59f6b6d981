"""The two reward schemes, defined once: every env and engine computes its rewards from here.

``win_loss``: +1 to the winner and -1 to the loser when the game ends (0 each for a draw).
``margin``: the same, plus after each placement the change in each player's lane-score
margin (its lane-majority score minus the opponent's, on the board as it stands) divided
by ``MARGIN_SCALE``; the shaping of a game adds up to its final margin / ``MARGIN_SCALE``.
"""

from __future__ import annotations

from collections.abc import Sequence

from trinity_env.core.board import TILES
from trinity_env.core.state import lane_scores

REWARD_MODES = ("win_loss", "margin")
MARGIN_SCALE = TILES
"""The largest possible margin (every tile in lanes one player wins), so shaping stays within [-1, 1]."""


def result_rewards(winner: int | None) -> tuple[float, float]:
    """Each player's reward for the game's result: +1 / -1, or 0 each for a draw (``None``)."""
    if winner is None:
        return 0.0, 0.0
    return (1.0, -1.0) if winner == 0 else (-1.0, 1.0)


def margin(owners: Sequence[int]) -> int:
    """Player 0's lane-majority score minus player 1's on a board (``owners``, -1 for empty)."""
    zero, one = lane_scores(owners)
    return zero - one


def margin_shaping(owners_before: Sequence[int], owners_after: Sequence[int]) -> float:
    """Player 0's shaping reward for one placement under ``reward: margin`` (player 1 gets the negative)."""
    return (margin(owners_after) - margin(owners_before)) / MARGIN_SCALE
