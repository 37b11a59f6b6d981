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

import math
import numbers

import numpy as np

from trinity_env.agents.view import decode
from trinity_env.core import ArgumentError, GameState
from trinity_env.fast.layout import DRAFT, HAND0, IN_HAND, PHASE, Batch
from trinity_env.search.baselines import greedy_action, greedy_keys, lookahead_values
from trinity_env.search.baselines import strongest_pick as strongest_pick_row
from trinity_env.spec.agent import Agent, Observation

MAX_SEED = 2**63 - 1
"""The largest seed an agent takes (``seed=``): what an int64 holds, as numpy's and numba's streams do."""


def check_count(agent: str, name: str, value: object, low: int, high: int) -> int:
    """``value`` as a whole number from ``low`` to ``high``, else a one-line ``ArgumentError`` naming it.

    The built-in agents check every argument against a bound before any work: a spec is
    input (a command line, a config, a web form), and an unbounded count such as a billion
    search worlds would take the machine's memory before the first move.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not low <= value <= high:
        raise ArgumentError(f"{agent} {name} must be a whole number from {low} to {high}, got {value!r}")
    return int(value)


def check_number(agent: str, name: str, value: object, low: float, high: float) -> float:
    """``value`` as a finite number from ``low`` to ``high``, else a one-line ``ArgumentError`` naming it."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        raise ArgumentError(f"{agent} {name} must be a number from {low:g} to {high:g}, got {value!r}")
    return float(value)


def check_seed(agent: str, seed: object) -> int | None:
    """A seed: ``None`` (fresh entropy) or a whole number from 0 to ``MAX_SEED``."""
    return None if seed is None else check_count(agent, "seed", seed, 0, MAX_SEED)


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


class _Baseline(Agent):
    """What the baselines share: the draft rule (``strongest_pick``), then ``_choose`` among the legal placements on
    the observed position (the opponent's unknown cards all in hand when ``all_unknown_in_hand``)."""

    all_unknown_in_hand = False

    def act(self, observation: Observation, state: GameState | None = None) -> int:
        if observation["observation"][0]:
            return strongest_pick(observation)
        legal = np.flatnonzero(observation["action_mask"]).astype(np.int64)
        return self._choose(_rows(observation["observation"], self.all_unknown_in_hand), legal)

    def _choose(self, batch: Batch, legal: np.ndarray) -> int:
        raise NotImplementedError


class GreedyAgent(_Baseline):
    """Flips the most cards now (see the module docstring for ties and the draft)."""

    name = "greedy"

    def _choose(self, batch: Batch, legal: np.ndarray) -> int:
        keys = np.zeros((legal.size, 5), np.int64)
        return int(greedy_action(*batch, legal, legal.size, keys))


class LookaheadAgent(_Baseline):
    """Two plies: each move against the opponent's best reply (see the module docstring)."""

    name = "lookahead"
    all_unknown_in_hand = True

    def _choose(self, batch: Batch, legal: np.ndarray) -> int:
        values = np.zeros(legal.size, np.int64)
        lookahead_values(*batch, legal, legal.size, values)
        keys = np.zeros((legal.size, 5), np.int64)
        greedy_keys(*batch, legal, legal.size, keys)
        order = np.lexsort(np.vstack([keys.T[::-1], values[None, :]]))
        return int(legal[order[-1]])
