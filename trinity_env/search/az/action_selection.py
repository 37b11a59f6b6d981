"""How a descent chooses an edge (mctx's ``action_selection.py``): PUCT at every node, or Gumbel's sequential
halving at the root and its deterministic selection inside the tree."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from trinity_env.core.rules import StrEnum
from trinity_env.search.az.qtransforms import sigma


class SearchMode(StrEnum):
    """The root's rule: ``"puct"`` (AlphaZero) or ``"gumbel"`` (Gumbel root sampling, sequential halving).
    Members are strings (``SearchMode.GUMBEL == "gumbel"``), so configs and JSON keep their text; ``code`` is the
    number the kernels read (``Selection.mode``)."""

    PUCT = "puct"
    GUMBEL = "gumbel"

    @property
    def code(self) -> int:
        """``PUCT`` 0, ``GUMBEL`` 1."""
        return PUCT if self is SearchMode.PUCT else GUMBEL

    @classmethod
    def parse(cls, value: object, what: str = "search mode") -> SearchMode:
        """``value`` (a ``SearchMode`` or its text) as a ``SearchMode``; a ``ValueError`` naming ``what`` and the
        modes if it is none (callers raise their own kind of error with this message)."""
        if isinstance(value, str) and value in SEARCH_MODES:
            return cls(value)
        raise ValueError(f"{what} must be one of {', '.join(SEARCH_MODES)}, got {value!r}")


SEARCH_MODES = tuple(mode.value for mode in SearchMode)
"""The modes' texts, as configs and specs give them."""
PUCT, GUMBEL = 0, 1
"""``SearchMode.code``: the kernels' numbers for the modes."""


class Selection(NamedTuple):
    """How a descent chooses its edges: ``mode`` (``PUCT`` or ``GUMBEL``), PUCT's ``c_puct``, Gumbel's
    sequential-halving ``table`` (``considered_table``), each root's ``num_considered`` actions and its
    ``gumbel`` draws by edge."""

    mode: int
    c_puct: float
    table: np.ndarray
    num_considered: np.ndarray
    gumbel: np.ndarray


@njit(cache=True)
def select_edge(g, node, selection, tree, scratch):
    """The edge of ``node`` in game ``g``'s tree that the descent takes (``scratch``: room for ``MAX_EDGES``)."""
    visits, value_sum, edge_logit, edge_child = tree.visits, tree.value_sum, tree.edge_logit, tree.edge_child
    n = tree.num_edges[g, node]
    best = 0
    best_score = -np.inf
    if selection.mode == GUMBEL:
        sum_n = sigma(g, node, tree, scratch)
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
