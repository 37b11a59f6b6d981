"""``mcts``: UCT with random rollouts on the fast engine, honest about hidden information.

It builds its position from its own observation only. Where something is hidden (the
opponent's secret draft picks, or its hand with ``open_hands=False``) it searches several
determinisations ("worlds"): each deals the unknown cards at random among the hands
consistent with what it has seen, gets an equal share of the simulations, and the root
visit counts are summed over worlds. With everything visible it searches one tree and
keeps it between moves: after its move and the opponent's reply it re-roots at the
grandchild that the game actually reached.

Drafting, random rollouts say little about a single card (its effect on a random game is
buried in noise), so by default it drafts by the baselines' strongest-card rule;
``draft="search"`` drafts by search instead, with the determinisations above.

Searches run in chunks that return to Python (``run_search``), so Ctrl-C stops even a
search of millions of simulations at once; the chunks leave every result unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trinity_env.agents.baselines import check_count, check_number, check_seed, strongest_pick
from trinity_env.agents.view import decode, determinise
from trinity_env.core import ArgumentError, GameState, PositionError
from trinity_env.core.rules import StrEnum
from trinity_env.fast import kernels
from trinity_env.fast.layout import IN_HAND, PLAYED, Batch
from trinity_env.search.mcts import BRANCHING, Tree, child_with_action, run_search, search_rows
from trinity_env.spec.agent import Agent, Observation

MAX_SIMULATIONS = 1_000_000
"""The most simulations a move (``mcts:N``). Memory stays bounded whatever N is (the kept tree is capped
at 6M nodes, about 115 MB); this bounds the time of one move, stoppable by Ctrl-C, to minutes."""
MAX_WORLDS = 256
"""The most determinisations (``worlds=``): each gets ``simulations // worlds`` simulations (at least one)
and a tree of its own, one after another, so a huge count is a search of a world per simulation."""
MAX_C = 100.0
"""The largest exploration constant (``c=``): the UCT term dwarfs any value long before this."""


@dataclass(frozen=True)
class SearchReport:
    """What the agent's last search saw at its root: visits per action id (summed over the
    determinisations) and whether it continued the tree of its previous move."""

    root_visits: np.ndarray
    reused: bool


class DraftRule(StrEnum):
    """How an ``MCTSAgent`` drafts (its spec's ``draft=``): ``STRONGEST`` by the baselines' strongest-card rule,
    ``SEARCH`` by search over the determinisations. Members are strings, so a spec keeps its text."""

    STRONGEST = "strongest"
    SEARCH = "search"


class MCTSAgent(Agent):
    """UCT search: ``simulations`` per move, exploration constant ``c``, ``worlds`` determinisations."""

    @staticmethod
    def check_arguments(
        simulations: int = 400,
        c: float = 0.7,
        worlds: int = 8,
        seed: int | None = None,
        draft: DraftRule | str = DraftRule.STRONGEST,
        greed: float = 0.5,
    ) -> tuple[int, float, int, int | None, DraftRule, float]:
        """The arguments as the agent keeps them, or a one-line ``ArgumentError`` naming the first one past its
        bound; nothing is allocated (an ``AgentSpec`` is checked with this before any agent is built)."""
        simulations = check_count("mcts", "simulations", simulations, 1, MAX_SIMULATIONS)
        c = check_number("mcts", "c", c, 0.0, MAX_C)
        worlds = check_count("mcts", "worlds", worlds, 1, MAX_WORLDS)
        seed = check_seed("mcts", seed)
        if not isinstance(draft, str) or draft not in tuple(DraftRule):
            raise ArgumentError(f"mcts draft must be 'strongest' or 'search', got {draft!r}")
        return simulations, c, worlds, seed, DraftRule(draft), check_number("mcts", "greed", greed, 0.0, 1.0)

    def __init__(
        self,
        simulations: int = 400,
        c: float = 0.7,
        worlds: int = 8,
        seed: int | None = None,
        reuse: bool = True,
        draft: DraftRule | str = DraftRule.STRONGEST,
        greed: float = 0.5,
    ):
        # every argument against its bound first, before the tree is allocated (see MAX_SIMULATIONS...)
        simulations, c, worlds, seed, draft, greed = self.check_arguments(simulations, c, worlds, seed, draft, greed)
        self.draft = draft
        self.greed = greed
        self.simulations = simulations
        self.c = c
        self.worlds = worlds
        self.reuse = reuse
        self.name = f"mcts:{simulations}"
        self._tree = Tree(min(3 * simulations * BRANCHING + 512, 6_000_000))  # room to keep the tree for a few moves
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)
        self._tree.clear(1)
        self._root = 0
        self.last_search: SearchReport | None = None
        self._after_move: Batch | None = None  # our position right after our last move
        self._after_node = -1

    def _kernel_rng(self) -> np.ndarray:
        return self._rng.integers(1, 2**63, 2, dtype=np.uint64)

    def act(self, observation: Observation, state: GameState | None = None) -> int:
        view = decode(observation["observation"])
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise PositionError("mcts was asked to act with no legal action (is it its turn?)")
        if legal.size == 1:
            self._after_move = None
            return int(legal[0])
        if self.draft is DraftRule.STRONGEST and observation["observation"][0]:
            return strongest_pick(observation)
        if view.complete:
            return self._search_one_tree(view.batch)
        self._after_move = None
        visits = np.zeros(256, np.int64)
        per_world = max(1, self.simulations // self.worlds)
        for _ in range(self.worlds):
            world = determinise(view, self._rng)
            tree = Tree(min(per_world * BRANCHING + 512, 4_000_000))
            tree.clear(1)
            rows = search_rows(world)
            run_search(rows, 0, per_world, self.c, self.greed, self._kernel_rng(), tree)
            _add_root_visits(tree, 0, visits)
        self.last_search = SearchReport(visits, reused=False)
        return int(legal[np.argmax(visits[legal])])

    def _search_one_tree(self, position: Batch) -> int:
        rows = search_rows(position)
        root = self._reroot(rows) if self.reuse else -1
        if root < 0 or self._tree.size[0] + self.simulations * BRANCHING > self._tree.capacity:
            self._tree.clear(1)
            root = 0
        self._root = root
        self._after_move = None  # a search stopped by Ctrl-C leaves nothing to re-root from
        run_search(rows, root, self.simulations, self.c, self.greed, self._kernel_rng(), self._tree)
        visits = np.zeros(256, np.int64)
        _add_root_visits(self._tree, root, visits)
        self.last_search = SearchReport(visits, reused=root > 0)
        action = int(np.argmax(visits))
        # remember where our move leads, to re-root after the opponent's reply
        after = Batch(*(a.copy() for a in rows))
        kernels.apply_action(*after, 0, action)
        self._after_move = after
        self._after_node = child_with_action(
            self._tree.first_child, self._tree.children, self._tree.action, root, action
        )
        return action

    def _reroot(self, rows: Batch) -> int:
        """The node of the reused tree matching ``rows``' position, or -1."""
        if self._after_move is None or self._after_node < 0:
            return -1
        before = self._after_move
        placed = np.flatnonzero((before.owner[0] == -1) & (rows.owner[0] != -1))
        played = np.flatnonzero((before.status[0, 1] == IN_HAND) & (rows.status[0, 1] == PLAYED))
        if placed.size != 1 or played.size != 1:
            return -1
        reply = 16 + 15 * int(played[0]) + int(placed[0])
        probe = Batch(*(a[:1].copy() for a in before))
        if not kernels.is_legal(probe.decks, probe.status, probe.owner, probe.info, 0, reply):
            return -1
        kernels.apply_action(*probe, 0, reply)
        same = all(np.array_equal(getattr(probe, f)[0], getattr(rows, f)[0]) for f in ("status", "sides", "owner"))
        if not same:
            return -1
        return int(
            child_with_action(self._tree.first_child, self._tree.children, self._tree.action, self._after_node, reply)
        )


def _add_root_visits(tree: Tree, root: int, visits: np.ndarray) -> None:
    first, count = tree.first_child[root], tree.children[root]
    for k in range(first, first + count):
        visits[tree.action[k]] += tree.visits[k]
