"""The options many ``trinity`` commands share, each declared here once: its spelling, type and help.

``--seed`` (every seeded command), ``--json FILE`` (a file: ``--out`` names a folder), ``--quiet`` (no progress bar),
``--workers N`` (processes working at once: never ``--threads``, ``--jobs`` or ``--actors``; ``trinity solve``'s
``--threads`` are threads), ``--max-nodes N`` (the solver's budget per position, in nodes: never ``--budget-nodes``)
and ``--agent SPEC`` (the one agent a command studies: plays, builds or is exploited; ``--agents`` names several,
and ``trinity play``'s ``--opponent`` is the person's opponent). A command adds what happens past the budget or
what the workers do after the shared words. ``tests/test_cli_grammar.py`` walks every command and holds it to these.
"""

from __future__ import annotations

import argparse

from trinity_env.arguments import output_path, positive_int, process_count, whole_number
from trinity_env.cli.common import Renamed
from trinity_env.evaluation.solved_format import MAX_SEED

SEED_HELP = "seeds every random choice: the same seed, the same result"
JSON_HELP = "also write the result as JSON to this file"
QUIET_HELP = "no progress bar"
WORKERS_HELP = "processes working at once"
MAX_NODES_HELP = "the solver's budget per position, in nodes"
AGENT_HELP = "the agent spec"

seed = whole_number(0, MAX_SEED)
seed.__name__ = "seed"


def add_seed(parser: argparse.ArgumentParser, default: int | None = 0) -> None:
    """``--seed N``, a whole number from 0 to 2**63 - 1; ``default=None``: a fresh seed each time."""
    said = f"default {default}" if default is not None else "default: a fresh one each time"
    parser.add_argument("--seed", type=seed, default=default, metavar="N", help=f"{SEED_HELP} ({said})")


def add_json(parser: argparse.ArgumentParser) -> None:
    """``--json FILE``: the command's result as JSON, written atomically once the work is done."""
    parser.add_argument("--json", type=output_path, default=None, metavar="FILE", help=JSON_HELP)


def add_quiet(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", action="store_true", help=QUIET_HELP)


def add_workers(
    parser: argparse.ArgumentParser,
    what: str,
    default: int | None = None,
    *,
    shown: int | None = None,
    cluster: bool = False,
) -> None:
    """``--workers N``: ``what`` each process does and the default in the help (``shown``: the count the command uses
    where the option is left out, its default then ``None``). A count of this machine's processes (``process_count``:
    at most ``core.limits.max_processes()``); ``cluster=True``: of a cluster's, any count above 0 (the command checks
    a local cluster's itself)."""
    shown = default if shown is None else shown
    said = f"default {shown}" if shown is not None else "default: all cores; at most one per task"
    parser.add_argument(
        "--workers",
        type=positive_int if cluster else process_count,
        default=default,
        metavar="N",
        help=f"{WORKERS_HELP}: {what} ({said})",
    )


def add_max_nodes(
    parser: argparse.ArgumentParser,
    past_it: str,
    default: int | None = None,
    *,
    shown: int | None = None,
    required: bool = False,
    most: int | None = None,
) -> None:
    """``--max-nodes N``: ``past_it`` says what the command does with a position past the budget; ``most`` caps N;
    ``shown``: the budget the command uses where the option is left out (its default is then ``None``)."""
    shown = default if shown is None else shown
    said = "" if required else f" (default {shown:,})" if shown is not None else " (default: no limit)"
    parser.add_argument(
        "--max-nodes",
        type=whole_number(1, most) if most is not None else positive_int,
        default=default,
        required=required,
        metavar="N",
        help=f"{MAX_NODES_HELP}; {past_it}{said}",
    )


def add_agent(parser: argparse.ArgumentParser, what: str, default: str | None = None) -> None:
    """``--agent SPEC``: the one agent the command studies (``what`` it does); ``--agents`` names several."""
    said = f" (default {default})" if default is not None else ""
    parser.add_argument("--agent", default=default, metavar="SPEC", help=f"{AGENT_HELP}: {what}{said}")


def once_positional_agent(parser: argparse.ArgumentParser, command: str) -> None:
    """A command whose agent was once a positional word (``trinity exploit greedy``): stray words are answered with
    where they go now, ``--agent``."""
    parser.set_defaults(
        words_hint=lambda words: f"the agent is named with --agent: {command} --agent {' '.join(words)}"
    )


def renamed(parser: argparse.ArgumentParser, *spellings: str, instead: str) -> None:
    """Old spellings of an option, refused in one line naming the new one (``Renamed``), hidden from ``--help``."""
    for spelling in spellings:
        parser.add_argument(spelling, action=Renamed, instead=instead)
