"""Record files: JSON lines that a long job writes record by record, resumes, or builds again.

Accuracy sets, puzzle files and solved openings are such files: hours of solver time, one record
a line. A job can be killed while it writes, the disk can fill, two jobs can be started on one
file, a user can edit a line; none of these may cost a record already written, and none may be a
traceback. So every such file is read and written here, under one set of rules:

- **a header**: the first line, ``{"format": ..., <the builder's parameters>}``, names what built
  the file. Going on with a file built with other parameters is refused in one line naming both.
- **a cut last line** (no newline after it, not valid JSON: the job died while writing it) is left
  out and reported in one warning line; before anything is appended it is cut off the file.
  Every other bad line is refused in one line naming the file and the line number.
- **strict fields**: a record's fields are checked by type and range (``Field``): ``"1"`` where a
  number belongs is one line, never a ``TypeError`` later.
- **one writer**: the file (or, for a build from scratch, its ``.partial``) is locked while it is written
  (``trinity_env.core.locks``: POSIX ``flock``); a second job is refused at once.
- **appends lose nothing**: each record is one line written, flushed and fsynced; a write that fails
  (a full disk) cuts what it wrote back off, so the file ends on a whole line, and raises
  ``WriteError`` in one line naming the file. A rerun goes on from there.
- **a build from scratch destroys nothing first** (``rebuilding``): it writes ``NAME.partial`` and
  renames it over ``NAME`` only when complete; stopped (Ctrl-C, a full disk) while a ``NAME`` is
  there, it leaves ``NAME`` as it was and the records so far in ``NAME.partial``.

Only the standard library and ``trinity_env.core``: every layer above may use it.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trinity_env.core.errors import TrinityError, WriteError
from trinity_env.core.files import MAX_DOCUMENT_BYTES, MAX_INPUT_BYTES, cut, one_line, parse_json, short
from trinity_env.core.locks import locked
from trinity_env.core.paths import path_kind
from trinity_env.core.writes import refuse_link

PARTIAL = ".partial"
"""The suffix of a build from scratch until it is complete."""

_OPEN = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


# ---------------------------------------------------------------------- fields


@dataclass(frozen=True)
class Field:
    """What one field of a record must be: ``test`` says whether a value is, ``says`` how a message puts it."""

    test: Callable[[object], bool]
    says: str


def whole(low: int | None = None, high: int | None = None) -> Field:
    """An ``int`` (never a ``bool``, a float or a string of digits) within ``low``..``high``."""
    if low is not None and high is not None:
        says = f"a whole number from {low} to {high}"
    else:
        says = (
            "a whole number" + (f" >= {low}" if low is not None else "") + (f" <= {high}" if high is not None else "")
        )

    def test(value: object) -> bool:
        return type(value) is int and (low is None or value >= low) and (high is None or value <= high)

    return Field(test, says)


def one_of(*values: int) -> Field:
    """One of a few ``int`` values (``1`` but never ``True`` or ``"1"``)."""
    return Field(lambda value: type(value) is int and value in values, "one of " + ", ".join(map(str, values)))


TEXT = Field(lambda value: isinstance(value, str), "a string")
FLAG = Field(lambda value: isinstance(value, bool), "true or false")
TRUE = Field(lambda value: value is True, "true")
OBJECT = Field(lambda value: isinstance(value, dict), "a JSON object")
LIST = Field(lambda value: isinstance(value, list), "a list")


def problem(record: object, required: Mapping[str, Field], optional: Mapping[str, Field] | None = None) -> str | None:
    """What is wrong with ``record`` (``None``: nothing): not an object, a field missing or of the wrong kind."""
    if not isinstance(record, dict):
        return "not a JSON object"
    for name, rule in required.items():
        if name not in record:
            return f"no {name}"
        if not rule.test(record[name]):
            return f"{name} must be {rule.says}, got {short(record[name])}"
    for name, rule in (optional or {}).items():
        if name in record and not rule.test(record[name]):
            return f"{name} must be {rule.says}, got {short(record[name])}"
    return None


# ---------------------------------------------------------------------- reading


@dataclass
class Contents:
    """A record file's text, checked: its ``header`` (``None`` when it has none), ``records`` with their
    line numbers, whether a ``cut`` last line was left out, and ``whole``: the bytes up to the end of the
    last good line (where the next record goes)."""

    header: dict[str, Any] | None = None
    records: list[tuple[int, Any]] = field(default_factory=list)
    cut: bool = False
    whole: int = 0
    newline_missing: bool = False
    """Whether the last good line lacks its newline (a record written whole, its newline not)."""


def parse(
    text: str,
    name: str,
    check: Callable[[object], str | None],
    error: type[TrinityError],
    *,
    what: str = "record",
    kind: str = "record file",
    header: str | tuple[str, ...] | None = None,
    skip_blank: bool = True,
) -> Contents:
    """The records of a record file's ``text``; ``error`` in one line naming the file and the line for any bad
    line but a cut last one, which is left out (``cut``).

    ``check(record)``: what is wrong with a record (``None``: nothing). ``header``: the format the first
    line must name (or the formats it may name, a tuple). ``what``: a record, ``kind``: the file, in messages."""
    formats = (header,) if isinstance(header, str) else header
    contents = Contents()
    pieces = text.split("\n")
    offset = 0
    for number, line in enumerate(pieces, 1):
        last = number == len(pieces)  # a last piece is what follows the last newline: "" in a whole file
        if last and not line:
            break
        if skip_blank and not line.strip():
            offset += len(line.encode("utf-8")) + 1
            contents.whole = offset
            continue
        where = f"{name}, line {number}"
        if len(line) > MAX_DOCUMENT_BYTES:  # one record is one JSON document: bounded like one
            if last:
                contents.cut = True
                break
            raise error(f"{where}: a record over {MAX_DOCUMENT_BYTES >> 20} MiB")
        try:
            record = parse_json(line, "the line", error)
        except TrinityError as err:
            if last:  # no newline after it: the job was killed while writing it
                contents.cut = True
                break
            raise error(f"{where}: not {_a(what)} ({err})") from None
        if formats is not None and contents.header is None:
            if not isinstance(record, dict) or record.get("format") not in formats:
                named = " or ".join(repr(name) for name in formats)
                raise error(f"{where}: not {_a(kind)} (its first line must be a header with format {named})")
            contents.header = record
        else:
            _add(contents, number, record, check, where, what, error, header)
        offset += len(line.encode("utf-8")) + (0 if last else 1)
        contents.whole = offset
        contents.newline_missing = last
    return contents


def _add(
    contents: Contents,
    number: int,
    record: object,
    check: Callable[[object], str | None],
    where: str,
    what: str,
    error: type[TrinityError],
    header: str | tuple[str, ...] | None,
) -> None:
    if header is not None and isinstance(record, dict) and "format" in record:
        raise error(f"{where}: a header (format {short(record['format'])}) where a {what} belongs")
    wrong = check(record)
    if wrong is not None:
        raise error(f"{where}: not {_a(what)} ({wrong})")
    contents.records.append((number, record))


def read(
    path: str | Path, check: Callable[[object], str | None], error: type[TrinityError], **options: Any
) -> Contents:
    """``parse`` of the file at ``path`` (a regular file only; at most ``MAX_INPUT_BYTES``); the file is not changed."""
    name = str(path)
    handle = _open(Path(path), error, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        return parse(_text(handle, name, error), name, check, error, **options)
    finally:
        os.close(handle)


def _refuse_odd(path: Path, error: type[TrinityError]) -> None:
    """``error`` unless ``path`` is a regular file or nothing: never a link, a folder, a pipe or a device."""
    if path.is_symlink():
        raise error(f"{path} is a symbolic link: refusing to write through it (remove it)")
    kind = path_kind(path)
    if kind is not None:
        raise error(f"cannot use {path}: it is {kind}, not a regular file")
    if path.is_dir():
        raise error(f"cannot use {path}: it is a folder, not a file")


def _open(path: Path, error: type[TrinityError], flags: int) -> int:
    """``path`` opened (never through a link, never a pipe: ``O_NONBLOCK``), checked regular once open."""
    _refuse_odd(path, error)
    try:
        descriptor = os.open(path, flags | getattr(os, "O_NONBLOCK", 0), 0o644)
    except OSError as err:
        raise error(f"cannot open {path}: {one_line(err.strerror or err)}") from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):  # swapped for something else after the check
        os.close(descriptor)
        raise error(f"cannot use {path}: it is not a regular file")
    return descriptor


def _text(descriptor: int, name: str, error: type[TrinityError]) -> str:
    size = os.fstat(descriptor).st_size
    if size > MAX_INPUT_BYTES:
        raise error(f"{name} is too large (over {MAX_INPUT_BYTES >> 20} MiB)")
    chunks = []
    os.lseek(descriptor, 0, os.SEEK_SET)
    while chunk := os.read(descriptor, 1 << 20):
        chunks.append(chunk)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as err:
        raise error(f"{name} is not UTF-8 text (byte {err.start}: {err.reason})") from None


def _a(noun: str) -> str:
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


def describe_header(header: Mapping[str, Any]) -> str:
    """A header's parameters in a few words: ``agent greedy, seed 0, max_nodes 2000000``."""
    shown = {key: value for key, value in header.items() if key != "format"}
    return ", ".join(f"{key} {cut(value) if isinstance(value, str) else short(value)}" for key, value in shown.items())


def warn_cut(name: str) -> None:
    """The one warning line for a cut last line."""
    print(
        f"warning: {name}: its last line was cut short (written in part when a job stopped): dropped", file=sys.stderr
    )


# ---------------------------------------------------------------------- writing


class RecordFile:
    """An open, locked record file: ``append`` writes one record a line, on disk when it returns."""

    def __init__(self, descriptor: int, name: str, end: int):
        self.descriptor, self.name, self.end = descriptor, name, end

    def append(self, record: Mapping[str, Any]) -> None:
        """Write ``record`` as one line; ``WriteError`` (one line) if it cannot, the file ending on the line before."""
        self._write((json.dumps(record) + "\n").encode("utf-8"))

    def _write(self, data: bytes) -> None:
        try:
            os.lseek(self.descriptor, self.end, os.SEEK_SET)
            view = memoryview(data)
            while view:
                view = view[write(self.descriptor, view) :]
            os.fsync(self.descriptor)
        except BaseException as err:
            with suppress(OSError):
                os.ftruncate(self.descriptor, self.end)  # no part of the line stays: the next run starts clean
            if not isinstance(err, OSError):  # Ctrl-C in the middle of the line
                raise
            reason = one_line(err.strerror or err)
            raise WriteError(
                f"cannot write {self.name}: {reason} (the records before this one are kept: run it again to go on)"
            ) from None
        self.end += len(data)

    def close(self) -> None:
        if self.descriptor >= 0:
            os.close(self.descriptor)  # releases the lock
            self.descriptor = -1


def write(descriptor: int, data: memoryview) -> int:
    """``os.write`` (a name of this module's own, so that a test can fill the disk)."""
    return os.write(descriptor, data)


def _busy(name: str) -> str:
    return f"{name} is being written by another job (it holds the lock): wait for it, or use another file"


@contextmanager
def appending(
    path: str | Path,
    header: Mapping[str, Any],
    check: Callable[[object], str | None],
    error: type[TrinityError],
    *,
    what: str = "record",
    kind: str = "record file",
    same: Callable[[Mapping[str, Any], Mapping[str, Any]], bool] | None = None,
) -> Iterator[tuple[RecordFile, Contents]]:
    """``path`` (created with ``header`` if missing) open to append to, locked, with the records it holds.

    A file with another header (``same(old, new)``; default: every key of ``header`` equal) is refused, and
    nothing is changed before that check; then a cut last line is cut off (one warning line) and a missing
    last newline written."""
    path = Path(path)
    name = str(path)
    header = json.loads(json.dumps(dict(header)))  # as the file holds it: tuples as lists
    with locked(path, error, held=_busy(name), opener=lambda p: _open(p, error, _OPEN)) as descriptor:
        contents = parse(
            _text(descriptor, name, error), name, check, error, what=what, kind=kind, header=header["format"]
        )
        old = contents.header
        if old is not None and not (same or _same)(old, header):
            raise error(
                f"{name} was built with {describe_header(old)}, not {describe_header(header)}: give another file to "
                "build with other settings, or the same settings to go on"
            )
        out = RecordFile(descriptor, name, contents.whole)
        if contents.cut:
            warn_cut(name)
        if contents.cut or contents.newline_missing or old is None:
            try:
                os.ftruncate(descriptor, contents.whole)
            except OSError as err:
                raise WriteError(f"cannot write {name}: {one_line(err.strerror or err)}") from None
            if contents.newline_missing:
                out._write(b"\n")
            if old is None:
                out._write((json.dumps(dict(header)) + "\n").encode("utf-8"))
                contents.header = dict(header)
        yield out, contents


def _same(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    return all(old.get(key) == value and type(old.get(key)) is type(value) for key, value in new.items())


class Rebuild(RecordFile):
    """A build from scratch of ``path``: records go to ``partial``; ``existed``: a file was there before."""

    def __init__(self, descriptor: int, path: Path, partial: Path, existed: bool):
        super().__init__(descriptor, str(partial), 0)
        self.path, self.partial, self.existed = path, partial, existed

    def commit(self) -> None:
        """Move the partial file over ``path`` (atomic)."""
        refuse_link(self.path)
        os.replace(self.partial, self.path)
        directory = os.open(self.path.parent, os.O_RDONLY)
        try:
            with suppress(OSError):
                os.fsync(directory)
        finally:
            os.close(directory)


@contextmanager
def rebuilding(path: str | Path, header: Mapping[str, Any], error: type[TrinityError]) -> Iterator[Rebuild]:
    """Build ``path`` from scratch (``header`` its first line): written to ``path.partial``, locked,
    and renamed over ``path`` when the block ends well.

    When the block raises (Ctrl-C, a full disk), a ``path`` that was there is left as it was and the records so far
    stay in ``path.partial`` (``Rebuild.existed`` says which); with no ``path`` before, the partial file becomes it.
    """
    path = Path(path)
    partial = path.with_name(path.name + PARTIAL)
    _refuse_odd(path, error)
    existed = path.exists()
    with locked(partial, error, held=_busy(str(partial)), opener=lambda p: _open(p, error, _OPEN)) as descriptor:
        os.ftruncate(descriptor, 0)
        out = Rebuild(descriptor, path, partial, existed)
        out._write((json.dumps(dict(header)) + "\n").encode("utf-8"))
        try:
            yield out
        except BaseException:
            if not existed:
                out.commit()
            raise
        out.commit()
