"""``trinity benchmark --agent SPEC``: the score card of any policy (``trinity_env.scorecard``), versioned and seeded.

``SPEC`` is an agent spec: ``onnx:model.onnx`` (a policy exported from any framework), a checkpoint or run
folder, ``az-standard``, ``mcts:400``, ``level:5``, or, with ``--allow-code``, ``py:package.module:factory``
(outside code, imported and called: it runs, so it is refused without the flag). The card's JSON, markdown and
plot go to ``--out`` (a folder); ``--json FILE`` writes the JSON there too. The rating games are kept in ``--out``
as they finish (not for ``py:`` code, whose edits nothing could notice): stopped (Ctrl-C, SIGTERM), the same command
goes on from them.

``trinity benchmark --verify CARD`` checks a card's provenance against what is here: each file it records (by its
name: under the working directory, beside the card, or ``trinity_env/...`` in the installed package) must have the
sha256 it records, and the package's source hash must be the card's. One line per mismatch; exit 1 on a mismatch,
0 when all agree, 2 for a bad card.
"""

from __future__ import annotations

import argparse

from trinity_env.arguments import folder_path, input_file_path, positive_int
from trinity_env.cli.common import (
    POLICY_KINDS,
    add_allow_code,
    check_file,
    check_folder,
    exit_status,
    say,
    stop_on_signals,
    write_json,
)
from trinity_env.cli.options import add_agent, add_json, add_quiet, add_seed, add_workers, once_positional_agent
from trinity_env.core import ArgumentError
from trinity_env.prepare import families_for, warm

OUTPUT_FILES = ("scorecard.json", "scorecard.md", "scorecard.png")


def add(commands: argparse._SubParsersAction) -> None:
    from trinity_env.scorecard import PROTOCOLS

    card = commands.add_parser(
        "benchmark",
        help="the score card of a policy: anchored ratings (dealt hands, and with the draft), accuracy, puzzles",
    )
    add_agent(card, f"the policy to measure: {POLICY_KINDS}")
    card.add_argument(
        "--verify",
        metavar="CARD",
        type=input_file_path,
        default=None,
        help="check a card's files and code hashes against what is here (no --agent): exit 1 on a mismatch",
    )
    card.add_argument(
        "--protocol",
        choices=sorted(PROTOCOLS),
        default="quick",
        help="quick (a few minutes for a network) or full (the figures to publish)",
    )
    add_seed(card)
    add_workers(card, "rating games, a process each")
    card.add_argument(
        "--exploit-steps",
        type=positive_int,
        default=None,
        help="also train a best response for this many learner steps, and what it wins",
    )
    card.add_argument("--out", type=folder_path, default="benchmark", help="folder for the card (json, md, png)")
    add_json(card)
    add_allow_code(card)
    add_quiet(card)
    card.set_defaults(run=run)
    once_positional_agent(card, "trinity benchmark")


def verify(card: str) -> int:
    """``--verify CARD``: one line per mismatch (status 1), ``all ... agree`` (0); a bad card is one line (2)."""
    from trinity_env.core.files import read_json
    from trinity_env.provenance import verify as mismatches

    data = read_json(card, "score card", ArgumentError)
    problems = mismatches(data, card)
    for line in problems:
        print(f"{card}: {line}")
    if problems:
        return 1
    print(f"{card}: all {len(data['files'])} files and the code agree with the card")
    return 0


def run(args: argparse.Namespace) -> int:
    from trinity_env.agents.spec import CODE_PREFIX, AgentSpec
    from trinity_env.scorecard import benchmark

    if args.verify is not None:
        if args.agent is not None:
            raise ArgumentError("--verify CARD checks a card: give no --agent with it")
        return verify(args.verify)
    if args.agent is None:
        raise ArgumentError("give the policy to measure as --agent SPEC (or --verify CARD to check a card)")
    policy = AgentSpec.parse(args.agent, allow_code=args.allow_code)
    check_folder("--out", args.out, OUTPUT_FILES)
    if args.json:
        check_file("--json", args.json)
    warm(["exact solver", *families_for([policy])])
    with stop_on_signals() as stopped:
        try:
            card = benchmark(
                policy,
                args.protocol,
                seed=args.seed,
                workers=args.workers,
                exploit_steps=args.exploit_steps,
                progress=not args.quiet,
                games_folder=None if policy.text.startswith(CODE_PREFIX) else args.out,  # outside code: uncheckable
            )
        except KeyboardInterrupt:
            say(
                "trinity benchmark",
                f"interrupted; the finished rating games are kept in {args.out} (run the same command to go on)",
            )
            return exit_status(stopped)
    print(card.markdown())
    for path in card.write(args.out):
        print(f"wrote {path}")
    if args.json:
        write_json(args.json, card.to_json())
        print(f"wrote {args.json}")
    return 0
