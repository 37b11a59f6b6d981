"""Budgets and Ctrl-C for the searches: the solver's ``max_nodes``/``max_seconds``, an exact
table after an aborted search, SIGINT during a long solve or MCTS search, and MCTS results
that chunking leaves unchanged."""

from __future__ import annotations

import _thread
import math
import pickle
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from processes import reaped

import trinity_env.agents.mcts as mcts_agent
from benchmarks.solver import positions as dealt_positions  # open-hand dealt games played down to N empty tiles
from trinity_env.agents import make, visible_state
from trinity_env.agents.mcts import BRANCHING, search_rows
from trinity_env.agents.view import decode
from trinity_env.core import GameState, TrinityError
from trinity_env.core.errors import BudgetExhausted
from trinity_env.envs import make_config
from trinity_env.search import mcts as mcts_search
from trinity_env.search.solver import Solver, SolverBudgetError
from trinity_env.spec.observation import action_mask, encode_observation

ROOT = Path(__file__).resolve().parents[1]
MESSAGE = r"^not solved within the budget \([\d,]+ nodes, \d+\.\d+ s\)$"


def empty_board() -> GameState:
    """A dealt open-hand game before its first placement: far beyond any budget in these tests."""
    return dealt_positions(15, 1, seed=0)[0]


# ---------------------------------------------------------------- the solver's budgets


@pytest.mark.parametrize("method", ["solve", "value", "best_move"])
def test_budgets_are_validated(method):
    state = dealt_positions(4, 1, seed=1)[0]
    call = getattr(Solver(table_bits=8), method)
    for bad in (0, -3, 1.5, 2.0, True, "100", np.float64(10.0)):
        with pytest.raises(TrinityError, match=r"^max_nodes must be a positive int or None, got"):
            call(state, max_nodes=bad)
    for bad in (0, -1.0, math.nan, math.inf, -math.inf, True, False, "1"):
        with pytest.raises(TrinityError, match=r"^max_seconds must be a finite number of seconds > 0 or None, got"):
            call(state, max_seconds=bad)
    # accepted: ints (numpy's too), finite positive floats and ints for seconds
    for budget in ({"max_nodes": 10**9}, {"max_nodes": np.int64(10**6)}, {"max_seconds": 60}, {"max_seconds": 30.5}):
        call(state, **budget)
    with pytest.raises(TypeError):
        call(state, 1000)  # budgets are keyword-only


def test_a_node_budget_gives_the_same_outcome_everywhere():
    state = dealt_positions(8, 2, seed=0)[1]
    needed = Solver(table_bits=16).solve(state).nodes
    assert needed > 1000
    # exactly enough nodes solves it, one fewer does not: the count is exact, whatever the clock
    solution = Solver(table_bits=16).solve(state, max_nodes=needed)
    assert solution.nodes == needed
    with pytest.raises(SolverBudgetError, match=MESSAGE) as caught:
        Solver(table_bits=16).solve(state, max_nodes=needed - 1)
    assert caught.value.nodes == needed - 1 and caught.value.max_nodes == needed - 1
    assert caught.value.max_seconds is None
    assert f"({needed - 1:,} nodes, " in str(caught.value)


def test_a_budget_error_is_one_line_a_budget_exhausted_not_bad_input_and_pickles():
    with pytest.raises(SolverBudgetError) as caught:
        Solver(table_bits=16).solve(empty_board(), max_nodes=2_000_000, max_seconds=60)
    error = caught.value
    assert isinstance(error, BudgetExhausted) and not isinstance(error, ValueError)  # not bad input: more budget helps
    assert error.nodes == 2_000_000 and error.max_nodes == 2_000_000 and error.max_seconds == 60.0
    assert "\n" not in str(error) and str(error).startswith("not solved within the budget (2,000,000 nodes, ")
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is SolverBudgetError and str(again) == str(error) and again.nodes == error.nodes


@pytest.mark.parametrize("method", ["solve", "value", "best_move"])
def test_a_seconds_budget_stops_a_search_that_would_never_end(method):
    with pytest.raises(SolverBudgetError, match=MESSAGE) as caught:
        getattr(Solver(table_bits=16), method)(empty_board(), max_seconds=0.3)
    assert caught.value.seconds >= 0.3
    assert caught.value.nodes > 0 and caught.value.max_nodes is None and caught.value.max_seconds == 0.3


def _check_against_fresh(solver: Solver, state: GameState, expected) -> None:
    """``solver`` (with whatever its table holds) agrees with a fresh solver's ``expected`` solution."""
    solution = solver.solve(state)
    assert (solution.value, solution.best_moves) == (expected.value, expected.best_moves)
    assert solver.value(state) == expected.value
    value, move = solver.best_move(state)
    assert value == expected.value and move in expected.best_moves


def test_an_aborted_search_leaves_no_wrong_entry_in_the_table():
    checked = 0
    for state in dealt_positions(8, 4, seed=0):
        expected = Solver(table_bits=16).solve(state)
        solver = Solver(table_bits=16)
        # abort the same solver again and again at different depths of the work, with every query
        for fraction in (0.05, 0.2, 0.45, 0.7, 0.95):
            budget = max(1, int(expected.nodes * fraction))
            for method in ("value", "best_move", "solve"):
                try:
                    getattr(solver, method)(state, max_nodes=budget)
                except SolverBudgetError:
                    checked += 1
            with pytest.raises(SolverBudgetError):
                Solver(table_bits=16).solve(state, max_nodes=budget)  # a fresh table can't do it in that budget
        _check_against_fresh(solver, state, expected)
        # and the children, whose entries the aborted searches stored
        for move in state.legal_moves()[:6]:
            child = state.play(move)
            if not child.is_over:
                assert solver.value(child) == Solver(table_bits=16).value(child)
    assert checked >= 20


def test_a_search_stopped_by_the_clock_leaves_the_table_exact():
    state = dealt_positions(10, 2, seed=0)[1]  # about a second: 9 empty tiles became too quick for the clock
    expected = Solver(table_bits=18).solve(state)
    assert expected.seconds > 0.05  # long enough for the clock to stop it
    solver = Solver(table_bits=18)
    with pytest.raises(SolverBudgetError):
        solver.solve(state, max_seconds=0.02)
    _check_against_fresh(solver, state, expected)


# ---------------------------------------------------------------- what the solver refuses


def test_solve_refuses_a_finished_game_a_draft_and_a_position_with_no_move():
    solver = Solver(table_bits=8)
    over = dealt_positions(4, 1, seed=3)[0]
    while not over.is_over:
        over = over.apply(over.legal_actions()[0])
    stuck = dealt_positions(4, 1, seed=3)[0]
    # the mover holds no card (only a hand-built state gets here: loading settles it by a pass)
    no_cards = list(stuck.status)
    no_cards[stuck.to_move] = tuple(3 if s == 1 else s for s in stuck.status[stuck.to_move])
    stuck = GameState(
        stuck.phase,
        stuck.to_move,
        stuck.decks,
        tuple(no_cards),
        stuck.cards,
        stuck.owners,
        stuck.max_a_cards,
        stuck.first_player,
        stuck.outcome,
    )
    assert stuck.phase == "play" and not stuck.legal_actions()
    cases = [
        (over, "^the game is over: there is no move to solve$"),
        (GameState.new_game(), "^the solver needs a play-phase position \\(both hands known\\), not a draft$"),
        (stuck, "^the player to move has no legal move: there is nothing to solve$"),
        ({"phase": "play"}, "^the solver needs a GameState, got dict$"),
    ]
    for state, message in cases:
        for method in ("solve", "best_move"):
            with pytest.raises(TrinityError, match=message):
                getattr(solver, method)(state)
    # value() of a finished game is its result; the other refusals hold for it too
    assert solver.value(over) == (0 if over.winner is None else (1 if over.winner == over.to_move else -1))
    for state, message in cases[1:]:
        with pytest.raises(TrinityError, match=message):
            solver.value(state)


# ---------------------------------------------------------------- Ctrl-C


def _observation(state: GameState, open_hands: bool = True) -> dict:
    return {"observation": encode_observation(state, 0, open_hands), "action_mask": action_mask(state, 0)}


def _assert_ctrl_c_stops(setup: str, work: str, wait: float = 1.5) -> None:
    """Run ``setup`` in a fresh interpreter, then ``work`` (one statement); ``wait`` s into ``work``, SIGINT must
    raise KeyboardInterrupt out of it within 10 s (about a tenth of a second in practice)."""
    prelude = "import signal, sys\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
    tail = f"""
        print("started", flush=True)
        try:
            {work}
        except KeyboardInterrupt:
            print("KeyboardInterrupt", flush=True)
            sys.exit(3)
        print("returned?!", flush=True)
        """
    child = subprocess.Popen(
        [sys.executable, "-c", prelude + textwrap.dedent(setup) + textwrap.dedent(tail)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    with reaped(child):
        first = child.stdout.readline()  # after imports and compilation
        assert first.strip() == "started", first + child.stdout.read()
        time.sleep(wait)
        assert child.poll() is None, "the search ended before the signal: " + child.stdout.read()
        child.send_signal(signal.SIGINT)
        output = child.communicate(timeout=60)[0]
    assert child.returncode == 3 and "KeyboardInterrupt" in output, output


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_stops_an_unbounded_solve():
    _assert_ctrl_c_stops(
        """
        import random
        from trinity_env.core import GameState, random_hand, standard_deck
        from trinity_env.search.solver import Solver, SolverBudgetError

        rng = random.Random(0)
        deck = standard_deck()
        state = GameState.new_game(hands=[random_hand(deck, 3, rng), random_hand(deck, 3, rng)], first_player=0)
        solver = Solver(table_bits=18)
        try:
            solver.solve(state, max_nodes=100)  # compile or load the kernels
        except SolverBudgetError:
            pass
        """,
        "solver.solve(state)",
    )


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("open_hands", [True, False])
def test_ctrl_c_stops_a_huge_mcts_search(open_hands):
    _assert_ctrl_c_stops(
        f"""
        import random
        from trinity_env.agents import MCTSAgent
        from trinity_env.agents.mcts import MAX_SIMULATIONS
        from trinity_env.envs import make_config
        from trinity_env.spec.observation import action_mask, encode_observation

        config = make_config(draft="dealt", open_hands={open_hands})
        state = config.new_game(random.Random(0))
        observation = {{"observation": encode_observation(state, state.to_move, {open_hands}),
                        "action_mask": action_mask(state, state.to_move)}}
        MCTSAgent(simulations=50, seed=0).act(observation)  # compile or load the kernels
        agent = MCTSAgent(simulations=MAX_SIMULATIONS, seed=0)  # the bound: about 5 s of search on a quiet machine
        """,
        "agent.act(observation)",
    )


def test_ctrl_c_in_process_leaves_the_solver_exact():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    solver = Solver(table_bits=16)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            solver.solve(empty_board())
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    for state in dealt_positions(8, 2, seed=0):
        _check_against_fresh(solver, state, Solver(table_bits=16).solve(state))


def test_an_interrupted_mcts_agent_searches_afresh_next_time(monkeypatch):
    config = make_config(draft="dealt", first_player=0)
    state = config.new_game(random.Random(1))
    agent = make("mcts:300,seed=0")
    state = state.apply(agent.act(_observation(state), state))
    state = state.apply(state.legal_actions()[0])

    def interrupted(rows, root, simulations, c, greed, rng, tree):
        tree.clear(1)  # as if stopped right after a cleared tree started to fill
        raise KeyboardInterrupt

    monkeypatch.setattr(mcts_agent, "run_search", interrupted)
    with pytest.raises(KeyboardInterrupt):
        agent.act(_observation(state), state)
    monkeypatch.undo()
    action = agent.act(_observation(state), state)
    assert action in state.legal_actions() and agent._root == 0  # no re-rooting into the cleared tree


# ---------------------------------------------------------------- MCTS results unchanged

# The moves `mcts:400` chose in these games before its search ran in chunks (seat 0 against
# a seeded random player): open hands (one tree, reused), hidden hands (8 worlds), and the
# drafts by search.
SCENARIOS = [
    ("mcts:400", {"draft": "dealt"}, 1, [27, 200, 171, 221, 143, 60]),
    ("mcts:400", {"draft": "dealt", "open_hands": False}, 2, [46, 92, 123, 140, 154]),
    ("mcts:400,draft=search", {}, 3, [11, 4, 7, 2, 0, 5, 8, 10, 46, 20, 89, 141, 195, 129, 93, 172]),
    ("mcts:400,draft=search", {"open_hands": False}, 4, [3, 10, 15, 1, 6, 14, 0, 11, 16, 32, 63, 114, 170]),
]


@pytest.mark.parametrize("spec, config, seed, expected", SCENARIOS)
def test_mcts_chooses_the_moves_it_chose_before(spec, config, seed, expected):
    config = make_config(config)
    rng = random.Random(seed)
    agent = make(spec)
    agent.reset(seed)
    state = config.new_game(rng)
    chosen = []
    while not state.is_over:
        if state.to_move == 0:
            observation = _observation(state, config.open_hands)
            action = agent.act(observation, visible_state(state, config.open_hands))
            chosen.append(int(action))
        else:
            action = rng.choice(state.legal_actions())
        state = state.apply(action)
    assert chosen == expected


def test_chunks_build_the_tree_one_kernel_call_builds(monkeypatch):
    state = dealt_positions(12, 1, seed=5)[0]
    rows = search_rows(decode(encode_observation(state, state.to_move, True)).batch)
    simulations = 3000
    trees = []
    for chunked in (False, True):
        tree = mcts_search.Tree(simulations * BRANCHING + 512)
        tree.clear(1)
        rng = np.array([12345, 67890], np.uint64)
        if chunked:  # tiny chunks that shrink and grow
            monkeypatch.setattr(mcts_search, "FIRST_CHUNK", 100)
            monkeypatch.setattr(mcts_search, "CHUNK_SECONDS", 1e-4)
            mcts_search.run_search(rows, 0, simulations, 0.7, 0.5, rng, tree)
        else:
            mcts_search.search(*rows, 0, simulations, 0.7, 0.5, rng, *tree.arrays())
        trees.append((tree, rng))
    (one, rng_one), (chunked, rng_chunked) = trees
    assert one.size[0] == chunked.size[0] > 1 and one.visits[0] == simulations
    for a, b in zip(one.arrays(), chunked.arrays()):
        assert np.array_equal(a, b)
    assert np.array_equal(rng_one, rng_chunked)
