"""The one door for paths a user names: inputs, outputs, record files, configs and run folders.

Every path is looked at with ``os.stat`` (never opened) before anything reads or writes it, and
refused in one line when it cannot be what is wanted:

- a named pipe (opening one blocks until a writer or reader comes: forever), a device
  (``/dev/zero`` never ends; ``/dev/stdout`` is not a file), a socket, or a regular file that
  cannot be sought (``/proc/self/mem``);
- a folder where a file is wanted, or a file where a folder is wanted;
- a name holding a NUL character (no file can have one), or an empty name;
- for an output, a symbolic link (files are written atomically beside their name and renamed
  over it, ``core.writes``, never through a link) or a folder on the way that is a file.

``input_file``, ``output_file``, ``record_file`` (read, then appended to) and ``output_folder``
check without side effects (the command lines call them while parsing, ``trinity_env.arguments``);
``prepare_file`` and ``prepare_folder`` then create what is missing and prove it writable, before
any work; ``open_regular`` opens a file for reading only if it is regular, and ``open_output``
for writing only if it is (both with ``O_NONBLOCK``, so a pipe swapped in after the ``stat``
cannot block the open). What is read is capped by the readers (``core.files.read_text``).
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from trinity_env.core.errors import TrinityError

_NOT_REGULAR = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)
UNSEEKABLE = "a special file that cannot be sought"
"""What a regular file is that refuses ``seek`` (``/proc/self/mem``): no loader can size or read it."""
_NONBLOCK = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def _shown(path: str | Path) -> str:
    """A path for a message: ``repr``-quoted when it holds a control character, cut to 200 characters."""
    text = str(path)
    text = text if text.isprintable() else ascii(text)
    return text if len(text) <= 200 else text[:197] + "..."


def not_regular(mode: int) -> str | None:
    """What a file of ``mode`` is when it is not a regular file ("a named pipe", "a folder", ...), else ``None``."""
    if stat.S_ISREG(mode):
        return None
    return next((kind for check, kind in _NOT_REGULAR if check(mode)), "not a regular file")


def name_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot name a file at all (empty, or a NUL character in it), else ``None``."""
    text = os.fspath(path) if isinstance(path, str | Path) else None
    if not isinstance(text, str):
        return f"a path must be a string, got {type(path).__name__}"
    if not text:
        return "an empty path names no file"
    if "\x00" in text:
        return "a path cannot hold a NUL character"
    return None


def _stat(path: str | Path, follow: bool = True) -> os.stat_result | None:
    """``os.stat`` of ``path`` (``os.lstat`` with ``follow=False``); ``None`` when nothing is there."""
    try:
        return os.stat(path) if follow else os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def path_kind(path: str | Path) -> str | None:
    """What ``path`` is when it is there but neither a regular file nor a folder ("a named pipe",
    "a socket", "a device"), else ``None`` (a file, a folder, or nothing there: the loaders name a missing file).

    Asked with ``os.stat``, without opening: opening a named pipe blocks until something
    writes to it, and a device such as ``/dev/zero`` never ends.
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # missing, unreadable, a dangling link, a NUL in the name
        return None
    return None if stat.S_ISDIR(mode) else not_regular(mode)


def refuse_special(
    path: str | Path, error: type[Exception] = TrinityError, wanted: str = "a checkpoint file or run folder"
) -> None:
    """Raise ``error`` (one line) if ``path`` is a named pipe, a device or a socket (see ``path_kind``), or holds
    a NUL character."""
    if isinstance(path, str | Path) and "\x00" in str(path):
        raise error(f"{_shown(path)} is not {wanted}: a path cannot hold a NUL character")
    kind = path_kind(path)
    if kind is not None:
        raise error(f"{_shown(path)} is {kind}, not {wanted}: refused without opening it")


def _seekable(handle: IO[bytes]) -> bool:
    try:
        handle.seek(0, io.SEEK_END)
        handle.seek(0)
    except OSError:
        return False
    return True


def open_regular(path: str | Path) -> tuple[IO[bytes] | None, str | None, int]:
    """``path`` opened for reading if it is a regular file; else ``None`` and what it is.

    A named pipe is never read (reading one blocks until a writer comes, forever), nor a
    device (``/dev/zero`` never ends), nor a file that cannot be sought (``/proc/self/mem``);
    opening with ``O_NONBLOCK`` keeps a pipe swapped in after the ``stat`` from blocking the open.
    ``ValueError`` for a NUL in the name (as ``os.stat`` raises it).
    """
    kind = not_regular(os.stat(path).st_mode)
    if kind is not None:
        return None, kind, 0
    handle = os.fdopen(os.open(path, os.O_RDONLY | _NONBLOCK), "rb")
    try:
        info = os.fstat(handle.fileno())
        kind = not_regular(info.st_mode) or (None if _seekable(handle) else UNSEEKABLE)
    except BaseException:
        handle.close()
        raise
    if kind is not None:
        handle.close()
        return None, kind, 0
    return handle, None, info.st_size


# ---------------------------------------------------------------------- checks without side effects


def input_file(
    path: str, what: str = "file", error: type[Exception] = TrinityError, stdin: bool = True, missing: bool = False
) -> str:
    """``path`` if it names a regular file there is to read (``"-"``, standard input, when ``stdin``; nothing there,
    when ``missing``: the reader names it); else ``error``: one line saying what it is."""
    if stdin and path == "-":
        return path
    problem = name_problem(path)
    if problem is not None:
        raise error(f"cannot read {what} {_shown(path)}: {problem}")
    try:
        info = _stat(path)
    except OSError as err:
        raise error(f"cannot read {what} {_shown(path)}: {err.strerror or err}") from None
    if info is None:
        if missing:
            return path
        raise error(f"cannot read {what} {_shown(path)}: No such file or directory")
    problem = _not_a_file(info)
    if problem is not None:
        raise error(f"cannot read {what} {_shown(path)}: {problem}")
    return path


def _not_a_file(info: os.stat_result) -> str | None:
    """Why what ``info`` describes is not a regular file to read or write, else ``None``."""
    kind = not_regular(info.st_mode)
    if kind == "a folder":
        return "it is a folder, not a file"
    if kind is not None:
        return f"it is {kind}, not a regular file (refused without opening it)"
    return None


def _ancestors_problem(path: Path) -> str | None:
    """Why the folders above a missing ``path`` cannot hold it (one of them is a file or a special file)."""
    for parent in path.parents:
        try:
            info = _stat(parent)
        except OSError as err:
            return f"cannot look at {_shown(parent)} ({err.strerror or err})"
        if info is None:
            continue
        return None if stat.S_ISDIR(info.st_mode) else f"{_shown(parent)} is {not_regular(info.st_mode) or 'a file'}"
    return None


def _output_stat(path: str, what: str, error: type[Exception], link: bool) -> os.stat_result | None:
    """What is at ``path``, where something is to be written: ``None`` when nothing is there yet and the folders
    above it can hold it; else ``error`` in one line for a bad name, a folder on the way that is not one, or a
    symbolic link (unless ``link``)."""
    problem = name_problem(path)
    if problem is not None:
        raise error(f"{what} {_shown(path)}: {problem}")
    try:
        linked = None if link else _stat(path, follow=False)
        info = _stat(path)
    except OSError as err:
        raise error(f"{what} {_shown(path)}: cannot look at it ({err.strerror or err})") from None
    if linked is not None and stat.S_ISLNK(linked.st_mode):
        raise error(f"{what} {_shown(path)}: it is a symbolic link (files are never written through one)")
    if info is None:
        problem = _ancestors_problem(Path(path))
        if problem is not None:
            raise error(f"{what} {_shown(path)}: cannot write there ({problem})")
    return info


def output_file(path: str, what: str = "output", error: type[Exception] = TrinityError, link: bool = False) -> str:
    """``path`` if a file may be written there: nothing yet (the folders above it folders or missing) or a regular
    file, never a link (unless ``link``: a record file appended to in place); else ``error`` in one line."""
    info = _output_stat(path, what, error, link)
    problem = None if info is None else _not_a_file(info)
    if problem is not None:
        raise error(f"{what} {_shown(path)}: {problem}")
    return path


def record_file(path: str, what: str = "record file", error: type[Exception] = TrinityError) -> str:
    """``path`` if it is a record file to read and append to (a regular file, or nothing yet); see ``output_file``."""
    return output_file(path, what, error, link=True)


def output_folder(path: str, what: str = "folder", error: type[Exception] = TrinityError) -> str:
    """``path`` if files may be written in it: a folder, or nothing yet (the folders above it folders or missing)."""
    info = _output_stat(path, what, error, link=True)  # a link to a folder is a folder
    if info is not None and not stat.S_ISDIR(info.st_mode):
        kind = not_regular(info.st_mode) or "a file"
        raise error(f"{what} {_shown(path)}: it is {kind}, not a folder")
    return path


# ---------------------------------------------------------------------- before the work: create and prove writable


def prepare_folder(path: str, what: str, names: Sequence[str] = (), error: type[Exception] = TrinityError) -> None:
    """Create the folder ``path`` and prove it writable (a test file written and removed); each of ``names`` in it
    must be a regular file that may be overwritten, or missing."""
    output_folder(path, what, error)
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".trinity-write-test-{os.getpid()}"
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NONBLOCK, 0o644))
        probe.unlink()
    except OSError as err:
        raise error(f"{what} {_shown(path)}: cannot write there ({err.strerror or err})") from None
    for name in names:
        target = folder / name
        if (os.path.lexists(target) and not os.path.isfile(target)) or os.path.islink(target):
            raise error(f"{what} {_shown(path)}: {_shown(target)} is in the way (not a regular file)")
        if os.path.exists(target) and not os.access(target, os.W_OK):
            raise error(f"{what} {_shown(path)}: cannot overwrite {_shown(target)} (permission denied)")


def prepare_file(path: str, what: str, error: type[Exception] = TrinityError, link: bool = False) -> None:
    """Prove ``path`` writable (its folder created), an existing file kept as it is."""
    output_file(path, what, error, link)
    target = Path(path)
    existed = target.exists()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle = open_output(target, append=True)
        handle.close()
        if not existed:
            target.unlink()
    except OSError as err:
        raise error(f"{what} {_shown(path)}: cannot write there ({err.strerror or err})") from None
    except TrinityError as err:
        raise error(f"{what} {err}") from None


def open_output(path: str | Path, append: bool = False) -> IO[bytes]:
    """``path`` opened for writing (created; truncated unless ``append``) if it is a regular file, else
    ``TrinityError``; ``O_NONBLOCK``: a named pipe without a reader fails at once instead of blocking."""
    info = _stat(path)
    kind = None if info is None else not_regular(info.st_mode)
    if kind is not None:
        raise TrinityError(f"{_shown(path)}: it is {kind}, not a regular file (refused without opening it)")
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC) | _NONBLOCK
    if not append:  # truncate only once the file is known to be regular
        flags &= ~os.O_TRUNC
    handle = os.fdopen(os.open(path, flags, 0o644), "ab" if append else "wb")
    try:
        kind = not_regular(os.fstat(handle.fileno()).st_mode)
        if kind is not None:
            raise TrinityError(f"{_shown(path)}: it is {kind}, not a regular file")
        if not append:
            handle.truncate(0)
    except BaseException:
        handle.close()
        raise
    return handle
