"""The command line's parsers, for the tests that walk every command (the grammar's, the paths')."""

from __future__ import annotations

import argparse

from trinity_env.cli import build_parser


def commands() -> dict[str, argparse.ArgumentParser]:
    """Each command's parser, by name."""
    found = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(found.choices)


def parsers() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser and each of its verbs' (``puzzles build``), by name."""
    found = {}

    def walk(name: str, parser: argparse.ArgumentParser) -> None:
        found[name] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for verb, inner in action.choices.items():
                    walk(f"{name} {verb}", inner)

    for name, parser in commands().items():
        walk(name, parser)
    return found
