"""trinity-towers: Trinity Towers as a reinforcement-learning environment.

``trinity_env.env()`` is the PettingZoo AEC environment (``raw_env()`` without the
standard wrappers); ``trinity_env.core`` holds the rules (``GameState``, cards, decks,
replays) that everything else is built on; ``trinity_env.benchmark(policy)`` measures any policy
on the project's score card (``trinity_env.scorecard``).

Importing the package is cheap: ``import trinity_env.core`` loads no gymnasium,
pettingzoo, numba or torch. The envs load on first use of ``env``/``raw_env``, and
``"trinity_env/TrinityTowers-v0"`` is registered with gymnasium's and PettingZoo's
registries as soon as either library is imported (now, if it already is), so
``gymnasium.make`` and ``pettingzoo.make`` find it after ``import trinity_env``.
"""

from __future__ import annotations

from typing import Any

from trinity_env.registration import ENV_ID, register_envs

__version__ = "0.1.0"

register_envs()

_LAZY = {
    "env": "trinity_env.envs.aec",
    "raw_env": "trinity_env.envs.aec",
    "GameState": "trinity_env.core",
    "benchmark": "trinity_env.scorecard",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'trinity_env' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = ["ENV_ID", "GameState", "__version__", "benchmark", "env", "raw_env"]
