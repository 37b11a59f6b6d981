"""Trinity Towers in JAX (the ``jax`` extra): the rules as pure functions, a Pgx environment, the shipped players.

``TrinityTowers(**config)`` is a Pgx env (``init(key)``, ``step(state, action, key)``,
``observe(state, player)``) that ``jax.jit`` and ``jax.vmap`` take whole; ``from_state`` and
``to_state`` convert one game to and from the core's ``GameState``; ``legal_mask`` is the rules'
mask of a state (all False once the game is over, where Pgx's ``legal_action_mask`` is all True).
``trinity_env.jax.players`` holds ``random`` and ``greedy``, ``trinity_env.jax.networks`` the shipped
networks. See docs/jax.md. The core is the reference: tests/test_jax_engine.py holds this engine to
it move by move.
"""

from __future__ import annotations

from trinity_env.jax import rules
from trinity_env.jax.convert import from_state, to_state
from trinity_env.jax.env import ENV_ID, State, TrinityTowers
from trinity_env.jax.rules import Game


def legal_mask(state: State):
    """The rules' legal actions of the player to move (bool [256]; all False once the game is over)."""
    return rules.legal_mask(state._x)


__all__ = ["ENV_ID", "Game", "State", "TrinityTowers", "from_state", "legal_mask", "to_state"]
