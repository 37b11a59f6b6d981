"""How long the exact solver takes, and how many nodes per second it searches, with 6-12 empty tiles.

Positions come from random play of the standard deck with dealt hands (seeded). For each,
"solve" is the value and one move that achieves it (what a search or an agent needs), with
one search thread (the default) and with two (``Solver(threads=2)``, lazy SMP); "all best
moves" also classifies every legal move (what `trinity solve` prints), which costs more.
A fresh transposition table per position. Nodes per second are counted on the "all best
moves" runs (one thread).

The 12-empty row times "solve" with two threads on nine positions (their times spread
over two orders of magnitude: a median of three is mostly luck), and runs "all best moves"
under a node budget (``--nodes-12``, one thread: the same work on any machine): how many
positions were solved within it and the nodes per second. With both cores busy the
two-thread figures mean little: run it on a quiet machine (the load average is printed).

``--classify-cost N`` adds what classifying every move costs beside the value, in nodes, on N
positions of 11 empty tiles (``trinity solve-openings --classify-nodes`` is off by default for it).

``--hint-nodes`` adds what the move hints (the Monte Carlo search that orders a large
root's moves) save: the nodes each 12-empty position's value costs one thread without them
and with them. Node counts are the same on every machine.

Usage: python -m benchmarks.solver [--positions N] [--positions-12 M] [--nodes-12 K] [--quick] [--hint-nodes]
       [--classify-cost N]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

from benchmarks import load_average
from trinity_env.core import GameState, random_hand, standard_deck
from trinity_env.search.solver import Solver, SolverBudgetError


def deal(rng: random.Random) -> GameState:
    """The first play-phase position of a standard-deck game with dealt hands, open."""
    deck = standard_deck()
    return GameState.new_game(
        hands=[random_hand(deck, 3, rng), random_hand(deck, 3, rng)], first_player=rng.randint(0, 1)
    )


def positions(empty: int, count: int, seed: int) -> list[GameState]:
    """Open-hand games of the standard deck with dealt hands, played at random to ``empty`` empty tiles."""
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        state = deal(rng)
        while not state.is_over and len(state.empty_tiles()) > empty:
            state = state.apply(rng.choice(state.legal_actions()))
        if not state.is_over and len(state.empty_tiles()) == empty:
            found.append(state)
    return found


def load() -> str:
    return "load average " + load_average() + f" ({os.cpu_count()} CPUs)"


def warm_up() -> None:
    """Compile or load the kernels of every kind of query, so that no timing includes it."""
    small = positions(6, 1, 99)[0]
    Solver(table_bits=10).best_move(small)
    Solver(table_bits=10).solve(small)
    Solver(table_bits=10, threads=2).best_move(positions(10, 1, 99)[0])


def hint_nodes(states: list[GameState]) -> None:
    """The nodes of each position's value with one thread, without the move hints and with them."""
    print("12 empty, value with 1 thread: nodes without move hints -> with them")
    totals = [0, 0]
    for k, state in enumerate(states):
        plain, hinted = Solver(hint_simulations=0), Solver()
        value = plain.value(state)
        if hinted.value(state) != value:
            raise AssertionError(f"position {k}: the hints changed the value")  # they never should
        totals = [totals[0] + plain.nodes, totals[1] + hinted.nodes]
        outcome = "win " if value == 1 else ("loss" if value == -1 else "draw")
        print(f"  position {k}: {outcome} {plain.nodes:>13,} -> {hinted.nodes:>13,} ({hinted.nodes / plain.nodes:.2f})")
    print(f"  all {len(states)}:        {totals[0]:>13,} -> {totals[1]:>13,} ({totals[1] / totals[0]:.2f})")


def classify_cost(states: list[GameState]) -> None:
    """Per won position: the nodes of its value and one move, then of classifying every move on the same table
    (what ``trinity solve`` prints; ``solve-openings --classify-nodes``)."""
    print("11 empty, 1 thread, won roots: nodes of the value -> of classifying every move after it")
    totals = [0, 0]
    for k, state in enumerate(states):
        solver = Solver()
        value, _ = solver.best_move(state)
        if value != 1:
            continue  # a lost root's moves all keep its value: its classification is the value again
        value_nodes = solver.nodes
        solver.solve(state)
        totals = [totals[0] + value_nodes, totals[1] + solver.nodes]
        print(f"  position {k}: {value_nodes:>13,} -> {solver.nodes:>13,} ({solver.nodes / value_nodes:.1f}x)")
    if totals[0]:
        print(f"  won roots in all: {totals[0]:>13,} -> {totals[1]:>13,} ({totals[1] / totals[0]:.1f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=9, help="positions per size for 6-10 empty tiles")
    parser.add_argument("--positions-12", type=int, default=9, help="positions with 12 empty tiles")
    parser.add_argument("--nodes-12", type=int, default=10_000_000, help="node budget per 12-empty position")
    parser.add_argument("--quick", action="store_true", help="fewer positions, no 12")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hint-nodes", action="store_true", help="also the nodes saved by the move hints at 12")
    parser.add_argument(
        "--classify-cost",
        type=int,
        default=0,
        metavar="N",
        help="also the nodes of classifying every move against the value's, on N positions of 11 empty",
    )
    args = parser.parse_args()
    if args.quick:
        args.positions, args.positions_12 = 5, 0
    warm_up()
    print(f"exact solver, seconds per position (fresh table each); {load()}")
    print(
        f"{'empty':>5} {'n':>3} | {'solve median':>12} {'worst':>8} | {'2 threads':>9} {'worst':>8} |"
        f" {'all best moves median':>21} {'worst':>8} | {'nodes/s':>10}"
    )
    medians = {}
    for empty in (6, 8, 10):
        solve_times, two_times, all_times, nodes = [], [], [], 0
        for state in positions(empty, args.positions, args.seed + empty):
            start = time.perf_counter()
            Solver().best_move(state)
            solve_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            Solver(threads=2).best_move(state)
            two_times.append(time.perf_counter() - start)
            solution = Solver().solve(state)
            all_times.append(solution.seconds)
            nodes += solution.nodes
        medians[empty] = statistics.median(two_times)
        print(
            f"{empty:>5} {args.positions:>3} | {statistics.median(solve_times):>12.3f} {max(solve_times):>8.3f} | "
            f"{statistics.median(two_times):>9.3f} {max(two_times):>8.3f} | "
            f"{statistics.median(all_times):>21.3f} {max(all_times):>8.3f} | {nodes / sum(all_times):>10,.0f}"
        )
    if args.positions_12 == 0:
        print(f"{12:>5} {'-':>3} | skipped (--positions-12 0)")
    else:
        solved, nodes, seconds, two_times = 0, 0, 0.0, []
        for state in positions(12, args.positions_12, args.seed + 12):
            try:
                solution = Solver().solve(state, max_nodes=args.nodes_12)
                solved += 1
                nodes, seconds = nodes + solution.nodes, seconds + solution.seconds
            except SolverBudgetError as stopped:
                nodes, seconds = nodes + stopped.nodes, seconds + stopped.seconds
            start = time.perf_counter()
            Solver(threads=2).best_move(state)
            two_times.append(time.perf_counter() - start)
        medians[12] = statistics.median(two_times)
        print(
            f"{12:>5} {args.positions_12:>3} | solve with 2 threads: median {medians[12]:.2f} s, worst "
            f"{max(two_times):.2f} s | all best moves within {args.nodes_12:,} nodes (1 thread): "
            f"{solved}/{args.positions_12} solved, {seconds:.1f} s in all | {nodes / seconds:>10,.0f}"
        )
    if args.hint_nodes and args.positions_12 > 0:
        hint_nodes(positions(12, args.positions_12, args.seed + 12))
    if args.classify_cost > 0:
        classify_cost(positions(11, args.classify_cost, args.seed + 11))
    verdict = "met" if medians[10] <= 0.3 else "missed"
    print(
        f"target: solve median at most 0.3 s with 10 empty tiles ({medians[10]:.3f} s with 2 threads: {verdict})",
        end="",
    )
    if 12 in medians:
        print(f", 5 s with 12 ({medians[12]:.2f} s: {'met' if medians[12] <= 5 else 'missed'})")
    else:
        print()
    print(load())


if __name__ == "__main__":
    main()
