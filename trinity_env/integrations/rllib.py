"""Trinity Towers on Ray RLlib's new API stack: a turn-based multi-agent env and masked modules.

``register()`` makes the env available to RLlib by name (``"trinity_towers"``). Each agent's
observation is the dict RLlib's action-masking examples use — ``"observations"`` (the
339 numbers of ``docs/observation.md``, as float32) and ``"action_mask"`` (256, float32) —
and only the agent to move receives one, so each agent's episode holds its own decisions.
When the game ends both agents get their last observation and their ``+1/-1``. With
``reward: margin`` both agents also get their margin shaping after every placement (the
agent not to move without an observation: RLlib adds such rewards to its next step).
Rewards come from ``trinity_env.core.rewards``, as in the AEC env.

``MaskedPPOModule`` is PPO's default torch module with illegal actions' logits pushed to
the float minimum before sampling, training and evaluation; ``MaskedRandomModule`` plays
a uniformly random legal action (the league's first opponent). Install with
``pip install "trinity-towers[rllib]"``.
"""

from __future__ import annotations

import random
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.tune.registry import register_env

from trinity_env.agents.base import Agent, Observation
from trinity_env.core import GameState, IllegalMoveError
from trinity_env.core.rewards import REWARD_MODES, margin_shaping, result_rewards
from trinity_env.envs.config import ConfigError, make_config
from trinity_env.envs.observation import OBSERVATION_HIGH, OBSERVATION_SIZE, action_mask, encode_observation

ENV_NAME = "trinity_towers"
AGENTS = ("player_0", "player_1")
NUM_ACTIONS = 256


def observation_space() -> gym.spaces.Dict:
    """One agent's observation space: the observation vector and the legal-action mask."""
    return gym.spaces.Dict(
        {
            "observations": gym.spaces.Box(0.0, float(OBSERVATION_HIGH), (OBSERVATION_SIZE,), np.float32),
            "action_mask": gym.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
        }
    )


class TrinityTowersMultiAgentEnv(MultiAgentEnv):
    """Turn-based Trinity Towers for RLlib; ``config`` holds the env config's fields (``draft``, ...)."""

    def __init__(self, config: dict[str, Any] | None = None):
        super().__init__()
        self.config = make_config(dict(config or {}))
        if self.config.reward not in REWARD_MODES:  # step() computes exactly the core's reward modes
            raise ConfigError(f"reward must be one of {', '.join(map(repr, REWARD_MODES))}, got {self.config.reward!r}")
        self.agents = self.possible_agents = list(AGENTS)
        self.observation_spaces = {agent: observation_space() for agent in AGENTS}
        self.action_spaces = {agent: gym.spaces.Discrete(NUM_ACTIONS) for agent in AGENTS}
        self._rng = random.Random()
        self.game_state: GameState | None = None

    def _observe(self, seat: int) -> dict[str, np.ndarray]:
        return {
            "observations": encode_observation(self.game_state, seat, self.config.open_hands).astype(np.float32),
            "action_mask": action_mask(self.game_state, seat).astype(np.float32),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng.seed(seed)
        self.game_state = self.config.new_game(self._rng)
        mover = self.game_state.to_move
        return {AGENTS[mover]: self._observe(mover)}, {}

    def step(self, action_dict: dict[str, int]):
        before = self.game_state
        mover = before.to_move
        if AGENTS[mover] not in action_dict:
            raise IllegalMoveError(f"{AGENTS[mover]} is to move, got actions for {sorted(action_dict)}")
        after = self.game_state = before.apply(int(action_dict[AGENTS[mover]]))
        rewards: dict[str, float] = {}
        if self.config.reward == "margin" and after.last.tile is not None:
            shaping = margin_shaping(before.owners, after.owners)
            rewards = {AGENTS[0]: shaping, AGENTS[1]: -shaping}
        if after.is_over:
            for agent, reward in zip(AGENTS, result_rewards(after.winner)):
                rewards[agent] = rewards.get(agent, 0.0) + reward
            observations = {a: self._observe(seat) for seat, a in enumerate(AGENTS)}
            return observations, rewards, {"__all__": True}, {"__all__": False}, {}
        nxt = after.to_move
        return {AGENTS[nxt]: self._observe(nxt)}, rewards, {"__all__": False}, {"__all__": False}, {}


def register(name: str = ENV_NAME) -> str:
    """Register the env with Ray Tune's registry (what RLlib's ``.environment(name)`` reads); the name."""
    register_env(name, lambda config: TrinityTowersMultiAgentEnv(dict(config)))
    return name


def _split(batch: dict) -> tuple[torch.Tensor, dict]:
    """The mask, and the batch with only the observation vector under ``Columns.OBS``."""
    observation = batch[Columns.OBS]
    batch = dict(batch)
    batch[Columns.OBS] = observation["observations"] / OBSERVATION_HIGH
    return observation["action_mask"], batch


def _masked(output: dict, mask: torch.Tensor) -> dict:
    floor = torch.finfo(output[Columns.ACTION_DIST_INPUTS].dtype).min
    output[Columns.ACTION_DIST_INPUTS] = output[Columns.ACTION_DIST_INPUTS].masked_fill(mask < 0.5, floor)
    return output


class MaskedPPOModule(DefaultPPOTorchRLModule):
    """PPO's default module on ``observations``, with illegal actions masked out of every forward pass."""

    def __init__(self, *args, observation_space: gym.spaces.Dict | None = None, **kwargs):
        self.full_observation_space = observation_space
        super().__init__(*args, observation_space=observation_space["observations"], **kwargs)

    def setup(self) -> None:
        super().setup()  # the networks are built for the observation vector ...
        self.observation_space = self.full_observation_space  # ... copies (league members) get the dict

    def _forward_inference(self, batch: dict, **kwargs) -> dict:
        mask, batch = _split(batch)
        return _masked(super()._forward_inference(batch, **kwargs), mask)

    def _forward_exploration(self, batch: dict, **kwargs) -> dict:
        mask, batch = _split(batch)
        return _masked(super()._forward_exploration(batch, **kwargs), mask)

    def _forward_train(self, batch: dict, **kwargs) -> dict:
        mask, batch = _split(batch)
        return _masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict, embeddings=None):
        if isinstance(batch[Columns.OBS], dict):
            _, batch = _split(batch)
        return super().compute_values(batch, embeddings)


class MaskedRandomModule(RLModule):
    """A uniformly random legal action; never trained."""

    def _forward(self, batch: dict, **kwargs) -> dict:
        mask = torch.as_tensor(batch[Columns.OBS]["action_mask"], dtype=torch.float32)
        return {Columns.ACTIONS: torch.multinomial(mask, 1).squeeze(-1)}

    def _forward_train(self, *args, **kwargs):
        raise NotImplementedError("the random module is not trained")


class RLlibModuleAgent(Agent):
    """Plays an RLlib module's most likely legal action, so the arena and evaluations can use it."""

    def __init__(self, module: MaskedPPOModule, name: str = "rllib"):
        self.module, self.name = module, name

    def act(self, observation: Observation, state: GameState | None = None) -> int:
        batch = {
            Columns.OBS: {
                "observations": torch.as_tensor(observation["observation"], dtype=torch.float32)[None],
                "action_mask": torch.as_tensor(observation["action_mask"], dtype=torch.float32)[None],
            }
        }
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        return int(logits[0].argmax())
