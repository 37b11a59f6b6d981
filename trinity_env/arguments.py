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
