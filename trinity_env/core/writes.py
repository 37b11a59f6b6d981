"""Writing files so that a crash, a full disk or a planted link never leaves a wrong one.

Trainers write their run folders for hours and a user may share such a folder: a write that
fails halfway, or a temporary file that someone replaced by a link to a file elsewhere, must
not cost the previous checkpoint or write outside the folder. So every file is written here:

- into a temporary file of its own beside it, ``NAME.HOST-PID-TOKEN.tmp`` (the writer's host, process and a random
  token, so two writers of one ``NAME`` never meet), opened with ``O_CREAT | O_EXCL | O_NOFOLLOW`` (never through a
  link); the leftovers of a crash are removed by ``remove_leftovers`` only once their writer is dead;
- flushed and fsynced, then renamed over ``NAME`` (atomic), and the folder fsynced;
- never over a link: an existing ``NAME`` that is a symbolic link is refused before writing;
- never cut by Ctrl-C or SIGTERM: a stop waits for the file to be whole, then acts.

Any failure (disk full, an I/O error, a read-only folder) removes the temporary file, leaves
``NAME`` as it was and raises ``WriteError`` with one line naming the file. Two writers of one ``NAME`` both
succeed, the later rename winning; ``writing_folder`` keeps a second job out of an output folder for a whole run.
A figure is written with ``write_figure``: no result is written anywhere but here.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import socket
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, BinaryIO

from trinity_env.core.errors import WriteError
from trinity_env.core.files import one_line
from trinity_env.core.locks import locked
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


def _host() -> str:
    """Six hex digits of this machine's name: a leftover of another host's writer is never taken for a dead one's."""
    return hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:6]


_LEFTOVER = re.compile(r"\.(?P<host>[0-9a-f]{6})-(?P<pid>[0-9]+)-[0-9a-f]{8}\.tmp$")
"""The tail of a writer's temporary name: its host, its process id and its random token."""


def temporary_name(path: Path) -> Path:
    """The temporary file this process writes ``path`` into: its own (host, pid, a random token), never another
    writer's."""
    return path.with_name(f"{path.name}.{_host()}-{os.getpid()}-{secrets.token_hex(4)}.tmp")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OverflowError:  # a pid no process can have
        return False
    except PermissionError:  # another user's process: alive
        pass
    return True


def remove_leftovers(folder: str | Path) -> list[Path]:
    """Remove the temporary files in ``folder`` whose writer is dead (a process of this host that is gone: a crash,
    ``kill -9``); a live writer's, another host's and any link are left alone. The removed paths."""
    removed, host = [], _host()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = _LEFTOVER.search(entry.name)
        if match is None or match["host"] != host or _alive(int(match["pid"])):
            continue
        if entry.is_file(follow_symlinks=False):
            with suppress(OSError):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def _open_temporary(temporary: Path, path: Path) -> int:
    try:
        return os.open(temporary, _FLAGS, 0o644)
    except FileExistsError:  # a random name of this very process taken: only a link planted in its way does that
        refuse_link(temporary)
        raise WriteError(f"cannot write {path}: {temporary} is in the way") from None
    except OSError as err:
        raise WriteError(f"cannot write {path}: {one_line(err.strerror or err)}") from None


@contextmanager
def atomic_file(path: str | Path) -> Iterator[BinaryIO]:
    """A binary file to write ``path``'s new content into; it replaces ``path`` only when the block ends well.
    Ctrl-C or SIGTERM inside the block waits for its end (``signals_held``): a file begun is written whole, and a
    writer stopped halfway (a zip's member open) cannot raise its own error in place of the stop."""
    path = Path(path)
    refuse_link(path)
    temporary = temporary_name(path)
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


def write_figure(path: str | Path, figure: Any, **options: Any) -> None:
    """A matplotlib ``figure`` saved to ``path`` as ``write_bytes`` writes (never through a link); its format from
    the name's suffix (``.png``), ``options`` as ``savefig`` takes them."""
    path = Path(path)
    with atomic_file(path) as handle:
        figure.savefig(handle, format=path.suffix.lstrip(".").lower() or "png", **options)


@contextmanager
def writing_folder(folder: str | Path, error: type[Exception], what: str = "the folder") -> Iterator[None]:
    """Hold ``folder`` (one that exists: ``core.paths.prepare_folder`` makes it) for one job's writes: a second job
    is refused at once with one line (``error``); the lock is the folder's own (``flock``), so a killed job leaves
    none. The temporary files of dead writers in it are removed first (``remove_leftovers``)."""
    folder = Path(folder)
    held = f"{what} {folder} is being written by another job: wait for it to finish or choose another folder"
    with locked(folder, error, held=held):
        remove_leftovers(folder)
        yield


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
