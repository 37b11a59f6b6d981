"""Each error says what happened: its class names the kind of bad input, and it is still a ``ValueError``."""

from __future__ import annotations

import random

import pytest

from trinity_env.agents import AgentSpecError, MCTSAgent, make
from trinity_env.core import (
    ArgumentError,
    GameState,
    IllegalMoveError,
    PositionError,
    TrinityError,
    random_hand,
    standard_deck,
)
from trinity_env.search.solver import Solver


def _play_phase() -> GameState:
    deck, rng = standard_deck(), random.Random(0)
    return GameState.new_game(hands=[random_hand(deck, 3, rng), random_hand(deck, 3, rng)])


@pytest.mark.parametrize(
    ("call", "kind", "message"),
    [
        (lambda: Solver(threads=0), ArgumentError, "threads must be a positive int, got 0"),
        (lambda: Solver(table_bits=40), ArgumentError, "table_bits must be an int from 2 to 32"),
        (lambda: GameState.new_game(first_player=2), ArgumentError, "first_player must be 0 or 1, got 2"),
        (lambda: MCTSAgent(draft="deep"), ArgumentError, "mcts draft must be 'strongest' or 'search'"),
        (lambda: Solver(table_bits=10).solve(GameState.new_game()), PositionError, "not a draft"),
        (lambda: GameState.new_game().play("7A24", 0), IllegalMoveError, "the draft is not finished"),
    ],
)
def test_a_raise_names_what_happened_and_is_still_a_value_error(call, kind, message):
    with pytest.raises(kind, match=message) as caught:
        call()
    assert isinstance(caught.value, TrinityError) and isinstance(caught.value, ValueError)


def test_an_illegal_placement_through_the_core_is_an_illegal_move():
    state = _play_phase()
    move = state.legal_moves()[0]
    tile = move.tile
    after = state.play(move)
    other = after.hand(after.to_move)[0]
    with pytest.raises(IllegalMoveError, match=f"tile {tile} is occupied") as caught:
        after.play(other, tile)
    assert isinstance(caught.value, ValueError)


def test_a_bad_agent_argument_is_an_argument_error_in_python_and_a_spec_error_in_a_spec():
    with pytest.raises(ArgumentError, match="mcts simulations must be"):
        MCTSAgent(simulations=0)
    with pytest.raises(AgentSpecError, match="mcts simulations must be"):
        make("mcts:0")
