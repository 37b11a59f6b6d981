"""``trinity dataset``: build the solved-positions dataset (deterministic, resumable) and say what one holds.

``trinity dataset build DIR --shards N|A-B`` (or ``--positions P``) plays and solves the shards not yet in
``DIR`` (``trinity_env.evaluation.solved_build``; ``--max-nodes N`` labels only the positions whose exact solve
finishes within N solver nodes, for 11-12 empty tiles); ``trinity dataset info DIR`` checks every shard and counts the
positions by empty tiles and value (``--json FILE`` writes the summary). Builders on disjoint shard ranges of one
folder may run at once. Ctrl-C, ``kill -INT`` on a background build (a shell starts those with Ctrl-C ignored)
and SIGTERM stop a build between positions, every finished shard kept: exit 130, or 143 after SIGTERM; the same
command resumes it. docs/dataset.md describes the format.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Any

from trinity_env.arguments import empty_range, folder_path, whole_number
from trinity_env.cli.common import (
    check_file,
    exit_status,
    say,
    stop_on_signals,
    write_json,
)
from trinity_env.cli.options import add_agent, add_json, add_max_nodes, add_quiet, add_seed
from trinity_env.evaluation.solved_format import (
    DEFAULT_AGENT,
    DEFAULT_GAMES_PER_SHARD,
    MAX_GAMES_PER_SHARD,
    MAX_SHARDS,
    MOST_MAX_NODES,
    MOST_POLICY_EMPTY,
)


def _shards_argument(text: str) -> int | tuple[int, int]:
    match = re.fullmatch(r"([0-9]{1,6})(?:-([0-9]{1,6}))?", text)
    if match is None or (match[2] is None and not 1 <= int(match[1]) <= MAX_SHARDS):
        raise argparse.ArgumentTypeError(f"expected N (shards 0 to N-1) or A-B (shards A to B), got {text!r}")
    if match[2] is None:
        return int(match[1])
    low, high = int(match[1]), int(match[2])
    if not low <= high < MAX_SHARDS:
        raise argparse.ArgumentTypeError(f"expected A-B with A <= B < {MAX_SHARDS}, got {text!r}")
    return low, high


def _policy_argument(text: str) -> tuple[int, int] | str | None:
    return None if text == "none" else text if text == "auto" else empty_range(text)


def add(commands: argparse._SubParsersAction) -> None:
    dataset = commands.add_parser(
        "dataset", help="build the solved-positions dataset (exact values and value-keeping moves) or check one"
    )
    verbs = dataset.add_subparsers(dest="verb", required=True, parser_class=type(dataset))
    build = verbs.add_parser("build", help="build shards (skipping finished ones): deterministic and resumable")
    build.add_argument("directory", metavar="DIR", type=folder_path)
    budget = build.add_mutually_exclusive_group(required=True)
    budget.add_argument("--shards", type=_shards_argument, help="N (shards 0 to N-1) or A-B (shards A to B)")
    budget.add_argument(
        "--positions", type=whole_number(1, 10**12), help="shards from 0 until the folder holds P positions"
    )
    add_agent(build, "its self-play makes the positions", DEFAULT_AGENT)
    add_seed(build)
    build.add_argument(
        "--empty", type=empty_range, default=(4, 10), help="empty tiles, N or LOW-HIGH within 1-14 (default 4-10)"
    )
    build.add_argument(
        "--policy-empty",
        type=_policy_argument,
        default="auto",
        help="empty tiles, N or LOW-HIGH within --empty, at which every value-keeping move is recorded "
        f"too; 'none'; or 'auto' (the default: --empty up to {MOST_POLICY_EMPTY})",
    )
    add_max_nodes(
        build,
        "a position past it is left out and counted (one thread: the same positions on any machine); for 11-12 "
        "empty tiles",
        most=MOST_MAX_NODES,
    )
    build.add_argument(
        "--games-per-shard",
        type=whole_number(1, MAX_GAMES_PER_SHARD),
        default=DEFAULT_GAMES_PER_SHARD,
        help=f"games in a shard (default {DEFAULT_GAMES_PER_SHARD})",
    )
    add_quiet(build)
    show = verbs.add_parser("info", help="check every shard and say what the dataset holds")
    show.add_argument("directory", metavar="DIR", type=folder_path)
    add_json(show)
    dataset.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.verb == "info":
        return _info(args)
    from trinity_env.evaluation.solved_build import build

    with stop_on_signals() as stopped:
        try:
            report = build(
                args.directory,
                args.shards,
                positions=args.positions,
                agent=args.agent,
                seed=args.seed,
                empty=args.empty,
                games_per_shard=args.games_per_shard,
                policy_empty=args.policy_empty,
                max_nodes=args.max_nodes,
                progress=not args.quiet,
            )
        except KeyboardInterrupt:
            say("trinity dataset", "interrupted; finished shards are kept (run the same command to resume)")
            return exit_status(stopped)
    rate = report.positions_built / report.seconds if report.seconds else 0.0
    print(
        f"{args.directory}: built {len(report.built)} shard(s) ({report.positions_built} positions, "
        f"{report.seconds:.0f} s, {rate:.1f} positions/s), {len(report.skipped)} already complete; "
        f"{report.positions_total} positions in the folder"
    )
    if report.over_budget is not None:
        print(
            f"over the budget of {args.max_nodes} nodes, left out of the shards built: "
            + ", ".join(f"{left} at {count} empty" for count, left in report.over_budget.items())
        )
    return 0


def _info(args: argparse.Namespace) -> int:
    from trinity_env.evaluation.solved_positions import summary

    if args.json:
        check_file("--json", args.json)
    info = summary(args.directory)
    _print_summary(args.directory, info)
    if args.json:
        write_json(args.json, info)
        print(f"wrote {args.json}")
    return 0


def _ranges(indices: Sequence[int]) -> str:
    parts: list[str] = []
    for i in indices:
        if parts and parts[-1][1] == i - 1:
            parts[-1][1] = i
        else:
            parts.append([i, i])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in parts) or "none"


def _print_summary(directory: str, info: dict[str, Any]) -> None:
    """The summary in words: what the folder holds, its shards, and the share of wins by empty tiles."""
    per = info["bytes_per_position"]
    low, high = info["empty"]
    print(
        f"{directory}: {info['positions']} positions from {info['games']} games of {info['agent']} "
        f"(seed {info['seed']}, {low}-{high} empty, {info['games_per_shard']} games a shard)"
    )
    print(
        f"shards: {info['shards']} ({_ranges(info['shard_indices'])}), all checked; "
        f"{info['bytes']} bytes on disk" + (f", {per:.1f} a position" if per else "")
    )
    if info["max_nodes"] is not None:
        print(f"labels only where the exact solve finished within {info['max_nodes']} nodes (the others: over budget)")
    over = info["over_budget"]
    print("empty  positions   win  draw  loss" + ("  over budget" if over else ""))
    for count in sorted({*info["by_empty"], *over}, key=int):
        row = info["by_empty"].get(count, {"win": 0, "draw": 0, "loss": 0})
        total = row["win"] + row["draw"] + row["loss"]
        shares = " ".join(f"{row[key] / total:5.1%}" if total else "    -" for key in ("win", "draw", "loss"))
        left = f"  {over[count]:>11}" if over else ""
        print(f"{count:>5}  {total:>9}  {shares}{left}")
