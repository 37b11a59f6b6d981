"""Can the exact solver solve a whole dealt game: the first position of the play phase?

That position has 15 empty tiles and both hands of eight open. The script deals a game of
the standard deck (``--seed``), prints the hands, and asks the solver (two threads, a
``2**--table-bits``-slot table) for the value and a move that achieves it, within
``--max-seconds`` (the issue's budget: 30 minutes). A progress line shows the nodes
searched. It prints what it showed: who wins the game under perfect play and with which
first placement, or how far it got. ``--json PATH`` writes the same as JSON (the figures
in docs/agents.md come from it). Ctrl-C stops it within a second and prints what it had.

With both cores busy the figures mean little: run it on a quiet machine (the load average
is printed).

Usage: python -m benchmarks.solver_opening [--seed N] [--max-seconds S] [--table-bits B] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

from trinity_env.core import GameState, random_hand, standard_deck
from trinity_env.search.solver import Solver, SolverBudgetError


def opening(seed: int) -> GameState:
    """The first play-phase position of a standard-deck game with dealt hands (seeded)."""
    rng = random.Random(seed)
    deck = standard_deck()
    return GameState.new_game(
        hands=[random_hand(deck, 3, rng), random_hand(deck, 3, rng)], first_player=rng.randint(0, 1)
    )


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" ({os.cpu_count()} CPUs)"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="which dealt game (default 0)")
    parser.add_argument("--max-seconds", type=float, default=1800.0, help="the budget (default 1800: 30 minutes)")
    parser.add_argument("--table-bits", type=int, default=26, help="table slots 2**B of 16 bytes (default 26: 1 GiB)")
    parser.add_argument("--threads", type=int, default=2, help="search threads (default 2)")
    parser.add_argument("--json", help="also write the result to this JSON file")
    args = parser.parse_args(argv)
    state = opening(args.seed)
    data = state.to_dict()
    print(f"dealt game {args.seed}: player {state.to_move} places first; {load()}")
    for player, hand in enumerate(data["hands"]):
        print(f"  hand of player {player}: {' '.join(hand)}")

    printed = [0]  # the last half-minute a line was printed for

    def progress(nodes: int, seconds: float) -> None:
        if int(seconds) // 30 > printed[0]:
            printed[0] = int(seconds) // 30
            print(f"  {seconds:7.0f} s  {nodes:>15,} nodes  {nodes / max(seconds, 1e-9):>10,.0f} nodes/s", flush=True)

    solver = Solver(table_bits=args.table_bits, threads=args.threads, progress=progress)
    start = time.perf_counter()
    result = {"seed": args.seed, "position": data, "threads": args.threads, "table_bits": args.table_bits,
              "max_seconds": args.max_seconds}  # fmt: skip
    try:
        value, (card, tile) = solver.best_move(state, max_seconds=args.max_seconds)
    except SolverBudgetError as stopped:
        result |= {"solved": False, "nodes": stopped.nodes, "seconds": round(stopped.seconds, 1)}
        print(f"not solved within {args.max_seconds:g} s: {stopped.nodes:,} nodes searched")
    except KeyboardInterrupt:
        print(f"interrupted after {time.perf_counter() - start:,.0f} s: not solved", file=sys.stderr)
        raise SystemExit(130) from None
    else:
        seconds = time.perf_counter() - start
        winner = None if value == 0 else (state.to_move if value == 1 else 1 - state.to_move)
        result |= {"solved": True, "value": value, "winner": winner, "move": {"card": card, "tile": tile},
                   "nodes": solver.nodes, "seconds": round(seconds, 1)}  # fmt: skip
        shown = "a draw" if winner is None else f"player {winner} wins"
        verdict = "wins" if value == 1 else ("draws" if value == 0 else "loses")
        print(f"solved in {seconds:,.0f} s: with perfect play {shown}; player {state.to_move}, first to place, "
              f"{verdict} (one best first placement: {card} on tile {tile})")  # fmt: skip
    print(load())
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=1)
            handle.write("\n")


if __name__ == "__main__":
    main()
