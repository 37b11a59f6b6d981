"""``trinity puzzles``: build solved puzzles from self-play, or score agents on a puzzle file."""

from __future__ import annotations

import argparse

from trinity_env.arguments import empty_range, input_path, non_negative_int, output_path, positive_int
from trinity_env.cli.common import (
    Renamed,
    add_allow_code,
    check_file,
    finish,
    interruptible,
    refuse_given,
    source,
    write_json,
)
from trinity_env.core.errors import ArgumentError

SHIPPED = "trinity_env/evaluation/data/puzzles.jsonl"
"""How the output names the shipped set, which a bare ``--score`` scores (found in the package, a checkout's or a
wheel's alike)."""


def add(commands: argparse._SubParsersAction) -> None:
    puzzles = commands.add_parser(
        "puzzles", help="build solved puzzles from self-play (--build FILE) or score agents on a puzzle file (--score)"
    )
    mode = puzzles.add_mutually_exclusive_group(required=True)
    mode.add_argument(
        "--build",
        type=output_path,
        default=None,
        metavar="FILE",
        help="build: write the puzzles to this JSON-lines file",
    )
    mode.add_argument(
        "--score",
        type=input_path,
        nargs="?",
        const=False,  # a bare --score: the shipped set (a const that is not a string skips input_path)
        default=None,
        metavar="FILE",
        help="score --agents on a puzzle file or an endgame suite (bare --score: the shipped set)",
    )
    puzzles.add_argument("--out", action=Renamed, instead="--build FILE (the puzzle file; --out names a folder)")
    puzzles.add_argument("--count", type=positive_int, default=None, help="build: puzzles to find (default 200)")
    puzzles.add_argument(
        "--empty", type=empty_range, default=None, help="build: empty tiles, N or LOW-HIGH within 1-14 (default 8-10)"
    )
    puzzles.add_argument("--agent", default=None, help="build: the agent that plays itself (default mcts:400)")
    puzzles.add_argument(
        "--max-nodes", type=positive_int, default=None, help="build: solver nodes per position (default 20,000,000)"
    )
    puzzles.add_argument(
        "--max-games", type=positive_int, default=None, help="build: give up after this many games (default 50 x count)"
    )
    puzzles.add_argument("--agents", nargs="+", default=None, help="score: agent specs, e.g. random greedy mcts:400")
    puzzles.add_argument(
        "--json", type=output_path, default=None, help="score: also write the scores as JSON to this path"
    )
    puzzles.add_argument("--seed", type=non_negative_int, default=0)
    puzzles.add_argument("--quiet", action="store_true", help="no progress bar")
    add_allow_code(puzzles)
    puzzles.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return _score(args) if args.score is not None else _build(args)


def _build(args: argparse.Namespace) -> int:
    from trinity_env.evaluation.puzzles import DEFAULT_AGENT, DEFAULT_EMPTY, DEFAULT_MAX_NODES, PuzzleBuild, build_file

    if args.agents is not None or args.json is not None:
        raise ArgumentError("--agents and --json are for scoring (--score FILE), not for building (--build FILE)")
    build = PuzzleBuild(
        count=args.count or 200,
        empty=args.empty or DEFAULT_EMPTY,
        agent=args.agent or DEFAULT_AGENT,
        seed=args.seed,
        max_nodes=args.max_nodes or DEFAULT_MAX_NODES,
        max_games=args.max_games,
    )
    check_file("--build", args.build)
    # written beside --build (never a pipe or device), moved over it when complete: Ctrl-C leaves the old one whole
    report, _ = interruptible(build_file, args.build, build, progress=not args.quiet)
    print(f"{report.summary()}; wrote {report.file}")
    if report.partial:
        kept = f" ({args.build} is left as it was)" if report.kept else ""
        return finish("puzzles", True, f"{len(report.puzzles)} puzzles written to {report.file}{kept}")
    if len(report.puzzles) < build.count:
        print(f"found {len(report.puzzles)} of {build.count} puzzles within {report.games} games (--max-games)")
    return 0


def _score(args: argparse.Namespace) -> int:
    from trinity_env.agents.spec import AgentSpec
    from trinity_env.evaluation.puzzles import (
        DEFAULT_SET,
        describe,
        describe_line,
        load_puzzles,
        score_agents,
        score_table,
    )

    building = {
        "--count": args.count,
        "--empty": args.empty,
        "--agent": args.agent,
        "--max-nodes": args.max_nodes,
        "--max-games": args.max_games,
    }
    refuse_given(building, "only for building puzzles (--build FILE), not for --score")
    if not args.agents:
        raise ArgumentError("--score needs --agents: the agent specs to score, e.g. --agents random greedy mcts:400")
    players = [AgentSpec.parse(spec, allow_code=args.allow_code) for spec in args.agents]  # checked, not built
    label = source(args.score) if args.score else SHIPPED
    puzzles = load_puzzles(args.score or DEFAULT_SET)
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
            "set": describe(puzzles),
            "partial": partial,
            "scores": [s.to_json() for s in scores],
        }
        write_json(args.json, summary)
        print(f"wrote {args.json}")
    return finish("puzzles", partial, f"scores of {len(scores)} of {len(args.agents)} agents written")
