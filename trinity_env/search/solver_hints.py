"""Move hints for the exact solver: a Monte Carlo search of a large query's root.

Alpha-beta spends most of a large search refuting the moves it tries before a winning one,
and there no cheap feature tells the winning moves apart; random playouts mostly do
(docs/agents.md has what they save). A query whose root has ``HINT_MIN_EMPTY`` empty tiles
or more first runs ``_Hints`` (30,000 random playouts, ``_hint_simulations``): its visits
order the root's moves, and ``plant_hints`` makes its most visited lines the table's first
moves. Neither changes a value.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from trinity_env.core import GameState, Move
from trinity_env.core.board import EMPTY
from trinity_env.core.position import IN_HAND
from trinity_env.fast.convert import write_state
from trinity_env.fast.layout import Batch
from trinity_env.search.bitboard import POPCOUNT, place_action, take_back_action
from trinity_env.search.mcts import BRANCHING, Tree, run_search, search_rows
from trinity_env.search.solver_kernel import LOWER, LOWEST_BIT, MAX_DEPTH, TABLE_MIN_EMPTY, _key, _store

HINT_MIN_EMPTY = 11  # a query's root with this many empty tiles gets its move order from a Monte Carlo search
HINT_SIMULATIONS = 30_000  # that search's simulations (fewer under a small node budget, see ``_hint_simulations``)
HINT_NODES_PER_SIMULATION = 100  # under ``max_nodes``, at most one simulation per this many nodes of the budget
HINT_MIN_SHARE = 0.1  # nodes of its tree with this share of the root's visits give the table a first move
HINT_MIN_SECONDS = 1.0  # under a ``max_seconds`` below this, no hints: their ~0.2 s (more on a busy machine) would
# eat the budget, and the clock does not stop them
HINT_C = 1.4  # its exploration constant (UCB1)
HINT_ORDER = 100_000_000  # the ordering score of the root's most visited move (above the killers)


@njit(cache=True)
def plant_hints(board, table, action, player, first_child, children, visits, min_visits):
    """For each node of a Monte Carlo tree (rooted at the position on ``board``) visited at
    least ``min_visits`` times, store its most visited move as the table's move for its
    position, unless the table holds that position already. Returns how many were stored.

    A hint is stored as a lower bound of -1: always true, so it never cuts anything off;
    it only makes that move the first one searched there.
    """
    own, hand, copies = board[0], board[1], board[6]
    keys, data = table
    node_at = np.zeros(MAX_DEPTH + 1, np.int64)
    next_at = np.zeros(MAX_DEPTH + 1, np.int64)
    flipped_at = np.zeros(MAX_DEPTH + 1, np.int64)
    planted = 0
    d = 0
    next_at[0] = first_child[0]
    entered = True
    while d >= 0:
        n = node_at[d]
        if entered:  # node n's position is on the board
            entered = False
            empty = 15 - POPCOUNT[own[0] | own[1]]
            if children[n] > 0 and empty >= TABLE_MIN_EMPTY:
                best = first_child[n]
                for c in range(first_child[n], first_child[n] + children[n]):
                    if visits[c] > visits[best]:
                        best = c
                q = np.int64(player[best])
                i = (np.int64(action[best]) - 16) // 15
                i = LOWEST_BIT[hand[q] & (copies[q, i] | (1 << i))]  # the card's first copy in hand
                k = _key(board, q)
                bucket = np.int64(k & np.uint64(keys.shape[0] - 2))
                if keys[bucket] ^ data[bucket] != k and keys[bucket + 1] ^ data[bucket + 1] != k:
                    _store(keys, data, bucket, k, -1, LOWER, 16 + 15 * i + (np.int64(action[best]) - 16) % 15, empty)
                    planted += 1
        c = next_at[d]
        if children[n] > 0 and c < first_child[n] + children[n] and d < MAX_DEPTH:
            next_at[d] = c + 1
            if visits[c] >= min_visits and children[c] > 0:
                flipped_at[d] = place_action(board, np.int64(player[c]), np.int64(action[c]))
                d += 1
                node_at[d] = c
                next_at[d] = first_child[c]
                entered = True
        else:  # node n is done: back to its parent
            if d > 0:
                take_back_action(board, np.int64(player[n]), np.int64(action[n]), flipped_at[d - 1])
            d -= 1
    return planted


def _hint_simulations(state: GameState, most: int, max_nodes: int | None, max_seconds: float | None = None) -> int:
    """How many simulations the Monte Carlo search for move hints runs from ``state``: none
    below ``HINT_MIN_EMPTY`` empty tiles or under a time budget below ``HINT_MIN_SECONDS``,
    a third of ``most`` at exactly that many empty tiles (there the search costs less and
    gains less), else ``most``; under a node budget, at most one per
    ``HINT_NODES_PER_SIMULATION`` nodes of it; none when that comes to under 1000."""
    empty = state.owners.count(EMPTY)
    if empty < HINT_MIN_EMPTY or (max_seconds is not None and max_seconds < HINT_MIN_SECONDS):
        return 0
    simulations = most // 3 if empty == HINT_MIN_EMPTY else most
    if max_nodes is not None:
        simulations = min(simulations, max_nodes // HINT_NODES_PER_SIMULATION)
    return simulations if simulations >= 1000 else 0


class _Hints:
    """A Monte Carlo search (UCT with random playouts, ``search.mcts``) of a query's root.

    Alpha-beta spends most of a large search refuting the moves it tries before a winning
    one, and at 11 or 12 empty tiles no cheap feature tells the winning moves apart (most
    flip nothing and threaten nothing). A few tens of thousands of random playouts do: on
    the benchmark's positions the most visited move is mostly a winning one. Its visits
    order the root's moves and its best-visited lines give the table first moves; neither
    changes a value. The seed is fixed, so the order, and a node-budgeted search, are the
    same on every run.
    """

    def __init__(self, state: GameState, simulations: int):
        position = Batch.empty(1)
        write_state(position, 0, state)
        rows = search_rows(position)
        self.tree = Tree(simulations * BRANCHING + 512)
        self.tree.clear(1 - state.to_move)  # the root's "player" is whoever moved into it
        rng = np.random.default_rng(0).integers(1, 2**63, 2, dtype=np.uint64)
        run_search(rows, 0, simulations, HINT_C, 0.0, rng, self.tree)

    def _children(self, node: int) -> range:
        first = int(self.tree.first_child[node])
        return range(first, first + int(self.tree.children[node])) if node >= 0 and first >= 0 else range(0)

    def child(self, node: int, state: GameState, move: Move) -> int:
        """The most visited child of ``node`` (at ``state``) that plays ``move``, or -1."""
        deck = state.decks[state.to_move]
        found, visits = -1, -1
        for k in self._children(node):
            i, t = divmod(int(self.tree.action[k]) - 16, 15)
            if deck[i] == move.card and t == move.tile and self.tree.visits[k] > visits:
                found, visits = k, int(self.tree.visits[k])
        return found

    def order(self, node: int, state: GameState) -> np.ndarray | None:
        """Ordering scores per action for ``state`` (node ``node``'s position): its children's
        visits, the most visited scaled to ``HINT_ORDER``, each counted on the first copy in
        hand of its card (the one the search plays); ``None`` for a node never expanded."""
        children = self._children(node)
        if not children:
            return None
        p = state.to_move
        deck = state.decks[p]
        first_copy: dict[str, int] = {}
        for i, status in enumerate(state.status[p]):
            if status == IN_HAND:
                first_copy.setdefault(deck[i].notation, i)
        visits = np.zeros(256, np.int64)
        for k in children:
            i, t = divmod(int(self.tree.action[k]) - 16, 15)
            visits[16 + 15 * first_copy[deck[i].notation] + t] += int(self.tree.visits[k])
        return visits * HINT_ORDER // max(1, int(visits.max()))


def hints_for(
    state: GameState, most: int, max_nodes: int | None, worker, table, max_seconds: float | None = None
) -> _Hints | None:
    """The move hints of a query's root (``_Hints``, with ``_hint_simulations``'s
    simulations), or ``None`` where it is too small for them to pay; their most visited
    lines are planted in ``table`` (``plant_hints``) from ``worker``'s board (a
    ``solver_budget._Worker``, loaded here with ``state``)."""
    simulations = _hint_simulations(state, most, max_nodes, max_seconds)
    if simulations == 0:
        return None
    hints = _Hints(state, simulations)
    worker.load(state)
    tree = hints.tree
    min_visits = max(1, int(HINT_MIN_SHARE * tree.visits[0]))
    plant_hints(
        worker.board.arrays,
        table,
        tree.action,
        tree.player,
        tree.first_child,
        tree.children,
        tree.visits,
        min_visits,
    )
    return hints
