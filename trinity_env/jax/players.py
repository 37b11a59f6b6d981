"""The shipped baseline players as JAX functions of one game's ``State`` (``jax.vmap`` for a batch, ``jax.jit``
to compile), so that a JAX pipeline trains and evaluates against them inside one compiled loop.

``random_action(state, key)``: a uniformly random legal action (``random``). ``greedy_action(state)``: the
``greedy`` agent's move (``trinity_env.agents.baselines``): in the draft the strongest legal card (the highest
side sum, then the highest single side, then the lowest deck index); in the play the placement that flips the
most cards now, ties to a move that wins, then the best lane margin after the move, then the weaker card, then
the lowest action id. It reads the whole state (it needs nothing hidden: with hidden hands it matches the agent,
which sees only its observation, in every real game). tests/test_jax_players.py compares both with the agents.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from trinity_env.core import DECK_SIZE, NUM_ACTIONS, PLACE_OFFSET, TILES
from trinity_env.jax import rules
from trinity_env.jax.env import State
from trinity_env.jax.rules import DRAFT, OVER

_SIDE = 16
"""The mask is searched in rows of 16: one uniform number finds the k-th legal action in two short scans."""


def random_action(state: State, key):
    """A uniformly random action among ``state.legal_action_mask`` (any action once the game is over, as Pgx's mask
    then allows), from one uniform number: the k-th allowed action."""
    cells = state.legal_action_mask.reshape(NUM_ACTIONS // _SIDE, _SIDE).astype(jnp.int32)
    counts = cells.sum(axis=1)
    total = jnp.cumsum(counts)
    k = jnp.floor(jax.random.uniform(key) * total[-1]).astype(jnp.int32)
    row = jnp.argmax(total > k)
    within = k - (total[row] - counts[row])
    column = jnp.argmax(jnp.cumsum(cells[row]) > within)
    return (row * _SIDE + column).astype(jnp.int32)


def _strongest_pick(game: rules.Game, legal):
    deck = rules.of(game.to_move, game.decks).astype(jnp.int32)
    total, top = deck.sum(axis=1), deck.max(axis=1)
    key = (total * 16 + top) * DECK_SIZE + (DECK_SIZE - 1 - jnp.arange(DECK_SIZE))
    return jnp.argmax(jnp.where(legal[:DECK_SIZE], key, -1)).astype(jnp.int32)


def _best_placement(game: rules.Game, legal):
    mover = game.to_move
    actions = jnp.arange(PLACE_OFFSET, NUM_ACTIONS)
    after = jax.vmap(lambda a: rules.apply(game, a))(actions)
    flips = jnp.sum((game.owner == 1 - mover) & (after.owner == mover), axis=1)
    wins = (after.phase == OVER) & (after.winner == mover)
    scores = jax.vmap(rules.lane_scores)(after.owner)
    margin = jnp.where(mover == 0, scores[:, 0] - scores[:, 1], scores[:, 1] - scores[:, 0])
    card = (actions - PLACE_OFFSET) // TILES
    strength = rules.of(mover, game.decks).astype(jnp.int32).sum(axis=1)[card]
    # the greedy agent's keys, compared lexicographically, packed in one integer (each within its range)
    key = (((flips * 2 + wins) * 31 + margin + 15) * 41 + 40 - strength) * NUM_ACTIONS + (NUM_ACTIONS - 1 - actions)
    return (PLACE_OFFSET + jnp.argmax(jnp.where(legal[PLACE_OFFSET:], key, -1))).astype(jnp.int32)


def greedy_action(state: State):
    """The ``greedy`` agent's action (0 once the game is over)."""
    game = state._x
    legal = rules.legal_mask(game)
    action = jnp.where(game.phase == DRAFT, _strongest_pick(game, legal), _best_placement(game, legal))
    return jnp.where(game.phase == OVER, 0, action).astype(jnp.int32)
