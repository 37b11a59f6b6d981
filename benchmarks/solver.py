"""How long the exact solver takes: median and worst over positions with 6, 8, 10 and 12 empty tiles.

Positions come from random play of the standard deck with dealt hands (seeded). For each,
"solve" is the value and one move that achieves it (what a search or an agent needs);
"all best moves" also classifies every legal move (what `trinity solve` prints), which
costs more. A fresh transposition table per position.

Usage: python benchmarks/solver.py [--positions N] [--positions-12 M] [--quick]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from trinity_env.core import GameState, random_hand, standard_deck
from trinity_env.search.solver import Solver


def positions(empty: int, count: int, seed: int) -> list[GameState]:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=9, help="positions per size for 6-10 empty tiles")
    parser.add_argument("--positions-12", type=int, default=3, help="positions with 12 empty tiles (slow)")
    parser.add_argument("--quick", action="store_true", help="fewer positions, no 12")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.quick:
        args.positions, args.positions_12 = 5, 0
    Solver(table_bits=10).best_move(positions(6, 1, 99)[0])  # compile or load the kernels first
    print("exact solver, seconds per position (fresh table each)")
    print(f"{'empty':>5} {'n':>3} | {'solve median':>12} {'worst':>8} | {'all best moves median':>21} {'worst':>8}")
    for empty in (6, 8, 10, 12):
        count = args.positions_12 if empty == 12 else args.positions
        if count == 0:
            print(f"{empty:>5} {'-':>3} | skipped (--positions-12 0)")
            continue
        solve_times, all_times = [], []
        for state in positions(empty, count, args.seed + empty):
            start = time.perf_counter()
            Solver().best_move(state)
            solve_times.append(time.perf_counter() - start)
            if empty <= 10:
                start = time.perf_counter()
                Solver().solve(state)
                all_times.append(time.perf_counter() - start)
        full = (
            f"{statistics.median(all_times):>21.3f} {max(all_times):>8.3f}"
            if all_times
            else f"{'(not run)':>21} {'':>8}"
        )
        print(f"{empty:>5} {count:>3} | {statistics.median(solve_times):>12.3f} {max(solve_times):>8.3f} | {full}")
    print("target: 10 empty tiles solved in under a second (median)")


if __name__ == "__main__":
    main()
