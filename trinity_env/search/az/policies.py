"""The searches a caller runs (mctx's ``policies.py``): ``BatchedSearch`` adds the root's noise (PUCT's Dirichlet,
Gumbel's draws), runs the simulation loop (``loop``) with one evaluation callback call per step, and reads the
result off the roots (``root_results``: visits, the improved policy, the action, the value)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import njit

from trinity_env.fast.layout import OVER, PHASE, Batch
from trinity_env.search.az.action_selection import GUMBEL, SearchMode, Selection
from trinity_env.search.az.loop import expand_backup, select_leaves, select_leaves_parallel, start_roots
from trinity_env.search.az.qtransforms import sigma
from trinity_env.search.az.seq_halving import considered_table
from trinity_env.search.az.tree import MAX_EDGES, Trees
from trinity_env.spec.observation import OBSERVATION_SIZE

BUCKET = 32
"""Leaf batches are padded to a multiple of this many positions (see ``BatchedSearch._evaluate``)."""

Evaluate = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
"""``evaluate(observations int8 [n, 339], masks int8 [n, 256]) -> (logits [n, 256], values [n])``."""


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
        sigma(g, 0, tree, scratch)
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


class SearchResult(NamedTuple):
    """What a search returns per game: ``visits`` [n, 256] (root visit counts by action; they sum to the
    simulations), ``policy`` [n, 256] (the improved policy, Gumbel's policy target), ``action`` [n]
    (-1 where the game is over), ``value`` [n] (the root's value for its player to move)."""

    visits: np.ndarray
    policy: np.ndarray
    action: np.ndarray
    value: np.ndarray


class BatchedSearch:
    """Searches of up to ``games`` positions in lockstep, ``simulations`` each (see ``trinity_env.search.az``).

    ``mode``: a ``SearchMode`` (or its text, ``"gumbel"`` or ``"puct"``); ``max_considered``: Gumbel's m;
    ``c_puct``: PUCT's exploration; ``open_hands``: the rules the leaves' observations follow (the network sees
    what the player to move at the leaf would see in that world); ``threads``: 1 descends the trees
    on one thread, more spreads the descents over numba's threads (``numba.set_num_threads``; the
    result is the same: each tree is independent).
    """

    def __init__(
        self,
        games: int,
        simulations: int,
        *,
        mode: SearchMode | str = SearchMode.GUMBEL,
        max_considered: int = 16,
        c_puct: float = 1.25,
        open_hands: bool = True,
        threads: int = 1,
    ):
        if games < 1 or simulations < 1:
            raise ValueError(f"a search needs games >= 1 and simulations >= 1, got {games} and {simulations}")
        if max_considered < 1:
            raise ValueError(f"max_considered must be at least 1, got {max_considered}")
        self.games, self.simulations = games, simulations
        self.mode, self.c_puct, self.open_hands = SearchMode.parse(mode), float(c_puct), bool(open_hands)
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
        if self.mode is SearchMode.GUMBEL and gumbel_scale > 0:
            trees.gumbel[:n] = gumbel_scale * _generator(rng).gumbel(size=(n, MAX_EDGES))
        if self.mode is SearchMode.PUCT and noise_alpha > 0 and noise_fraction > 0:
            noise = _generator(rng).gamma(noise_alpha, size=(n, MAX_EDGES))
            add_root_noise(n, active, noise, noise_fraction, trees.num_edges, trees.edge_prior)
        selection = Selection(self.mode.code, self.c_puct, self.table, num_considered, trees.gumbel)
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
