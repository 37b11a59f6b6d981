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

Several games in turn: ``--seed 1 2 3`` (each with the budget). The JSON is a list of
attempts; docs/solver/opening.json holds the ones quoted in docs/agents.md.

Usage: python -m benchmarks.solver_opening [--seed N ...] [--max-seconds S] [--table-bits B] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

from benchmarks.solver import deal, load, warm_up
from trinity_env.core import GameState, TrinityError
from trinity_env.search.solver import Solver, SolverBudgetError


def opening(seed: int) -> GameState:
    """The first play-phase position of dealt game ``seed`` (the benchmark's ``deal``)."""
    return deal(random.Random(seed))


def attempt(seed: int, max_seconds: float, table_bits: int, threads: int) -> dict:
    """One dealt game's opening, searched within the budget; what it showed, printed and returned."""
    state = opening(seed)
    data = state.to_dict()
    print(f"dealt game {seed}: player {state.to_move} places first; {load()}")
    for player, hand in enumerate(data["hands"]):
        print(f"  hand of player {player}: {' '.join(hand)}")
    printed = [0]  # the last half-minute a line was printed for

    def progress(nodes: int, seconds: float) -> None:
        if int(seconds) // 30 > printed[0]:
            printed[0] = int(seconds) // 30
            print(f"  {seconds:7.0f} s  {nodes:>15,} nodes  {nodes / max(seconds, 1e-9):>10,.0f} nodes/s", flush=True)

    solver = Solver(table_bits=table_bits, threads=threads, progress=progress)
    result = {
        "seed": seed,
        "position": data,
        "threads": threads,
        "table_bits": table_bits,
        "max_seconds": max_seconds,
        "load_before": load(),
    }
    start = time.perf_counter()
    try:
        value, move = solver.best_move(state, max_seconds=max_seconds)
    except SolverBudgetError as stopped:
        result |= {"solved": False, "nodes": stopped.nodes, "seconds": round(stopped.seconds, 1)}
        print(f"not solved within {max_seconds:g} s: {stopped.nodes:,} nodes searched")
        return result
    seconds = time.perf_counter() - start
    winner = None if value == 0 else (state.to_move if value == 1 else 1 - state.to_move)
    result |= {
        "solved": True,
        "value": value,
        "winner": winner,
        "move": move.to_json(),
        "nodes": solver.nodes,
        "seconds": round(seconds, 1),
    }
    shown = "a draw" if winner is None else f"player {winner} wins"
    verdict = "wins" if value == 1 else ("draws" if value == 0 else "loses")
    print(
        f"solved in {seconds:,.1f} s ({solver.nodes:,} nodes): with perfect play {shown}; player {state.to_move}, "
        f"first to place, {verdict} (one best first placement: {move.card} on tile {move.tile})"
    )
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, nargs="+", default=[0], help="which dealt games, in turn (default 0)")
    parser.add_argument(
        "--max-seconds", type=float, default=1800.0, help="the budget per game (default 1800: 30 minutes)"
    )
    parser.add_argument("--table-bits", type=int, default=26, help="table slots 2**B of 16 bytes (default 26: 1 GiB)")
    parser.add_argument("--threads", type=int, default=2, help="search threads (default 2)")
    parser.add_argument("--json", help="also write the attempts to this JSON file (a list, one per game)")
    args = parser.parse_args(argv)
    if not 0 < args.max_seconds < float("inf"):
        parser.error(f"--max-seconds must be a finite number > 0, got {args.max_seconds:g}")
    try:
        Solver(table_bits=args.table_bits, threads=args.threads)  # checked before any work, one line if bad
    except TrinityError as bad:
        parser.error(str(bad))
    warm_up()
    attempts = []
    try:
        for seed in args.seed:
            attempts.append(attempt(seed, args.max_seconds, args.table_bits, args.threads))
    except KeyboardInterrupt:
        print(f"interrupted: {len(attempts)} of {len(args.seed)} games done", file=sys.stderr)
        raise SystemExit(130) from None
    finally:
        if args.json and attempts:  # what was finished is kept
            with open(args.json, "w", encoding="utf-8") as handle:
                json.dump(attempts, handle, indent=1)
                handle.write("\n")
    solved = [a["seed"] for a in attempts if a["solved"]]
    print(f"{len(solved)} of {len(attempts)} openings solved within {args.max_seconds:g} s each; {load()}")


if __name__ == "__main__":
    main()
