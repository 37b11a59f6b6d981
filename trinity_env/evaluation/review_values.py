"""The value of one position for ``review``, for its player to move: exact where the solver answers within a node
budget, else an agent's estimate, labelled as one.

``exact_evaluation``: the exact solver's value and best moves (``Solution.best_moves``), or ``None`` past
``max_nodes`` nodes (a budget per position: the same outcome on any machine). ``mcts_estimate``: for an ``mcts``
agent, the share of one search's simulations won by the mover (``2 * share - 1``, so +1 means it won every
simulation) and the moves it visited most. ``playout_estimate``: for any other agent, the mean result of
``PLAYOUTS`` self-play games from the position, with both hands shown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from trinity_env.agents.mcts import BRANCHING, MCTSAgent, search_rows
from trinity_env.core import GameState, Move
from trinity_env.fast.convert import write_state
from trinity_env.fast.layout import Batch
from trinity_env.search.mcts import Tree, run_search
from trinity_env.search.solver import Solver, SolverBudgetError
from trinity_env.spec.agent import Agent
from trinity_env.spec.observation import observation_dict

PLAYOUTS = 8
"""Self-play games per position for the estimate of an agent that is not ``mcts``."""


@dataclass(frozen=True)
class Evaluation:
    """What is known about one position, for its player to move.

    ``exact``: ``value`` is the solver's (or the game's result); otherwise an agent's estimate
    in [-1, 1], made by ``method``. ``moves``: the best moves (exact), or the estimating
    agent's preferred moves with the share of its search or playouts behind each (estimate).
    """

    value: float
    exact: bool
    method: str
    moves: tuple[tuple[Move, float | None], ...] = ()
    nodes: int | None = None
    seconds: float = 0.0
    distinct_games: int | None = None
    """A playout estimate's distinct games among its ``PLAYOUTS``: 1 for an agent that plays deterministically,
    whose estimate is then one game's result, not an average."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "value": self.value if not self.exact else int(self.value),
            "exact": self.exact,
            "kind": "exact" if self.exact else "estimate",
            "method": self.method,
        }
        if self.nodes is not None:
            data["nodes"] = self.nodes
        if self.distinct_games is not None:
            data["distinct_games"] = self.distinct_games
        data["seconds"] = round(self.seconds, 3)
        return data


def result_value(state: GameState, player: int) -> int:
    return 0 if state.winner is None else (1 if state.winner == player else -1)


def exact_evaluation(solver: Solver, state: GameState, max_nodes: int) -> Evaluation | None:
    if state.is_over:
        return Evaluation(float(result_value(state, state.to_move)), True, "result")
    try:
        solution = solver.solve(state, max_nodes=max_nodes)
    except SolverBudgetError:
        return None
    moves = tuple((move, None) for move in solution.best_moves)
    return Evaluation(float(solution.value), True, "solver", moves, solution.nodes, solution.seconds)


def mcts_estimate(agent: MCTSAgent, state: GameState, seed: int) -> Evaluation:
    """The mover's share of ``agent``'s simulations won (draws half), as ``2 * share - 1``, from one
    search of ``agent.simulations`` simulations with the agent's own constants."""
    position = Batch.empty(1)
    write_state(position, 0, state)
    rows = search_rows(position)
    tree = Tree(min(agent.simulations * BRANCHING + 512, 6_000_000))
    tree.clear(1 - state.to_move)  # the root's "player" is whoever moved into it
    rng = np.random.default_rng(seed).integers(1, 2**63, 2, dtype=np.uint64)
    run_search(rows, 0, agent.simulations, agent.c, agent.greed, rng, tree)
    first, count = int(tree.first_child[0]), int(tree.children[0])
    visits = tree.visits[first : first + count].astype(np.int64)
    wins = tree.wins[first : first + count].astype(np.float64)
    total = int(visits.sum())
    share = float(wins.sum() / total) if total else 0.5
    deck = state.decks[state.to_move]
    merged: dict[Move, int] = {}
    for k in range(count):
        deck_index, tile = divmod(int(tree.action[first + k]) - 16, 15)
        key = Move(deck[deck_index], tile)
        merged[key] = merged.get(key, 0) + int(visits[k])
    ranked = sorted(merged.items(), key=lambda item: (-item[1], item[0]))[:5]
    moves = tuple((move, round(n / total, 3) if total else None) for move, n in ranked)
    method = f"{agent.name} root win share ({total} simulations)"
    return Evaluation(round(2 * share - 1, 3), False, method, moves)


def playout_estimate(label: str, agents: tuple[Agent, Agent], state: GameState, seed: int) -> Evaluation:
    """The mean result for the mover of ``PLAYOUTS`` games of the agent against itself from ``state``
    (with both hands shown), and how often each first move was chosen."""
    mover = state.to_move
    total = 0.0
    first_moves: dict[Move, int] = {}
    games: set[tuple[int, ...]] = set()
    for k in range(PLAYOUTS):
        for seat, agent in enumerate(agents):
            agent.reset(seed * 7919 + 2 * k + seat)
        game, actions = state, []
        while not game.is_over:
            actions.append(agents[game.to_move].act(observation_dict(game, game.to_move, True), game))
            game = game.apply(actions[-1])
            if game.last is not None and len(game.empty_tiles()) == len(state.empty_tiles()) - 1:
                key = Move.placed(game.last)  # type: ignore[union-attr]
                first_moves[key] = first_moves.get(key, 0) + 1
        total += result_value(game, mover)
        games.add(tuple(actions))
    ranked = sorted(first_moves.items(), key=lambda item: (-item[1], item[0]))[:5]
    moves = tuple((move, round(n / PLAYOUTS, 3)) for move, n in ranked)
    method = f"{label} self-play playouts ({PLAYOUTS} games, {len(games)} distinct)"
    return Evaluation(round(total / PLAYOUTS, 3), False, method, moves, distinct_games=len(games))


def value_for_player_0(value: float | None, mover: int) -> float:
    """A mover's value seen by player 0 (NaN for ``None``)."""
    if value is None:
        return math.nan
    return value if mover == 0 else -value
