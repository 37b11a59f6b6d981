"""The exact solver: negamax with alpha-beta, a transposition table and move ordering.

It solves open-hand play-phase positions: both hands are known, so the game is one of
perfect information and every position has a value for the player to move, +1 (win), 0
(draw; only loaded positions can draw) or -1 (loss). ``Solver`` is the public face; the
work is in the modules beside this one:

- ``search.bitboard``: the board it searches on, owners as two masks, placements made and
  taken back in place;
- ``search.solver_kernel``: the search itself (``negamax``), its table and move ordering;
  its docstring lists the speed-ups, all exact;
- ``search.solver_budget``: budgets and search threads (``SolverBudgetError``);
- ``search.solver_hints``: the move hints, a Monte Carlo search of a large query's root.

Identical cards in a hand give identical moves, so only one copy of each is searched.

A search can be bounded: ``max_nodes`` (deterministic: the same result on every machine)
and ``max_seconds``; past either, ``SolverBudgetError`` is raised. The kernel runs without
the GIL in a worker thread while the calling thread waits in short steps, so Ctrl-C
(``KeyboardInterrupt``) and the clock are honoured within a fraction of a second: the
waiting thread raises the kernel's stop flag, and the search unwinds without storing
anything from the nodes it had not finished.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from trinity_env.core import ArgumentError, GameState, Move, Phase, PositionError
from trinity_env.core.limits import check_memory, check_processes
from trinity_env.fast.convert import read_state, write_state
from trinity_env.fast.kernels import apply_action
from trinity_env.fast.layout import DRAFT, IN_HAND, OVER, PHASE, PLACE_OFFSET, TILES, TO_MOVE, WINNER, Batch
from trinity_env.search.solver_budget import SolverBudgetError, _Budget, _Worker
from trinity_env.search.solver_hints import (
    HINT_MIN_EMPTY,
    HINT_ORDER,
    HINT_SIMULATIONS,
    _hint_simulations,
    _Hints,
    hints_for,
    plant_hints,
)
from trinity_env.search.solver_kernel import (
    COUNT_TILES,
    EXACT,
    FIRST_WIN,
    LIST_THREATS,
    LOWER,
    MAX_DEPTH,
    MAX_THREATS,
    _answers,
    _field,
    _lane_completions,
    _last_placement,
    _store,
    root_key,
)

__all__ = ["HINT_SIMULATIONS", "TABLE_BITS", "Solution", "Solver", "SolverBudgetError"]
__all__ += [  # internals that tests import from here; they live in solver_kernel, solver_budget, solver_hints
    "COUNT_TILES",
    "EXACT",
    "FIRST_WIN",
    "HINT_ORDER",
    "LIST_THREATS",
    "LOWER",
    "MAX_DEPTH",
    "MAX_THREATS",
    "_Hints",
    "_Worker",
    "_answers",
    "_field",
    "_hint_simulations",
    "_lane_completions",
    "_last_placement",
    "_store",
    "plant_hints",
    "root_key",
]

TABLE_BITS = 22
TABLE_SLOT_BYTES = 16
"""Bytes of one slot of the table (two uint64 arrays of ``2**table_bits``)."""
T = TypeVar("T")


@dataclass(frozen=True)
class Solution:
    """A solved position: ``value`` for the player to move (+1 win, 0 draw, -1 loss), the
    ``winner`` under perfect play (``None`` for a draw), and ``best_moves``, every distinct
    ``Move`` that achieves the value (every legal move when the mover loses anyway)."""

    winner: int | None
    value: int
    best_moves: list[Move]
    nodes: int
    seconds: float

    def to_json(self) -> dict:
        """The ``trinity solve`` output."""
        return {
            "winner": self.winner,
            "best_moves": [m.to_json() for m in self.best_moves],
        }


class Solver:
    """Solves open-hand play-phase positions exactly; the transposition table lives between calls.

    ``threads``: search threads sharing the table (``trinity solve`` uses two). They search
    the same position with different move orders and the first to finish answers. Values,
    and ``solve``'s set of best moves, are exact and the same with any number of threads;
    which winning move ``best_move`` names may differ between runs with more than one, so
    the default is one thread: the same answer on every run. Under a ``max_nodes`` budget,
    and on positions with fewer than ``PARALLEL_MIN_EMPTY`` empty tiles (``solver_budget``),
    the solver searches with one thread.

    ``table_bits``: the table has ``2**table_bits`` slots of 16 bytes (22: 64 MiB).
    ``nodes``: the nodes the last query searched, finished or not.
    ``progress``: called about once a second during a search with the nodes searched and
    the seconds spent so far in this call (for a progress line on long solves).
    ``hint_simulations``: the Monte Carlo search that orders the root's moves of a query
    with ``HINT_MIN_EMPTY`` empty tiles or more (``solver_hints``): its simulations at 12 or
    more empty tiles (a third at 11; under ``max_nodes``, at most one per
    ``HINT_NODES_PER_SIMULATION`` nodes); 0 turns it off. It changes how fast, never what.

    Every query takes an optional budget for the whole call: ``max_nodes`` (a positive int;
    the same outcome on any machine) and ``max_seconds`` (finite, > 0). A call that runs out
    raises ``SolverBudgetError``; Ctrl-C raises ``KeyboardInterrupt`` within a fraction of a
    second. Either way the table keeps only what was fully searched, so later calls stay exact.
    """

    def __init__(
        self,
        table_bits: int = TABLE_BITS,
        threads: int = 1,
        progress: Callable[[int, float], None] | None = None,
        hint_simulations: int = HINT_SIMULATIONS,
    ):
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ArgumentError(f"threads must be a positive int, got {threads!r}")
        check_processes("threads", threads, ArgumentError)  # each one holds its own search stacks
        if isinstance(table_bits, bool) or not isinstance(table_bits, int) or not 2 <= table_bits <= 32:
            raise ArgumentError(f"table_bits must be an int from 2 to 32, got {table_bits!r}")
        check_memory({f"table_bits={table_bits} (the table)": TABLE_SLOT_BYTES << table_bits}, ArgumentError)
        if progress is not None and not callable(progress):
            raise ArgumentError(f"progress must be a function of (nodes, seconds) or None, got {progress!r}")
        if isinstance(hint_simulations, bool) or not isinstance(hint_simulations, int) or hint_simulations < 0:
            raise ArgumentError(f"hint_simulations must be an int >= 0, got {hint_simulations!r}")
        self.hint_simulations = hint_simulations
        self.progress = progress
        self.nodes = 0  # searched by the last query
        size = 1 << table_bits
        self._table = (np.zeros(size, np.uint64), np.zeros(size, np.uint64))
        self.threads = threads
        self._workers = [_Worker(seed=k) for k in range(threads)]

    def _search(self, state: GameState, alpha: int, beta: int, budget: _Budget, order: np.ndarray | None = None) -> int:
        return self._search_row(_rows(state), 0, alpha, beta, budget, order)

    def _search_row(
        self, rows: Batch, row: int, alpha: int, beta: int, budget: _Budget, order: np.ndarray | None = None
    ) -> int:
        return budget.search(self._workers, self._table, rows, row, alpha, beta, order)

    def _run(self, budget: _Budget, work: Callable[[], T]) -> T:
        try:
            return budget.run(work)
        finally:
            self.nodes = budget.searched

    def _budget(self, max_nodes: int | None, max_seconds: float | None) -> _Budget:
        return _Budget(max_nodes, max_seconds, self.threads, self.progress)

    def _hints(self, state: GameState, budget: _Budget) -> _Hints | None:
        """A Monte Carlo search of a query's root, for move order, where the root is large
        enough for it to pay; its most visited lines become the table's first moves."""
        return hints_for(
            state, self.hint_simulations, budget.max_nodes, self._workers[0], self._table, budget.max_seconds
        )

    def _row_order(self, rows: Batch, row: int, budget: _Budget) -> np.ndarray | None:
        """The root's move order from ``_hints`` for game ``row`` of ``rows``: a ``GameState`` is built only where
        the root is large enough for hints (``HINT_MIN_EMPTY`` empty tiles), never for a label's small position."""
        if self.hint_simulations == 0 or int((rows.owner[row] == -1).sum()) < HINT_MIN_EMPTY:
            return None
        state = read_state(rows, row)
        hints = self._hints(state, budget)
        return None if hints is None else hints.order(0, state)

    def value(self, state: GameState, *, max_nodes: int | None = None, max_seconds: float | None = None) -> int:
        """The value of ``state`` for its player to move (the result itself when the game is over)."""
        budget = self._budget(max_nodes, max_seconds)
        _check(state, over_ok=True)
        if state.is_over:
            return 0 if state.winner is None else (1 if state.winner == state.to_move else -1)
        hints = self._hints(state, budget)
        order = None if hints is None else hints.order(0, state)
        return self._run(budget, lambda: self._search(state, -1, 1, budget, order))

    def value_of_row(
        self, rows: Batch, row: int, *, max_nodes: int | None = None, max_seconds: float | None = None
    ) -> int:
        """``value`` of game ``row`` of a fast-engine ``Batch`` (an exact label), loaded onto the solver's board
        straight from the engine's arrays: the same value and nodes as ``value(read_state(rows, row))``."""
        budget = self._budget(max_nodes, max_seconds)
        if _check_row(rows, row, over_ok=True):
            winner, mover = int(rows.info[row, WINNER]), int(rows.info[row, TO_MOVE])
            return 0 if winner == -1 else (1 if winner == mover else -1)
        order = self._row_order(rows, row, budget)
        return self._run(budget, lambda: self._search_row(rows, row, -1, 1, budget, order))

    def best_move(
        self, state: GameState, *, max_nodes: int | None = None, max_seconds: float | None = None
    ) -> tuple[int, Move]:
        """The value of ``state`` for its player to move and one ``Move`` that achieves it."""
        budget = self._budget(max_nodes, max_seconds)
        _check(state)
        hints = self._hints(state, budget)
        order = None if hints is None else hints.order(0, state)
        value, action = self._run(budget, lambda: self._best_move(_rows(state), 0, budget, order))
        return value, Move.from_action(action, state)

    def best_move_of_row(
        self, rows: Batch, row: int, *, max_nodes: int | None = None, max_seconds: float | None = None
    ) -> tuple[int, int]:
        """``best_move`` of game ``row`` of a fast-engine ``Batch``, straight from the engine's arrays: the value
        and the action id that plays the move (the first copy in hand of identical cards), as the engine speaks."""
        budget = self._budget(max_nodes, max_seconds)
        _check_row(rows, row)
        order = self._row_order(rows, row, budget)
        return self._run(budget, lambda: self._best_move(rows, row, budget, order))

    def _best_move(self, rows: Batch, row: int, budget: _Budget, order: np.ndarray | None) -> tuple[int, int]:
        value = self._search_row(rows, row, -1, 1, budget, order)
        keys, data = self._table
        key = root_key(self._workers[0].board.arrays, int(rows.info[row, TO_MOVE]))  # the board is back at the root
        bucket = int(key & np.uint64(keys.shape[0] - 2))
        action = -1
        for slot in (bucket, bucket + 1):
            entry = data[slot]
            if keys[slot] ^ entry == key:
                action = int(_field(entry, 4, 9)) - 1
                break
        if action < 0:  # searched without the table (few empty tiles): take the first move that does it
            moves = _distinct_actions(rows, row)
            action = next(a for a in moves if self._action_value(rows, row, a, value, budget) >= value)
        return value, action

    def _action_value(
        self, rows: Batch, row: int, action: int, value: int, budget: _Budget, order: np.ndarray | None = None
    ) -> int:
        """The value of ``action`` in game ``row`` for the mover if it is at least ``value``; otherwise something
        lower. The child is made by the fast engine's own kernel; ``order``: its move order (hints), if any."""
        child = Batch(*(array[row : row + 1].copy() for array in rows))
        mover = int(rows.info[row, TO_MOVE])
        apply_action(child.decks, child.status, child.sides, child.owner, child.marks, child.info, 0, action)
        if child.info[0, PHASE] == OVER:
            winner = int(child.info[0, WINNER])
            return 0 if winner == -1 else (1 if winner == mover else -1)
        if value == -1:
            return -1  # every move achieves a loss
        if int(child.info[0, TO_MOVE]) == mover:  # the opponent has to pass
            return self._search_row(child, 0, value - 1, value + 1, budget, order)
        # a null window around `value`: is this move as good as the best one?
        return -self._search_row(child, 0, -value - 1, -value + 1, budget, order)

    def solve(self, state: GameState, *, max_nodes: int | None = None, max_seconds: float | None = None) -> Solution:
        """The value of ``state`` and every move that achieves it; the budget covers both."""
        budget = self._budget(max_nodes, max_seconds)
        _check(state)
        hints = self._hints(state, budget)
        return self._run(budget, lambda: self._solve(state, budget, hints))

    def _solve(self, state: GameState, budget: _Budget, hints: _Hints | None) -> Solution:
        mover = state.to_move
        value = self._search(state, -1, 1, budget, None if hints is None else hints.order(0, state))
        rows, deck, best = _rows(state), state.decks[mover], []
        for action in _distinct_actions(rows, 0):  # GameState.legal_moves, in its order
            card, tile = divmod(action - PLACE_OFFSET, TILES)
            move = Move(deck[card], tile)
            order = None if hints is None else hints.order(hints.child(0, state, move), state.play(move))
            if self._action_value(rows, 0, action, value, budget, order) >= value:
                best.append(move)
        winner = None if value == 0 else (mover if value == 1 else 1 - mover)
        return Solution(winner, value, best, budget.searched, budget.seconds)


def _rows(state: GameState) -> Batch:
    """``state`` as a fast-engine batch of one game: the rows the solver's board is loaded from."""
    rows = Batch.empty(1)
    write_state(rows, 0, state)
    return rows


def _distinct_actions(rows: Batch, row: int) -> list[int]:
    """The mover's placements in game ``row``, one per distinct card in hand (its first copy) and empty tile, in
    action order: ``GameState.legal_moves`` as action ids."""
    mover = int(rows.info[row, TO_MOVE])
    empty = np.flatnonzero(rows.owner[row] == -1)
    cards: set[tuple[int, ...]] = set()
    actions = []
    for i in np.flatnonzero(rows.status[row, mover] == IN_HAND):
        sides = tuple(int(v) for v in rows.decks[row, mover, i])
        if sides not in cards:
            cards.add(sides)
            actions += [PLACE_OFFSET + TILES * int(i) + int(t) for t in empty]
    return sorted(actions)


def _check_row(rows: Batch, row: int, over_ok: bool = False) -> bool:
    """``_check`` for game ``row`` of a fast-engine batch; whether that game is over."""
    if not isinstance(rows, Batch):
        raise ArgumentError(f"the solver needs a fast-engine Batch, got {type(rows).__name__}")
    if isinstance(row, bool) or not isinstance(row, int | np.integer) or not 0 <= row < rows.size:
        raise ArgumentError(f"row must be an index into the batch's {rows.size} games, got {row!r}")
    phase = int(rows.info[row, PHASE])
    if phase == DRAFT:
        raise PositionError("the solver needs a play-phase position (both hands known), not a draft")
    if phase == OVER:
        if not over_ok:
            raise PositionError("the game is over: there is no move to solve")
        return True
    if not (rows.status[row, int(rows.info[row, TO_MOVE])] == IN_HAND).any() or not (rows.owner[row] == -1).any():
        raise PositionError("the player to move has no legal move: there is nothing to solve")
    return False


def _check(state: GameState, over_ok: bool = False) -> None:
    if not isinstance(state, GameState):
        raise ArgumentError(f"the solver needs a GameState, got {type(state).__name__}")
    if state.phase == Phase.DRAFT:
        raise PositionError("the solver needs a play-phase position (both hands known), not a draft")
    if state.is_over:
        if not over_ok:
            raise PositionError("the game is over: there is no move to solve")
    elif not state.legal_actions():
        raise PositionError("the player to move has no legal move: there is nothing to solve")
