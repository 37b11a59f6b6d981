"""The JAX trainer's network and the games its learner sees (``training.jax_ppo``).

The network is ``MLPNetwork``'s (``trinity_env.jax.networks.mlp_apply``: a tanh body, per-placement tactical
features, a bounded value), its parameters under torch's names. ``SelfPlay`` steps ``num_envs`` games so that the
learner is always to move: after its action the opponents move (a past self, the jitted ``greedy`` or ``random``
player, by a fixed split of the games) until it is the learner's turn again, and a finished game restarts at once
with a new deal and a new seat for the learner. Its functions are pure: ``jax.jit`` compiles them whole.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from trinity_env.core import NUM_ACTIONS
from trinity_env.jax import TrinityTowers
from trinity_env.jax.networks import mlp_apply
from trinity_env.jax.players import greedy_action, random_action
from trinity_env.jax.rules import OBSERVATION_SIZE

TACTICS_HIDDEN = 8
"""The placement head's width (``MLPNetwork``'s)."""
TACTICS_FEATURES = 6


# ------------------------------------------------------------------------------ the network


def init_params(key, hidden: int, layers: int) -> dict[str, jax.Array]:
    """``MLPNetwork``'s parameters (torch's names, ``[out, in]`` layout), orthogonally initialised as CleanRL does."""
    widths = [OBSERVATION_SIZE] + [hidden] * layers
    shapes = {f"body.{2 * i}": (widths[i + 1], widths[i], math.sqrt(2)) for i in range(layers)}
    shapes |= {"policy": (NUM_ACTIONS, hidden, 0.01), "value": (1, hidden, 1.0)}
    shapes |= {
        "placement.0": (TACTICS_HIDDEN, TACTICS_FEATURES, math.sqrt(2)),
        "placement.2": (1, TACTICS_HIDDEN, 0.01),
    }
    params = {}
    for key_i, (name, (rows, columns, gain)) in zip(jax.random.split(key, len(shapes)), shapes.items(), strict=True):
        params[f"{name}.weight"] = jax.nn.initializers.orthogonal(gain)(key_i, (rows, columns), jnp.float32)
        params[f"{name}.bias"] = jnp.zeros(rows, jnp.float32)
    return params


def apply(params, observation, mask, layers: int):
    """One position's masked logits [256] (illegal: -1e9) and value in [-1, 1]."""
    return mlp_apply(params, observation, mask, layers=layers, activation="tanh", bounded_value=True, tactics=True)


def policy_fn(layers: int):
    """The batched network: ``(params, observations [B, 339], masks [B, 256]) -> (logits, values)``."""
    return jax.vmap(lambda p, o, m: apply(p, o, m, layers), in_axes=(None, 0, 0))


# ------------------------------------------------------------------------------ the games the learner sees


class Games(NamedTuple):
    """The learner's view of ``num_envs`` games: each at the learner's turn (``seat``) in a game not over."""

    state: Any
    seat: jax.Array


def _where(condition, new, old):
    return jax.tree_util.tree_map(
        lambda a, b: jnp.where(condition.reshape((-1,) + (1,) * (a.ndim - 1)), a, b), new, old
    )


def _slice(tree, start: int, stop: int):
    return jax.tree_util.tree_map(lambda a: a[start:stop], tree)


class SelfPlay:
    """The env steps of the learner against its opponents, jit-compilable pure functions.

    ``env``: the env config (``TrinityTowers``' keywords); ``layers``: the network's; ``groups``: how many games play
    a past self, greedy and random, in that order (``num_envs`` in all)."""

    def __init__(self, env: dict, layers: int, groups: tuple[int, int, int]):
        self.env = TrinityTowers(**env)
        self.policy = policy_fn(layers)
        self.groups = groups
        self.num_envs = sum(groups)
        self._init = jax.vmap(self.env.init)
        self._step = jax.vmap(self.env.step)

    def opponent_actions(self, opponent, state, key):
        """The opponents' actions in every game: a past self (``opponent``'s parameters, sampled), greedy, random."""
        selves, greedy, randoms = self.groups
        parts = []
        if selves:
            mine = _slice(state, 0, selves)
            logits, _ = self.policy(opponent, mine.observation, mine.legal_action_mask)
            parts.append(jax.random.categorical(jax.random.fold_in(key, 0), logits))
        if greedy:
            parts.append(jax.vmap(greedy_action)(_slice(state, selves, selves + greedy)))
        if randoms:
            keys = jax.random.split(jax.random.fold_in(key, 1), randoms)
            parts.append(jax.vmap(random_action)(_slice(state, selves + greedy, self.num_envs), keys))
        return jnp.concatenate(parts).astype(jnp.int32)

    def new_games(self, key):
        """Fresh games, the learner's seat drawn for each (the opponent moves first where it is to move)."""
        n = self.num_envs
        init_key, seat_key = jax.random.split(key)
        return Games(
            self._init(jax.random.split(init_key, n)), jax.random.bernoulli(seat_key, 0.5, (n,)).astype(jnp.int32)
        )

    def _opponents_move(self, games: Games, fresh: Games, opponent, key, done):
        """Let the opponents move until the learner is to move in every game, a finished game restarted at once from
        ``fresh`` (its row: a game just dealt does not end before the learner's turn, so each game ends at most once
        here): returns the games, the learner's reward from these moves and whether its game ended (or ``done`` had:
        no reward of a game restarted since counts)."""
        n = self.num_envs
        rows = jnp.arange(n)

        def waiting(games):
            return ~games.state.terminated & (games.state.current_player != games.seat)

        def body(carry):
            games, reward, done, key = carry
            key, act_key = jax.random.split(key)
            moving = waiting(games)
            after = self._step(games.state, self.opponent_actions(opponent, games.state, act_key))
            ended = moving & after.terminated
            reward = reward + jnp.where(moving & ~done, after.rewards[rows, games.seat], 0.0)
            state = _where(moving, _where(ended, fresh.state, after), games.state)
            games = Games(state, jnp.where(ended, fresh.seat, games.seat))
            return games, reward, done | ended, key

        carry = (games, jnp.zeros(n, jnp.float32), done, key)
        games, reward, done, _ = jax.lax.while_loop(lambda c: waiting(c[0]).any(), body, carry)
        return games, reward, done

    def reset(self, key, opponent) -> Games:
        """New games, at the learner's turn in each (the deal's own games stand in for restarts: none ends here)."""
        new_key, move_key = jax.random.split(key)
        games = self.new_games(new_key)
        return self._opponents_move(games, games, opponent, move_key, jnp.zeros(self.num_envs, bool))[0]

    def step(self, games: Games, actions, opponent, key):
        """The learner's ``actions``, then the opponents' moves (and restarts): ``(games, reward, done)``. One batch of
        new games is dealt per step: a game the learner's move ends restarts from its row, and so does a game the
        opponents' moves end (a game ends at most once a step)."""
        new_key, move_key = jax.random.split(key)
        rows = jnp.arange(self.num_envs)
        after = self._step(games.state, actions)
        reward = after.rewards[rows, games.seat]
        ended = after.terminated
        fresh = self.new_games(new_key)
        games = Games(_where(ended, fresh.state, after), jnp.where(ended, fresh.seat, games.seat))
        games, later, done = self._opponents_move(games, fresh, opponent, move_key, ended)
        return games, reward + later, done
