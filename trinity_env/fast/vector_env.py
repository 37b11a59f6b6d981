"""A gymnasium vector env on the fast engine: N single-agent games against an opponent.

The learner's seat is random per episode, the opponent moves inside ``step()`` (in batch),
and the learner receives its own +1 or -1, as in the single-agent env. It behaves like
``gymnasium.vector.SyncVectorEnv`` over ``TrinityTowersEnv`` in the same autoreset mode, at
batch speed:

- ``autoreset_mode=AutoresetMode.NEXT_STEP`` (default, what gymnasium's wrappers such as
  ``DtypeObservation`` and ``NormalizeObservation`` expect): a step that ends a game
  returns its final observation; the next step ignores that env's action and returns the
  first observation of a new game (reward 0, not terminated). **The mask to choose that
  ignored action from is all zeros**: after the step that ends a game, that env's
  ``infos["action_mask"]`` (and ``action_masks()``) has no legal move, as gymnasium's
  ``AsyncVectorEnv`` over the single-agent env gives too; a sampler must not draw from it
  (a masked softmax over no legal action is NaN): send any integer, e.g. ``0``.
- ``autoreset_mode=AutoresetMode.SAME_STEP``: a finished game restarts in the step that
  ends it; ``infos["final_obs"]`` and ``infos["final_info"]`` hold what it ended with
  (``infos["_final_obs"]`` says which envs), as gymnasium documents.

Infos are shaped as gymnasium's: each key an array over envs plus a boolean ``_key`` mask:
``action_mask`` (int8 ``[n, 256]``), ``seat``, ``winner`` (-1 until won, or a draw),
``scores`` (``[n, 2]``), ``termination`` (``""`` until the end), ``termination_code`` (its number,
``Termination.code``: 0 until the end), ``illegal_action``. An action outside the mask ends that
episode with reward -1 (as the single-agent env's ``illegal_action="terminate"``); an action that
is not an integer raises ``IllegalMoveError`` (an integer outside 0-255 is an illegal action, as in
the single-agent env). An opponent's actions must be legal action ids, one per game it moves, else
``IllegalMoveError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from trinity_env.core import NUM_ACTIONS
from trinity_env.core.files import short
from trinity_env.fast.checks import action_array, game_count
from trinity_env.fast.games import FastGames
from trinity_env.fast.layout import TERMINATIONS
from trinity_env.spec.agent import Agent
from trinity_env.spec.config import ConfigError
from trinity_env.spec.observation import OBSERVATION_HIGH, OBSERVATION_SIZE

BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]
AUTORESET_MODES = {
    key: mode
    for mode in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
    for key in (mode, mode.value, mode.name, mode.name.lower(), f"AutoresetMode.{mode.name}")
}
"""The modes the env implements, by enum or any string form of it: gymnasium's value (``"SameStep"``), the
enum's name (``"SAME_STEP"``, ``"AutoresetMode.SAME_STEP"``) or snake_case (``"same_step"``)."""
_TERMINATION_NAMES = np.array([""] + [str(TERMINATIONS[code]) for code in sorted(TERMINATIONS)], dtype=object)


class TrinityTowersVectorEnv(VectorEnv):
    """``num_envs`` games against ``opponent``: ``"random"`` (a batched kernel), a batch policy
    ``(observations [n, 339], masks [n, 256]) -> actions [n]``, an ``Agent`` (called game by
    game), or an opponent pool: an object with ``act(observations, masks, games)`` and
    ``new_episodes(games)``, told which games it plays and when they restart (so it can
    draw a new opponent for each episode). Other agent specs (``"greedy"``, ``"mcts:100"``)
    are built above this layer: ``gymnasium.make_vec`` and ``trinity_env.registration.vector_env``
    take them (with ``trinity_env.agents.make``)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        opponent: BatchPolicy | Agent | Any = "random",
        seat: int | str = "random",
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        **config: Any,
    ):
        if seat not in (0, 1, "random") or isinstance(seat, bool):
            raise ConfigError(f"seat must be 'random', 0 or 1, got {seat!r}")
        if not isinstance(autoreset_mode, str | AutoresetMode) or autoreset_mode not in AUTORESET_MODES:
            raise ConfigError(
                "autoreset_mode must be AutoresetMode.NEXT_STEP or SAME_STEP (or a string: 'NEXT_STEP', 'NextStep', "
                f"'next_step'; DISABLED is not implemented), got {short(autoreset_mode)}"
            )
        if isinstance(opponent, str) and opponent != "random":  # "random" stays the batched kernel
            raise ConfigError(
                f"opponent {opponent!r} is an agent spec: build it with trinity_env.agents.make, or make the env "
                "with gymnasium.make_vec or trinity_env.registration.vector_env, which take specs"
            )
        is_pool = hasattr(opponent, "new_episodes") and hasattr(opponent, "act")
        if not (opponent == "random" or callable(opponent) or isinstance(opponent, Agent) or is_pool):
            raise ConfigError(f"opponent must be 'random', a batch policy or an Agent, got {opponent!r}")
        self.num_envs = num_envs = game_count(num_envs, "num_envs")
        self.games = FastGames(num_envs, **config)
        self.opponent = opponent
        self.seat_choice = seat
        self.autoreset_mode = AUTORESET_MODES[autoreset_mode]
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self.single_observation_space = spaces.Box(0, OBSERVATION_HIGH, (OBSERVATION_SIZE,), np.int8)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.seats = np.zeros(num_envs, np.int64)
        self._pending = np.zeros(num_envs, np.float32)  # rewards of a new episode earned before its first step
        self._autoreset = np.zeros(num_envs, bool)  # NEXT_STEP: envs whose next step starts a new episode
        self._rng = np.random.default_rng()

    # ------------------------------------------------------------------ the vector API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._rng = np.random.default_rng(seed)
        self.games.reset(None if seed is None else int(self._rng.integers(2**63)))
        self._choose_seats(np.arange(self.num_envs))
        self._pending[:] = 0
        self._autoreset[:] = False
        self._pending += self._opponent_moves(np.zeros(self.num_envs, bool))
        everyone = np.ones(self.num_envs, bool)
        return self.games.observations(self.seats), self._infos(self._running_info(), everyone)

    def step(self, actions: np.ndarray):
        # integers of shape (n,), checked before anything moves; one outside 0-255 is illegal (the episode ends)
        actions = action_array(actions, (self.num_envs,), in_range=False)
        n = self.num_envs
        rows = np.arange(n)
        starting = self._autoreset.copy()  # NEXT_STEP: these envs start a new episode, their action ignored
        self._autoreset[:] = False
        acting = ~starting
        masks = self.games.masks()
        inside = (actions >= 0) & (actions < NUM_ACTIONS)
        legal = inside & (masks[rows, np.clip(actions, 0, NUM_ACTIONS - 1)] == 1)
        illegal = acting & ~legal
        moving = np.flatnonzero(acting & legal)

        rewards = np.zeros(n, np.float64)  # as SyncVectorEnv returns them
        done = np.zeros(n, bool)
        final_obs = self.games.observations(self.seats)  # the learner's view where an episode ends now
        final = self._running_info()
        if illegal.any():
            rewards[illegal] = -1.0
            done |= illegal
            final["illegal_action"][illegal] = True
            final["action_mask"][illegal] = masks[illegal]
            self.games.restart(np.flatnonzero(illegal))
            self._choose_seats(np.flatnonzero(illegal))
        if moving.size:
            result = self.games.step(actions[moving], games=moving, final_seats=self.seats)
            rewards[moving] += result.rewards[moving, self.seats[moving]]
            ended = result.terminated
            self._record_end(ended, result, final, final_obs)
            done |= ended
            self._choose_seats(np.flatnonzero(ended))
        paid = acting & legal  # an illegal action ends the episode at -1 flat, as in the single-agent env
        rewards[paid] += self._pending[paid]
        self._pending[acting] = 0
        # the opponent moves; what a new episode earns before its first step waits in _pending
        self._pending += self._opponent_moves(done, final_obs, final, rewards)

        truncated = np.zeros(n, bool)
        current = self.games.observations(self.seats)
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            infos = self._infos(self._running_info(), np.ones(n, bool))
            if done.any():
                final_objects = np.full(n, None, dtype=object)
                for e in np.flatnonzero(done):
                    final_objects[e] = final_obs[e]
                infos["final_obs"], infos["_final_obs"] = final_objects, done.copy()
                infos["final_info"], infos["_final_info"] = self._infos(final, done), done.copy()
            return current, rewards, done, truncated, infos
        # NEXT_STEP: an env that ended shows its final observation and info now, the new game next step
        self._autoreset = done.copy()
        observations = np.where(done[:, None], final_obs, current)
        info = self._running_info()
        for key, values in final.items():
            info[key][done] = values[done]
        return observations, rewards, done, truncated, self._infos(info, np.ones(n, bool))

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in each game, int8 ``[n, 256]`` (all zeros in a finished game)."""
        masks = self.games.masks()
        masks[self._autoreset] = 0
        return masks

    # ------------------------------------------------------------------ helpers

    def _choose_seats(self, games: np.ndarray) -> None:
        """New episodes in ``games``: the learner's seat, and the pool's opponent."""
        if self.seat_choice == "random":
            self.seats[games] = self._rng.integers(0, 2, games.size)
        else:
            self.seats[games] = int(self.seat_choice)
        if hasattr(self.opponent, "new_episodes") and games.size:
            self.opponent.new_episodes(games)

    def _running_info(self) -> dict[str, np.ndarray]:
        """The infos of games still running: masks and seats, no result yet."""
        n = self.num_envs
        return {
            "action_mask": self.games.masks(),
            "seat": self.seats.copy(),
            "winner": np.full(n, -1, np.int64),
            "scores": np.zeros((n, 2), np.int64),
            "termination": np.full(n, "", dtype=object),
            "termination_code": np.zeros(n, np.int64),
            "illegal_action": np.zeros(n, bool),
        }

    @staticmethod
    def _record_end(ended: np.ndarray, result, final: dict, final_obs: np.ndarray) -> None:
        final_obs[ended] = result.final_observations[ended]
        final["action_mask"][ended] = 0
        final["winner"][ended] = result.winner[ended]
        final["scores"][ended] = result.scores[ended]
        final["termination"][ended] = _TERMINATION_NAMES[result.termination[ended]]
        final["termination_code"][ended] = result.termination[ended]

    @staticmethod
    def _infos(info: dict[str, np.ndarray], present: np.ndarray) -> dict[str, Any]:
        """gymnasium's layout: each key's array over envs and its ``_key`` mask of the envs it describes."""
        out: dict[str, Any] = {}
        for key, values in info.items():
            out[key] = values
            out[f"_{key}"] = present.copy()
        return out

    def _opponent_moves(self, done, final_obs=None, final=None, rewards=None) -> np.ndarray:
        """Play the opponent until every game waits on the learner; return rewards for the next step.

        A game the opponent ends within this step ends the learner's episode too (its final
        observation and result are recorded); rewards earned in a game that had already
        ended this step belong to the next episode.
        """
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
                self._record_end(first_end, result, final, final_obs)
                late += np.where(done, gained, 0)
                done |= ended
            else:
                late += gained
            self._choose_seats(np.flatnonzero(ended))

    def _opponent_actions(self, games: np.ndarray) -> np.ndarray:
        """The opponent's actions in ``games``: integer action ids, one per game (``FastGames.step`` checks them)."""
        if isinstance(self.opponent, str):
            return self.games.random_actions(games)
        observations = self.games.observations(1 - self.seats)[games]
        masks = self.games.masks()[games]
        if isinstance(self.opponent, Agent):
            actions = [self.opponent.act({"observation": o, "action_mask": m}) for o, m in zip(observations, masks)]
        elif hasattr(self.opponent, "new_episodes"):
            actions = self.opponent.act(observations, masks, games)
        else:
            actions = self.opponent(observations, masks)
        # not cast: a float or bool from a policy is refused, not truncated to an action id
        return action_array(actions, games.shape, name="opponent actions", games=games)
