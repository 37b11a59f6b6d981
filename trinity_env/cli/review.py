"""``trinity review FILE``: annotate every placement of a replay with the solver's exact values (or an agent's
labelled estimates where the solver gives up) and mark the blunders."""

from __future__ import annotations

import argparse

from trinity_env.arguments import input_path, output_path
from trinity_env.cli.common import POLICY_KINDS, add_allow_code, check_file, finish, interruptible, load_replay, source
from trinity_env.cli.options import add_agent, add_json, add_max_nodes, add_quiet, add_seed
from trinity_env.prepare import families_for, warm


def add(commands: argparse._SubParsersAction) -> None:
    review = commands.add_parser(
        "review", help="annotate every placement of a replay with exact values (or labelled estimates) and blunders"
    )
    review.add_argument("file", type=input_path, help="a replay JSON file, or - for standard input")
    add_max_nodes(review, "past it the value is --agent's estimate", 2_000_000)
    add_agent(review, f"estimates the value where the solver gives up: {POLICY_KINDS}", "mcts:1600")
    add_seed(review)
    add_json(review)
    review.add_argument(
        "--png", type=output_path, default=None, help="also draw the value over the game, blunders marked, to this PNG"
    )
    add_quiet(review)
    add_allow_code(review)
    review.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from trinity_env.agents.spec import AgentSpec
    from trinity_env.evaluation.review import check_review, review_replay

    agent = check_review(AgentSpec.parse(args.agent, allow_code=args.allow_code), args.max_nodes)
    replay = load_replay(args.file)
    for option, path in (("--json", args.json), ("--png", args.png)):
        if path:
            check_file(option, path)
    warm(["exact solver", *families_for([agent])])
    review, _ = interruptible(
        review_replay,
        replay,
        max_nodes=args.max_nodes,
        agent=agent,
        seed=args.seed,
        progress=not args.quiet,
        source=source(args.file),
    )
    print(review.text())
    if args.json:
        review.write_json(args.json)
        print(f"wrote {args.json}")
    if args.png:
        review.plot(args.png)
        print(f"wrote {args.png}")
    done = sum(e is not None for e in review.evaluations[:-1])
    return finish("review", review.partial, f"partial review ({done} of {len(review.placements)} positions) written")
