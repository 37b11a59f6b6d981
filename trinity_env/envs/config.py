"""The environment's settings, re-exported: they live in ``trinity_env.spec.config``.

The config is part of the game's spec, below the envs and the fast engine, which both read
it; this module keeps ``from trinity_env.envs.config import make_config`` working.
"""

from trinity_env.spec.config import (
    DRAFT_MODES,
    RANDOM_DECK,
    SAME_DECK,
    ConfigError,
    DeckSpec,
    EnvConfig,
    make_config,
)

__all__ = ["DRAFT_MODES", "RANDOM_DECK", "SAME_DECK", "ConfigError", "DeckSpec", "EnvConfig", "make_config"]
