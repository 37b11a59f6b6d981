"""The exact solver against brute-force minimax on the core, and its command line."""

from __future__ import annotations

import functools
import io
import json
import random

import pytest

from trinity_env.cli import main
from trinity_env.core import GameState, TrinityError
from trinity_env.search.solver import Solver

from drawn import state as drawn_state


def minimax(state: GameState) -> int:
    """Value for the player to move, by trying every move of the core (no pruning)."""

    @functools.cache
    def value(s: GameState) -> int:
        if s.is_over:
            return 0 if s.winner is None else (1 if s.winner == s.to_move else -1)
        best = -2
        for card, tile in s.legal_moves():
            child = s.play(card, tile)
            v = value(child) if child.to_move == s.to_move and not child.is_over else -value(child)
            if child.is_over:
                v = 0 if child.winner is None else (1 if child.winner == s.to_move else -1)
            best = max(best, v)
        return best

    return value(state)


def small_positions(count: int, seed: int, empty: int):
    """Real games played at random until ``empty`` tiles are left, plus loaded oddities."""
    rng = random.Random(seed)
    found = 0
    while found < count:
        state = GameState.new_game(hands=[sorted(rng.sample(range(5, 16), 8)), sorted(rng.sample(range(5, 16), 8))],
                                   first_player=rng.randint(0, 1))  # fmt: skip
        while not state.is_over and len(state.empty_tiles()) > empty:
            state = state.apply(rng.choice(state.legal_actions()))
        if not state.is_over:
            found += 1
            yield state


def test_the_solver_agrees_with_brute_force_minimax():
    solver = Solver(table_bits=16)
    checked = 0
    for empty in (2, 3, 4, 5):
        for state in small_positions(12, seed=empty, empty=empty):
            expected = minimax(state)
            solution = solver.solve(state)
            assert solution.value == expected
            assert solver.value(state) == expected
            # every listed move achieves the value, and every move that does is listed
            for move in state.legal_moves():
                child = state.play(*move)
                if child.is_over:
                    v = 0 if child.winner is None else (1 if child.winner == state.to_move else -1)
                else:
                    v = minimax(child) if child.to_move == state.to_move else -minimax(child)
                assert (move in solution.best_moves) == (v == expected), (move, v, expected)
            checked += 1
    assert checked == 48


def test_passes_and_draws_in_loaded_positions():
    # player 1 has no card: player 0 places twice; the result is a 3-3 draw whatever it does
    s = drawn_state(
        """
        w1111  w1111  w1111  b1111  .
        b1111  b1111  b1111  w1111  .
        b1111  .      .      .      .
        """,
        hands=(["1111"], []),
    )
    solution = Solver(table_bits=12).solve(s)
    assert solution.value == minimax(s)


def test_best_move_wins_when_the_position_is_won():
    solver = Solver(table_bits=18)
    for state in small_positions(10, seed=9, empty=7):
        value, move = solver.best_move(state)
        assert value == solver.value(state)
        child = state.play(*move)
        achieved = (
            (0 if child.winner is None else (1 if child.winner == state.to_move else -1))
            if child.is_over
            else (solver.value(child) if child.to_move == state.to_move else -solver.value(child))
        )
        assert achieved == value


def test_the_solver_refuses_what_it_cannot_solve():
    with pytest.raises(TrinityError, match="draft"):
        Solver(table_bits=8).solve(GameState.new_game())


def test_trinity_solve_prints_the_winner_and_every_winning_move(capsys, monkeypatch):
    position = {
        "phase": "play",
        "to_move": 0,
        "board": [
            [{"card": "1111", "owner": 0}] * 4 + [None],
            [None, None, None, None, None],
            [{"card": "9999", "owner": 1}] * 4 + [None],
        ],
        "hands": [["2222"], ["3333"]],
        "max_a_cards": 3,
    }
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(position)))
    assert main(["solve", "-"]) == 0
    out = json.loads(capsys.readouterr().out)
    # only tile 4 completes lane 0 at once; anywhere else black completes lane 2 on tile 14
    assert out == {"winner": 0, "best_moves": [{"card": "2222", "tile": 4}]}


def test_trinity_solve_names_a_bad_position(tmp_path, capsys):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"phase": "play", "to_move": 0, "board": [], "hands": [[], []]}))
    assert main(["solve", str(path)]) == 2
    assert "board must be a list of 3 lanes" in capsys.readouterr().err
