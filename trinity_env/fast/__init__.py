"""The fast engine: the rules of docs/rules.md compiled with numba, for batches of games.

``FastGames`` steps B games in lockstep (self-play, auto-reset, seeded);
``TrinityTowersVectorEnv`` is a gymnasium vector env on it; ``kernels`` holds the compiled
rules, random playouts included, for search and benchmarks. The core stays the reference:
``tests/test_fast_engine.py`` replays core games here and compares every state.
"""

from trinity_env.fast.games import FastGames, StepResult
from trinity_env.fast.vector_env import TrinityTowersVectorEnv

__all__ = ["FastGames", "StepResult", "TrinityTowersVectorEnv"]
