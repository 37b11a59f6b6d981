"""The exact solver against brute-force minimax on the core, and its command line."""

from __future__ import annotations

import functools
import io
import json
import random

import numpy as np
import pytest

from trinity_env.cli import main
from trinity_env.core import GameState, TrinityError
from trinity_env.core.position import IN_HAND
from trinity_env.search.solver import Solver

from drawn import state as drawn_state


def minimax(state: GameState) -> int:
    """Value for the player to move, by trying every move of the core (no pruning)."""

    @functools.cache
    def value(s: GameState) -> int:
        if s.is_over:
            return 0 if s.winner is None else (1 if s.winner == s.to_move else -1)
        best = -2
        for move in s.legal_moves():
            child = s.play(move)
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
        state = GameState.new_game(
            hands=[sorted(rng.sample(range(5, 16), 8)), sorted(rng.sample(range(5, 16), 8))],
            first_player=rng.randint(0, 1),
        )
        while not state.is_over and len(state.empty_tiles()) > empty:
            state = state.apply(rng.choice(state.legal_actions()))
        if not state.is_over:
            found += 1
            yield state


def _solution_matches_minimax(solver: Solver, state: GameState) -> int:
    """The solution of ``state``: its value is minimax's, and every listed move achieves the value, and every
    move that does is listed. Returns the value."""
    expected = minimax(state)
    solution = solver.solve(state)
    assert solution.value == expected
    assert solver.value(state) == expected
    assert solver.best_move(state)[0] == expected
    for move in state.legal_moves():
        child = state.play(move)
        if child.is_over:
            v = 0 if child.winner is None else (1 if child.winner == state.to_move else -1)
        else:
            v = minimax(child) if child.to_move == state.to_move else -minimax(child)
        assert (move in solution.best_moves) == (v == expected), (move, v, expected)
    return expected


def test_the_solver_agrees_with_brute_force_minimax():
    solver = Solver(table_bits=16)
    checked = 0
    for empty in (2, 3, 4, 5):
        for state in small_positions(12, seed=empty, empty=empty):
            _solution_matches_minimax(solver, state)
            checked += 1
    assert checked == 48


def _wins_at_once(state: GameState) -> set[int]:
    """The actions whose placement ends the game at once in the mover's favour by lane control."""
    return {
        action
        for action in state.legal_actions()
        if (child := state.apply(action)).is_over
        and child.winner == state.to_move
        and child.outcome.termination == "lane_control"
    }


def _board(state: GameState):
    from trinity_env.search.solver import _Worker

    worker = _Worker()
    worker.load(state)
    return worker


def test_the_immediate_win_check_finds_a_lane_win_whenever_there_is_one():
    """``_lane_completions`` (no stepping) against stepping every legal move of the core, on random
    games at every depth: the first win it names is one, it names one whenever there is one,
    and it counts the tiles with one; wins by flipping the last cards of theirs in another,
    full lane among them. The last placement's value against the core's too."""
    import numpy as np

    from trinity_env.core import random_hand, standard_deck
    from trinity_env.search import solver

    rng, deck = random.Random(5), standard_deck()
    tiles, lanes = (np.zeros((solver.MAX_DEPTH + 1, solver.MAX_THREATS), np.int64) for _ in range(2))
    checked, winning, across = 0, 0, 0
    while checked < 3000:
        state = GameState.new_game(
            hands=[random_hand(deck, 3, rng), random_hand(deck, 3, rng)], first_player=rng.randint(0, 1)
        )
        while not state.is_over:
            board = _board(state).board.arrays
            expected = _wins_at_once(state)
            found = solver._lane_completions(board, state.to_move, solver.FIRST_WIN, tiles, lanes, 0)
            assert (found in expected) if expected else found == -1, (state.to_dict(), expected, found)
            winning_tiles = {(a - 16) % 15 for a in expected}
            counted = solver._lane_completions(board, state.to_move, solver.COUNT_TILES, tiles, lanes, 0)
            assert counted == len(winning_tiles)
            listed = solver._lane_completions(board, state.to_move, solver.LIST_THREATS, tiles, lanes, 0)
            assert set(tiles[0, :listed].tolist()) == winning_tiles
            if len(state.empty_tiles()) == 1:
                best = max(1 if state.apply(a).winner == state.to_move else -1 for a in state.legal_actions())
                assert solver._last_placement(board, state.to_move) == best
            checked += 1
            winning += bool(expected)
            across += any(state.apply(a).last.tile // 5 != state.apply(a).outcome.lane for a in expected)
            state = state.apply(rng.choice(state.legal_actions()))
    assert winning > 100 and across > 0  # some wins complete a full lane other than the placement's


def test_every_move_the_threat_prune_drops_lets_the_opponent_complete_a_lane():
    """The prune's claim, checked on the core: when the opponent could complete a lane at once,
    a move that ``_answers`` rejects leaves the opponent a move that completes a lane at once,
    and the moves it keeps include every move after which the opponent has none."""
    import numpy as np

    from trinity_env.core import random_hand, standard_deck
    from trinity_env.search.bitboard import flips
    from trinity_env.search.solver import LIST_THREATS, MAX_DEPTH, MAX_THREATS, _answers, _lane_completions

    rng, deck = random.Random(7), standard_deck()
    tiles, lanes = np.zeros((MAX_DEPTH + 1, MAX_THREATS), np.int64), np.zeros((MAX_DEPTH + 1, MAX_THREATS), np.int64)
    positions, dropped, kept = 0, 0, 0
    while positions < 400:
        state = GameState.new_game(
            hands=[random_hand(deck, 3, rng), random_hand(deck, 3, rng)], first_player=rng.randint(0, 1)
        )
        while not state.is_over:
            mover, board = state.to_move, _board(state).board
            count = 0
            if state.hands[1 - mover]:
                count = _lane_completions(board.arrays, 1 - mover, LIST_THREATS, tiles, lanes, 0)
            if count > 0 and not _wins_at_once(state):
                positions += 1
                for action in state.legal_actions():
                    i, t = divmod(action - 16, 15)
                    f = flips(board.own, board.card, board.beaten, board.wins, mover, 16 * mover + i, t)
                    child = state.apply(action)
                    answered = _answers(t, f, tiles, lanes, 0, count)
                    if not answered:
                        dropped += 1
                        assert not child.is_over and child.to_move == 1 - mover and _wins_at_once(child), action
                    elif not child.is_over and not _wins_at_once(child):
                        kept += 1
            state = state.apply(rng.choice(state.legal_actions()))
    assert dropped > 1000 and kept > 100


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
        child = state.play(move)
        achieved = (
            (0 if child.winner is None else (1 if child.winner == state.to_move else -1))
            if child.is_over
            else (solver.value(child) if child.to_move == state.to_move else -solver.value(child))
        )
        assert achieved == value


def test_the_solver_refuses_what_it_cannot_solve():
    with pytest.raises(TrinityError, match="draft"):
        Solver(table_bits=8).solve(GameState.new_game())


def test_trinity_solve_prints_the_winner_and_every_winning_move(capsys, monkeypatch, tmp_path):
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
    assert main(["solve", "-", "--json", str(tmp_path / "solved.json")]) == 0
    out = json.loads((tmp_path / "solved.json").read_text())
    out = {key: out[key] for key in ("winner", "best_moves")}
    # only tile 4 completes lane 0 at once; anywhere else black completes lane 2 on tile 14
    assert out == {"winner": 0, "best_moves": [{"card": "2222", "tile": 4}]}


def test_trinity_solve_names_a_bad_position(tmp_path, capsys):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"phase": "play", "to_move": 0, "board": [], "hands": [[], []]}))
    assert main(["solve", str(path)]) == 2
    assert "board must be a list of 3 lanes" in capsys.readouterr().err


def loaded_positions(count: int, seed: int, empty: int):
    """Real positions with cards taken out of the hands: one player passes, or nobody can place."""
    rng = random.Random(seed)
    found = 0
    for state in small_positions(10 * count, seed, empty):
        data = state.to_dict()
        for hand in data["hands"]:
            del hand[: rng.randint(0, len(hand))]
        if not any(data["hands"]):
            continue
        if not data["hands"][data["to_move"]]:
            data["to_move"] = 1 - data["to_move"]
        loaded = GameState.from_dict(data)
        if loaded.is_over or not loaded.legal_actions():
            continue
        found += 1
        yield loaded
        if found == count:
            return


@pytest.mark.e2e  # pure-Python minimax at 6 empty tiles (2-5 empty run by default): make test-e2e
def test_the_solver_agrees_with_brute_force_minimax_with_six_empty_tiles():
    solver = Solver(table_bits=16)
    for state in small_positions(2, seed=6, empty=6):
        _solution_matches_minimax(solver, state)


def test_loaded_positions_with_passes_agree_with_brute_force():
    for empty in (3, 4, 5, 6):
        solver = Solver(table_bits=12)
        for state in loaded_positions(8, seed=100 + empty, empty=empty):
            _solution_matches_minimax(solver, state)


def _child_value(solver: Solver, state: GameState, move) -> int:
    child = state.play(move)
    if child.is_over:
        return 0 if child.winner is None else (1 if child.winner == state.to_move else -1)
    return solver.value(child) if child.to_move == state.to_move else -solver.value(child)


@pytest.mark.parametrize("empty", [7, 8, 9])
def test_deeper_positions_are_consistent_one_ply_down_and_with_a_tiny_table(empty):
    """Too deep for brute force: the value is the best of the children's values (each from a
    fresh solver), the best moves are exactly the children that achieve it, and a table of 16
    slots (so entries are replaced all the time) gives the same answers."""
    for state in [*small_positions(2, seed=empty, empty=empty), *loaded_positions(1, seed=empty, empty=empty)]:
        solution = Solver(table_bits=18).solve(state)
        children = {move: _child_value(Solver(table_bits=18), state, move) for move in state.legal_moves()}
        assert solution.value == max(children.values())
        assert sorted(solution.best_moves) == sorted(m for m, v in children.items() if v == solution.value)
        tiny = Solver(table_bits=4).solve(state)
        assert tiny.value == solution.value and sorted(tiny.best_moves) == sorted(solution.best_moves)


def test_two_search_threads_give_the_same_answers_as_one():
    """Lazy SMP: two threads share the table (a tiny one too, so they overwrite each other's
    slots all the time); the values and the sets of best moves are those of one thread."""
    for state in [*small_positions(2, seed=31, empty=9), *small_positions(1, seed=32, empty=10)]:
        one = Solver(table_bits=18).solve(state)
        for solver in (Solver(table_bits=18, threads=2), Solver(table_bits=4, threads=2)):
            two = solver.solve(state)
            assert (two.value, sorted(two.best_moves)) == (one.value, sorted(one.best_moves))
            value, move = solver.best_move(state)
            assert value == one.value and move in one.best_moves


def test_a_node_budget_searches_with_one_thread_and_so_counts_the_same():
    from trinity_env.search.solver import SolverBudgetError

    (state,) = small_positions(1, seed=33, empty=11)
    counts = set()
    for threads in (1, 2):
        with pytest.raises(SolverBudgetError) as stopped:
            Solver(threads=threads).solve(state, max_nodes=20_000)
        counts.add(stopped.value.nodes)
    assert len(counts) == 1


def test_a_time_budget_stops_both_threads_and_keeps_the_table_exact():
    import time

    from trinity_env.search.solver import SolverBudgetError

    (big,) = small_positions(1, seed=34, empty=13)
    solver = Solver(threads=2)
    start = time.perf_counter()
    with pytest.raises(SolverBudgetError):
        solver.solve(big, max_seconds=0.2)
    assert time.perf_counter() - start < 10  # both threads unwound (not a timing test: minutes otherwise)
    for state in small_positions(3, seed=35, empty=9):
        assert solver.solve(state).value == Solver(threads=1).solve(state).value


def test_threads_must_be_a_positive_int():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(TrinityError, match="threads must be a positive int"):
            Solver(table_bits=4, threads=bad)


def test_table_bits_and_progress_are_checked():
    for bad in (1, 33, 2.0, True, "20"):
        with pytest.raises(TrinityError, match="table_bits must be an int from 2 to 32"):
            Solver(table_bits=bad)
    with pytest.raises(TrinityError, match="progress must be a function"):
        Solver(table_bits=4, progress=5)


def test_progress_reports_the_nodes_of_a_long_search_and_nodes_holds_the_last_count(monkeypatch):
    from benchmarks.solver import positions as dealt_positions
    from trinity_env.search import solver as solver_module
    from trinity_env.search import solver_budget

    monkeypatch.setattr(solver_budget, "PROGRESS_EVERY", 0.0)  # every wait step
    reports = []
    solver = Solver(table_bits=16, progress=lambda nodes, seconds: reports.append((nodes, seconds)))
    state = dealt_positions(10, 1, 10)[0]
    value = solver.value(state)
    assert solver.nodes > 0 and value == Solver(table_bits=16).value(state)  # the hook changes nothing
    counts = [nodes for nodes, _ in reports]
    assert reports and counts == sorted(counts) and all(n <= solver.nodes for n in counts)
    with pytest.raises(solver_module.SolverBudgetError) as stopped:
        solver.value(dealt_positions(12, 1, 12)[0], max_nodes=5_000)
    assert solver.nodes == stopped.value.nodes  # kept for a search that ran out too


def _twelve_empty(seed: int = 40) -> GameState:
    (state,) = small_positions(1, seed=seed, empty=12)
    return state


def _root_entry(solver: Solver, state: GameState) -> tuple[int, int, tuple[str, int]] | None:
    """The table's entry for ``state``: (value, bound, move), or None."""
    from trinity_env.search.solver import _field, root_key

    worker = solver._workers[0]
    worker.load(state)
    keys, data = solver._table
    key = root_key(worker.board.arrays, state.to_move)
    bucket = int(key & np.uint64(keys.shape[0] - 2))
    for slot in (bucket, bucket + 1):
        if keys[slot] ^ data[slot] == key:
            i, t = divmod(int(_field(data[slot], 4, 9)) - 17, 15)
            move = (state.decks[state.to_move][i].notation, t)
            return int(_field(data[slot], 0, 2)) - 1, int(_field(data[slot], 2, 2)), move
    return None


def test_move_hints_change_no_answer(monkeypatch):
    """With hints from 7 empty tiles up (not 11), every answer is the one without them: the
    value, the set of best moves, and best_move's value and move; with a tiny table and with
    two threads too. The node counts show that the hints did change the search."""
    from trinity_env.search import solver_hints

    monkeypatch.setattr(solver_hints, "HINT_MIN_EMPTY", 7)
    positions = [*small_positions(3, seed=41, empty=8), *small_positions(2, seed=42, empty=9)]
    positions += list(loaded_positions(2, seed=43, empty=9))
    changed = 0
    for state in positions:
        plain = Solver(table_bits=18, hint_simulations=0).solve(state)
        for solver in (
            Solver(table_bits=18, hint_simulations=3000),
            Solver(table_bits=4, hint_simulations=3000),
            Solver(table_bits=18, threads=2, hint_simulations=3000),
        ):
            hinted = solver.solve(state)
            assert (hinted.value, sorted(hinted.best_moves)) == (plain.value, sorted(plain.best_moves))
            changed += hinted.nodes != plain.nodes
            assert solver.value(state) == plain.value
            value, move = solver.best_move(state)
            assert value == plain.value and move in plain.best_moves
    assert changed >= len(positions)


def test_the_monte_carlo_favourite_is_searched_first_and_planting_keeps_what_the_table_knows():
    from trinity_env.search.solver import EXACT, HINT_ORDER, LOWER, _Hints, _store, plant_hints, root_key

    state = _twelve_empty()
    hints = _Hints(state, 5000)
    tree = hints.tree
    first, count = int(tree.first_child[0]), int(tree.children[0])
    assert count > 0 and int(tree.visits[0]) == 5000
    by_move: dict[tuple[str, int], int] = {}
    for k in range(first, first + count):
        i, t = divmod(int(tree.action[k]) - 16, 15)
        move = (state.decks[state.to_move][i].notation, t)
        by_move[move] = max(by_move.get(move, 0), int(tree.visits[k]))
    favourite = max(by_move, key=by_move.get)
    # the root's order: the favourite scores HINT_ORDER, the others less by their visits
    order = hints.order(0, state)
    top = int(order.argmax())
    assert int(order[top]) == HINT_ORDER
    assert (state.decks[state.to_move][(top - 16) // 15].notation, (top - 16) % 15) == favourite
    # planting: the root's entry names the favourite, as a bound that cuts nothing (at least -1)
    solver = Solver(table_bits=16)
    arrays = (tree.action, tree.player, tree.first_child, tree.children, tree.visits)
    worker = solver._workers[0]
    worker.load(state)
    assert plant_hints(worker.board.arrays, solver._table, *arrays, 500) >= 1
    assert _root_entry(solver, state) == (-1, LOWER, favourite)
    # a position the table knows keeps its entry
    other = Solver(table_bits=16)
    worker = other._workers[0]
    worker.load(state)
    keys, data = other._table
    key = root_key(worker.board.arrays, state.to_move)
    known = next(a for a in state.legal_actions() if a != 16 + 15 * 0 + 0)
    _store(keys, data, int(key & np.uint64(keys.shape[0] - 2)), key, 1, EXACT, known, 12)
    before = _root_entry(other, state)
    worker.load(state)
    plant_hints(worker.board.arrays, other._table, *arrays, 500)
    assert _root_entry(other, state) == before and before[:2] == (1, EXACT)


def test_the_order_counts_every_copy_of_a_card_on_its_first_copy_in_hand():
    from trinity_env.search.solver import HINT_ORDER, _Hints

    data = _twelve_empty().to_dict()
    hand = data["hands"][data["to_move"]]
    hand[1] = hand[0]  # two copies of one card
    state = GameState.from_dict(data)
    deck = state.decks[state.to_move]
    slots = [i for i, status in enumerate(state.status[state.to_move]) if status == IN_HAND]
    copies = [i for i in slots if deck[i].notation == hand[0]]
    assert len(copies) == 2
    hints = _Hints(state, 5000)
    tree = hints.tree
    first, count = int(tree.first_child[0]), int(tree.children[0])
    played = {int(tree.action[k]) for k in range(first, first + count)}
    assert any((a - 16) // 15 == copies[1] for a in played)  # the search played the second copy
    order = hints.order(0, state)
    for action in map(int, order.nonzero()[0]):
        assert (action - 16) // 15 != copies[1]  # ... which the order counts on the first
    # the visits of both copies on a tile add up: scaled to HINT_ORDER at the top
    visits = {}
    for k in range(first, first + count):
        i, t = divmod(int(tree.action[k]) - 16, 15)
        slot = copies[0] if i in copies else i
        visits[16 + 15 * slot + t] = visits.get(16 + 15 * slot + t, 0) + int(tree.visits[k])
    most = max(visits.values())
    assert {a: int(order[a]) for a in visits} == {a: v * HINT_ORDER // most for a, v in visits.items()}


def test_hint_simulations_follow_the_size_of_the_root_and_the_node_budget():
    from trinity_env.search.solver import _hint_simulations

    (ten,) = small_positions(1, seed=44, empty=10)
    (eleven,) = small_positions(1, seed=44, empty=11)
    twelve = _twelve_empty()
    assert _hint_simulations(ten, 30_000, None) == 0
    assert _hint_simulations(eleven, 30_000, None) == 10_000
    assert _hint_simulations(twelve, 30_000, None) == 30_000
    assert _hint_simulations(twelve, 30_000, 500_000) == 5_000
    assert _hint_simulations(twelve, 30_000, 99_999) == 0  # under a thousand simulations: none
    assert _hint_simulations(twelve, 0, None) == 0
    # a time budget too short for them gets none: the 0.3 s of a budget test once went entirely on hints
    assert _hint_simulations(twelve, 30_000, None, 0.3) == 0
    assert _hint_simulations(twelve, 30_000, None, 5.0) == 30_000


def test_a_node_budget_with_hints_gives_the_same_outcome_on_every_run():
    from trinity_env.search.solver import SolverBudgetError

    state = _twelve_empty(seed=45)
    outcomes = set()
    for threads in (1, 2, 1):
        try:
            solver = Solver(threads=threads)
            outcomes.add(("solved", solver.value(state, max_nodes=300_000), solver.nodes))
        except SolverBudgetError as stopped:
            outcomes.add(("stopped", stopped.nodes))
    assert len(outcomes) == 1


def test_hint_simulations_are_checked():
    for bad in (-1, 1.5, True, "3000"):
        with pytest.raises(TrinityError, match="hint_simulations must be an int >= 0"):
            Solver(table_bits=4, hint_simulations=bad)


def test_numba_s_private_trailing_zeros_is_still_the_lowest_set_bit():
    """The solver's pair walk uses numba's private ``numba.cpython.unsafe.numbers.trailing_zeros`` (one
    instruction, a few per cent of the search: ``solver_kernel._next_pair``); a numba release that changes or drops
    it fails here by name, not as a wrong search."""
    from numba import njit
    from numba.cpython.unsafe.numbers import trailing_zeros

    lowest = njit(lambda x: trailing_zeros(x))
    for value in (1, 2, 3, 12, 1 << 14, (1 << 31) | 8, (1 << 62) | (1 << 40), np.uint64(1 << 63)):
        assert lowest(value) == (int(value) & -int(value)).bit_length() - 1, value
