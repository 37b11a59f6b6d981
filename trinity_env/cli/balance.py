"""``trinity balance``: self-play studies of the game's balance (first mover, cards, A limit, endings, domino)."""

from __future__ import annotations

import argparse

from trinity_env.arguments import folder_path, input_file_path, positive_int, whole_number
from trinity_env.cli.common import add_allow_code, check_folder, finish, interruptible
from trinity_env.cli.options import add_quiet, add_seed, add_workers

a_limit = whole_number(0, 8)


def add(commands: argparse._SubParsersAction) -> None:
    balance = commands.add_parser(
        "balance", help="self-play studies of the game's balance: first mover, cards, A limit, endings, domino"
    )
    balance.add_argument("--games", type=positive_int, default=200, help="games per study (default 200)")
    balance.add_argument(
        "--agents",
        nargs="+",
        default=None,
        help="agent specs, each in self-play (default: mcts:200,draft=search "
        "and ppo-standard:sample=draft); the A-limit studies use the first",
    )
    balance.add_argument(
        "--a-limits", type=a_limit, nargs="+", default=[2, 3, 4], help="max_a_cards values to compare (0-8)"
    )
    add_seed(balance)
    add_workers(balance, "games, a process each")
    balance.add_argument("--out", type=folder_path, default="balance", help="folder for balance.json and the plots")
    add_quiet(balance)
    balance.add_argument(
        "--openings",
        type=input_file_path,
        default=None,
        metavar="FILE",
        help="also report the first mover under perfect play from this solved-openings file (trinity solve-openings)",
    )
    add_allow_code(balance)
    balance.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from trinity_env.agents.spec import AgentSpec
    from trinity_env.evaluation.balance import DEFAULT_AGENTS, OUTPUT_FILES, check_balance, run_balance

    agents = [AgentSpec.parse(text, allow_code=args.allow_code) for text in args.agents or DEFAULT_AGENTS]
    check_balance(agents, args.games, tuple(args.a_limits), args.workers)
    solved = None
    if args.openings:
        from trinity_env.evaluation.openings_summary import file_summary

        solved = file_summary(args.openings)  # a file that is not one is refused before any game
    check_folder("--out", args.out, OUTPUT_FILES)
    report, _ = interruptible(
        run_balance,
        agents,
        args.games,
        seed=args.seed,
        a_limits=tuple(args.a_limits),
        workers=args.workers,
        progress=not args.quiet,
        openings=solved,
    )
    print(report.table())
    print()
    print(report.card_table())
    for path in report.write(args.out):
        print(f"wrote {path}")
    played = sum(s["games"] for s in report.studies.values())
    return finish("balance", report.partial, f"partial results of {played} games written")
