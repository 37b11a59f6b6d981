"""``trinity solve FILE``: the exact result of an open-hand position, in sentences (``--json FILE`` writes it as JSON).

It prints who wins under perfect play, every move of the player to move that achieves it, and the nodes and seconds
the search took. A search that runs out of its budget (``--max-seconds``, ``--max-nodes``) is one line on stderr and
exit status 3 (``EXIT_BUDGET``: the same position with a larger budget is solved), never 2 (bad input).
"""

from __future__ import annotations

import argparse
import math
import re
import sys

from trinity_env.arguments import input_path, process_count
from trinity_env.cli.common import check_file, load_position, write_json
from trinity_env.cli.options import add_json, add_max_nodes
from trinity_env.core import GameState, Phase, PositionError
from trinity_env.core.errors import BudgetExhausted
from trinity_env.prepare import warm

_DECIMAL = re.compile(r"([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?", re.ASCII)


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above zero (``60``, ``0.5``, ``1e3``)."""
    value = float(text) if _DECIMAL.fullmatch(text) else math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {text!r}")
    return value


def add(commands: argparse._SubParsersAction) -> None:
    solve = commands.add_parser("solve", help="solve an open-hand position exactly: who wins, the best moves")
    solve.add_argument(
        "file", type=input_path, help="a position JSON file (the position format of docs/rules.md), or - for stdin"
    )
    solve.add_argument(
        "--max-seconds",
        type=positive_seconds,
        default=60.0,
        help="give up after this many seconds (default 60; exit status 3)",
    )
    add_max_nodes(solve, "past it, give up (exit status 3; searches with one thread, the same on any machine)")
    solve.add_argument("--threads", type=process_count, default=2, help="search threads sharing the table (default 2)")
    add_json(solve)
    solve.set_defaults(run=run)


def verdict(state: GameState, value: int) -> str:
    """The value for the player to move, in words."""
    mover = f"Player {state.to_move} (to move)"
    if value > 0:
        return f"{mover} wins with perfect play."
    if value < 0:
        return f"{mover} loses whatever it plays: player {1 - state.to_move} wins with perfect play."
    return "A draw with perfect play: neither player can force a win."


def report(state: GameState, solution) -> list[str]:
    """``trinity solve``'s sentences: the value, the best moves, the search's nodes and seconds."""
    legal = len(state.legal_actions())
    moves = ", ".join(f"{move.card} on tile {move.tile}" for move in solution.best_moves)
    if solution.value < 0:
        best = f"Every one of its {legal} legal moves loses: {moves}."
    else:
        what = "win" if solution.value > 0 else "draw"
        best = f"{len(solution.best_moves)} of its {legal} legal moves {what}: {moves}."
    seconds = f"{solution.seconds:.1f}" if solution.seconds >= 0.1 else f"{solution.seconds:.3f}"
    return [verdict(state, solution.value), best, f"Searched {solution.nodes:,} nodes in {seconds} s."]


class SearchLine:
    """The solver's ``progress``: after a second of search, a line on stderr with the nodes and seconds so far and the
    budget (on a terminal, updated in place every second and cleared at the end; elsewhere, written once)."""

    def __init__(self, max_seconds: float, max_nodes: int | None, out=None):
        self.out = out or sys.stderr
        self.live = self.out.isatty()
        self.shown = False
        nodes = f" or {max_nodes:,} nodes" if max_nodes else ""
        self.budget = f"gives up at {max_seconds:g} s{nodes} (--max-seconds, --max-nodes)"

    def __call__(self, nodes: int, seconds: float) -> None:
        if self.shown and not self.live:
            return
        line = f"trinity solve: searching, {nodes:,} nodes in {seconds:.0f} s; {self.budget}"
        print(("\r\033[K" if self.live else "") + line, end="" if self.live else "\n", file=self.out, flush=True)
        self.shown = True

    def close(self) -> None:
        if self.shown and self.live:
            print("\r\033[K", end="", file=self.out, flush=True)


def run(args: argparse.Namespace) -> None:
    from trinity_env.search.solver import Solver, SolverBudgetError

    state = load_position(args.file)
    if args.json:
        check_file("--json", args.json)
    if state.phase == Phase.DRAFT:
        raise PositionError("no move to solve: the position is in the draft (the solver needs both hands)")
    if state.is_over or not state.legal_actions():
        raise PositionError("no move to solve: the game is over")
    line = SearchLine(args.max_seconds, args.max_nodes)
    solver = Solver(threads=args.threads, progress=line)
    warm(["exact solver"])
    try:
        solution = solver.solve(state, max_nodes=args.max_nodes, max_seconds=args.max_seconds)
    except SolverBudgetError as err:
        raise BudgetExhausted(f"{err}; a larger --max-seconds or --max-nodes may finish it") from None
    finally:
        line.close()
    print("\n".join(report(state, solution)))
    if args.json:
        extra = {"value": solution.value, "nodes": solution.nodes, "seconds": round(solution.seconds, 3)}
        write_json(args.json, solution.to_json() | extra)
        print(f"wrote {args.json}")
