"""The AlphaZero trainer's replay buffer.

``ReplayBuffer`` keeps the newest positions (observation, legal mask, policy target, value target) and, with labelling
workers (``training.labelling``), the positions of one iteration awaiting their exact values (``Awaiting``); the
pipeline that moves labels in and out is ``training.alphazero.exchange_labels``. The buffer measures its own size
(``ReplayBuffer.position_bytes``), which the config's memory check reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from trinity_env.agents.networks.ppo_network import CheckpointError
from trinity_env.fast.layout import Batch
from trinity_env.spec.observation import OBSERVATION_SIZE


@dataclass
class Awaiting:
    """Positions of the buffer whose exact values the labelling workers are computing (``training.labelling``)."""

    positions: Batch
    """The positions themselves (fast-engine rows), what the workers solve."""
    rows: np.ndarray
    """Each one's row in the buffer; -1 once that row holds a newer position (its label is then dropped)."""
    games: np.ndarray
    """Each one's game in its iteration (the workers keep a game's positions together)."""


class ReplayBuffer:
    """The newest ``capacity`` positions: observation, legal mask, policy target, value target; and the positions
    among them that await their exact value (``awaiting``: one iteration's, with labelling workers)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.observations = np.zeros((capacity, OBSERVATION_SIZE), np.int8)
        self.masks = np.zeros((capacity, 256), np.int8)
        self.policies = np.zeros((capacity, 256), np.float16)
        self.values = np.zeros(capacity, np.float32)
        self.size = 0
        self.next = 0
        self.awaiting: Awaiting | None = None

    @staticmethod
    def position_bytes() -> int:
        """Bytes one position takes in a buffer (its arrays, measured on a buffer of one)."""
        one = ReplayBuffer(1)
        return sum(int(a.nbytes) for a in (one.observations, one.masks, one.policies, one.values))

    def add(self, observations: np.ndarray, masks: np.ndarray, policies: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Add the positions (the oldest overwritten once full); each one's row (-1: overwritten by this call)."""
        placed = np.full(len(values), -1, np.int64)
        for start in range(0, len(values), self.capacity):
            part = slice(start, min(start + self.capacity, len(values)))
            count = part.stop - part.start
            rows = (self.next + np.arange(count)) % self.capacity
            self.observations[rows], self.masks[rows] = observations[part], masks[part]
            self.policies[rows], self.values[rows] = policies[part], values[part]
            self.next = int((self.next + count) % self.capacity)
            self.size = min(self.capacity, self.size + count)
            placed[part] = rows
            if self.awaiting is not None:  # a row that now holds a new position must not get the old one's label
                self.awaiting.rows[np.isin(self.awaiting.rows, rows)] = -1
        placed[: max(0, len(values) - self.capacity)] = -1  # more than a buffer: the first ones are gone already
        return placed

    def await_labels(self, positions: Batch, rows: np.ndarray, games: np.ndarray) -> None:
        """Note that the positions at ``rows`` (``positions``, of ``games``) await their exact values."""
        if self.awaiting is not None:
            raise RuntimeError("the buffer already awaits labels: patch() them first")
        self.awaiting = Awaiting(positions, np.array(rows, np.int64), np.array(games, np.int64))

    def patch(self, values: np.ndarray) -> int:
        """Write the awaited exact ``values`` (in ``awaiting``'s order) where their rows still hold those positions;
        how many were written."""
        if self.awaiting is None or len(values) != len(self.awaiting.rows):
            raise RuntimeError("these labels are not the ones the buffer awaits")
        keep = self.awaiting.rows >= 0
        self.values[self.awaiting.rows[keep]] = np.asarray(values, np.float32)[keep]
        self.awaiting = None
        return int(keep.sum())

    def state_dict(self) -> dict:
        n = self.size
        state = {
            "observations": torch.from_numpy(self.observations[:n].copy()),
            "masks": torch.from_numpy(self.masks[:n].copy()),
            "policies": torch.from_numpy(self.policies[:n].copy()),
            "values": torch.from_numpy(self.values[:n].copy()),
            "next": self.next,
        }
        if self.awaiting is not None:  # only those whose rows still hold them: the rest would be dropped anyway
            keep = self.awaiting.rows >= 0
            awaiting = {
                name: torch.from_numpy(array[keep].copy())
                for name, array in zip(Batch._fields, self.awaiting.positions)
            }
            state["awaiting"] = awaiting | {
                "rows": torch.from_numpy(self.awaiting.rows[keep].copy()),
                "games": torch.from_numpy(self.awaiting.games[keep].copy()),
            }
        return state

    def load_state_dict(self, state: dict, path: Path) -> None:
        try:
            n = int(state["values"].shape[0])
            if n > self.capacity or not 0 <= int(state["next"]) < max(self.capacity, 1):
                raise ValueError(f"{n} positions for a buffer of {self.capacity}")
            self.observations[:n] = state["observations"].numpy()
            self.masks[:n] = state["masks"].numpy()
            self.policies[:n] = state["policies"].numpy()
            self.values[:n] = state["values"].numpy()
            self.size, self.next = n, int(state["next"])
            self.awaiting = None
            if "awaiting" in state:
                self._load_awaiting(state["awaiting"])
        except (KeyError, ValueError, TypeError, AttributeError, RuntimeError) as err:
            raise CheckpointError(f"{path}: its replay buffer is damaged or does not fit ({err})") from None

    def _load_awaiting(self, state: dict) -> None:
        empty = Batch.empty(0)
        positions = Batch(*(state[name].numpy().astype(np.int8, copy=True) for name in Batch._fields))
        rows, games = state["rows"].numpy().astype(np.int64), state["games"].numpy().astype(np.int64)
        count = len(rows)
        if any(a.shape != (count, *e.shape[1:]) for a, e in zip(positions, empty)) or games.shape != (count,):
            raise ValueError("the positions awaiting labels do not fit together")
        if count and not (rows.min() >= 0 and rows.max() < self.size and len(np.unique(rows)) == count):
            raise ValueError("the positions awaiting labels name rows outside the buffer")
        self.awaiting = Awaiting(positions, rows, games)
