"""A single-agent gymnasium env for SB3 and other single-agent libraries.

The learner takes a random seat each episode and the opponent (any agent: random, a
baseline, a frozen policy) moves inside ``step()``, so the learner's trajectory holds only
its own decisions and it receives its own result: +1 for a win and -1 for a loss. (A
design with one policy stepping both seats in one trajectory mixes the players' returns
and never delivers the loser's -1.) ``action_masks()`` serves sb3-contrib's MaskablePPO.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from trinity_env.core import NUM_ACTIONS, GameState, IllegalMoveError, lane_scores
from trinity_env.core.checks import describe_value, is_int
from trinity_env.envs.aec import AGENTS, OBSERVATION_DTYPES, raw_env
from trinity_env.spec.agent import Agent, env_opponent, visible_state
from trinity_env.spec.config import ConfigError
from trinity_env.spec.observation import OBSERVATION_HIGH, OBSERVATION_SIZE, action_mask, encode_observation

ILLEGAL_ACTIONS = ("terminate", "raise")


class TrinityTowersEnv(gymnasium.Env):
    """Trinity Towers against an opponent inside the env.

    ``opponent``: an ``Agent``, a function ``observation dict -> action``, or ``"random"``
    (``gymnasium.make`` and ``trinity_env.registration.single_agent_env`` also take agent
    specs such as ``"greedy"``, built by ``trinity_env.agents.make``).
    ``seat``: ``"random"`` (each episode, from the seeded RNG), ``0`` or ``1``.
    ``illegal_action``: ``"terminate"`` (the episode ends with reward -1, as PettingZoo's
    ``TerminateIllegalWrapper`` does) or ``"raise"`` (``IllegalMoveError``).
    Other keywords are the AEC env's (``observation_dtype``: ``"int8"`` or ``"float32"``, the observation's
    dtype, ``info["action_mask"]`` stays int8) and its config (``draft``, ``open_hands``, ``deck``, ...).
    """

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        opponent: Agent | Any = "random",
        render_mode: str | None = None,
        seat: int | str = "random",
        illegal_action: str = "terminate",
        **config: Any,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(f"render_mode must be None, 'human', 'ansi' or 'rgb_array', got {render_mode!r}")
        if seat not in (0, 1, "random") or isinstance(seat, bool):
            raise ConfigError(f"seat must be 'random', 0 or 1, got {seat!r}")
        if illegal_action not in ILLEGAL_ACTIONS:
            raise ConfigError(f"illegal_action must be 'terminate' or 'raise', got {illegal_action!r}")
        self.game = raw_env(**config)
        self.opponent = env_opponent(opponent)
        self.render_mode = render_mode
        self.seat_choice = seat
        self.illegal_action = illegal_action
        self._dtype = OBSERVATION_DTYPES[self.game.observation_dtype]
        self.observation_space = spaces.Box(0, OBSERVATION_HIGH, (OBSERVATION_SIZE,), self._dtype)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.seat = 0
        self._pending = 0.0
        self._episode_over = True

    @property
    def game_state(self) -> GameState:
        """The current core ``GameState``."""
        return self.game.game_state

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.game.reset(seed=int(self.np_random.integers(2**63)))
        self.seat = int(self.np_random.integers(2)) if self.seat_choice == "random" else int(self.seat_choice)
        self.opponent.reset(seed=int(self.np_random.integers(2**63)))
        # the opponent may place before the learner's first turn: its shaping reward is paid
        # with the learner's first step, so a game's rewards still add up to result + margin
        self._pending = self._opponent_moves()
        self._episode_over = self.game_state.is_over
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def step(self, action: int):
        if self._episode_over:
            raise IllegalMoveError("the episode is over (or reset() was never called): call reset()")
        mask = action_mask(self.game_state, self.seat)
        if not is_int(action):
            raise IllegalMoveError(f"an action is an integer 0-{NUM_ACTIONS - 1}, got {describe_value(action)}")
        action = int(action)
        if not (0 <= action < NUM_ACTIONS and mask[action]):
            if self.illegal_action == "raise":
                self.game_state.apply(action)  # raises IllegalMoveError saying why
            self._episode_over = True
            info = self._info(illegal_action=True)
            return self._observation(), -1.0, True, False, info
        learner = AGENTS[self.seat]
        self.game.step(action)
        reward = self.game.rewards[learner] + self._pending
        self._pending = 0.0
        reward += self._opponent_moves()
        self._episode_over = self.game_state.is_over
        if self.render_mode == "human":
            self.render()
        return self._observation(), float(reward), self._episode_over, False, self._info()

    def _opponent_moves(self) -> float:
        """Let the opponent play until it is the learner's turn; the learner's rewards meanwhile."""
        learner, reward = AGENTS[self.seat], 0.0
        other = 1 - self.seat
        while not self.game_state.is_over and self.game_state.to_move == other:
            observation = self.game.observe(AGENTS[other])
            self.game.step(self.opponent.act(observation, visible_state(self.game_state, self.game.config.open_hands)))
            reward += self.game.rewards[learner]
        return reward

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as booleans (sb3-contrib's MaskablePPO calls this)."""
        return action_mask(self.game_state, self.seat).astype(bool)

    def _observation(self) -> np.ndarray:
        observation = encode_observation(self.game_state, self.seat, self.game.config.open_hands)
        return observation if self._dtype is np.int8 else observation.astype(self._dtype)

    def _info(self, illegal_action: bool = False) -> dict[str, Any]:
        """The same keys and types at every step (vector wrappers and replay buffers stack them):
        ``winner`` is -1 until the game is won (or for a draw), ``termination`` ``""`` until it ends and
        ``termination_code`` its number (``Termination.code``: 1 lane_control, 2 full_board, 3 no_moves), 0 until
        then."""
        outcome = self.game_state.outcome
        return {
            "seat": self.seat,
            "action_mask": action_mask(self.game_state, self.seat),
            "winner": -1 if outcome is None or outcome.winner is None else outcome.winner,
            "scores": np.array(lane_scores(self.game_state.owners), np.int64),
            "termination": "" if outcome is None else outcome.termination.value,
            "termination_code": 0 if outcome is None else outcome.termination.code,
            "illegal_action": illegal_action,
        }

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self.render_mode == "rgb_array":
            from trinity_env.envs.image import render_rgb

            return render_rgb(self.game_state)
        if self.render_mode == "human":  # the board in the terminal, as the AEC env draws it (no window)
            print(self.game_state)
            return None
        return str(self.game_state)
