"""Baseline agents: ``greedy`` and ``lookahead``. Both see only their own observation.

Drafting, both take the strongest legal card: the highest side sum, ties broken by the
highest single side (so A cards first, up to the A limit), then the lowest deck index.
Placing, ``greedy`` takes the move that flips the most cards now; ties go to a move that
wins the game, then the best lane margin after the move, then the weaker card (keep the
strong ones), then the lowest action id. ``lookahead`` plays two plies: each of its moves
against the opponent's best reply (judged by card count, then lane margin; a won or lost
game above all), ties broken as ``greedy``. With hidden hands it assumes the opponent
may hold any card it has not yet played.
"""

from __future__ import annotations

import numpy as np

from trinity_env.agents.base import Agent, Observation
from trinity_env.agents.view import decode
from trinity_env.core import GameState
from trinity_env.fast.layout import DRAFT, HAND0, IN_HAND, PHASE, Batch
from trinity_env.search.baselines import greedy_action, greedy_keys, lookahead_values
from trinity_env.search.baselines import strongest_pick as strongest_pick_row


def _rows(observation: np.ndarray, all_unknown_in_hand: bool) -> Batch:
    view = decode(observation)
    batch = Batch.empty(3)
    for target, source in zip(batch, view.batch):
        target[:] = source[0]
    if all_unknown_in_hand and view.unknown.size and batch.info[0, PHASE] != DRAFT:
        batch.status[:, 1, view.unknown] = IN_HAND
        batch.info[:, HAND0 + 1] = (batch.status[0, 1] == IN_HAND).sum()
    return batch


def strongest_pick(observation: Observation) -> int:
    """The draft rule shared by the baselines (``trinity_env.search.baselines.strongest_pick``)."""
    batch = decode(observation["observation"]).batch
    return int(strongest_pick_row(batch.decks, batch.status, batch.info, 0))


class GreedyAgent(Agent):
    """Flips the most cards now (see the module docstring for ties and the draft)."""

    name = "greedy"

    def act(self, observation: Observation, state: GameState | None = None) -> int:
        if observation["observation"][0]:
            return strongest_pick(observation)
        legal = np.flatnonzero(observation["action_mask"]).astype(np.int64)
        batch = _rows(observation["observation"], all_unknown_in_hand=False)
        keys = np.zeros((legal.size, 5), np.int64)
        return int(greedy_action(*batch, legal, legal.size, keys))


class LookaheadAgent(Agent):
    """Two plies: each move against the opponent's best reply (see the module docstring)."""

    name = "lookahead"

    def act(self, observation: Observation, state: GameState | None = None) -> int:
        if observation["observation"][0]:
            return strongest_pick(observation)
        legal = np.flatnonzero(observation["action_mask"]).astype(np.int64)
        batch = _rows(observation["observation"], all_unknown_in_hand=True)
        values = np.zeros(legal.size, np.int64)
        lookahead_values(*batch, legal, legal.size, values)
        keys = np.zeros((legal.size, 5), np.int64)
        greedy_keys(*batch, legal, legal.size, keys)
        order = np.lexsort(np.vstack([keys.T[::-1], values[None, :]]))
        return int(legal[order[-1]])
