"""``trinity arena``: a round robin between agents, seats swapped, with ratings."""

from __future__ import annotations

import argparse

from trinity_env.arguments import config_path, folder_path, non_negative_int, output_path, positive_int, process_count
from trinity_env.cli.common import check_file, check_folder, finish, interruptible, write_json
from trinity_env.prepare import families_for, warm


def add(commands: argparse._SubParsersAction) -> None:
    arena = commands.add_parser("arena", help="round robin between agents, seats swapped, with ratings")
    arena.add_argument(
        "--agents",
        nargs="+",
        required=True,
        help="two or more agent specs, e.g. random greedy mcts:400 (a checkpoint or run folder by path: ./model.pt)",
    )
    arena.add_argument("--games", type=positive_int, default=100, help="games per pair (default 100)")
    arena.add_argument("--seed", type=non_negative_int, default=0)
    arena.add_argument(
        "--workers", type=process_count, default=None, help="processes (default: all cores; at most one per task)"
    )
    arena.add_argument(
        "--config",
        type=config_path("rules"),
        default=None,
        help="a rules config (name in configs/rules/ or YAML path); default: dealt hands",
    )
    arena.add_argument(
        "--out", type=folder_path, default="arena", help="folder for the CSV, markdown, JSON and heatmap"
    )
    arena.add_argument("--json", type=output_path, default=None, help="also write the JSON summary to this path")
    arena.add_argument(
        "--replays", type=folder_path, default=None, help="also write every game as a replay in this folder"
    )
    arena.add_argument("--quiet", action="store_true", help="no progress bar")
    arena.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from trinity_env.evaluation.arena import OUTPUT_FILES, check_arena, round_robin
    from trinity_env.spec.config import make_config

    check_arena(args.agents, args.games, args.workers)
    config = make_config(args.config).to_dict() if args.config else None
    check_folder("--out", args.out, OUTPUT_FILES)
    if args.json:
        check_file("--json", args.json)
    if args.replays:
        check_folder("--replays", args.replays, ())
    warm(families_for(args.agents))
    result, _ = interruptible(
        round_robin,
        args.agents,
        args.games,
        seed=args.seed,
        config=config,
        workers=args.workers,
        progress=not args.quiet,
        replays=args.replays,
    )
    print(result.table())
    for path in result.write(args.out):
        print(f"wrote {path}")
    if args.replays:
        print(f"wrote {int(result.games.sum() // 2)} replays in {args.replays} (trinity review FILE)")
    if args.json:
        write_json(args.json, result.to_json())
        print(f"wrote {args.json}")
    return finish("arena", result.partial, f"partial results of {int(result.games.sum() // 2)} games written")
