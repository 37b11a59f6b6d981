"""``trinity solve FILE``: the exact result of an open-hand position, as JSON."""

from __future__ import annotations

import argparse
import json
import math
import re

from trinity_env.arguments import input_path, positive_int, process_count
from trinity_env.cli.common import load_position
from trinity_env.core import Phase, PositionError
from trinity_env.prepare import warm

_DECIMAL = re.compile(r"([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?", re.ASCII)


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above zero (``60``, ``0.5``, ``1e3``)."""
    value = float(text) if _DECIMAL.fullmatch(text) else math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {text!r}")
    return value


def add(commands: argparse._SubParsersAction) -> None:
    solve = commands.add_parser("solve", help="solve an open-hand position exactly; prints JSON")
    solve.add_argument(
        "file", type=input_path, help="a position JSON file (the position format of docs/rules.md), or - for stdin"
    )
    solve.add_argument(
        "--max-seconds", type=positive_seconds, default=60.0, help="give up after this many seconds (default 60)"
    )
    solve.add_argument(
        "--max-nodes",
        type=positive_int,
        default=None,
        help="give up after this many nodes (default: no limit; searches with one thread, the same on any machine)",
    )
    solve.add_argument("--threads", type=process_count, default=2, help="search threads sharing the table (default 2)")
    solve.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    from trinity_env.search.solver import Solver

    state = load_position(args.file)
    if state.phase == Phase.DRAFT:
        raise PositionError("no move to solve: the position is in the draft (the solver needs both hands)")
    if state.is_over or not state.legal_actions():
        raise PositionError("no move to solve: the game is over")
    solver = Solver(threads=args.threads)
    warm(["exact solver"])
    print(json.dumps(solver.solve(state, max_nodes=args.max_nodes, max_seconds=args.max_seconds).to_json()))
