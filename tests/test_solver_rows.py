"""The solver straight from the fast engine's rows: exact labels and action ids without a ``GameState`` in between,
and no action -> ``Move`` -> action round trip."""

from __future__ import annotations

import random

import numpy as np
import pytest

import trinity_env.search.solver as solver_module
from trinity_env.agents.az import AZAgent
from trinity_env.core import Move, PositionError
from trinity_env.fast import FastGames
from trinity_env.fast.convert import from_states, read_state
from trinity_env.fast.layout import PHASE, PLAY
from trinity_env.search.solver import Solver
from trinity_env.spec.config import make_config


def rows(empty: int, games: int = 12, seed: int = 0):
    """Fast-engine rows of dealt open-hand games played at random down to ``empty`` empty tiles."""
    engine = FastGames(games, seed=seed, config=make_config(draft="dealt"))
    for _ in range(15 - empty):
        engine.step(engine.random_actions(np.arange(games)))
    batch = engine.batch
    playing = [b for b in range(batch.size) if batch.info[b, PHASE] == PLAY and (batch.owner[b] == -1).sum() == empty]
    return batch, playing


@pytest.mark.parametrize("empty", [3, 6, 8])
def test_a_row_is_solved_as_its_state_with_the_same_nodes(empty, monkeypatch):
    batch, playing = rows(empty)
    assert playing
    built = []
    monkeypatch.setattr(solver_module, "read_state", lambda *a: built.append(a) or read_state(*a))
    for b in playing:
        by_row, by_state = Solver(table_bits=16), Solver(table_bits=16)
        state = read_state(batch, b)
        assert by_row.value_of_row(batch, b) == by_state.value(state) and by_row.nodes == by_state.nodes
        value, action = Solver(table_bits=16).best_move_of_row(batch, b)
        assert (value, Move.from_action(action, state)) == Solver(table_bits=16).best_move(state)
        child = state.apply(action)
        achieved = -by_state.value(child) if child.to_move != state.to_move else by_state.value(child)
        assert achieved == value  # the move keeps the value
    assert built == []  # below the hints' size no GameState is built


def test_a_finished_or_drafting_row_is_answered_or_refused_as_its_state():
    state = make_config(draft="dealt", first_player=0).new_game(random.Random(0))
    while not state.is_over:
        state = state.apply(state.legal_actions()[0])
    batch = from_states([state, make_config().new_game(random.Random(0))])
    assert Solver(table_bits=8).value_of_row(batch, 0) == Solver(table_bits=8).value(state)
    with pytest.raises(PositionError, match="the game is over"):
        Solver(table_bits=8).best_move_of_row(batch, 0)
    with pytest.raises(PositionError, match="not a draft"):
        Solver(table_bits=8).value_of_row(batch, 1)


def test_the_az_agent_plays_the_solvers_move_from_the_row(monkeypatch):
    batch, playing = rows(5)
    agent = AZAgent.__new__(AZAgent)
    agent._solver = None
    monkeypatch.setattr(solver_module, "read_state", lambda *a: pytest.fail("a GameState was built"))
    reference = Solver(table_bits=18)  # the agent's own solver: its table lives between moves too
    for b in playing:
        row = type(batch)(*(array[b : b + 1] for array in batch))
        _, action = reference.best_move_of_row(batch, b)
        assert agent._solve(row) == action
