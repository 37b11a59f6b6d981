"""Environments on top of the rules core: the PettingZoo AEC env and the single-agent gymnasium env."""

from trinity_env.envs.aec import env, raw_env
from trinity_env.spec.config import ConfigError, EnvConfig, make_config

__all__ = ["ConfigError", "EnvConfig", "env", "make_config", "raw_env"]
