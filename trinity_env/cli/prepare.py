"""``trinity prepare``: compile the engine once (every kernel family), so a fresh install's first commands wait less."""

from __future__ import annotations

import argparse
import time

from trinity_env.cli.options import add_workers, renamed
from trinity_env.prepare import prepare


def add(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser(
        "prepare", help="compile the engine once (every kernel family; a fresh install's first commands wait less)"
    )
    add_workers(command, "kernel families compiled at once, a process each", 1)
    renamed(command, "--jobs", instead="--workers N")
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    start = time.perf_counter()
    prepare(jobs=args.workers)
    print(f"ready: the engine is compiled ({time.perf_counter() - start:.1f} s)")
