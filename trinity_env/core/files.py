"""Reading what users hand us: JSON and YAML files (or standard input), turned into data or one error line.

Positions, replays, decks and configs are files people share and edit by hand; a fuzzer
or a wrong file finds every way the parsers can fail: bytes that are not UTF-8, a UTF-8
byte-order mark (accepted), nesting too deep for the parser, a 5000-digit integer,
``NaN``, multi-line YAML errors, a file too large to mean anything, a key written twice
(the parsers would keep the last value silently), a named pipe that never ends. Each of
them becomes one line naming the file, raised as the caller's own error class, so every
loader in the project (core, envs, CLI, trainers) fails the same way.

Inputs are bounded by what they make, not by their size: a 331-byte YAML alias bomb
expands to hundreds of millions of values, so the YAML loader counts every node an alias
stands for while it composes, and refuses before anything large is built. Error messages
quote values through ``short``, so a message never grows with the value it names.
"""

from __future__ import annotations

import json
import math
import reprlib
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

from trinity_env.core.errors import TrinityError
from trinity_env.core.paths import name_problem, open_regular

MAX_INPUT_BYTES = 64 * 2**20
"""The cap on a text input: a puzzle file (JSON lines, parsed a line at a time) may hold many thousand records."""
MAX_DOCUMENT_BYTES = 4 * 2**20
"""The cap on one JSON document (a position or a replay is a few KB). JSON builds up to 30 times
its size in Python objects (``[[],[],...]``): 4 MiB stays near 120 MB, 64 MiB would take 2 GB."""
MAX_YAML_BYTES = 2**20
"""The cap on a YAML input. Configs, decks and rules are a few KB, and the pure-Python YAML
parser (the one whose nodes can be counted) takes seconds and hundreds of bytes per node on
larger files."""
MAX_YAML_NODES = 100_000
"""YAML nodes (every scalar, list and mapping) one file may make, each use of an alias
counting all the nodes it stands for. The largest shipped config makes about 60."""
MAX_DIGITS = 100
"""Longer integers are refused: no field of any format needs them."""
SHORT = 60
"""Characters of a bad value quoted in an error message."""


def one_line(err: BaseException | str) -> str:
    """A message folded onto one line (YAML errors and some OS errors span several)."""
    return " ".join(str(err).split())


def cut(text: str, limit: int = SHORT) -> str:
    """``text`` cut to ``limit`` characters, ending in ``...`` where it was cut."""
    return text if len(text) <= limit else text[: max(limit - 3, 0)] + "..."


class _ShortRepr(reprlib.Repr):
    """``reprlib`` with few items per level: its cost stays small for any value, shared or looped."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxtuple = self.maxlist = self.maxarray = self.maxdeque = 6
        self.maxdict = self.maxset = self.maxfrozenset = 4
        self.maxstring = self.maxother = SHORT + 10

    def repr_int(self, x: int, level: int) -> str:
        # repr() of a 5000-digit integer raises ValueError (and costs quadratic time before that)
        if x.bit_length() > 200:
            return f"<an integer of about {int(x.bit_length() * math.log10(2)) + 1} digits>"
        return repr(x)


_SHORT_REPR = _ShortRepr()


def short(value: object, limit: int = SHORT) -> str:
    """The ``repr`` of a bad value for an error message, at most ``limit`` characters and one line.

    A message that quotes the whole value costs what the value costs: gigabytes for an
    expanded YAML alias, a ValueError for a 5000-digit integer.
    """
    return cut(one_line(_SHORT_REPR.repr(value)), limit)


def names(keys: Iterable[object], limit: int = 2 * SHORT) -> str:
    """Field names for a message (``"a, b, c"``), sorted, each one and the whole cut short."""
    shown = sorted(cut(key, SHORT) if isinstance(key, str) else short(key) for key in keys)
    return cut(", ".join(shown), limit)


def _size(limit: int) -> str:
    return f"{limit // 2**20} MiB" if limit >= 2**20 else f"{limit // 2**10} KiB"


def read_text(
    path: str | Path, what: str = "file", error: type[TrinityError] = TrinityError, limit: int = MAX_INPUT_BYTES
) -> str:
    """The UTF-8 text of ``path`` (``"-"``: standard input), without a byte-order mark.

    Only a regular file is read (a named pipe, a device or a NUL in the name is refused at once,
    through ``core.paths``), and only up to ``limit`` bytes.
    """
    name = "standard input" if str(path) == "-" else str(path)
    name = name if name.isprintable() else ascii(name)
    too_large = f"{what} {name} is too large (over {_size(limit)})"
    problem = None if str(path) == "-" else name_problem(path)
    if problem is not None:
        raise error(f"cannot read {what} {cut(name, 200)}: {problem}")
    try:
        if str(path) == "-":
            stream = getattr(sys.stdin, "buffer", sys.stdin)  # a StringIO (tests) has no buffer
            raw = stream.read(limit + 1)
        else:
            handle, kind, size = open_regular(path)
            if kind == "a folder":
                raise error(f"cannot read {what} {name}: it is a folder")
            if kind is not None or handle is None:
                raise error(f"cannot read {what} {name}: it is {kind}, not a regular file")
            with handle:
                if size > limit:
                    raise error(too_large)
                raw = handle.read(limit + 1)
    except OSError as err:
        raise error(f"cannot read {what} {name}: {one_line(err.strerror or err)}") from None
    except UnicodeDecodeError as err:  # a text stdin that is not UTF-8
        raise error(f"{what} {name} is not UTF-8 text (byte {err.start}: {err.reason})") from None
    if len(raw) > limit:
        raise error(too_large)
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise error(f"{what} {name} is not UTF-8 text (byte {err.start}: {err.reason})") from None
    return raw.removeprefix("\ufeff")


# ---------------------------------------------------------------------- JSON


class _KeyTwice(ValueError):
    """A JSON object with a key written twice: ``json`` would keep the last value without a word."""


def _json_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise ValueError(f"an integer of {digits} digits is too long")
    return int(text)


def _json_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _KeyTwice(key)
            seen.add(key)
    return data


def parse_json(text: str | bytes, what: str = "document", error: type[TrinityError] = TrinityError) -> Any:
    """``json.loads`` refusing ``NaN``/``Infinity``, long integers, deep nesting and keys written twice."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as err:
            raise error(f"{what} is not UTF-8 text (byte {err.start}: {err.reason})") from None
    text = text.removeprefix("\ufeff")
    try:
        return json.loads(text, parse_int=_json_int, parse_constant=_json_constant, object_pairs_hook=_json_object)
    except RecursionError:
        raise error(f"{what} is not valid JSON: nested too deeply") from None
    except _KeyTwice as err:
        raise error(f"{what} has the key {short(err.args[0])} twice in one object") from None
    except ValueError as err:  # JSONDecodeError, and what the hooks refuse
        raise error(f"{what} is not valid JSON: {cut(one_line(err), 200)}") from None


def read_json(
    path: str | Path, what: str = "file", error: type[TrinityError] = TrinityError, limit: int = MAX_DOCUMENT_BYTES
) -> Any:
    """Read and parse a JSON file (``"-"``: standard input); every failure is one ``error`` line."""
    name = "standard input" if str(path) == "-" else str(path)
    return parse_json(read_text(path, what, error, limit), f"{what} {name}", error)


# ---------------------------------------------------------------------- YAML


class _TooManyNodes(yaml.YAMLError):
    """The document makes more than ``MAX_YAML_NODES`` values."""


_MERGE = "tag:yaml.org,2002:merge"


class _BoundedLoader(yaml.SafeLoader):
    """``SafeLoader`` that counts what a document makes before building it.

    The count is taken while composing (a node for each scalar and collection, an alias
    adding the whole size of what it names each time it is used), so a bomb is refused
    after a few hundred nodes, not after gigabytes. The C loader composes in C, out of
    reach of the count, so this one is pure Python (and the files it reads are small).
    It also refuses a key written twice in one mapping, an alias used inside the
    collection it names (no config is recursive, and every check of one would loop) and
    integers longer than ``MAX_DIGITS`` (a long ``1:2:3:...`` sexagesimal integer costs
    quadratic time to build).
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._nodes = 0
        self._sizes: dict[str, int] = {}
        self._written: dict[int, list[tuple[yaml.Node, yaml.Node]]] = {}

    def _count(self, nodes: int) -> None:
        self._nodes += nodes
        if self._nodes > MAX_YAML_NODES:
            raise _TooManyNodes(
                f"it makes over {MAX_YAML_NODES} YAML nodes (each use of an alias counts every node it stands for)"
            )

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in self.anchors:  # an unknown one: the base class says so
                size = self._sizes.get(event.anchor)
                if size is None:
                    raise ComposerError(
                        None,
                        None,
                        f"the alias *{cut(event.anchor)} is used inside the collection it names, which contains itself",
                        event.start_mark,
                    )
                self._count(size)
            return super().compose_node(parent, index)
        before = self._nodes
        self._count(1)
        node = super().compose_node(parent, index)
        if event.anchor is not None:
            self._sizes[event.anchor] = self._nodes - before
        return node

    def compose_mapping_node(self, anchor: str | None) -> yaml.MappingNode:
        node = super().compose_mapping_node(anchor)
        self._written[id(node)] = list(node.value)  # the pairs as written, before merge keys add to them
        return node

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in self._written.get(id(node), ()):
            if key_node.tag == _MERGE:
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                twice = key in seen
                seen.add(key)
            except TypeError:  # unhashable: the base class refuses it
                continue
            if twice:
                raise ConstructorError(None, None, f"the key {short(key)} is written twice", key_node.start_mark)
        return super().construct_mapping(node, deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        digits = len(self.construct_scalar(node).replace("_", "").lstrip("+-"))
        if digits > MAX_DIGITS:
            raise ConstructorError(None, None, f"an integer of {digits} digits is too long", node.start_mark)
        return super().construct_yaml_int(node)


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)


def _yaml_problem(err: yaml.YAMLError) -> str:
    """One short line from a YAML error: its problem and where (not the quoted source lines)."""
    if isinstance(err, yaml.MarkedYAMLError) and err.problem:
        mark = err.problem_mark or err.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        context = f"{cut(one_line(err.context), SHORT)}: " if err.context else ""
        return f"{context}{cut(one_line(err.problem), 2 * SHORT)}{where}"
    return cut(one_line(err), 3 * SHORT)


def load_yaml(path: str | Path, what: str = "file", error: type[TrinityError] = TrinityError) -> Any:
    """The data of a YAML file (never a Python object), bounded in size and in what it makes.

    Every failure is one ``error`` line naming the file.
    """
    source = read_text(path, what, error, MAX_YAML_BYTES)
    loader = None
    try:
        loader = _BoundedLoader(source)  # its reader already refuses control characters
        return loader.get_single_data()
    except _TooManyNodes as err:
        raise error(f"{what} {path} is refused: {err}") from None
    except yaml.YAMLError as err:
        raise error(f"{what} {path} is not valid YAML: {_yaml_problem(err)}") from None
    except RecursionError:
        raise error(f"{what} {path} is not valid YAML: nested too deeply") from None
    except (ValueError, TypeError, OverflowError) as err:  # e.g. a float or date the constructor cannot build
        raise error(f"{what} {path} is not valid YAML: {cut(one_line(err), 3 * SHORT)}") from None
    finally:
        if loader is not None:
            loader.dispose()
