"""The agent interface, as the environments see it: what an opponent inside an env must do.

An agent sees only what its seat may see: the observation dict of the AEC env
(``observation`` and ``action_mask``) and, where the rules show everything to that seat
(open hands, play phase), the core ``GameState``. It returns a legal action id; that
includes the draft, so every agent drafts too. The interface lives in the spec layer, below
the envs, the fast engine and the agents package, so that the envs can host any opponent
without importing search or networks. ``trinity_env.agents`` builds the players on it and
turns agent specs (``"greedy"``, ``"mcts:400"``) into agents; the envs take an agent, a function of the
observation or ``"random"``, never another spec string.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping

import numpy as np

from trinity_env.core import ArgumentError, GameState, PositionError
from trinity_env.core.state import DRAFT

Observation = Mapping[str, np.ndarray]


class Agent(ABC):
    """A player of Trinity Towers."""

    name = "agent"

    def reset(self, seed: int | None = None) -> None:  # noqa: B027 - most agents keep no state
        """Start a new game; agents with randomness reseed from ``seed``."""

    @abstractmethod
    def act(self, observation: Observation, state: GameState | None = None) -> int:
        """A legal action for the seat that sees ``observation`` (and ``state`` where visible)."""


class PolicyAgent(Agent):
    """Wraps a plain function ``observation -> action`` as an agent."""

    def __init__(self, policy: Callable[[Observation], int], name: str | None = None):
        self._policy = policy
        self.name = name or getattr(policy, "__name__", "policy")

    def act(self, observation: Observation, state: GameState | None = None) -> int:
        return int(self._policy(observation))


class RandomAgent(Agent):
    """Uniformly random among the legal actions; seeded by ``reset(seed)``."""

    name = "random"

    def __init__(self, seed: int | None = None):
        self._rng = random.Random(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng.seed(seed)

    def act(self, observation: Observation, state: GameState | None = None) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise PositionError("RandomAgent was asked to act with no legal action (is it its turn?)")
        return int(legal[self._rng.randrange(legal.size)])


def env_opponent(opponent: Agent | Callable[[Observation], int] | str) -> Agent:
    """An ``Agent`` from an agent, a function of the observation, or ``"random"``.

    Other agent specs (``"greedy"``, ``"mcts:400"``) are built above this layer, by
    ``trinity_env.agents.make`` (``trinity_env.agents.as_agent``, ``gymnasium.make`` and the
    CLI accept them): the envs depend on the interface, not on the agents package.
    """
    if isinstance(opponent, Agent):
        return opponent
    if isinstance(opponent, str):
        if opponent == "random":
            return RandomAgent()
        raise ArgumentError(
            f"an env takes an Agent, not the agent spec {opponent!r}: build it with trinity_env.agents.make "
            "(gymnasium.make and trinity_env.registration's factories accept specs)"
        )
    if callable(opponent):
        return PolicyAgent(opponent)
    raise ArgumentError(f"an opponent is an Agent, a function observation -> action, or 'random'; got {opponent!r}")


def visible_state(state: GameState, open_hands: bool) -> GameState | None:
    """``state`` if the rules show everything to both seats (open hands, play phase), else ``None``."""
    return state if open_hands and state.phase != DRAFT else None
