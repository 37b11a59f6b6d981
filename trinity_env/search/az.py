"""Batched network-guided tree search on the fast engine: AlphaZero's PUCT and Gumbel root search.

Many games' trees advance in lockstep, as in mctx: every tree lives in fixed-size arrays
(``Trees``: per node its visits, value sum, network value, player to move, parent and up to
``MAX_EDGES`` edges with their action, prior and child), and one *simulation step* runs, for
all games at once, (1) ``select_leaves``: from each root row, copy the root position to a
scratch row and walk down, replaying the chosen actions with ``kernels.apply_action``, until
an edge without a node: the new node is the leaf, and its observation and legal mask are
written out; (2) ONE call of the evaluation callback on all those leaves (a batched forward
pass of the network: ``evaluate(observations int8 [n, 339], masks int8 [n, 256]) -> (logits
[n, 256], values [n])``); (3) ``expand_backup``: the leaves get their edges (priors from the
logits, softmax over the legal actions) and every node on the path its visit and value.
A leaf where the game is over is not evaluated: its value is the true result.

Values are kept by player, never by depth: a node's value sum is from the point of view of
the player who moved into it (the parent's player to move), and a leaf's value is credited
to each node on the path with the sign of that node's player. The pass rule (a player with
no card passes, so one player may move twice) needs nothing more.

Root selection is ``"puct"`` (AlphaZero: ``Q + c * P * sqrt(N) / (1 + n)``, Dirichlet noise
mixed into the root priors in self-play) or ``"gumbel"`` (Danihelka et al., ICLR 2022, after
mctx's ``gumbel_muzero_policy``): Gumbel-top-k sampling of ``max_considered`` root actions,
sequential halving of the simulation budget among them, completed Q-values with the mixed
value approximation for the improved policy ``softmax(logits + sigma(completed Q))``, and
deterministic interior selection that matches that policy's visit distribution. With
``gumbel_scale=0`` the search is deterministic (play); with 1 it samples (self-play).

The search takes positions as fast-engine rows; it never decides what a seat may see:
callers build the roots from a seat's observation (``trinity_env.agents.view``). No torch
here: the network comes in as a plain numpy callback.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from trinity_env.fast import kernels
from trinity_env.fast.layout import OVER, PHASE, TO_MOVE, WINNER, Batch
from trinity_env.spec.observation import (
    OBSERVATION_SIZE,
)

MAX_EDGES = 120
"""The most legal actions a position has: 8 cards in hand times 15 empty tiles (a draft has at most 16)."""
MODES = ("puct", "gumbel")
PUCT, GUMBEL = 0, 1
NOT_OVER = -2
"""``Trees.winner`` of a node where the game goes on (-1: a draw, 0 or 1: the winner)."""
MAXVISIT_INIT = 50.0
VALUE_SCALE = 0.1
"""sigma(q) = (MAXVISIT_INIT + max visits) * VALUE_SCALE * q, q rescaled to [0, 1] (mctx's defaults)."""

BUCKET = 32
"""Leaf batches are padded to a multiple of this many positions (see ``BatchedSearch._evaluate``)."""

Evaluate = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def considered_visits(max_considered: int, simulations: int) -> tuple[int, ...]:
    """Sequential halving's schedule (mctx's ``get_sequence_of_considered_visits``): for each simulation,
    the visit count an action must have to be considered next."""
    if max_considered <= 1:
        return tuple(range(simulations))
    log2max = math.ceil(math.log2(max_considered))
    sequence: list[int] = []
    visits = [0] * max_considered
    considered = max_considered
    while len(sequence) < simulations:
        extra = max(1, int(simulations / (log2max * considered)))
        for _ in range(extra):
            sequence.extend(visits[:considered])
            for i in range(considered):
                visits[i] += 1
        considered = max(2, considered // 2)
    return tuple(sequence[:simulations])


def considered_table(max_considered: int, simulations: int) -> np.ndarray:
    """``table[m, k]``: the schedule for ``m`` considered actions at simulation ``k`` (int32)."""
    table = np.zeros((max_considered + 1, max(simulations, 1)), np.int32)
    for m in range(max_considered + 1):
        table[m, :simulations] = considered_visits(m, simulations)
    return table


class TreeArrays(NamedTuple):
    """The node arrays of ``Trees``, as one value the kernels take (indexed ``[game, node]``, the edges'
    ``[game, node, edge]``)."""

    visits: np.ndarray
    value_sum: np.ndarray
    raw_value: np.ndarray
    to_move: np.ndarray
    perspective: np.ndarray
    winner: np.ndarray
    parent: np.ndarray
    num_edges: np.ndarray
    edge_action: np.ndarray
    edge_logit: np.ndarray
    edge_prior: np.ndarray
    edge_child: np.ndarray
    size: np.ndarray
    leaf: np.ndarray


class Selection(NamedTuple):
    """How a descent chooses its edges: ``mode`` (``PUCT`` or ``GUMBEL``), PUCT's ``c_puct``, Gumbel's
    sequential-halving ``table`` (``considered_table``), each root's ``num_considered`` actions and its
    ``gumbel`` draws by edge."""

    mode: int
    c_puct: float
    table: np.ndarray
    num_considered: np.ndarray
    gumbel: np.ndarray


class Trees:
    """The trees of ``games`` searches, room for ``capacity`` nodes each (one per simulation, plus the root)."""

    def __init__(self, games: int, capacity: int):
        self.games, self.capacity = games, capacity
        g, n, e = games, capacity, MAX_EDGES
        self.visits = np.zeros((g, n), np.int32)
        self.value_sum = np.zeros((g, n), np.float32)  # for the player who moved into the node
        self.raw_value = np.zeros((g, n), np.float32)  # the network's value, for the node's player to move
        self.to_move = np.zeros((g, n), np.int8)
        self.perspective = np.zeros((g, n), np.int8)  # the player whose point of view value_sum takes
        self.winner = np.full((g, n), NOT_OVER, np.int8)
        self.parent = np.full((g, n), -1, np.int32)
        self.num_edges = np.zeros((g, n), np.int32)
        self.edge_action = np.zeros((g, n, e), np.int16)
        self.edge_logit = np.zeros((g, n, e), np.float32)  # log prior (normalised over the legal actions)
        self.edge_prior = np.zeros((g, n, e), np.float32)  # the prior PUCT uses (noised at the root in self-play)
        self.edge_child = np.full((g, n, e), -1, np.int32)
        self.size = np.zeros(g, np.int32)
        self.leaf = np.zeros(g, np.int32)
        self.gumbel = np.zeros((g, e), np.float32)

    def arrays(self) -> TreeArrays:
        return TreeArrays(*(getattr(self, name) for name in TreeArrays._fields))


# ---------------------------------------------------------------------------------------- kernels


@njit(cache=True)
def _sigma(g, node, tree, out):
    """mctx's ``qtransform_completed_by_mix_value`` at ``node``: sigma(completed Q) of each edge into ``out``.

    Returns the sum of the children's visits."""
    visits, value_sum, edge_child = tree.visits, tree.value_sum, tree.edge_child
    n = tree.num_edges[g, node]
    sum_n = 0
    max_n = 0
    sum_p = 0.0
    weighted = 0.0
    for e in range(n):
        c = edge_child[g, node, e]
        nv = visits[g, c] if c >= 0 else 0
        if nv > 0:
            p = max(math.exp(tree.edge_logit[g, node, e]), 1e-30)
            q = value_sum[g, c] / nv
            sum_p += p
            weighted += p * q
            sum_n += nv
            max_n = max(max_n, nv)
    raw = tree.raw_value[g, node]
    mixed = raw if sum_p == 0.0 else (raw + sum_n * weighted / sum_p) / (sum_n + 1)
    low = 1e9
    high = -1e9
    for e in range(n):
        c = edge_child[g, node, e]
        nv = visits[g, c] if c >= 0 else 0
        q = value_sum[g, c] / nv if nv > 0 else mixed
        out[e] = q
        low = min(low, q)
        high = max(high, q)
    scale = (MAXVISIT_INIT + max_n) * VALUE_SCALE / max(high - low, 1e-8)
    for e in range(n):
        out[e] = (out[e] - low) * scale
    return sum_n


@njit(cache=True)
def _select_edge(g, node, selection, tree, scratch):
    visits, value_sum, edge_logit, edge_child = tree.visits, tree.value_sum, tree.edge_logit, tree.edge_child
    n = tree.num_edges[g, node]
    best = 0
    best_score = -np.inf
    if selection.mode == GUMBEL:
        sum_n = _sigma(g, node, tree, scratch)
        if node == 0:  # sequential halving among the Gumbel-top-k actions
            wanted = selection.table[selection.num_considered[g], visits[g, 0] - 1]
            for e in range(n):
                c = edge_child[g, node, e]
                nv = visits[g, c] if c >= 0 else 0
                if nv != wanted:
                    continue
                score = selection.gumbel[g, e] + edge_logit[g, node, e] + scratch[e]
                if score > best_score:
                    best_score = score
                    best = e
            return best
        # interior: the action whose visit share lags most behind softmax(logits + sigma)
        top = -np.inf
        for e in range(n):
            scratch[e] += edge_logit[g, node, e]
            top = max(top, scratch[e])
        total = 0.0
        for e in range(n):
            scratch[e] = math.exp(scratch[e] - top)
            total += scratch[e]
        for e in range(n):
            c = edge_child[g, node, e]
            nv = visits[g, c] if c >= 0 else 0
            score = scratch[e] / total - nv / (1.0 + sum_n)
            if score > best_score:
                best_score = score
                best = e
        return best
    # PUCT; an unvisited child counts at the node's own network value (first-play urgency)
    root_term = selection.c_puct * math.sqrt(max(visits[g, node], 1))
    first_play = tree.raw_value[g, node]
    for e in range(n):
        c = edge_child[g, node, e]
        nv = visits[g, c] if c >= 0 else 0
        q = value_sum[g, c] / nv if nv > 0 else first_play
        score = q + root_term * tree.edge_prior[g, node, e] / (1.0 + nv)
        if score > best_score:
            best_score = score
            best = e
    return best


@njit(cache=True)
def _new_node(g, node, parent_node, to_move_now, tree):
    tree.visits[g, node] = 0
    tree.value_sum[g, node] = 0.0
    tree.num_edges[g, node] = 0
    tree.parent[g, node] = parent_node
    tree.to_move[g, node] = to_move_now
    tree.winner[g, node] = NOT_OVER
    tree.size[g] = node + 1


@njit(cache=True)
def _write_leaf(rows, s, g, open_hands, observations, masks, buffer):
    decks, status, sides, owner, _, info = rows
    kernels.observe(decks, status, sides, owner, info, s, np.int64(info[s, TO_MOVE]), open_hands, observations[g])
    kernels.legal_mask(decks, status, owner, info, s, masks[g], buffer)


@njit(cache=True)
def start_roots(rows, games, active, open_hands, observations, masks, need, tree):
    """Make each active game's root (row g of the ``Batch`` ``rows``) a fresh tree of one node, to be evaluated."""
    info = rows.info
    buffer = np.empty(256, np.int64)
    for g in range(games):
        need[g] = 0
        if not active[g]:
            continue
        p = info[g, TO_MOVE]
        _new_node(g, 0, -1, p, tree)
        tree.perspective[g, 0] = p
        tree.leaf[g] = 0
        if info[g, PHASE] == OVER:
            tree.winner[g, 0] = info[g, WINNER]
        else:
            _write_leaf(rows, g, g, open_hands, observations, masks, buffer)
            need[g] = 1


@njit(cache=True)
def _select_one(g, rows, games, open_hands, observations, masks, need, selection, tree, buffer, scratch):
    """One simulation's descent in game g: root row g, scratch row ``games + g``.

    Sets ``leaf[g]``; ``need[g] = 1`` where the leaf is to be evaluated (its observation and mask
    written to ``observations[g]``, ``masks[g]``), 0 where the game is over there."""
    decks, status, sides, owner, marks, info = rows
    winner, edge_child = tree.winner, tree.edge_child
    s = games + g
    kernels.copy_row(status, sides, owner, info, g, s)
    node = 0
    while True:
        e = _select_edge(g, node, selection, tree, scratch)
        kernels.apply_action(decks, status, sides, owner, marks, info, s, np.int64(tree.edge_action[g, node, e]))
        child = edge_child[g, node, e]
        if child < 0:
            child = tree.size[g]
            edge_child[g, node, e] = child
            _new_node(g, child, node, info[s, TO_MOVE], tree)
            tree.perspective[g, child] = tree.to_move[g, node]
            if info[s, PHASE] == OVER:
                winner[g, child] = info[s, WINNER]
            else:
                _write_leaf(rows, s, g, open_hands, observations, masks, buffer)
                need[g] = 1
            tree.leaf[g] = child
            break
        node = child
        if winner[g, node] != NOT_OVER:  # a finished game, reached again
            tree.leaf[g] = node
            break


@njit(cache=True)
def select_leaves(rows, games, active, open_hands, observations, masks, need, selection, tree):
    """One simulation's descent in every active game (``_select_one``), one thread."""
    buffer = np.empty(256, np.int64)
    scratch = np.empty(MAX_EDGES, np.float64)
    for g in range(games):
        need[g] = 0
        if active[g]:
            _select_one(g, rows, games, open_hands, observations, masks, need, selection, tree, buffer, scratch)


@njit(cache=True, parallel=True)
def select_leaves_parallel(rows, games, active, open_hands, observations, masks, need, selection, tree):
    """``select_leaves`` over numba's threads (games are independent: the result does not depend on them).

    The tuples go to ``_select_one`` whole: unpacked here, before the ``prange`` loop, numba 0.68 loses
    the writes made through them."""
    for g in prange(games):
        need[g] = 0
        if active[g]:
            buffer = np.empty(256, np.int64)
            scratch = np.empty(MAX_EDGES, np.float64)
            _select_one(g, rows, games, open_hands, observations, masks, need, selection, tree, buffer, scratch)


@njit(cache=True)
def expand_backup(games, active, need, masks, logits, values, tree):
    """Give each evaluated leaf its edges (softmax of ``logits[g]`` over ``masks[g]``) and back its value up."""
    edge_logit = tree.edge_logit
    for g in range(games):
        if not active[g]:
            continue
        node = tree.leaf[g]
        if need[g]:
            n = 0
            top = -np.inf
            for a in range(256):
                if masks[g, a]:
                    tree.edge_action[g, node, n] = a
                    edge_logit[g, node, n] = logits[g, a]
                    tree.edge_child[g, node, n] = -1
                    top = max(top, logits[g, a])
                    n += 1
            total = 0.0
            for e in range(n):
                total += math.exp(edge_logit[g, node, e] - top)
            shift = top + math.log(total)
            for e in range(n):
                edge_logit[g, node, e] -= shift
                tree.edge_prior[g, node, e] = math.exp(edge_logit[g, node, e])
            tree.num_edges[g, node] = n
            value = values[g]
            tree.raw_value[g, node] = value
            player = tree.to_move[g, node]
        else:
            w = tree.winner[g, node]
            player = 0
            value = 0.0 if w == -1 else (1.0 if w == 0 else -1.0)
        while node >= 0:
            tree.visits[g, node] += 1
            tree.value_sum[g, node] += value if tree.perspective[g, node] == player else -value
            node = tree.parent[g, node]


@njit(cache=True)
def add_root_noise(games, active, noise, fraction, num_edges, edge_prior):
    """Mix Dirichlet noise into the root priors: ``noise[g]`` holds Gamma(alpha) draws, normalised here."""
    for g in range(games):
        if not active[g]:
            continue
        n = num_edges[g, 0]
        total = 0.0
        for e in range(n):
            total += noise[g, e]
        if total <= 0:
            continue
        for e in range(n):
            edge_prior[g, 0, e] = (1 - fraction) * edge_prior[g, 0, e] + fraction * noise[g, e] / total


@njit(cache=True)
def root_results(games, active, selection, tree, out_visits, out_policy, out_action, out_value):
    """Per game: root visits by action, the improved policy ``softmax(logits + sigma(completed Q))``,
    the action (Gumbel: the best-scored of the most-visited considered actions; PUCT: the most
    visited, ties to the higher prior) and the root value for its player to move."""
    visits, edge_action, edge_logit, edge_child = tree.visits, tree.edge_action, tree.edge_logit, tree.edge_child
    scratch = np.empty(MAX_EDGES, np.float64)
    for g in range(games):
        out_visits[g] = 0
        out_policy[g] = 0
        out_action[g] = -1
        if not active[g]:
            continue
        out_value[g] = tree.value_sum[g, 0] / max(visits[g, 0], 1)
        n = tree.num_edges[g, 0]
        if n == 0:
            continue
        _sigma(g, 0, tree, scratch)
        most = 0
        for e in range(n):
            c = edge_child[g, 0, e]
            nv = visits[g, c] if c >= 0 else 0
            out_visits[g, edge_action[g, 0, e]] = nv
            most = max(most, nv)
        top = -np.inf
        for e in range(n):
            top = max(top, scratch[e] + edge_logit[g, 0, e])
        total = 0.0
        for e in range(n):
            total += math.exp(scratch[e] + edge_logit[g, 0, e] - top)
        best = -np.inf
        for e in range(n):
            out_policy[g, edge_action[g, 0, e]] = math.exp(scratch[e] + edge_logit[g, 0, e] - top) / total
            c = edge_child[g, 0, e]
            nv = visits[g, c] if c >= 0 else 0
            if nv != most:
                continue
            score = edge_logit[g, 0, e] + (selection.gumbel[g, e] + scratch[e] if selection.mode == GUMBEL else 0.0)
            if score > best:
                best = score
                out_action[g] = edge_action[g, 0, e]


# ---------------------------------------------------------------------------------------- the driver


class SearchResult(NamedTuple):
    """What a search returns per game: ``visits`` [n, 256] (root visit counts by action; they sum to the
    simulations), ``policy`` [n, 256] (the improved policy, Gumbel's policy target), ``action`` [n]
    (-1 where the game is over), ``value`` [n] (the root's value for its player to move)."""

    visits: np.ndarray
    policy: np.ndarray
    action: np.ndarray
    value: np.ndarray


class BatchedSearch:
    """Searches of up to ``games`` positions in lockstep, ``simulations`` each (see the module's docstring).

    ``mode``: ``"gumbel"`` or ``"puct"``; ``max_considered``: Gumbel's m; ``c_puct``: PUCT's
    exploration; ``open_hands``: the rules the leaves' observations follow (the network sees
    what the player to move at the leaf would see in that world); ``threads``: 1 descends the trees
    on one thread, more spreads the descents over numba's threads (``numba.set_num_threads``; the
    result is the same: each tree is independent).
    """

    def __init__(
        self,
        games: int,
        simulations: int,
        *,
        mode: str = "gumbel",
        max_considered: int = 16,
        c_puct: float = 1.25,
        open_hands: bool = True,
        threads: int = 1,
    ):
        if games < 1 or simulations < 1:
            raise ValueError(f"a search needs games >= 1 and simulations >= 1, got {games} and {simulations}")
        if mode not in MODES:
            raise ValueError(f"search mode must be one of {', '.join(MODES)}, got {mode!r}")
        if max_considered < 1:
            raise ValueError(f"max_considered must be at least 1, got {max_considered}")
        self.games, self.simulations = games, simulations
        self.mode, self.c_puct, self.open_hands = mode, float(c_puct), bool(open_hands)
        self.max_considered = min(max_considered, MAX_EDGES)
        self.trees = Trees(games, simulations + 1)
        self.rows = Batch.empty(2 * games)  # n roots in rows 0..n-1, each one's scratch row at n + g
        self.observations = np.zeros((games, OBSERVATION_SIZE), np.int8)
        self.masks = np.zeros((games, 256), np.int8)
        self.need = np.zeros(games, np.int8)
        self.table = considered_table(self.max_considered, simulations)
        self._logits = np.zeros((games, 256), np.float32)
        self._values = np.zeros(games, np.float32)
        self._select = select_leaves if threads <= 1 else select_leaves_parallel
        self.evaluations = 0
        """Leaves evaluated by the network so far (roots included)."""

    def run(
        self,
        roots: Batch,
        evaluate: Evaluate,
        rng: np.random.Generator | None = None,
        *,
        gumbel_scale: float = 0.0,
        noise_alpha: float = 0.0,
        noise_fraction: float = 0.0,
    ) -> SearchResult:
        """Search every row of ``roots`` (at most ``games``): ``simulations`` simulations each.

        ``gumbel_scale`` (Gumbel mode): 0 searches and chooses deterministically, 1 samples as in
        self-play. ``noise_alpha`` > 0 (PUCT mode): Dirichlet noise with that alpha, weight
        ``noise_fraction``, at the roots. ``rng`` draws both.
        """
        n = roots.size
        if not 1 <= n <= self.games:
            raise ValueError(f"this search holds 1 to {self.games} roots, got {n}")
        rows, trees = self.rows, self.trees
        for target, source in zip(rows, roots):
            target[:n] = source
        rows.decks[n : 2 * n] = roots.decks  # the kernels' scratch row of root g is n + g (run with n roots)
        active = (roots.info[:, PHASE] != OVER).astype(np.int8)
        tree = trees.arrays()
        start_roots(rows, n, active, self.open_hands, self.observations, self.masks, self.need, tree)
        self._evaluate(n, evaluate)
        expand_backup(n, active, self.need, self.masks, self._logits, self._values, tree)
        num_edges = trees.num_edges[:n, 0]
        num_considered = np.minimum(self.max_considered, num_edges).astype(np.int64)
        trees.gumbel[:n] = 0
        if self.mode == "gumbel" and gumbel_scale > 0:
            trees.gumbel[:n] = gumbel_scale * _generator(rng).gumbel(size=(n, MAX_EDGES))
        if self.mode == "puct" and noise_alpha > 0 and noise_fraction > 0:
            noise = _generator(rng).gamma(noise_alpha, size=(n, MAX_EDGES))
            add_root_noise(n, active, noise, noise_fraction, trees.num_edges, trees.edge_prior)
        mode = GUMBEL if self.mode == "gumbel" else PUCT
        selection = Selection(mode, self.c_puct, self.table, num_considered, trees.gumbel)
        for _ in range(self.simulations):
            self._select(rows, n, active, self.open_hands, self.observations, self.masks, self.need, selection, tree)
            self._evaluate(n, evaluate)
            expand_backup(n, active, self.need, self.masks, self._logits, self._values, tree)
        out = SearchResult(
            np.zeros((n, 256), np.int32), np.zeros((n, 256), np.float32), np.zeros(n, np.int64), np.zeros(n, np.float32)
        )
        root_results(n, active, selection, tree, *out)
        return out

    def _evaluate(self, n: int, evaluate: Evaluate) -> None:
        rows = np.flatnonzero(self.need[:n])
        if rows.size == 0:
            return
        # a few batch sizes only (multiples of BUCKET, padded with copies of a row): a new input shape
        # costs the network's backend a new kernel plan, and the number of leaves varies at every step
        size = min(n, -(-rows.size // BUCKET) * BUCKET) if rows.size > BUCKET // 2 else rows.size
        padded = np.concatenate([rows, np.full(size - rows.size, rows[0])]) if size > rows.size else rows
        logits, values = evaluate(self.observations[padded], self.masks[padded])
        self._logits[rows] = logits[: rows.size]
        self._values[rows] = values[: rows.size]
        self.evaluations += rows.size


def _generator(rng: np.random.Generator | None) -> np.random.Generator:
    return rng if rng is not None else np.random.default_rng()


def uniform_evaluate(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A network-free evaluation: uniform priors and value 0 (tests, benchmarks of the tree alone)."""
    return np.zeros(masks.shape, np.float32), np.zeros(masks.shape[0], np.float32)
