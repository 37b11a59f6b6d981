"""The ``trinity`` command line.

``trinity show FILE`` draws a position (RULES §6 JSON) or a replay (its final position, or
every state with ``--all``); ``trinity solve FILE`` prints the exact result of an
open-hand position as JSON; ``trinity arena`` plays a round robin; ``trinity play`` lets a
person play an agent. ``-`` reads standard input. Bad input is reported in one line on
stderr with exit status 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from trinity_env.core import REPLAY_FORMAT, GameState, Replay, TrinityError


def _read_json(path: str) -> object:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise TrinityError(f"cannot read {path}: {err.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise TrinityError(f"{path} is not valid JSON: {err}") from None


def _show(args: argparse.Namespace) -> None:
    data = _read_json(args.file)
    if isinstance(data, dict) and data.get("format") == REPLAY_FORMAT:
        states = Replay.from_dict(data).states()
        shown = states if args.all else states[-1:]
        for number, state in enumerate(shown):
            if args.all:
                print(f"--- state {number}")
            print(state if state.phase != "draft" else repr(state))
        return
    print(GameState.from_dict(data))


def _solve(args: argparse.Namespace) -> None:
    from trinity_env.search.solver import Solver

    data = _read_json(args.file)
    state = GameState.from_dict(data)
    print(json.dumps(Solver().solve(state).to_json()))


def _arena(args: argparse.Namespace) -> None:
    from trinity_env.envs.config import make_config
    from trinity_env.evaluation.arena import round_robin

    config = make_config(args.config).to_dict() if args.config else None
    result = round_robin(
        args.agents, args.games, seed=args.seed, config=config, workers=args.workers, progress=not args.quiet
    )
    print(result.table())
    for path in result.write(args.out):
        print(f"wrote {path}")
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_json(), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")


def _balance(args: argparse.Namespace) -> None:
    from trinity_env.evaluation.balance import DEFAULT_AGENTS, run_balance

    report = run_balance(
        args.agents or DEFAULT_AGENTS, args.games, seed=args.seed, a_limits=tuple(args.a_limits), workers=args.workers,
        progress=not args.quiet,
    )  # fmt: skip
    print(report.table())
    print()
    print(report.card_table())
    for path in report.write(args.out):
        print(f"wrote {path}")


def _play(args: argparse.Namespace) -> None:
    from trinity_env.play import play_in_terminal

    play_in_terminal(args.opponent, seat=args.seat, seed=args.seed, config=args.config)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trinity", description="Trinity Towers: rules, positions and replays.")
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser("show", help="draw a position or a replay as a text board")
    show.add_argument("file", help="a position or replay JSON file, or - for standard input")
    show.add_argument("--all", action="store_true", help="for a replay: draw every state, not just the last")
    show.set_defaults(run=_show)

    solve = commands.add_parser("solve", help="solve an open-hand position exactly; prints JSON")
    solve.add_argument("file", help="a position JSON file (RULES section 6), or - for standard input")
    solve.set_defaults(run=_solve)

    arena = commands.add_parser("arena", help="round robin between agents, seats swapped, with ratings")
    arena.add_argument("--agents", nargs="+", required=True, help="agent specs, e.g. random greedy mcts:400")
    arena.add_argument("--games", type=int, default=100, help="games per pair (default 100)")
    arena.add_argument("--seed", type=int, default=0)
    arena.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    arena.add_argument(
        "--config", default=None, help="a rules config (name in configs/rules/ or YAML path); default: dealt hands"
    )
    arena.add_argument("--out", default="arena", help="folder for the CSV, markdown, JSON and heatmap")
    arena.add_argument("--json", default=None, help="also write the JSON summary to this path")
    arena.add_argument("--quiet", action="store_true", help="no progress bar")
    arena.set_defaults(run=_arena)

    balance = commands.add_parser(
        "balance", help="self-play studies of the game's balance: first mover, cards, A limit, endings, domino"
    )
    balance.add_argument("--games", type=int, default=200, help="games per study (default 200)")
    balance.add_argument(
        "--agents", nargs="+", default=None, help="agent specs, each in self-play (default: mcts:200,draft=search "
        "and ppo-standard:sample=draft); the A-limit studies use the first",
    )  # fmt: skip
    balance.add_argument("--a-limits", type=int, nargs="+", default=[2, 3, 4], help="max_a_cards values to compare")
    balance.add_argument("--seed", type=int, default=0)
    balance.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    balance.add_argument("--out", default="balance", help="folder for balance.json and the plots")
    balance.add_argument("--quiet", action="store_true", help="no progress bar")
    balance.set_defaults(run=_balance)

    play = commands.add_parser("play", help="play an agent in the terminal")
    play.add_argument("--opponent", default="greedy", help="agent spec (default greedy)")
    play.add_argument("--seat", default="random", choices=["0", "1", "random"], help="your seat")
    play.add_argument("--seed", type=int, default=None)
    play.add_argument("--config", default=None, help="a rules config (name in configs/rules/ or YAML path)")
    play.set_defaults(run=_play)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except TrinityError as err:
        print(f"trinity {args.command}: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
