"""Trinity Towers on Ray RLlib's new API stack: a turn-based multi-agent env and masked modules.

``register()`` makes the env available to RLlib by name (``"trinity_towers"``). Each agent's
observation is the dict RLlib's action-masking examples use — ``"observations"`` (the
339 numbers of ``docs/observation.md``, as float32) and ``"action_mask"`` (256, float32) —
and only the agent to move receives one, so each agent's episode holds its own decisions.
When the game ends both agents get their last observation and their ``+1/-1``. An illegal
action ends the game as PettingZoo's ``TerminateIllegalWrapper`` does: ``-1`` for the agent
that played it, ``0`` for the other, ``info["illegal_action"]`` set (RLlib's env pre-check
steps random unmasked actions, and passes); ``env_config={"illegal_action": "raise"}``
raises ``IllegalMoveError`` instead. With
``reward: margin`` both agents also get their margin shaping after every placement (the
agent not to move without an observation: RLlib adds such rewards to its next step).
Rewards come from ``trinity_env.core.rewards``, as in the AEC env.

``TrinityPPOModule`` is a PPO module around the batched trainer's own ``PolicyNetwork``
(the same MLP, the same per-placement tactical features, illegal actions masked in every
forward pass), so an RLlib run learns with the network ``fast_ppo`` uses and its weights
save as a checkpoint every agent tool reads. ``AgentModule`` plays any agent of the
registry (``random``, ``greedy``, ...) from the observations alone: the league's fixed
opponents. Install with ``pip install "trinity-towers[rllib]"``.
"""

from __future__ import annotations

import random
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.tune.registry import register_env

from trinity_env.agents.networks.ppo_network import PolicyNetwork
from trinity_env.agents.spec import make
from trinity_env.core import GameState, IllegalMoveError
from trinity_env.core.checks import describe_value, is_int
from trinity_env.core.rewards import transition_rewards
from trinity_env.spec.config import ConfigError, make_config
from trinity_env.spec.observation import OBSERVATION_HIGH, OBSERVATION_SIZE, action_mask, encode_observation

ENV_NAME = "trinity_towers"
AGENTS = ("player_0", "player_1")
NUM_ACTIONS = 256
ILLEGAL_ACTIONS = ("terminate", "raise")


def observation_space() -> gym.spaces.Dict:
    """One agent's observation space: the observation vector and the legal-action mask."""
    return gym.spaces.Dict(
        {
            "observations": gym.spaces.Box(0.0, float(OBSERVATION_HIGH), (OBSERVATION_SIZE,), np.float32),
            "action_mask": gym.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
        }
    )


class TrinityTowersMultiAgentEnv(MultiAgentEnv):
    """Turn-based Trinity Towers for RLlib; ``config`` holds the env config's fields (``draft``, ...)
    and ``illegal_action`` (``"terminate"``, the default, or ``"raise"``)."""

    def __init__(self, config: dict[str, Any] | None = None):
        super().__init__()
        config = dict(config or {})
        self.illegal_action = config.pop("illegal_action", "terminate")
        if self.illegal_action not in ILLEGAL_ACTIONS:
            raise ConfigError(f"illegal_action must be 'terminate' or 'raise', got {self.illegal_action!r}")
        self.config = make_config(config)
        self.agents = self.possible_agents = list(AGENTS)
        self.observation_spaces = {agent: observation_space() for agent in AGENTS}
        self.action_spaces = {agent: gym.spaces.Discrete(NUM_ACTIONS) for agent in AGENTS}
        self._rng = random.Random()
        self.game_state: GameState | None = None
        self._over = True  # until reset()

    def _observe(self, seat: int) -> dict[str, np.ndarray]:
        return {
            "observations": encode_observation(self.game_state, seat, self.config.open_hands).astype(np.float32),
            "action_mask": action_mask(self.game_state, seat).astype(np.float32),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng.seed(seed)
        self.game_state = self.config.new_game(self._rng)
        self._over = False
        mover = self.game_state.to_move
        return {AGENTS[mover]: self._observe(mover)}, {}

    def step(self, action_dict: dict[str, int]):
        if self._over:
            raise IllegalMoveError("the episode is over (or reset() was never called): call reset()")
        before = self.game_state
        mover = before.to_move
        if AGENTS[mover] not in action_dict:
            raise IllegalMoveError(f"{AGENTS[mover]} is to move, got actions for {sorted(action_dict)}")
        action = action_dict[AGENTS[mover]]
        if not is_int(action) or not 0 <= action < NUM_ACTIONS:
            raise IllegalMoveError(f"an action is an integer 0-{NUM_ACTIONS - 1}, got {describe_value(action)}")
        action = int(action)
        if self.illegal_action == "terminate" and action not in before.legal_actions():
            self._over = True
            observations = {a: self._observe(seat) for seat, a in enumerate(AGENTS)}
            rewards = {AGENTS[mover]: -1.0, AGENTS[1 - mover]: 0.0}
            infos = {AGENTS[mover]: {"illegal_action": True}}
            return observations, rewards, {"__all__": True}, {"__all__": False}, infos
        after = self.game_state = before.apply(action)
        paid = transition_rewards(self.config.reward, before, after)
        rewards: dict[str, float] = {} if paid is None else dict(zip(AGENTS, paid))
        if after.is_over:
            self._over = True
            observations = {a: self._observe(seat) for seat, a in enumerate(AGENTS)}
            return observations, rewards, {"__all__": True}, {"__all__": False}, {}
        nxt = after.to_move
        return {AGENTS[nxt]: self._observe(nxt)}, rewards, {"__all__": False}, {"__all__": False}, {}


def register(name: str = ENV_NAME) -> str:
    """Register the env with Ray Tune's registry (what RLlib's ``.environment(name)`` reads); the name."""
    register_env(name, lambda config: TrinityTowersMultiAgentEnv(dict(config)))
    return name


def _unpack(batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """The raw observations and the legal-action masks of a batch."""
    observation = batch[Columns.OBS]
    return observation["observations"], observation["action_mask"]


class TrinityPPOModule(TorchRLModule, ValueFunctionAPI):
    """PPO's module for ``main``: the batched trainer's ``PolicyNetwork`` (``self.network``).

    ``model_config``: ``hidden`` (256), ``layers`` (2) and ``tactics`` (``True``), the fields of
    ``PolicyNetwork``. Illegal actions are masked in exploration, inference and training; the
    value head shares the body, whose output travels as RLlib's embeddings from the training
    forward pass to ``compute_values``.
    """

    def setup(self) -> None:
        config = self.model_config or {}
        self.network = PolicyNetwork(
            hidden=int(config.get("hidden", 256)),
            layers=int(config.get("layers", 2)),
            tactics=bool(config.get("tactics", True)),
        )

    def _forward(self, batch: dict, **kwargs) -> dict:
        observations, masks = _unpack(batch)
        features = self.network.features(observations)
        return {Columns.ACTION_DIST_INPUTS: self.network.logits(features, observations, masks)}

    def _forward_train(self, batch: dict, **kwargs) -> dict:
        observations, masks = _unpack(batch)
        features = self.network.features(observations)
        return {
            Columns.ACTION_DIST_INPUTS: self.network.logits(features, observations, masks),
            Columns.EMBEDDINGS: features,
        }

    def compute_values(self, batch: dict, embeddings: torch.Tensor | None = None) -> torch.Tensor:
        if embeddings is None:
            embeddings = self.network.features(_unpack(batch)[0])
        return self.network.values(embeddings)


class AgentModule(RLModule):
    """Plays an agent of the registry (``model_config={"agent": "greedy"}``) on each observation; never trained.

    The agent sees exactly what a network would: the observation vector and the mask.
    """

    def setup(self) -> None:
        config = self.model_config or {}
        self.agent = make(str(config.get("agent", "random")))
        self.agent.reset(seed=int(config.get("seed", 0)))

    def _forward(self, batch: dict, **kwargs) -> dict:
        observations, masks = (np.asarray(x) for x in _unpack(batch))
        actions = [
            self.agent.act({"observation": o.astype(np.int8), "action_mask": m.astype(np.int8)})
            for o, m in zip(observations, masks)
        ]
        return {Columns.ACTIONS: torch.as_tensor(actions, dtype=torch.int64)}

    def _forward_train(self, *args, **kwargs):
        raise NotImplementedError(f"{self.agent.name} is a fixed opponent: it is not trained")
