"""The ``trinity`` command line: one module per command, each holding its options and its handler.

``trinity show FILE`` draws a position (the position JSON of docs/rules.md) or a replay (its
final position, or every state with ``--all``); ``trinity solve FILE`` prints the exact
result of an open-hand position (who wins, the best moves; ``--json FILE`` writes JSON); ``trinity arena`` plays
a round robin; ``trinity balance`` runs the balance lab; ``trinity play`` lets a person play an agent in the
terminal and ``trinity serve`` in the browser; ``trinity review`` annotates a replay with
the solver; ``trinity puzzles`` builds and scores puzzles; ``trinity accuracy`` scores agents against
perfect play; ``trinity benchmark`` writes any policy's score card; ``trinity dataset`` builds and checks the
solved-positions dataset; ``trinity solve-openings`` solves dealt games from their first placement (one process,
a pool or a Ray cluster) and summarises the first mover's share; ``trinity train`` trains an agent
from a config; ``trinity exploit`` trains a best response to an agent and reports its win
rate; ``trinity prepare`` compiles the engine once. ``-`` reads standard input.

Every error is one line on stderr, ``trinity <command>: <problem>``, never a traceback, and its exit status
says which kind it is. Bad input — a usage error, a file that cannot be read or is not UTF-8 JSON, a bad
position, agent spec, rules config or output path — is status 2, found before any work starts; a file that
could not be written (a full disk, a read-only folder), standard output closed or deals failed on a cluster
is 1; a search that spent its budget is 3. Ctrl-C stops a long run within moments: ``arena`` and ``balance``
write what was played (marked partial), ``solve-openings`` keeps every deal finished (its file is appended to
as each one finishes), and the command says so in one line and exits with 130 (143 after SIGTERM). Each exit
status means one thing (``trinity_env.cli.common``; the table in docs/guide.md).

Each command's module (``trinity_env.cli.arena``...) has ``add(commands)``, which defines its
options and registers its handler ``run``; ``trinity_env.cli.common`` holds what they share.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from trinity_env.arguments import OneLineParser, UsageError
from trinity_env.cli import (
    accuracy,
    arena,
    balance,
    benchmark,
    dataset,
    exploit,
    play,
    prepare,
    puzzles,
    review,
    serve,
    show,
    solve,
    solve_openings,
    train,
)
from trinity_env.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_BUDGET,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    describe_error,
    folders_held,
    say,
)
from trinity_env.core import TrinityError
from trinity_env.core.errors import BudgetExhausted, WriteError
from trinity_env.core.workers import WorkerDied

COMMANDS = (
    show,
    solve,
    arena,
    balance,
    solve_openings,
    play,
    train,
    exploit,
    review,
    puzzles,
    accuracy,
    benchmark,
    dataset,
    serve,
    prepare,
)
"""The commands' modules, in the order ``trinity --help`` lists them."""


def version() -> str:
    """The installed package's version (``importlib.metadata``); a checkout that is not installed, its own."""
    from importlib import metadata

    try:
        return metadata.version("trinity-towers")
    except metadata.PackageNotFoundError:
        from trinity_env import __version__

        return __version__


def build_parser() -> argparse.ArgumentParser:
    """The ``trinity`` parser: every command's subparser, added by its module."""
    parser = OneLineParser(prog="trinity", description="Trinity Towers: rules, positions and replays.")
    parser.add_argument("--version", action="version", version=f"trinity {version()}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for command in COMMANDS:
        command.add(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit status (``common``'s table): 0; 2 for bad input (one line on stderr, ``trinity
    COMMAND: problem``); 3 when a search ran out of its budget; 130 when interrupted; 1 when a file could not be
    written, standard output was closed or deals failed on a cluster (``solve-openings``); 143 after SIGTERM
    (``train`` and ``dataset build`` save first).

    Words left over after parsing are refused in one line; a command whose words moved to an option (``trinity
    exploit``'s agent, now ``--agent``) sets ``words_hint`` among its defaults to say where they go now."""
    try:
        args, extra = build_parser().parse_known_args(argv)
        if extra:
            words = [word for word in extra if not word.startswith("-")]
            hint = f" ({args.words_hint(words)})" if words and hasattr(args, "words_hint") else ""
            raise UsageError(f"trinity {args.command}", f"unrecognized arguments: {' '.join(extra)}{hint}")
    except UsageError as err:
        say(err.prog, err.message)
        return EXIT_BAD_INPUT
    prog = f"trinity {args.command}"
    try:
        with folders_held():  # the output folders it writes are its own until it ends
            return args.run(args) or 0
    except KeyboardInterrupt:
        say(prog, "interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader of standard output went away (trinity show x | head -1)
        _silence_stdout()
        return EXIT_FAILED
    except BudgetExhausted as err:  # not bad input: the same call with a larger budget finishes
        say(prog, describe_error(err))
        return EXIT_BUDGET
    except WriteError as err:  # not bad input: a disk full, a read-only folder
        say(prog, describe_error(err))
        return EXIT_FAILED
    except WorkerDied as err:  # not bad input: a worker process was killed (out of memory?) or its policy exited
        say(prog, str(err))
        return EXIT_FAILED
    except (TrinityError, ValueError, OSError, RecursionError, MemoryError) as err:
        say(prog, describe_error(err))
        return EXIT_BAD_INPUT


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (captured in tests)
        pass


__all__ = ["COMMANDS", "build_parser", "main", "version"]
