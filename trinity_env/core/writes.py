"""Writing files so that a crash, a full disk or a planted link never leaves a wrong one.

Trainers write their run folders for hours and a user may share such a folder: a write that
fails halfway, or a ``latest.pt.tmp`` that someone replaced by a link to a file elsewhere, must
not cost the previous checkpoint or write outside the folder. So every file is written here:

- into ``NAME.tmp`` beside it, opened with ``O_CREAT | O_EXCL | O_NOFOLLOW`` (never through a
  link; a leftover regular ``.tmp`` of a crash is removed first, a link there is refused);
- flushed and fsynced, then renamed over ``NAME`` (atomic), and the folder fsynced;
- never over a link: an existing ``NAME`` that is a symbolic link is refused before writing;
- never cut by Ctrl-C or SIGTERM: a stop waits for the file to be whole, then acts.

Any failure (disk full, an I/O error, a read-only folder) removes the temporary file, leaves
``NAME`` as it was and raises ``WriteError`` with one line naming the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

from trinity_env.core.errors import WriteError
from trinity_env.core.files import one_line
from trinity_env.core.stops import signals_held

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def refuse_link(path: Path) -> None:
    """``WriteError`` if ``path`` is a symbolic link: a file is never written through one."""
    if path.is_symlink():
        raise WriteError(f"{path} is a symbolic link: refusing to write through it (remove it)")


def os_error_in(err: BaseException) -> OSError | None:
    """The ``OSError`` behind ``err`` (torch wraps a failed write in a ``RuntimeError``), if any."""
    seen = 0
    while err is not None and seen < 10:
        if isinstance(err, OSError):
            return err
        err = err.__cause__ or err.__context__
        seen += 1
    return None


def _open_temporary(temporary: Path, path: Path) -> int:
    for _ in range(2):
        try:
            return os.open(temporary, _FLAGS, 0o644)
        except FileExistsError:
            refuse_link(temporary)
            with suppress(FileNotFoundError):
                temporary.unlink()  # a crash's leftover: its content is worthless
        except OSError as err:
            raise WriteError(f"cannot write {path}: {one_line(err.strerror or err)}") from None
    raise WriteError(f"cannot write {path}: {temporary} keeps reappearing (another writer?)")


@contextmanager
def atomic_file(path: str | Path) -> Iterator[BinaryIO]:
    """A binary file to write ``path``'s new content into; it replaces ``path`` only when the block ends well.
    Ctrl-C or SIGTERM inside the block waits for its end (``signals_held``): a file begun is written whole, and a
    writer stopped halfway (a zip's member open) cannot raise its own error in place of the stop."""
    path = Path(path)
    refuse_link(path)
    temporary = path.with_name(path.name + ".tmp")
    with signals_held():
        descriptor = _open_temporary(temporary, path)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
            refuse_link(path)
            os.replace(temporary, path)
        except BaseException as err:
            with suppress(OSError):
                temporary.unlink()
            cause = os_error_in(err)
            if cause is not None and not isinstance(err, WriteError):
                raise WriteError(f"cannot write {path}: {one_line(cause.strerror or cause)}") from None
            raise
        _sync_folder(path.parent)


def write_bytes(path: str | Path, content: bytes) -> None:
    """``path`` holds ``content`` afterwards, or is untouched (see the module docstring)."""
    with atomic_file(path) as handle:
        handle.write(content)


def write_text(path: str | Path, text: str) -> None:
    """``write_bytes`` of UTF-8 text."""
    write_bytes(path, text.encode("utf-8"))


def open_append(path: str | Path) -> BinaryIO:
    """``path`` opened for appending (created if missing), never through a link."""
    path = Path(path)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as err:
        refuse_link(path)
        raise WriteError(f"cannot write {path}: {one_line(err.strerror or err)}") from None
    return os.fdopen(descriptor, "ab")


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (best effort: some filesystems refuse to fsync a folder)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
