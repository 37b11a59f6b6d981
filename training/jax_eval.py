"""The JAX trainer's evaluation, inside JAX: a policy against the jitted ``random`` or ``greedy``, seats swapped.

``evaluate(policy, params, env, opponent, games, key)`` plays ``games`` games in lockstep under ``vmap``: each
of ``games / 2`` deals (decks, hands and the first mover, all drawn by ``env.init`` from one key) is played
twice, the policy in seat 0 and then in seat 1, so neither the deal nor the seat favours a side. The policy
plays greedily (its legal action with the highest logit, as ``trinity benchmark`` plays an ONNX policy).
The result counts wins, draws and losses; its ``share`` is the project's ``Share`` of (wins + draws / 2) of the
games, with its 95% Wilson interval (``trinity_env.evaluation.ratings``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp

from trinity_env.evaluation.ratings import Share
from trinity_env.jax.players import greedy_action, random_action

OPPONENTS = ("random", "greedy")


@dataclass(frozen=True)
class Result:
    """A policy's games against ``opponent``: its wins, draws and losses; ``share`` is the project's one share type
    (``ratings.Share``: a draw counts half a win, with its 95% Wilson interval)."""

    opponent: str
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def share(self) -> Share:
        return Share(self.wins + self.draws / 2, self.games)

    def line(self) -> str:
        return f"vs {self.opponent} {self.share.text()} ({self.wins}-{self.draws}-{self.losses})"

    def to_dict(self) -> dict:
        """The counts and the share's JSON (``Share.to_json``: hits, total, share, low, high)."""
        counts = {"opponent": self.opponent, "wins": self.wins, "draws": self.draws, "losses": self.losses}
        return counts | self.share.to_json()


@partial(jax.jit, static_argnames=("policy", "env", "opponent", "games"))
def _play(policy, params, env, opponent: str, games: int, key):
    deal_key, move_key = jax.random.split(key)
    deals = jax.random.split(deal_key, games // 2)
    state = jax.vmap(env.init)(jnp.concatenate([deals, deals]))
    seat = (jnp.arange(games) >= games // 2).astype(jnp.int32)

    def body(carry):
        state, key = carry
        key, sub = jax.random.split(key)
        logits, _ = policy(params, state.observation, state.legal_action_mask)
        mine = jnp.argmax(logits, axis=-1).astype(jnp.int32)
        if opponent == "greedy":
            theirs = jax.vmap(greedy_action)(state)
        else:
            theirs = jax.vmap(random_action)(state, jax.random.split(sub, games))
        action = jnp.where(state.current_player == seat, mine, theirs)
        return jax.vmap(env.step)(state, action), key

    state, _ = jax.lax.while_loop(lambda c: ~c[0].terminated.all(), body, (state, move_key))
    winner = state._x.winner.astype(jnp.int32)
    return jnp.sum(winner == seat), jnp.sum(winner < 0), jnp.sum((winner >= 0) & (winner != seat))


def evaluate(policy, params, env, opponent: str, games: int, key) -> Result:
    """``policy(params, observations, masks) -> (logits, values)`` (batched) against ``opponent`` in ``games`` games.

    ``policy`` and ``env`` must be hashable and stable (the same objects from call to call) to reuse the compiled
    play."""
    if opponent not in OPPONENTS:
        raise ValueError(f"opponent must be one of {', '.join(OPPONENTS)}, got {opponent!r}")
    wins, draws, losses = _play(policy, params, env, opponent, games, key)
    return Result(opponent, int(wins), int(draws), int(losses))
