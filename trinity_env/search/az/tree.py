"""The search trees in fixed-size arrays (mctx's ``tree.py``): ``Trees``, the value the kernels take
(``TreeArrays``), and a new node.

Per game and node: its visits, value sum, network value, player to move, the player whose point of view
its value sum takes, the winner where the game is over there, its parent and up to ``MAX_EDGES`` edges with
their action, log prior, prior and child. No position is stored: a descent replays the edges' actions.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

MAX_EDGES = 120
"""The most legal actions a position has: 8 cards in hand times 15 empty tiles (a draft has at most 16)."""
NOT_OVER = -2
"""``Trees.winner`` of a node where the game goes on (-1: a draw, 0 or 1: the winner)."""


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


@njit(cache=True)
def new_node(g, node, parent_node, to_move_now, tree):
    """Node ``node`` of game ``g``'s tree made fresh: no visits, no edges, child of ``parent_node`` (-1: the root)."""
    tree.visits[g, node] = 0
    tree.value_sum[g, node] = 0.0
    tree.num_edges[g, node] = 0
    tree.parent[g, node] = parent_node
    tree.to_move[g, node] = to_move_now
    tree.winner[g, node] = NOT_OVER
    tree.size[g] = node + 1
