"""The game's spec, between the rules core and everything that runs games: the variant config
(``EnvConfig``, ``make_config``), the observation layout and encoder, and the agent interface
(``Agent``, ``RandomAgent``, the ``Observation`` type).

The envs, the fast engine, search, the agents and the tools all import these from here, so
the fast engine's kernels import nothing from the envs. It loads numpy and PyYAML but no
gymnasium, pettingzoo, numba or torch. ``trinity_env.spec.config``,
``trinity_env.spec.observation`` and ``trinity_env.spec.agent`` re-export them.
"""

from trinity_env.spec.agent import Agent, Observation, PolicyAgent, RandomAgent, env_opponent, visible_state
from trinity_env.spec.config import ConfigError, EnvConfig, make_config
from trinity_env.spec.observation import OBSERVATION_HIGH, OBSERVATION_SIZE, encode_observation, observation_dict

__all__ = [
    "OBSERVATION_HIGH",
    "OBSERVATION_SIZE",
    "Agent",
    "ConfigError",
    "EnvConfig",
    "Observation",
    "PolicyAgent",
    "RandomAgent",
    "encode_observation",
    "env_opponent",
    "make_config",
    "observation_dict",
    "visible_state",
]
