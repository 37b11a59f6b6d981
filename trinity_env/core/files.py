"""Reading what users hand us: JSON and YAML files (or standard input), turned into data or one error line.

Positions, replays, decks and configs are files people share and edit by hand; a fuzzer
or a wrong file finds every way the parsers can fail: bytes that are not UTF-8, a UTF-8
byte-order mark (accepted), nesting too deep for the parser, a 5000-digit integer,
``NaN``, multi-line YAML errors, a file too large to mean anything. Each of them becomes
one line naming the file, raised as the caller's own error class, so every loader in the
project (core, envs, CLI, trainers) fails the same way.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

from trinity_env.core.errors import TrinityError

MAX_INPUT_BYTES = 64 * 2**20
"""No position, replay, deck or config is anywhere near this large."""
MAX_DIGITS = 100
"""Longer integers are refused: no field of any format needs them."""


def one_line(err: BaseException | str) -> str:
    """A message folded onto one line (YAML errors and some OS errors span several)."""
    return " ".join(str(err).split())


def read_text(path: str | Path, what: str = "file", error: type[TrinityError] = TrinityError) -> str:
    """The UTF-8 text of ``path`` (``"-"``: standard input), without a byte-order mark."""
    name = "standard input" if str(path) == "-" else str(path)
    try:
        if str(path) == "-":
            stream = getattr(sys.stdin, "buffer", sys.stdin)  # a StringIO (tests) has no buffer
            raw = stream.read(MAX_INPUT_BYTES + 1)
        else:
            with open(path, "rb") as handle:
                raw = handle.read(MAX_INPUT_BYTES + 1)
    except IsADirectoryError:
        raise error(f"cannot read {what} {name}: it is a folder") from None
    except OSError as err:
        raise error(f"cannot read {what} {name}: {one_line(err.strerror or err)}") from None
    except UnicodeDecodeError as err:  # a text stdin that is not UTF-8
        raise error(f"{what} {name} is not UTF-8 text (byte {err.start}: {err.reason})") from None
    if len(raw) > MAX_INPUT_BYTES:
        raise error(f"{what} {name} is too large (over {MAX_INPUT_BYTES // 2**20} MiB)")
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise error(f"{what} {name} is not UTF-8 text (byte {err.start}: {err.reason})") from None
    return raw.removeprefix("\ufeff")


def _json_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise ValueError(f"an integer of {digits} digits is too long")
    return int(text)


def _json_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def parse_json(text: str | bytes, what: str = "document", error: type[TrinityError] = TrinityError) -> Any:
    """``json.loads`` refusing ``NaN``/``Infinity``, integers over ``MAX_DIGITS`` digits and deep nesting."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as err:
            raise error(f"{what} is not UTF-8 text (byte {err.start}: {err.reason})") from None
    text = text.removeprefix("\ufeff")
    try:
        return json.loads(text, parse_int=_json_int, parse_constant=_json_constant)
    except RecursionError:
        raise error(f"{what} is not valid JSON: nested too deeply") from None
    except ValueError as err:  # JSONDecodeError, and what the hooks refuse
        raise error(f"{what} is not valid JSON: {one_line(err)}") from None


def read_json(path: str | Path, what: str = "file", error: type[TrinityError] = TrinityError) -> Any:
    """Read and parse a JSON file (``"-"``: standard input); every failure is one ``error`` line."""
    name = "standard input" if str(path) == "-" else str(path)
    return parse_json(read_text(path, what, error), f"{what} {name}", error)


def load_yaml(path: str | Path, what: str = "file", error: type[TrinityError] = TrinityError) -> Any:
    """``yaml.safe_load`` of a file (never a Python object), every failure one ``error`` line naming it."""
    source = read_text(path, what, error)
    try:
        return yaml.safe_load(source)
    except yaml.YAMLError as err:
        raise error(f"{what} {path} is not valid YAML: {one_line(err)}") from None
    except RecursionError:
        raise error(f"{what} {path} is not valid YAML: nested too deeply") from None
    except (ValueError, TypeError, OverflowError) as err:  # e.g. an integer too long to convert
        raise error(f"{what} {path} is not valid YAML: {one_line(err)}") from None
