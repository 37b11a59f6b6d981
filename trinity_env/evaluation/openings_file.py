"""The solved-openings file: JSON lines, one record per seed, that a ``solve_openings`` job appends to as each deal
finishes (``trinity_env.evaluation.openings`` solves them; this module reads, checks and writes the file).

One record per seed (``read_records`` refuses a file that repeats one) and one kind of deal per file. A job holds
the file locked (``trinity_env.core.locks``), so that two jobs cannot append the same seed; before it appends
anything, a last line cut short (the process was killed while writing it) is dropped, and said, and so are the
unsolved records it will solve again with a larger budget, so the file never holds a seed twice. Each record is
written, flushed and fsynced before the next.
"""

from __future__ import annotations

import json
import os
from collections.abc import Container, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from trinity_env.core import ArgumentError
from trinity_env.core.files import read_text
from trinity_env.core.locks import locked
from trinity_env.core.writes import write_text


class OpeningsError(ArgumentError):
    """A solved-openings file or a cluster that cannot be used, said in one line (the command exits with 2)."""


def whole(value: object, low: int, high: int | None = None) -> bool:
    """Whether ``value`` is an int (not a bool) from ``low`` to ``high``."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= low and (high is None or value <= high)


def record_problem(record: object) -> str | None:
    """What is wrong with one parsed line as a record (``None``: nothing)."""
    if not isinstance(record, dict):
        return "not a JSON object"
    checks = [
        ("seed", whole(record.get("seed"), 0)),
        ("deal", isinstance(record.get("deal"), str)),
        ("solved", isinstance(record.get("solved"), bool)),
        ("nodes", whole(record.get("nodes"), 0)),
        ("budget_nodes", whole(record.get("budget_nodes"), 1)),
        ("first_player", whole(record.get("first_player"), 0, 1)),
    ]
    if record.get("solved") is True:
        moves = record.get("best_moves")
        checks += [
            ("value", whole(record.get("value"), -1, 1)),
            ("all_best_moves", isinstance(record.get("all_best_moves"), bool)),
            (
                "best_moves",
                isinstance(moves, list)
                and bool(moves)
                and all(
                    isinstance(m, dict) and isinstance(m.get("card"), str) and whole(m.get("tile"), 0, 14)
                    for m in moves
                ),
            ),
        ]
    bad = [name for name, ok in checks if not ok]
    return f"bad or missing {', '.join(bad)}" if bad else None


@dataclass
class Contents:
    records: dict[int, dict]
    """Each seed's record."""
    lines: dict[int, str]
    """Each seed's line as written."""
    cut: bool
    """Whether the last line was cut short (written in part when the job was killed): left out."""
    whole: bool
    """Whether the file is whole lines only (empty, or ending with a newline after a record)."""


def parse(text: str, name: str) -> Contents:
    """The records of a solved-openings file's text; ``OpeningsError`` (one line) for anything but a
    cut last line, which is left out and reported in ``cut``."""
    records: dict[int, dict] = {}
    lines: dict[int, str] = {}
    first_line: dict[int, int] = {}
    cut, deals = False, set()
    pieces = text.split("\n")
    for number, line in enumerate(pieces, 1):
        last = number == len(pieces)
        if last and not line:
            break  # the file ends with a newline
        try:
            record = json.loads(line)
            problem = record_problem(record)
        except ValueError:
            record, problem = None, "not JSON"
        if problem is not None:
            if last:  # no newline after it: the job was killed while writing it
                cut = True
                break
            raise OpeningsError(f"{name} line {number}: not a solved-openings record ({problem})")
        seed = record["seed"]
        if seed in records:
            raise OpeningsError(f"{name} line {number}: seed {seed} again (first on line {first_line[seed]})")
        records[seed], lines[seed], first_line[seed] = record, line, number
        deals.add(record["deal"])
    if len(deals) > 1:
        raise OpeningsError(f"{name} mixes records of different deals ({', '.join(sorted(deals))})")
    return Contents(records, lines, cut, text == "" or text.endswith("\n"))


def read_records(path: str | Path) -> dict[int, dict]:
    """The records of a solved-openings file by seed (a cut last line left out; the file is not changed).

    ``OpeningsError`` in one line for a file that cannot be read, a line that is not a record, or a
    seed written twice."""
    text = read_text(path, "solved-openings file", OpeningsError)  # core.files: a regular file, at most 64 MiB
    return parse(text, str(path)).records


def _open_append(path: Path) -> int:
    """``path`` opened to read and append (created if missing), never through a link."""
    flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.open(path, flags, 0o644)
    except OSError:
        if path.is_symlink():
            raise OpeningsError(f"{path} is a symbolic link: a solve-openings job never writes through one") from None
        raise


@dataclass
class HeldFile:
    """A solved-openings file a job holds: the records it held (``records``, by seed), whether a cut last line was
    dropped (``cut``), the unsolved seeds dropped to be solved again (``retried``); ``append`` adds one."""

    name: str
    handle: TextIO
    records: dict[int, dict]
    cut: bool
    retried: int

    def append(self, record: dict[str, Any]) -> None:
        """``record`` as one line, on disk when this returns."""
        self.handle.write(json.dumps(record) + "\n")
        self.handle.flush()
        os.fsync(self.handle.fileno())


@contextmanager
def holding(path: str | Path, deal: str, budget_nodes: int, wanted: Container[int]) -> Iterator[HeldFile]:
    """``path`` (created if missing) locked for one job that solves the seeds ``wanted`` of deal ``deal`` within
    ``budget_nodes``: its records read (a file of another deal refused), and, before the block, the file made whole
    lines of one record a seed again without the unsolved records of ``wanted`` whose budget was smaller."""
    name, path = str(path), Path(path)
    busy = (
        f"{name} is being written by another solve-openings job (it holds the lock): wait for it, or use another file"
    )

    def lock(stack: ExitStack) -> TextIO:
        descriptor = stack.enter_context(locked(path, OpeningsError, held=busy, opener=_open_append))
        return stack.enter_context(open(descriptor, "a+", encoding="utf-8", closefd=False))

    with ExitStack() as stack, ExitStack() as rewritten:
        handle = lock(stack)
        handle.seek(0)
        try:
            contents = parse(handle.read(), name)
        except UnicodeDecodeError:
            raise OpeningsError(f"{name}: not UTF-8 text") from None
        kinds = {r["deal"] for r in contents.records.values()}
        if kinds and kinds != {deal}:
            raise OpeningsError(f"{name} holds records of deal {kinds.pop()!r}, not {deal!r}: use another file")
        retry = {
            s
            for s, r in contents.records.items()
            if s in wanted and not r["solved"] and r["budget_nodes"] < budget_nodes
        }
        if retry or not contents.whole:  # every seed once, whole lines only, before anything is appended
            # written beside it and moved over it (core.writes: never through a link); that file is locked before
            # the old one is let go, so no other job finds the path unlocked meanwhile
            write_text(path, "".join(contents.lines[s] + "\n" for s in contents.records if s not in retry))
            handle = lock(rewritten)
            stack.close()
        kept = {s: r for s, r in contents.records.items() if s not in retry}
        yield HeldFile(name, handle, kept, contents.cut, len(retry))
