"""Strict command-line arguments, shared by ``trinity`` and the ``training/`` command lines.

Every bad argument is one line naming the problem (exit status 2), never argparse's usage
block; integers are whole numbers written in digits, never a float, sign or ``1_000``
coerced. One module, so that the CLI and the trainers' own command lines refuse the same
input with the same words.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable

from trinity_env.core import limits, paths
from trinity_env.core.shipped import names_path

_WHOLE = re.compile(r"[0-9]+", re.ASCII)


class UsageError(Exception):
    """A bad command line: ``prog`` and the one-line ``message`` to print."""

    def __init__(self, prog: str, message: str):
        super().__init__(message)
        self.prog = prog
        self.message = message


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors raise ``UsageError`` (one line, no usage block) for the caller to print."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(self.prog, message)

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> object:
        # Python before 3.13 drops a lone "--" given as a value (``--seed=--``) and hands over [].
        if action.option_strings and action.nargs is None and list(arg_strings) == ["--"]:
            raise argparse.ArgumentError(action, "expected one argument, got '--'")
        return super()._get_values(action, arg_strings)


def whole_number(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number written in digits (no ``1.5``, ``1e3``, ``+3`` or ``1_000``) in a range."""
    wanted = f"{minimum}-{maximum}" if maximum is not None else f">= {minimum}"

    def parse(text: str) -> int:
        if not _WHOLE.fullmatch(text) or len(text) > 18:
            raise argparse.ArgumentTypeError(f"expected a whole number {wanted}, got {text!r}")
        value = int(text)
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"expected a whole number {wanted}, got {text!r}")
        return value

    parse.__name__ = "whole number"
    return parse


positive_int = whole_number(1)
non_negative_int = whole_number(0)


def empty_range(text: str) -> tuple[int, int]:
    """An argparse type: a number of empty tiles (``9``) or a range (``8-10``) within 1-14."""
    low, dash, high = text.partition("-")
    parse = whole_number(1, 14)
    try:
        bounds = (parse(low), parse(high) if dash else parse(low))
    except argparse.ArgumentTypeError:
        bounds = (0, 0)
    if not bounds[0] or bounds[0] > bounds[1]:
        raise argparse.ArgumentTypeError(f"expected empty tiles N or LOW-HIGH within 1-14, got {text!r}")
    return bounds


# ---------------------------------------------------------------------- paths and counts, checked while parsing


def _path_type(check: Callable[..., str], what: str, name: str, **options: object) -> Callable[[str], str]:
    """An argparse type: the path as given, once ``core.paths`` finds it fit (``stat`` only, nothing opened or
    created); else one line saying what it is."""

    def parse(text: str) -> str:
        return check(text, what, argparse.ArgumentTypeError, **options)

    parse.__name__ = name
    parse.path_kind = name  # type: ignore[attr-defined]  # how tests find every option that takes a path
    return parse


input_path = _path_type(paths.input_file, "file", "input path", missing=True)
"""A file to read, or ``-`` for standard input (a missing one is named by its reader, after the other arguments)."""
input_file_path = _path_type(paths.input_file, "file", "input file path", stdin=False, missing=True)
"""A file to read (no standard input)."""
output_path = _path_type(paths.output_file, "file", "output path")
"""A file to write (created, or overwritten whole)."""
record_path = _path_type(paths.record_file, "file", "record path")
"""A file of records, read if it is there and appended to."""
folder_path = _path_type(paths.output_folder, "folder", "folder path")
"""A folder to write files in (created if missing)."""


def config_path(kind: str) -> Callable[[str], str]:
    """An argparse type: a shipped config's name (passed on as it is) or a YAML path (checked as an input file)."""

    def parse(text: str) -> str:
        if "\x00" in text:
            raise argparse.ArgumentTypeError(f"a {kind} config name or path cannot hold a NUL character")
        return input_path(text) if names_path(text) else text

    parse.__name__ = f"{kind} config"
    parse.path_kind = "config"  # type: ignore[attr-defined]
    return parse


def process_count(text: str) -> int:
    """An argparse type: processes or threads, a whole number from 1 to ``core.limits.max_processes()``."""
    count = positive_int(text)
    problem = limits.count_problem(count)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return count


process_count.__name__ = "process count"
