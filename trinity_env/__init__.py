"""trinity-towers: Trinity Towers as a reinforcement-learning environment.

``trinity_env.core`` holds the rules (``GameState``, cards, decks, replays); the rest of
the library is built on it.
"""

from trinity_env.core import GameState

__version__ = "0.1.0"

__all__ = ["GameState", "__version__"]
