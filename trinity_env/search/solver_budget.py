"""The exact solver's budgets and threads: each query's node counters and deadline, and the
search threads that share the transposition table.

The kernel (``solver_kernel.negamax``) runs without the GIL in a worker thread while the
calling thread waits in short steps, so Ctrl-C (``KeyboardInterrupt``) and the clock are
honoured within a fraction of a second: the waiting thread raises the kernel's stop flag,
and the search unwinds without storing anything from the nodes it had not finished.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from trinity_env.core import ArgumentError, GameState
from trinity_env.core.board import EMPTY
from trinity_env.core.errors import BudgetExhausted
from trinity_env.fast.convert import write_state
from trinity_env.fast.layout import TO_MOVE, Batch
from trinity_env.search import bitboard
from trinity_env.search.bitboard import Board
from trinity_env.search.solver_kernel import FRAME_COLUMNS, MAX_DEPTH, MAX_THREATS, negamax

NO_LIMIT = np.iinfo(np.int64).max
PARALLEL_MIN_EMPTY = 9  # smaller positions are searched by one thread: starting another costs more
WAIT_STEP = 0.1  # seconds the calling thread waits between looks at the clock and for Ctrl-C
PROGRESS_EVERY = 1.0  # seconds between calls of a solver's ``progress``
T = TypeVar("T")


class SolverBudgetError(BudgetExhausted):
    """A search that ran out of its budget (``max_nodes`` or ``max_seconds``) before it finished.

    ``nodes`` and ``seconds`` are what the call spent; ``max_nodes`` and ``max_seconds`` its budget.
    """

    def __init__(self, nodes: int, seconds: float, max_nodes: int | None = None, max_seconds: float | None = None):
        self.nodes = nodes
        self.seconds = seconds
        self.max_nodes = max_nodes
        self.max_seconds = max_seconds
        shown = f"{seconds:.1f}" if seconds >= 0.1 else f"{seconds:.3f}"
        super().__init__(f"not solved within the budget ({nodes:,} nodes, {shown} s)")

    def __reduce__(self):
        return type(self), (self.nodes, self.seconds, self.max_nodes, self.max_seconds)


class _Worker:
    """What one search thread owns: its board, move lists, ordering and the threats per depth."""

    def __init__(self, seed: int = 0):
        self.rows = Batch.empty(1)  # the position as the fast engine's row, loaded onto the board
        self.board = Board()
        self.moves = np.zeros((MAX_DEPTH + 1, 256), np.int64)
        self.scores = np.zeros((MAX_DEPTH + 1, 256), np.int64)
        # a helper thread starts with a different history, so it orders equal-capture moves
        # differently and reaches other parts of the tree first (as in "lazy SMP" chess engines)
        self.history = np.random.default_rng(seed).integers(0, 500_000, 256) if seed else np.zeros(256, np.int64)
        self.killers = np.full((MAX_DEPTH + 1, 2), -1, np.int64)
        self.tiles = np.zeros((MAX_DEPTH + 1, MAX_THREATS), np.int64)
        self.lanes = np.zeros((MAX_DEPTH + 1, MAX_THREATS), np.int64)
        self.frames = np.zeros((MAX_DEPTH + 1, FRAME_COLUMNS), np.int64)
        self.root_order = np.zeros(256, np.int64)

    def load(self, state: GameState) -> None:
        write_state(self.rows, 0, state)
        self.load_row(self.rows, 0)

    def load_row(self, rows: Batch, row: int) -> None:
        """Game ``row`` of a fast-engine batch onto the board, straight from the engine's arrays."""
        bitboard.load(rows.decks, rows.status, rows.sides, rows.owner, row, *self.board.arrays)


class _Budget:
    """One call's budget: a node counter per search thread (see ``negamax``) and the deadline.

    A node budget is counted by one thread (the solver searches alone under it), so it gives
    the same outcome on every machine.
    """

    def __init__(
        self,
        max_nodes: int | None,
        max_seconds: float | None,
        threads: int = 1,
        progress: Callable[[int, float], None] | None = None,
    ):
        if max_nodes is not None and (
            isinstance(max_nodes, bool | np.bool_) or not isinstance(max_nodes, int | np.integer) or max_nodes <= 0
        ):
            raise ArgumentError(f"max_nodes must be a positive int or None, got {max_nodes!r}")
        if max_seconds is not None and (
            isinstance(max_seconds, bool | np.bool_)
            or not isinstance(max_seconds, int | float | np.integer | np.floating)
            or not math.isfinite(max_seconds)
            or max_seconds <= 0
        ):
            raise ArgumentError(f"max_seconds must be a finite number of seconds > 0 or None, got {max_seconds!r}")
        self.max_nodes = None if max_nodes is None else int(max_nodes)
        self.max_seconds = None if max_seconds is None else float(max_seconds)
        self.start = time.perf_counter()
        self.deadline = None if max_seconds is None else self.start + self.max_seconds
        self.limit = NO_LIMIT if max_nodes is None else min(int(max_nodes), NO_LIMIT)
        self.threads = 1 if max_nodes is not None else threads
        self.nodes = [np.array([0, self.limit, 0], np.int64) for _ in range(self.threads)]
        self.cancelled = False
        self.progress = progress

    @property
    def searched(self) -> int:
        """Nodes searched: a stopped search counted the node it refused."""
        return int(sum(n[0] - n[2] for n in self.nodes))

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start

    def stop(self) -> None:
        """Stop the running searches (from another thread) and every later one of this call."""
        self.cancelled = True
        for nodes in self.nodes:
            nodes[1] = -1

    def _failed(self) -> SolverBudgetError:
        return SolverBudgetError(self.searched, self.seconds, self.max_nodes, self.max_seconds)

    def search(
        self, workers: list[_Worker], table, rows: Batch, row: int, alpha: int, beta: int, order: np.ndarray | None
    ) -> int:
        """The value of game ``row`` of ``rows`` (a fast-engine batch) in the window, by ``negamax`` in each
        worker's thread at once; the first to finish gives it and stops the others. ``SolverBudgetError`` past the
        budget. ``order``: ordering scores of the root's moves (per action), or ``None``."""
        if self.cancelled:
            raise self._failed()
        mover = int(rows.info[row, TO_MOVE])
        count = min(self.threads, len(workers)) if int((rows.owner[row] == EMPTY).sum()) >= PARALLEL_MIN_EMPTY else 1
        for worker in workers[:count]:
            worker.load_row(rows, row)
            worker.root_order[:] = 0 if order is None else order
        for nodes in self.nodes[:count]:
            nodes[1], nodes[2] = self.limit, 0
        if self.cancelled:  # stop() came while the limits were being reset: honour it
            raise self._failed()

        def one(k: int) -> int | None:
            w, nodes = workers[k], self.nodes[k]
            value = negamax(
                w.board.arrays,
                mover,
                alpha,
                beta,
                table,
                w.moves,
                w.scores,
                w.history,
                w.killers,
                w.tiles,
                w.lanes,
                w.frames,
                nodes,
                w.root_order,
            )
            if nodes[2] != 0:
                return None
            for other in self.nodes[:count]:  # the others stop: their answer would be the same
                if other is not nodes:
                    other[1] = -1
            return int(value)

        if count == 1:
            value = one(0)
        else:
            found: list[int | None] = [None] * count
            helpers = [threading.Thread(target=lambda k=k: found.__setitem__(k, one(k))) for k in range(1, count)]
            for helper in helpers:
                helper.start()
            found[0] = one(0)
            for helper in helpers:
                helper.join()
            value = next((v for v in found if v is not None), None)
        if value is None:
            raise self._failed()
        return value

    def run(self, work: Callable[[], T]) -> T:
        """``work()`` in a worker thread while this one waits in short steps: when the
        deadline passes, or on Ctrl-C (``KeyboardInterrupt``, re-raised once the worker has
        stopped), it stops the search. The kernel releases the GIL, so waiting costs it nothing."""
        outcome: list = []
        finished = threading.Event()

        def target() -> None:
            try:
                outcome.append((True, work()))
            except BaseException as exc:  # handed to the waiting thread
                outcome.append((False, exc))
            finally:
                finished.set()

        worker = threading.Thread(target=target, name="trinity-solver", daemon=True)
        reported = time.perf_counter()
        try:
            worker.start()
            while not finished.is_set():
                if self.progress is not None and time.perf_counter() - reported >= PROGRESS_EVERY:
                    reported = time.perf_counter()
                    self.progress(self.searched, self.seconds)
                step = WAIT_STEP
                if self.deadline is not None:
                    left = self.deadline - time.perf_counter()
                    if left <= 0:
                        self.stop()
                        break
                    step = min(step, left)
                finished.wait(step)
            finished.wait()
        except BaseException:  # KeyboardInterrupt: stop the search, let it unwind, re-raise
            self.stop()
            if worker.ident is not None:  # started
                finished.wait()
                worker.join()
            raise
        worker.join()
        ok, result = outcome[0]
        if not ok:
            raise result
        return result
