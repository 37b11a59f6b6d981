"""Between the core's ``GameState`` and a row of a fast-engine ``Batch``, both ways."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from trinity_env.core import Card, GameState, Outcome
from trinity_env.fast.layout import (
    A_HELD0,
    ABSENT,
    CAPTURED,
    DECK_SIZE0,
    DOMINO,
    FIRST_PLAYER,
    HAND0,
    LANE,
    MAX_A,
    NOT_OVER,
    OVER,
    PHASE,
    PHASES,
    PLACED,
    SCORE0,
    TERMINATION,
    TERMINATIONS,
    TO_MOVE,
    WINNER,
    Batch,
)

_PHASE_CODE = {phase: code for code, phase in enumerate(PHASES)}
_TERMINATION_CODE = {name: code for code, name in TERMINATIONS.items()}


def write_state(batch: Batch, b: int, state: GameState) -> None:
    """Store ``state`` as game ``b`` of ``batch``."""
    for p in (0, 1):
        deck = state.decks[p]
        n = len(deck)
        batch.decks[b, p] = 0
        if n:
            batch.decks[b, p, :n] = deck
        batch.status[b, p] = ABSENT
        batch.status[b, p, :n] = state.status[p]
    batch.sides[b] = [card if card is not None else (0, 0, 0, 0) for card in state.cards]
    batch.owner[b] = state.owners
    batch.marks[b] = 0
    if state.last is not None and state.last.tile is not None:
        batch.marks[b, state.last.tile] = PLACED
        batch.marks[b, list(state.last.captured)] = CAPTURED
        batch.marks[b, list(state.last.domino)] = DOMINO
    info = batch.info[b]
    info[:] = 0
    info[TO_MOVE] = state.to_move
    info[PHASE] = _PHASE_CODE[state.phase]
    info[FIRST_PLAYER] = state.first_player
    info[MAX_A] = state.max_a_cards
    for p in (0, 1):
        info[A_HELD0 + p] = state.a_cards_held(p)
        info[HAND0 + p] = len(state.hand(p))
        info[DECK_SIZE0 + p] = len(state.decks[p])
    outcome = state.outcome
    info[WINNER] = -1 if outcome is None or outcome.winner is None else outcome.winner
    info[TERMINATION] = NOT_OVER if outcome is None else _TERMINATION_CODE[outcome.termination]
    info[LANE] = -1 if outcome is None or outcome.lane is None else outcome.lane
    if outcome is not None:
        info[SCORE0 : SCORE0 + 2] = outcome.scores


def from_states(states: Sequence[GameState]) -> Batch:
    """A batch holding ``states`` in order."""
    batch = Batch.empty(len(states))
    for b, state in enumerate(states):
        write_state(batch, b, state)
    return batch


def read_state(batch: Batch, b: int) -> GameState:
    """Game ``b`` of ``batch`` as a core ``GameState`` (without ``last``; see ``read_marks``)."""
    info = batch.info[b]
    decks = []
    status = []
    for p in (0, 1):
        n = int(info[DECK_SIZE0 + p])
        decks.append(tuple(Card.from_sides(*map(int, batch.decks[b, p, i])) for i in range(n)))
        status.append(tuple(int(s) for s in batch.status[b, p, :n]))
    cards = tuple(None if batch.owner[b, t] == -1 else Card.from_sides(*map(int, batch.sides[b, t])) for t in range(15))
    phase = PHASES[int(info[PHASE])]
    outcome = None
    if phase == PHASES[OVER]:
        winner = int(info[WINNER])
        lane = int(info[LANE])
        outcome = Outcome(
            TERMINATIONS[int(info[TERMINATION])],
            None if winner == -1 else winner,
            (int(info[SCORE0]), int(info[SCORE0 + 1])),
            None if lane == -1 else lane,
        )
    return GameState(
        phase,
        int(info[TO_MOVE]),
        (decks[0], decks[1]),
        (status[0], status[1]),
        cards,
        tuple(int(o) for o in batch.owner[b]),
        int(info[MAX_A]),
        int(info[FIRST_PLAYER]),
        outcome,
    )


def read_marks(batch: Batch, b: int) -> tuple[int | None, tuple[int, ...], tuple[int, ...]]:
    """``(placed tile, captured tiles, domino tiles)`` of game ``b``'s last action."""
    marks = batch.marks[b]
    placed = np.flatnonzero(marks == PLACED)
    return (
        int(placed[0]) if placed.size else None,
        tuple(int(t) for t in np.flatnonzero(marks == CAPTURED)),
        tuple(int(t) for t in np.flatnonzero(marks == DOMINO)),
    )
