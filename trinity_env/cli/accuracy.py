"""``trinity accuracy``: ``score --agents ...`` scores agents against perfect play (the share of moves that keep the
exact value, by empty tiles) on a solved position set; ``build FILE`` builds such a set."""

from __future__ import annotations

import argparse
import os

from trinity_env.arguments import empty_range, input_path, output_path, positive_int, record_path
from trinity_env.cli.common import add_allow_code, check_file, finish, interruptible, source, write_json
from trinity_env.cli.options import add_agent, add_json, add_max_nodes, add_quiet, add_seed, renamed
from trinity_env.core import PositionError


def add(commands: argparse._SubParsersAction) -> None:
    accuracy = commands.add_parser(
        "accuracy", help="score agents against perfect play (score), or build a solved position set (build FILE)"
    )
    renamed(accuracy, "--agents", instead="after the verb score: trinity accuracy score --agents ...")
    renamed(accuracy, "--build", instead="the verb build: trinity accuracy build FILE")
    verbs = accuracy.add_subparsers(dest="verb", required=True, metavar="{build,score}")
    score = verbs.add_parser("score", help="the share of moves that keep the exact value, by empty tiles")
    score.add_argument("--agents", nargs="+", required=True, help="agent specs, e.g. --agents greedy mcts:400")
    score.add_argument(
        "--set", type=input_path, default=None, help="a position set file (default: the shipped set, 4-11 empty)"
    )
    score.add_argument("--empty", type=empty_range, default=None, help="only N or LOW-HIGH empty tiles")
    score.add_argument("--limit", type=positive_int, default=None, help="the first N positions of each count")
    add_json(score)
    score.add_argument("--png", type=output_path, default=None, help="also plot accuracy by empty tiles to this PNG")
    add_seed(score)
    add_quiet(score)
    add_allow_code(score)
    score.set_defaults(run=_score)
    build = verbs.add_parser("build", help="build (or go on building) a solved position set in FILE")
    build.add_argument("file", metavar="FILE", type=record_path, help="the position set (JSON lines; a rerun goes on)")
    build.add_argument(
        "--per-count", type=positive_int, default=None, help="positions not lost for the mover, per count (400)"
    )
    build.add_argument("--empty", type=empty_range, default=None, help="N or LOW-HIGH empty tiles (default 4-11)")
    add_agent(build, "its self-play makes the set (default mcts:400)")
    add_max_nodes(build, "a position past it is left out", shown=50_000_000)
    add_seed(build)
    add_quiet(build)
    build.set_defaults(run=_build)


def _build(args: argparse.Namespace) -> int:
    from trinity_env.evaluation import accuracy

    per_count = args.per_count or accuracy.DEFAULT_PER_COUNT
    empty = args.empty or accuracy.DEFAULT_EMPTY
    max_nodes = args.max_nodes or accuracy.DEFAULT_MAX_NODES
    agent = accuracy.check_build(per_count, empty, args.agent or accuracy.DEFAULT_AGENT, max_nodes, args.seed)
    if not os.path.exists(args.file):
        check_file("FILE", args.file, record=True)
    progress, interrupted = interruptible(
        accuracy.build_set,
        args.file,
        per_count=per_count,
        empty=empty,
        agent=agent,
        seed=args.seed,
        max_nodes=max_nodes,
        progress=not args.quiet,
    )
    if interrupted:
        return finish("accuracy", True, f"{progress.summary()} in {args.file}; run again to go on")
    print(f"{progress.summary()}; wrote {args.file}")
    return 0


def _score(args: argparse.Namespace) -> int:
    from trinity_env.agents.spec import AgentSpec
    from trinity_env.evaluation import accuracy, accuracy_report

    players = [AgentSpec.parse(spec, allow_code=args.allow_code) for spec in args.agents]  # checked, not built
    set_file = args.set or str(accuracy.DEFAULT_SET)
    positions = accuracy.load_set(set_file)
    if args.empty:
        positions = [p for p in positions if args.empty[0] <= p.empty <= args.empty[1]]
    if args.limit:
        positions = accuracy.first_per_count(positions, args.limit)
    if not positions:
        raise PositionError(f"{source(set_file)}: no positions with {args.empty[0]}-{args.empty[1]} empty tiles")
    for option, path in (("--json", args.json), ("--png", args.png)):
        if path:
            check_file(option, path)
    results, partial = interruptible(accuracy.score_agents, players, positions, seed=args.seed, progress=not args.quiet)
    expected = accuracy.random_expectation(positions)
    print(
        f"{len(positions)} positions from {source(set_file)}: share of moves that keep the exact value "
        "(over positions the mover does not lose) [95% interval]"
    )
    print(accuracy_report.table(results, expected))
    dropped = scored_note(positions, args.limit)
    if dropped:
        print(dropped)
    heads = accuracy_report.network_table(results)
    if heads:
        print("\nnetworks' heads against the exact value (value sign over positions not drawn):")
        print(heads)
        unbounded = sorted({r.agent for r in results for c in r.counts if (c.value_error or 0) > 1})
        if unbounded:
            print(unbounded_note(unbounded))
    if args.json:
        write_json(args.json, accuracy_report.summary(results, source(set_file), positions, partial))
        print(f"wrote {args.json}")
    if args.png and results:
        accuracy_report.plot(results, args.png, expected)
        print(f"wrote {args.png}")
    return finish("accuracy", partial, f"accuracy of {len(results)} of {len(args.agents)} agents written")


def scored_note(positions, limit: int | None) -> str:
    """Why the positions column counts fewer than were taken: lost positions (no move can spoil them) are left out of
    the moves; "" when none was left out."""
    taken: dict[int, int] = {}
    scored: dict[int, int] = {}
    for p in positions:
        taken[p.empty] = taken.get(p.empty, 0) + 1
        scored[p.empty] = scored.get(p.empty, 0) + p.counts_for_moves
    lost = sum(taken.values()) - sum(scored.values())
    if not lost:
        return ""
    per_count = ", ".join(f"{scored[e]} of {taken[e]} at {e} empty" for e in sorted(taken))
    asked = f" (--limit {limit} takes the first {limit} of each count)" if limit else ""
    return (
        f"Positions scored for moves{asked}: {per_count}. The other {lost} are lost for the mover whatever it plays, "
        "so no move can spoil them: they are left out of the moves and count only for a network's value head."
    )


def unbounded_note(agents: list[str]) -> str:
    """What a value MSE above 1 says: the head is not held to the targets' range [-1, 1]."""
    return (
        f"A value MSE above 1 ({', '.join(agents)}) is worse than always predicting 0 (a draw): the exact values are "
        "in [-1, 1], and a value head that is unbounded (a PPO critic predicts returns, not a value squashed into "
        "[-1, 1] as AlphaZero's is) can miss by more than that range."
    )
