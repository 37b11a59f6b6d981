"""``trinity puzzles``: ``build FILE`` finds solved puzzles in self-play; ``score [FILE] --agents ...`` scores agents
on a puzzle file or an endgame suite (the shipped set without FILE)."""

from __future__ import annotations

import argparse

from trinity_env.arguments import empty_range, input_path, output_path, positive_int
from trinity_env.cli.common import add_allow_code, check_file, finish, interruptible, source, write_json
from trinity_env.cli.options import add_agent, add_json, add_max_nodes, add_quiet, add_seed, renamed

SHIPPED = "trinity_env/evaluation/data/puzzles.jsonl"
"""How the output names the shipped set, which ``score`` without a file scores (found in the package, a checkout's or
a wheel's alike)."""


def add(commands: argparse._SubParsersAction) -> None:
    puzzles = commands.add_parser(
        "puzzles", help="build solved puzzles from self-play (build FILE) or score agents on a puzzle file (score)"
    )
    renamed(puzzles, "--build", instead="the verb build: trinity puzzles build FILE")
    renamed(puzzles, "--score", instead="the verb score: trinity puzzles score [FILE] --agents ...")
    renamed(puzzles, "--out", instead="the verb build: trinity puzzles build FILE (--out names a folder)")
    verbs = puzzles.add_subparsers(dest="verb", required=True, metavar="{build,score}")
    build = verbs.add_parser("build", help="find solved puzzles in self-play and write them to FILE (JSON lines)")
    build.add_argument("file", metavar="FILE", type=output_path, help="the puzzle file to write (JSON lines)")
    build.add_argument("--count", type=positive_int, default=200, help="puzzles to find (default 200)")
    build.add_argument(
        "--empty", type=empty_range, default=None, help="empty tiles, N or LOW-HIGH within 1-14 (default 8-10)"
    )
    add_agent(build, "the agent that plays itself (default mcts:400)")
    add_max_nodes(build, "a position past it is no puzzle", shown=20_000_000)
    build.add_argument(
        "--max-games", type=positive_int, default=None, help="give up after this many games (default 50 x count)"
    )
    add_seed(build)
    add_quiet(build)
    build.set_defaults(run=_build)
    score = verbs.add_parser(
        "score", help="score agents on a puzzle file or an endgame suite (default: the shipped set)"
    )
    score.add_argument(
        "file",
        metavar="FILE",
        type=input_path,
        nargs="?",
        default=None,
        help="a puzzle file (default: the shipped set)",
    )
    score.add_argument("--agents", nargs="+", required=True, help="agent specs, e.g. random greedy mcts:400")
    add_json(score)
    add_seed(score)
    add_quiet(score)
    add_allow_code(score)
    score.set_defaults(run=_score)


def _build(args: argparse.Namespace) -> int:
    from trinity_env.evaluation.puzzles import DEFAULT_AGENT, DEFAULT_EMPTY, DEFAULT_MAX_NODES, PuzzleBuild, build_file

    build = PuzzleBuild(
        count=args.count,
        empty=args.empty or DEFAULT_EMPTY,
        agent=args.agent or DEFAULT_AGENT,
        seed=args.seed,
        max_nodes=args.max_nodes or DEFAULT_MAX_NODES,
        max_games=args.max_games,
    )
    check_file("FILE", args.file)
    # written beside FILE (never a pipe or device), moved over it when complete: Ctrl-C leaves the old one whole
    report, _ = interruptible(build_file, args.file, build, progress=not args.quiet)
    print(f"{report.summary()}; wrote {report.file}")
    if report.partial:
        kept = f" ({args.file} is left as it was)" if report.kept else ""
        return finish("puzzles", True, f"{len(report.puzzles)} puzzles written to {report.file}{kept}")
    if len(report.puzzles) < build.count:
        print(f"found {len(report.puzzles)} of {build.count} puzzles within {report.games} games (--max-games)")
    return 0


def _score(args: argparse.Namespace) -> int:
    from trinity_env.agents.spec import AgentSpec
    from trinity_env.evaluation.puzzles import (
        DEFAULT_SET,
        describe_line,
        describe_set,
        load_puzzles,
        score_agents,
        score_table,
    )

    players = [AgentSpec.parse(spec, allow_code=args.allow_code) for spec in args.agents]  # checked, not built
    label = source(args.file) if args.file else SHIPPED
    puzzles = load_puzzles(args.file or DEFAULT_SET)
    if args.json:
        check_file("--json", args.json)
    scores, partial = interruptible(score_agents, players, puzzles, seed=args.seed)
    print(f"{len(puzzles)} puzzles from {label}: {describe_line(puzzles)}")
    print("share of puzzles whose winning move the agent plays:")
    print(score_table(scores))
    if args.json:
        summary = {
            "puzzles": label,
            "count": len(puzzles),
            "set": describe_set(puzzles),
            "partial": partial,
            "scores": [s.to_json() for s in scores],
        }
        write_json(args.json, summary)
        print(f"wrote {args.json}")
    return finish("puzzles", partial, f"scores of {len(scores)} of {len(args.agents)} agents written")
