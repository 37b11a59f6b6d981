"""UCT Monte Carlo tree search with random rollouts, compiled with numba.

The tree lives in flat arrays (one entry per node) so a search never allocates per
simulation. Row 0 of the batch holds the root position; row 1 is the simulation's working
copy. Each simulation walks down by UCB1, expands a leaf (all its children at once),
plays the rest of the game at random and credits every node on the path with a win, a
draw (half) or a loss for the player who made that node's move.

``run_search`` runs a search in chunks of simulations that each return to Python, so a
search of millions of simulations still stops on Ctrl-C within a fraction of a second.
The chunks change nothing else: the random streams and the tree live in arrays that carry
over from one chunk to the next, so a seed gives the same tree as one long kernel call.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from trinity_env.fast import kernels
from trinity_env.fast.layout import DRAFT, IN_HAND, OVER, PHASE, TO_MOVE, WINNER, Batch

BRANCHING = 64  # children expected per expansion, to size the tree


class Tree:
    """Node arrays with room for ``capacity`` nodes."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.action = np.zeros(capacity, np.int16)
        self.player = np.zeros(capacity, np.int8)  # who made the move into the node
        self.first_child = np.full(capacity, -1, np.int32)
        self.children = np.zeros(capacity, np.int16)
        self.visits = np.zeros(capacity, np.int32)
        self.wins = np.zeros(capacity, np.float32)
        self.size = np.zeros(1, np.int64)

    def arrays(self):
        return self.action, self.player, self.first_child, self.children, self.visits, self.wins, self.size

    def clear(self, root_player: int) -> None:
        self.size[0] = 1
        self.first_child[0] = -1
        self.children[0] = 0
        self.visits[0] = 0
        self.wins[0] = 0
        self.player[0] = root_player


def search_rows(position: Batch) -> Batch:
    """The two batch rows a search runs on: the position (row 0) and a working copy (row 1)."""
    rows = Batch.empty(2)
    for target, source in zip(rows, position):
        target[:] = source[0]
    return rows


@njit(cache=True)
def _expand(decks, status, owner, info, node, action, player, first_child, children, visits, wins, size, buffer):
    """Give ``node`` (at row 1's position) one child per legal action; False when the tree is full."""
    n = kernels.legal_actions(decks, status, owner, info, 1, buffer)
    start = size[0]
    if start + n > action.shape[0]:
        return False
    mover = info[1, TO_MOVE]
    for j in range(n):
        c = start + j
        action[c] = buffer[j]
        player[c] = mover
        first_child[c] = -1
        children[c] = 0
        visits[c] = 0
        wins[c] = 0.0
    first_child[node] = start
    children[node] = n
    size[0] = start + n
    return True


@njit(cache=True)
def rollout_placement(decks, status, sides, owner, info, b, rng, buffer, greed):
    """A rollout placement ``(card, tile)``, in play: with probability ``greed`` one of the
    placements that capture the most cards right now (uniformly among them), otherwise a
    uniformly random one.

    Purely random rollouts miss that a card left next to a stronger one will be taken;
    a little greed makes the rollouts' results track the tactics of real play.
    """
    if kernels.random_below(rng, b, 1000) >= greed * 1000:
        return kernels.random_placement(status, owner, info, b, rng, buffer)
    p = info[b, TO_MOVE]
    best = -1
    count = 0
    for i in range(16):
        if status[b, p, i] != IN_HAND:
            continue
        for t in range(15):
            if owner[b, t] != -1:
                continue
            captures, _ = kernels.direct_captures(decks, sides, owner, b, p, i, t)
            if captures > best:
                best = captures
                count = 0
            if captures == best:
                buffer[count] = 15 * i + t
                count += 1
    chosen = buffer[kernels.random_below(rng, b, count)]
    return chosen // 15, chosen % 15


@njit(cache=True)
def search(
    decks,
    status,
    sides,
    owner,
    marks,
    info,
    root,
    simulations,
    c,
    greed,
    rng,
    action,
    player,
    first_child,
    children,
    visits,
    wins,
    size,
):
    """Run ``simulations`` simulations from ``root`` (its position in row 0); ``greed``: see ``rollout_placement``."""
    buffer = np.empty(256, np.int64)
    path = np.empty(64, np.int64)
    for _ in range(simulations):
        kernels.copy_row(status, sides, owner, info, 0, 1)
        node = root
        depth = 0
        path[0] = node
        # selection
        while children[node] > 0 and info[1, PHASE] != OVER:
            parent_log = np.log(visits[node] + 1.0)
            best = -1.0
            chosen = first_child[node]
            for k in range(first_child[node], first_child[node] + children[node]):
                if visits[k] == 0:
                    chosen = k
                    break
                score = wins[k] / visits[k] + c * np.sqrt(parent_log / visits[k])
                if score > best:
                    best = score
                    chosen = k
            node = chosen
            # action ids as int64, as the rollout's: an int16 argument would compile apply_action a second time
            kernels.apply_action(decks, status, sides, owner, marks, info, 1, np.int64(action[node]))
            depth += 1
            path[depth] = node
        # expansion: a leaf seen before gets its children, and the walk goes one step further
        expandable = info[1, PHASE] != OVER and (visits[node] > 0 or node == root) and children[node] == 0
        if expandable and _expand(
            decks, status, owner, info, node, action, player, first_child, children, visits, wins, size, buffer
        ):
            node = first_child[node] + np.int64(kernels.random_below(rng, 1, children[node]))
            kernels.apply_action(decks, status, sides, owner, marks, info, 1, np.int64(action[node]))
            depth += 1
            path[depth] = node
        # rollout: draft picks uniformly at random, then placements (see ``rollout_placement``)
        while info[1, PHASE] == DRAFT:
            kernels.pick(decks, status, marks, info, 1, kernels.random_pick(decks, status, info, 1, rng, buffer))
        while info[1, PHASE] != OVER:
            card, tile = rollout_placement(decks, status, sides, owner, info, 1, rng, buffer, greed)
            kernels.place(decks, status, sides, owner, marks, info, 1, card, tile)
        winner = info[1, WINNER]
        for k in range(depth + 1):
            n = path[k]
            visits[n] += 1
            if winner == -1:
                wins[n] += 0.5
            elif winner == player[n]:
                wins[n] += 1.0


CHUNK_SECONDS = 0.05  # about how long each kernel call of ``run_search`` runs
FIRST_CHUNK = 1024
MAX_CHUNK = 1 << 20


def run_search(rows, root: int, simulations: int, c: float, greed: float, rng: np.ndarray, tree: Tree) -> None:
    """``search`` with ``simulations`` split into chunks of about ``CHUNK_SECONDS`` each.

    Between chunks Python runs, so a ``KeyboardInterrupt`` (Ctrl-C) arrives at once; the
    chunk sizes adapt to the machine's speed and do not change the result.
    """
    arrays = tree.arrays()
    chunk = FIRST_CHUNK
    done = 0
    while done < simulations:
        count = min(chunk, simulations - done)
        start = time.perf_counter()
        search(*rows, root, count, c, greed, rng, *arrays)
        elapsed = time.perf_counter() - start
        done += count
        if count == chunk:
            if elapsed < CHUNK_SECONDS / 2:
                chunk = min(2 * chunk, MAX_CHUNK)
            elif elapsed > 2 * CHUNK_SECONDS:
                chunk = max(chunk // 2, 64)


@njit(cache=True)
def child_with_action(first_child, children, action, node, wanted):
    """The child of ``node`` reached by ``wanted``, or -1."""
    for k in range(first_child[node], first_child[node] + children[node]):
        if action[k] == wanted:
            return k
    return -1
