"""One game both ways between the core's ``GameState`` and the JAX engine's ``State``."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from trinity_env.core import DECK_SIZE, TILES, ArgumentError, Card, GameState, Outcome, Termination
from trinity_env.jax.env import State, TrinityTowers, state_of
from trinity_env.jax.rules import ABSENT, OVER, PHASES, Game

_TERMINATIONS = {t.code: t for t in Termination}


def from_state(game: GameState, env: TrinityTowers | None = None) -> State:
    """``game`` as a JAX ``State`` of ``env`` (default: the standard rules), its observation the player to move's.

    Loaded positions with short decks keep their slots (the rest are absent); a finished game keeps its outcome.
    """
    if not isinstance(game, GameState):
        raise ArgumentError(f"from_state takes a core GameState, got {type(game).__name__}")
    env = TrinityTowers() if env is None else env
    decks = np.zeros((2, DECK_SIZE, 4), np.int8)
    status = np.full((2, DECK_SIZE), ABSENT, np.int8)
    for p in (0, 1):
        for i, card in enumerate(game.decks[p]):
            decks[p, i] = card
            status[p, i] = game.status[p][i]
    sides = np.zeros((TILES, 4), np.int8)
    for t, card in enumerate(game.cards):
        if card is not None:
            sides[t] = card
    outcome = game.outcome
    x = Game(
        decks=jnp.asarray(decks),
        status=jnp.asarray(status),
        sides=jnp.asarray(sides),
        owner=jnp.asarray(np.array(game.owners, np.int8)),
        phase=jnp.int8(PHASES.index(game.phase)),
        to_move=jnp.int32(game.to_move),
        first_player=jnp.int8(game.first_player),
        max_a_cards=jnp.int8(game.max_a_cards),
        winner=jnp.int8(-1 if outcome is None or outcome.winner is None else outcome.winner),
        termination=jnp.int8(0 if outcome is None else outcome.termination.code),
        scores=jnp.asarray(np.array((0, 0) if outcome is None else outcome.scores, np.int8)),
        lane=jnp.int8(-1 if outcome is None or outcome.lane is None else outcome.lane),
    )
    state = state_of(x)
    return state.replace(observation=env.observe(state))


def to_state(state: State) -> GameState:
    """One game's ``State`` as the core's ``GameState`` (``last`` is not kept; the core's equality ignores it).

    A batch, or a game ended by an illegal action (the rules never reached an end), is refused in one line.
    """
    x = state._x
    if np.ndim(x.phase) != 0:
        raise ArgumentError(f"to_state converts one game; this state holds a batch of shape {np.shape(x.phase)}")
    phase = int(x.phase)
    if bool(state.terminated) and phase != OVER:
        raise ArgumentError("this game ended on an illegal action: the rules hold no finished game to convert")
    decks_sides, status_all = np.asarray(x.decks), np.asarray(x.status)
    decks, status = [], []
    for p in (0, 1):
        present = [i for i in range(DECK_SIZE) if status_all[p, i] != ABSENT]
        decks.append(tuple(Card.from_sides(*map(int, decks_sides[p, i])) for i in present))
        status.append(tuple(int(status_all[p, i]) for i in present))
    owners = tuple(int(o) for o in np.asarray(x.owner))
    sides = np.asarray(x.sides)
    cards = tuple(None if owners[t] == -1 else Card.from_sides(*map(int, sides[t])) for t in range(TILES))
    outcome = None
    if phase == OVER:
        winner, lane = int(x.winner), int(x.lane)
        outcome = Outcome(
            _TERMINATIONS[int(x.termination)],
            None if winner < 0 else winner,
            (int(x.scores[0]), int(x.scores[1])),
            None if lane < 0 else lane,
        )
    return GameState(
        PHASES[phase],
        int(x.to_move),
        (decks[0], decks[1]),
        (status[0], status[1]),
        cards,
        owners,
        int(x.max_a_cards),
        int(x.first_player),
        outcome,
    )
