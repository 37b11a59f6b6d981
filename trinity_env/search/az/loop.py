"""One simulation step of every tree at once (mctx's ``search.py``: simulate, expand, backward), as compiled
kernels: ``start_roots`` makes each root a tree of one node; ``select_leaves`` descends every tree to a new
leaf, replaying the chosen actions on a scratch row, and writes out each leaf's observation and legal mask;
after the caller's one batched evaluation, ``expand_backup`` gives the leaves their edges and backs their
values up. A leaf where the game is over is not evaluated: its value is the true result.

Values are kept by player, never by depth: a node's value sum is from the point of view of the player who
moved into it, and a leaf's value is credited to each node on the path with the sign of that node's player.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from trinity_env.fast import kernels
from trinity_env.fast.layout import OVER, PHASE, TO_MOVE, WINNER
from trinity_env.search.az.action_selection import select_edge
from trinity_env.search.az.tree import MAX_EDGES, NOT_OVER, new_node


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
        new_node(g, 0, -1, p, tree)
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
        e = select_edge(g, node, selection, tree, scratch)
        kernels.apply_action(decks, status, sides, owner, marks, info, s, np.int64(tree.edge_action[g, node, e]))
        child = edge_child[g, node, e]
        if child < 0:
            child = tree.size[g]
            edge_child[g, node, e] = child
            new_node(g, child, node, info[s, TO_MOVE], tree)
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
