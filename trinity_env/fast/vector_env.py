"""A gymnasium vector env on the fast engine: N single-agent games against an opponent.

The learner's seat is random per episode, the opponent moves inside ``step()`` (in batch),
and the learner receives its own +1 or -1, as in the single-agent env. Finished games
restart in the same step (``AutoresetMode.SAME_STEP``): ``infos["final_obs"]`` holds the
last observation of each game that ended, ``infos["_final_obs"]`` says which.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from trinity_env.core import NUM_ACTIONS
from trinity_env.envs.config import ConfigError
from trinity_env.envs.observation import OBSERVATION_HIGH, OBSERVATION_SIZE
from trinity_env.envs.players import Agent
from trinity_env.fast.games import FastGames

BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]


class TrinityTowersVectorEnv(VectorEnv):
    """``num_envs`` games against ``opponent``: ``"random"`` (a batched kernel), any other agent
    spec (``"greedy"``, ``"mcts:100"``: built with ``make``), a batch policy
    ``(observations [n, 339], masks [n, 256]) -> actions [n]``, an ``Agent`` (called game by
    game), or an opponent pool: an object with ``act(observations, masks, games)`` and
    ``new_episodes(games)``, told which games it plays and when they restart (so it can
    draw a new opponent for each episode)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        opponent: str | BatchPolicy | Agent = "random",
        seat: int | str = "random",
        **config: Any,
    ):
        if seat not in (0, 1, "random") or isinstance(seat, bool):
            raise ConfigError(f"seat must be 'random', 0 or 1, got {seat!r}")
        if isinstance(opponent, str) and opponent != "random":  # "random" stays the batched kernel
            from trinity_env.agents.registry import make  # the agents import this package: no cycle at load

            opponent = make(opponent)
        is_pool = hasattr(opponent, "new_episodes") and hasattr(opponent, "act")
        if not (opponent == "random" or callable(opponent) or isinstance(opponent, Agent) or is_pool):
            raise ConfigError(f"opponent must be an agent spec, a batch policy or an Agent, got {opponent!r}")
        self.num_envs = num_envs
        self.games = FastGames(num_envs, **config)
        self.opponent = opponent
        self.seat_choice = seat
        self.single_observation_space = spaces.Box(0, OBSERVATION_HIGH, (OBSERVATION_SIZE,), np.int8)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.seats = np.zeros(num_envs, np.int64)
        self._pending = np.zeros(num_envs, np.float32)
        self._rng = np.random.default_rng()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._rng = np.random.default_rng(seed)
        self.games.reset(None if seed is None else int(self._rng.integers(2**63)))
        self._choose_seats(np.arange(self.num_envs))
        self._pending[:] = 0
        self._pending += self._opponent_moves(np.zeros(self.num_envs, bool))
        return self.games.observations(self.seats), {"action_mask": self.action_masks()}

    def _choose_seats(self, games: np.ndarray) -> None:
        """New episodes in ``games``: the learner's seat, and the pool's opponent."""
        if self.seat_choice == "random":
            self.seats[games] = self._rng.integers(0, 2, games.size)
        else:
            self.seats[games] = int(self.seat_choice)
        if hasattr(self.opponent, "new_episodes") and games.size:
            self.opponent.new_episodes(games)

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in each game, booleans [n, 256]."""
        return self.games.masks().astype(bool)

    def step(self, actions: np.ndarray):
        rows = np.arange(self.num_envs)
        result = self.games.step(np.asarray(actions, np.int64), final_seats=self.seats)
        rewards = result.rewards[rows, self.seats] + self._pending
        self._pending[:] = 0
        done = result.terminated.copy()
        final_obs = result.final_observations
        winner = result.winner.astype(np.int64)
        self._choose_seats(np.flatnonzero(result.terminated))
        # the opponent moves; rewards of games that already ended this step belong to their next episode
        late = self._opponent_moves(done, final_obs, winner, rewards)
        self._pending += late
        observations = self.games.observations(self.seats)
        infos = {
            "action_mask": self.action_masks(),
            "seat": self.seats.copy(),
            "final_obs": final_obs,
            "_final_obs": done.copy(),
            "winner": np.where(done, winner, -1),
        }
        truncated = np.zeros(self.num_envs, bool)
        return observations, rewards.astype(np.float32), done, truncated, infos

    def _opponent_moves(self, done, final_obs=None, winner=None, rewards=None) -> np.ndarray:
        """Play the opponent until every game waits on the learner; return rewards for the next step."""
        late = np.zeros(self.num_envs, np.float32)
        while True:
            waiting = np.flatnonzero(self.games.to_move != self.seats)
            if waiting.size == 0:
                return late
            actions = self._opponent_actions(waiting)
            seats_before = self.seats.copy()
            result = self.games.step(actions, games=waiting, final_seats=seats_before)
            gained = result.rewards[np.arange(self.num_envs), seats_before]
            ended = result.terminated
            if rewards is not None:
                first_end = ended & ~done
                rewards += np.where(done, 0, gained)
                final_obs[first_end] = result.final_observations[first_end]
                winner[first_end] = result.winner[first_end]
                late += np.where(done, gained, 0)
                done |= ended
            else:
                late += gained
            self._choose_seats(np.flatnonzero(ended))

    def _opponent_actions(self, games: np.ndarray) -> np.ndarray:
        if isinstance(self.opponent, str):
            return self.games.random_actions(games)
        observations = self.games.observations(1 - self.seats)[games]
        masks = self.games.masks()[games]
        if isinstance(self.opponent, Agent):
            return np.array(
                [self.opponent.act({"observation": o, "action_mask": m}) for o, m in zip(observations, masks)],
                np.int64,
            )
        if hasattr(self.opponent, "new_episodes"):
            return np.asarray(self.opponent.act(observations, masks, games), np.int64)
        return np.asarray(self.opponent(observations, masks), np.int64)
