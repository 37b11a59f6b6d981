"""``trinity arena``: a round robin between agents, seats swapped, with ratings."""

from __future__ import annotations

import argparse

from trinity_env.arguments import config_path, folder_path, positive_int
from trinity_env.cli.common import (
    POLICY_KINDS,
    add_allow_code,
    check_file,
    check_folder,
    finish,
    interruptible,
    stop_on_signals,
    write_json,
)
from trinity_env.cli.options import add_json, add_quiet, add_seed, add_workers
from trinity_env.core.errors import ArgumentError
from trinity_env.prepare import families_for, warm


def add(commands: argparse._SubParsersAction) -> None:
    arena = commands.add_parser("arena", help="round robin between agents, seats swapped, with ratings")
    arena.add_argument(
        "--agents",
        nargs="+",
        required=True,
        help=f"two or more agents (e.g. random greedy mcts:400), each {POLICY_KINDS}",
    )
    arena.add_argument("--games", type=positive_int, default=100, help="games per pair (default 100)")
    add_seed(arena)
    add_workers(arena, "games, a process each")
    arena.add_argument(
        "--config",
        type=config_path("rules"),
        default=None,
        help="a rules config (name in configs/rules/ or YAML path); default: dealt hands",
    )
    arena.add_argument(
        "--out", type=folder_path, default="arena", help="folder for the CSV, markdown, JSON and heatmap"
    )
    add_json(arena)
    arena.add_argument(
        "--replays", type=folder_path, default=None, help="also write every game as a replay in this folder"
    )
    arena.add_argument(
        "--anchored",
        action="store_true",
        help="also rate each agent on the fixed scale of the reference pool of the games' rules (dealt hands, or the "
        "draft with --config standard; --games games against each pool member; docs/arena.md): anchored.json in "
        "--out, anchored_elo in --json",
    )
    add_quiet(arena)
    add_allow_code(arena)
    arena.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from trinity_env.agents.spec import AgentSpec
    from trinity_env.evaluation.arena import ARENA_DEFAULTS, OUTPUT_FILES, check_arena, load_files
    from trinity_env.spec.config import make_config

    specs = [AgentSpec.parse(text, allow_code=args.allow_code) for text in args.agents]  # parsed once, not built
    players = check_arena(specs, args.games, args.workers)
    config = make_config(args.config) if args.config else None
    pool = None
    if args.anchored:
        from trinity_env.evaluation.anchored import check_rating, pool_for

        try:
            pool = pool_for(config or make_config(ARENA_DEFAULTS))
        except ArgumentError as err:
            raise ArgumentError(f"--anchored: {err}") from None
        check_rating(players, args.games, args.workers, pool)
    load_files(players)  # a checkpoint that loading refuses stops here, before any folder is made
    check_folder("--out", args.out, OUTPUT_FILES + (("anchored.json",) if args.anchored else ()))
    if args.json:
        check_file("--json", args.json)
    if args.replays:
        check_folder("--replays", args.replays, ())
    warm(families_for(players if pool is None else [*players, *pool.agents]))
    with stop_on_signals() as signals:  # SIGTERM stops it as Ctrl-C does: what was played is written
        return _play(args, players, config, pool, signals)


def _play(args: argparse.Namespace, players: list, config, pool, signals: list[int]) -> int:
    """The round robin, its files, and the anchored ratings when asked; the exit status (``finish``)."""
    from trinity_env.evaluation.arena import round_robin

    result, _ = interruptible(
        round_robin,
        players,
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
    summary, stopped = result.to_json(), result.partial
    if pool is not None and not stopped:
        summary, stopped = _anchored(args, players, pool, summary)
    if args.json:
        write_json(args.json, summary)
        print(f"wrote {args.json}")
    played = int(result.games.sum() // 2)
    if result.partial:
        kept = f"partial results of {played} games written"
    else:  # Ctrl-C while the agents played the reference pool
        kept = f"the round robin's {played} games written, the anchored ratings unfinished"
    return finish("arena", stopped, kept, signals)


def _anchored(args: argparse.Namespace, players: list, pool, summary: dict) -> tuple[dict, bool]:
    """Each agent rated against the reference pool (``evaluation.anchored``): its table printed, ``anchored.json``
    written, the summary with its columns; or, cut short by Ctrl-C, the summary as it was and ``True``."""
    from trinity_env.evaluation.anchored import (
        anchored_columns,
        anchored_document,
        anchored_table,
        rate_all_against_pool,
    )

    try:
        ratings = rate_all_against_pool(
            players, args.games, args.seed, args.workers, pool=pool, progress=not args.quiet
        )
    except KeyboardInterrupt:
        return summary, True
    print(anchored_table(ratings, pool))
    path = f"{args.out}/anchored.json"
    write_json(path, anchored_document(ratings, pool))
    print(f"wrote {path}")
    return summary | anchored_columns(ratings), False
