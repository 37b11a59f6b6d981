"""How long the exact solver takes, and how many nodes per second it searches, with 6-12 empty tiles.

Positions come from random play of the standard deck with dealt hands (seeded). For each,
"solve" is the value and one move that achieves it (what a search or an agent needs);
"all best moves" also classifies every legal move (what `trinity solve` prints), which
costs more. A fresh transposition table per position. Nodes per second are counted on
the "all best moves" runs.

12 empty tiles take minutes per position, so that row runs "all best moves" under a node
budget (``--nodes-12``, the same work on any machine): it reports how many positions
were solved within it and the nodes per second.

Usage: python -m benchmarks.solver [--positions N] [--positions-12 M] [--nodes-12 K] [--quick]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

from trinity_env.core import GameState, random_hand, standard_deck
from trinity_env.search.solver import Solver, SolverBudgetError


def positions(empty: int, count: int, seed: int) -> list[GameState]:
    """Open-hand games of the standard deck with dealt hands, played at random to ``empty`` empty tiles."""
    rng = random.Random(seed)
    deck = standard_deck()
    found = []
    while len(found) < count:
        state = GameState.new_game(
            hands=[random_hand(deck, 3, rng), random_hand(deck, 3, rng)], first_player=rng.randint(0, 1)
        )
        while not state.is_over and len(state.empty_tiles()) > empty:
            state = state.apply(rng.choice(state.legal_actions()))
        if not state.is_over and len(state.empty_tiles()) == empty:
            found.append(state)
    return found


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" ({os.cpu_count()} CPUs)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=9, help="positions per size for 6-10 empty tiles")
    parser.add_argument("--positions-12", type=int, default=3, help="positions with 12 empty tiles")
    parser.add_argument("--nodes-12", type=int, default=20_000_000, help="node budget per 12-empty position")
    parser.add_argument("--quick", action="store_true", help="fewer positions, no 12")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.quick:
        args.positions, args.positions_12 = 5, 0
    Solver(table_bits=10).best_move(positions(6, 1, 99)[0])  # compile or load the kernels first
    print(f"exact solver, seconds per position (fresh table each); {load()}")
    print(
        f"{'empty':>5} {'n':>3} | {'solve median':>12} {'worst':>8} | {'all best moves median':>21} {'worst':>8}"
        f" | {'nodes/s':>10}"
    )
    for empty in (6, 8, 10):
        solve_times, all_times, nodes = [], [], 0
        for state in positions(empty, args.positions, args.seed + empty):
            start = time.perf_counter()
            Solver().best_move(state)
            solve_times.append(time.perf_counter() - start)
            solution = Solver().solve(state)
            all_times.append(solution.seconds)
            nodes += solution.nodes
        print(
            f"{empty:>5} {args.positions:>3} | {statistics.median(solve_times):>12.3f} {max(solve_times):>8.3f} | "
            f"{statistics.median(all_times):>21.3f} {max(all_times):>8.3f} | {nodes / sum(all_times):>10,.0f}"
        )
    if args.positions_12 == 0:
        print(f"{12:>5} {'-':>3} | skipped (--positions-12 0)")
    else:
        solved, nodes, seconds = 0, 0, 0.0
        for state in positions(12, args.positions_12, args.seed + 12):
            try:
                solution = Solver().solve(state, max_nodes=args.nodes_12)
                solved += 1
                nodes, seconds = nodes + solution.nodes, seconds + solution.seconds
            except SolverBudgetError as stopped:
                nodes, seconds = nodes + stopped.nodes, seconds + stopped.seconds
        print(
            f"{12:>5} {args.positions_12:>3} | all best moves within {args.nodes_12:,} nodes: "
            f"{solved}/{args.positions_12} solved, {seconds:.1f} s in all | {nodes / seconds:>10,.0f}"
        )
    print("target: solve median at most 0.3 s with 10 empty tiles (and 5 s with 12)")
    print(load())


if __name__ == "__main__":
    main()
