"""The completed Q-values Gumbel's selection and policy target use (mctx's ``qtransforms.py``:
``qtransform_completed_by_mix_value``)."""

from __future__ import annotations

import math

from numba import njit

MAXVISIT_INIT = 50.0
VALUE_SCALE = 0.1
"""sigma(q) = (MAXVISIT_INIT + max visits) * VALUE_SCALE * q, q rescaled to [0, 1] (mctx's defaults)."""


@njit(cache=True)
def sigma(g, node, tree, out):
    """mctx's ``qtransform_completed_by_mix_value`` at ``node``: sigma(completed Q) of each edge into ``out``.

    An unvisited edge's Q is completed by the mixed value approximation (the network's value mixed with the
    prior-weighted Q of the visited edges). Returns the sum of the children's visits."""
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
