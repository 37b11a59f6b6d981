"""``trinity accuracy``: score agents against perfect play (the share of moves that keep the exact value, by empty
tiles) on a solved position set, or build such a set (``--build FILE``)."""

from __future__ import annotations

import argparse
import os

from trinity_env.arguments import empty_range, input_path, non_negative_int, output_path, positive_int, record_path
from trinity_env.cli.common import (
    add_allow_code,
    check_file,
    finish,
    interruptible,
    refuse_given,
    source,
    write_json,
)
from trinity_env.core import PositionError
from trinity_env.core.errors import ArgumentError


def add(commands: argparse._SubParsersAction) -> None:
    accuracy = commands.add_parser(
        "accuracy", help="score agents against perfect play: moves that keep the exact value, by empty tiles"
    )
    accuracy.add_argument(
        "--agents", nargs="+", default=None, help="score: agent specs, e.g. --agents greedy mcts:400 az-standard"
    )
    accuracy.add_argument(
        "--set", type=input_path, default=None, help="a position set file (default: the shipped set, 4-11 empty)"
    )
    accuracy.add_argument("--empty", type=empty_range, default=None, help="only (or build) N or LOW-HIGH empty tiles")
    accuracy.add_argument("--limit", type=positive_int, default=None, help="score: the first N positions of each count")
    accuracy.add_argument(
        "--json", type=output_path, default=None, help="score: also write the figures as JSON to this path"
    )
    accuracy.add_argument(
        "--png", type=output_path, default=None, help="score: also plot accuracy by empty tiles to this PNG"
    )
    accuracy.add_argument(
        "--build", type=record_path, default=None, help="build (or go on building) a position set in this file"
    )
    accuracy.add_argument(
        "--per-count", type=positive_int, default=None, help="build: positions not lost for the mover, per count (400)"
    )
    accuracy.add_argument("--agent", default=None, help="build: the agent whose self-play makes the set (mcts:400)")
    accuracy.add_argument(
        "--max-nodes", type=positive_int, default=None, help="build: solver nodes per position (default 50,000,000)"
    )
    accuracy.add_argument("--seed", type=non_negative_int, default=0)
    accuracy.add_argument("--quiet", action="store_true", help="no progress bar")
    add_allow_code(accuracy)
    accuracy.set_defaults(run=run, words_hint=_agents_hint)


def _agents_hint(words: list[str]) -> str:
    """What ``trinity accuracy AGENT...`` (the old form) should say now."""
    return f"agents are named with --agents: trinity accuracy --agents {' '.join(words)}"


def run(args: argparse.Namespace) -> int:
    return _build(args) if args.build else _score(args)


def _build(args: argparse.Namespace) -> int:
    from trinity_env.evaluation import accuracy

    scoring = {
        "--agents": args.agents,
        "--set": args.set,
        "--json": args.json,
        "--png": args.png,
        "--limit": args.limit,
    }
    refuse_given(scoring, "for scoring, not for building a set (--build FILE)")
    per_count = args.per_count or accuracy.DEFAULT_PER_COUNT
    empty = args.empty or accuracy.DEFAULT_EMPTY
    agent = args.agent or accuracy.DEFAULT_AGENT
    max_nodes = args.max_nodes or accuracy.DEFAULT_MAX_NODES
    accuracy.check_build(per_count, empty, agent, max_nodes, args.seed)
    if not os.path.exists(args.build):
        check_file("--build", args.build, record=True)
    progress, interrupted = interruptible(
        accuracy.build_set,
        args.build,
        per_count=per_count,
        empty=empty,
        agent=agent,
        seed=args.seed,
        max_nodes=max_nodes,
        progress=not args.quiet,
    )
    if interrupted:
        return finish("accuracy", True, f"{progress.summary()} in {args.build}; run again to go on")
    print(f"{progress.summary()}; wrote {args.build}")
    return 0


def _score(args: argparse.Namespace) -> int:
    from trinity_env.agents.spec import AgentSpec
    from trinity_env.evaluation import accuracy

    building = {"--per-count": args.per_count, "--agent": args.agent, "--max-nodes": args.max_nodes}
    refuse_given(building, "only for building a set (--build FILE), not for scoring")
    if not args.agents:
        raise ArgumentError("give --agents to score, or --build FILE: e.g. trinity accuracy --agents greedy mcts:400")
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
    print(accuracy.table(results, expected))
    dropped = scored_note(positions, args.limit)
    if dropped:
        print(dropped)
    heads = accuracy.network_table(results)
    if heads:
        print("\nnetworks' heads against the exact value (value sign over positions not drawn):")
        print(heads)
        unbounded = sorted({r.agent for r in results for c in r.counts if (c.value_error or 0) > 1})
        if unbounded:
            print(unbounded_note(unbounded))
    if args.json:
        write_json(args.json, accuracy.summary(results, source(set_file), positions, partial))
        print(f"wrote {args.json}")
    if args.png and results:
        accuracy.plot(results, args.png, expected)
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
