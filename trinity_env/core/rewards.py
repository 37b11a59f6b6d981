"""The reward modes, defined once: every env and engine computes its rewards from here.

``RewardMode.WIN_LOSS`` (``"win_loss"``): +1 to the winner and -1 to the loser when the game
ends (0 each for a draw). ``RewardMode.MARGIN`` (``"margin"``): the same, plus after each
placement the change in each player's lane-score margin (its lane-majority score minus the
opponent's, on the board as it stands) divided by ``MARGIN_SCALE``; the shaping of a game
adds up to its final margin / ``MARGIN_SCALE``.

The config validates the mode once (``EnvConfig.reward`` is a ``RewardMode``); ``rewards``
is the one place that says what each mode pays, for one game (the AEC env, RLlib's env,
through ``transition_rewards``) or for a batch of games as numpy arrays (the fast engine).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from trinity_env.core.board import TILES
from trinity_env.core.rules import StrEnum, lane_scores

if TYPE_CHECKING:
    from trinity_env.core.state import GameState


class RewardMode(StrEnum):
    """What an env pays its agents. Members are strings (``RewardMode.MARGIN == "margin"``);
    ``mode.shaped``: whether placements pay along the way (the margin change), not only the result."""

    shaped: bool

    def __new__(cls, value: str, shaped: bool) -> RewardMode:
        member = str.__new__(cls, value)
        member._value_ = value
        member.shaped = shaped  # a plain attribute: read at every env step, faster than a property
        return member

    WIN_LOSS = "win_loss", False
    MARGIN = "margin", True


REWARD_MODES = tuple(mode.value for mode in RewardMode)
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


def rewards(mode: RewardMode, result: Any, margin_change: Any) -> tuple[Any, Any]:
    """Each player's reward for one action under ``mode``: player 0's, then player 1's.

    ``result`` is player 0's result reward (``result_rewards(winner)[0]`` once the game is
    over, else 0) and ``margin_change`` the change in player 0's margin that the action made
    (0 for a pick); numbers, or numpy arrays over a batch of games. Both terms are zero-sum,
    so player 1 gets the negative (``0.0 - reward``: never ``-0.0``).
    """
    reward = result + margin_change / MARGIN_SCALE if mode.shaped else result
    return reward, 0.0 - reward


def transition_rewards(mode: RewardMode, before: GameState, after: GameState) -> tuple[float, float] | None:
    """Each player's reward for the action that took the game from ``before`` to ``after``; ``None``
    when ``mode`` pays nothing for it (before the end, anything but a shaped placement), so an env
    can leave its rewards untouched (PettingZoo's cleared ``0``) or send none (RLlib)."""
    outcome = after.outcome  # set once the game is over
    placed = mode.shaped and after.last is not None and after.last.tile is not None
    if outcome is None and not placed:
        return None
    result = 0.0 if outcome is None else result_rewards(outcome.winner)[0]
    return rewards(mode, result, margin(after.owners) - margin(before.owners) if placed else 0)
