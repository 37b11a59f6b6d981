"""trinity-towers: Trinity Towers as a reinforcement-learning environment.

``trinity_env.env()`` is the PettingZoo AEC environment (``raw_env()`` without the
standard wrappers); ``trinity_env.core`` holds the rules (``GameState``, cards, decks,
replays) that everything else is built on. Importing the package registers
``"trinity_env/TrinityTowers-v0"`` with PettingZoo's and gymnasium's registries.
"""

from trinity_env.core import GameState
from trinity_env.envs import env, raw_env
from trinity_env.envs.registration import ENV_ID, register_envs

__version__ = "0.1.0"

register_envs()

__all__ = ["ENV_ID", "GameState", "__version__", "env", "raw_env"]
