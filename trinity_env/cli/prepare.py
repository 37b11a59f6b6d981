"""``trinity prepare``: compile the engine once (every kernel family), so a fresh install's first commands wait less."""

from __future__ import annotations

import argparse
import time

from trinity_env.arguments import process_count
from trinity_env.prepare import prepare


def add(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser(
        "prepare", help="compile the engine once (every kernel family; a fresh install's first commands wait less)"
    )
    command.add_argument(
        "--jobs", type=process_count, default=1, help="families compiled at once, each in a process of its own (1)"
    )
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    start = time.perf_counter()
    prepare(jobs=args.jobs)
    print(f"ready: the engine is compiled ({time.perf_counter() - start:.1f} s)")
