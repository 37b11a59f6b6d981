"""Batched network-guided tree search on the fast engine: AlphaZero's PUCT and Gumbel root search.

Many games' trees advance in lockstep, as in mctx, and the parts sit in files as mctx keeps them:

- ``tree``: the trees in fixed-size arrays (``Trees``: per node its visits, value sum, network value, player
  to move, parent and up to ``MAX_EDGES`` edges with their action, prior and child);
- ``action_selection``: how a descent chooses an edge (``SearchMode``: PUCT or Gumbel);
- ``qtransforms``: the completed Q-values of Gumbel's selection and policy target;
- ``seq_halving``: Gumbel's sequential halving of the budget among the considered root actions;
- ``loop``: one *simulation step* for all games at once: (1) ``select_leaves``: from each root row, copy
  the root position to a scratch row and walk down, replaying the chosen actions with
  ``kernels.apply_action``, until an edge without a node: the new node is the leaf, and its observation and
  legal mask are written out; (2) ONE call of the evaluation callback on all those leaves (a batched forward
  pass of the network: ``evaluate(observations int8 [n, 339], masks int8 [n, 256]) -> (logits [n, 256],
  values [n])``); (3) ``expand_backup``: the leaves get their edges (priors from the logits, softmax over
  the legal actions) and every node on the path its visit and value;
- ``policies``: ``BatchedSearch``, what callers run: the root's noise, the loop, the result at the roots.

Values are kept by player, never by depth: a node's value sum is from the point of view of
the player who moved into it (the parent's player to move), and a leaf's value is credited
to each node on the path with the sign of that node's player. The pass rule (a player with
no card passes, so one player may move twice) needs nothing more.

Root selection is ``SearchMode.PUCT`` (AlphaZero: ``Q + c * P * sqrt(N) / (1 + n)``, Dirichlet noise
mixed into the root priors in self-play) or ``SearchMode.GUMBEL`` (Danihelka et al., ICLR 2022, after
mctx's ``gumbel_muzero_policy``): Gumbel-top-k sampling of ``max_considered`` root actions,
sequential halving of the simulation budget among them, completed Q-values with the mixed
value approximation for the improved policy ``softmax(logits + sigma(completed Q))``, and
deterministic interior selection that matches that policy's visit distribution. With
``gumbel_scale=0`` the search is deterministic (play); with 1 it samples (self-play).

The search takes positions as fast-engine rows; it never decides what a seat may see:
callers build the roots from a seat's observation (``trinity_env.agents.view``). No torch
here: the network comes in as a plain numpy callback.

The names callers use are importable from here, as mctx's are from ``mctx``.
"""

from trinity_env.search.az.action_selection import SEARCH_MODES, SearchMode
from trinity_env.search.az.policies import BatchedSearch, Evaluate, SearchResult, uniform_evaluate

__all__ = ["SEARCH_MODES", "BatchedSearch", "Evaluate", "SearchMode", "SearchResult", "uniform_evaluate"]
