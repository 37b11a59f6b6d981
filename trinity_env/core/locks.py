"""One exclusive lock on a file or a folder for the length of a block: the one lock every job that writes a shared
file takes (record files, solved openings, the dataset's manifest, a run folder).

The lock is POSIX ``flock`` on a descriptor of its own, so the system releases it when the holder exits, however it
exits: a killed job leaves no stale lock to clear. ``locked`` opens the path (or lets the caller open it, with its
own checks), takes the lock, waiting for it (``blocking``) or refusing at once with ``error`` in one line, and
checks that the path still names the file it locked (a file renamed or removed meanwhile is opened and locked
again), so that a lock file may be removed by its holder. Where there is no ``flock`` (Windows) there is no lock.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

TRIES = 5
"""How often ``locked`` opens and locks again when the path was replaced between its open and its lock."""


def _open_read(path: Path) -> int:
    return os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))


def _same_file(descriptor: int, path: Path) -> bool:
    try:
        named = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(descriptor)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


@contextmanager
def locked(
    path: str | Path,
    error: type[Exception],
    *,
    held: str | Callable[[int], str] | None = None,
    blocking: bool = False,
    opener: Callable[[Path], int] = _open_read,
) -> Iterator[int]:
    """Hold an exclusive lock on ``path`` for the block; yields the locked descriptor (closed, and so unlocked,
    when the block ends).

    ``opener(path)`` opens it (default: for reading, which a folder allows too; its errors are its own).
    ``blocking``: wait while another holds the lock; otherwise raise ``error(held)`` at once: ``held`` is the
    one-line message (default: "PATH is locked by another job"), or a function of the open descriptor that
    writes it (to say who holds the lock from what the file holds).
    """
    path = Path(path)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        fcntl = None
    for _ in range(TRIES):
        descriptor = opener(path)
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(descriptor, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
                except BlockingIOError:
                    message = held(descriptor) if callable(held) else held
                    raise error(message or f"{path} is locked by another job: wait for it") from None
                except OSError as err:  # no locks on this file system (ENOLCK), say
                    raise error(f"cannot lock {path}: {err.strerror or err}") from None
                if not _same_file(descriptor, path):  # replaced (or removed) by its holder before we locked it
                    continue
            yield descriptor
            return
        finally:
            with suppress(OSError):
                os.close(descriptor)
    raise error(f"{path}: could not lock it ({TRIES} times replaced while being locked)")
