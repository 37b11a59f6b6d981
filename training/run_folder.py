"""One trainer per run folder: the lock, the start / resume / overwrite rules, the config check.

Every trainer (``fast_ppo``, ``selfplay_ppo``, ``rllib_selfplay``, ``jax_ppo``) opens its run folder with
``claim`` before it writes anything there:

- **one trainer at a time**: the trainer holds ``RUN/run.lock`` locked (``trinity_env.core.locks``: POSIX
  ``flock``, which the system releases however the trainer ends) and writes its pid and host in it, so a
  second trainer on the same folder is refused, naming the first. A lock file that no live process holds
  (its trainer was killed or crashed) is stale: the next trainer on this host takes it over and says so. A
  lock file naming another host is never taken over (its file system may not share locks between hosts).
- **a fresh start needs an empty folder**: starting without ``--resume`` where a run
  already lies is refused; ``--overwrite`` deletes that run's files first (only the files
  trainers write: a folder holding anything else is refused even then).
- **a resume needs a run**: ``--resume`` on a missing folder or one without a checkpoint or
  ``config.json`` is refused, and so is a config that differs from the run's ``config.json``
  in a field that shapes the training (the network, the hyperparameters, the opponent pool,
  the rules). A run killed before its first checkpoint (``config.json`` but no checkpoint)
  resumes by starting again from the beginning, so a plain start ("--resume continues it")
  and ``--resume`` never send the user back and forth, but only when nothing of value is
  there (``worth_keeping``: any checkpoint, ``best.pt`` included, a ``metrics.csv`` with a row,
  TensorBoard events): then ``--resume`` refuses in one line naming them, and only
  ``--overwrite`` deletes a run.
- **no links, no partial files**: any file or folder a trainer writes or deletes that is a
  symbolic link (``config.json``, ``latest.pt``, ``tb``, a ``*.tmp``, the lock) is refused
  before anything is written; every file is written through ``trinity_env.core.writes``
  (a ``.tmp`` opened with ``O_EXCL | O_NOFOLLOW``, fsynced, renamed), so a full disk or an
  I/O error is one line and the previous checkpoint stays whole. A lock whose writing fails
  is removed.
  Which fields may change is the config's ``resume_may_change`` (for ``TrainConfig``: how
  long to train, the safety stop, the evaluations, TensorBoard) and, for a field outside it, its
  ``resume_equivalent`` (``AZConfig``: ``label_workers`` between positive counts); a field the run's ``config.json``
  spells the old way (the config's ``retired``) is refused naming its name now. Nothing in the folder is
  touched before these checks pass, nor before the files the config names are checked (``check_files``: AlphaZero's
  ``initial_network``, loaded as the run will load it), so a refused file never leaves a ``config.json`` that makes
  the corrected command "already hold a run".

Every refusal is a ``RunFolderError`` with a one-line message; the trainers' command lines
print it and exit with status 2. A write that fails (``config.json``, the lock) is a ``WriteError``:
one line and status 1, as for any file not written.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from trinity_env.core import TrinityError
from trinity_env.core.errors import WriteError
from trinity_env.core.locks import locked
from trinity_env.core.writes import remove_leftovers, write_text

from .config import TrainConfigError, YAMLConfig

LOCK = "run.lock"
"""The lock file's name inside a run folder."""

RUN_FILES = frozenset(
    {
        "config.json",
        "metrics.csv",
        "report.md",
        "win_rate.png",
        "tb",  # every trainer
        "latest.pt",
        "best.pt",  # fast_ppo (and rllib_selfplay)
        "latest.zip",
        "best.zip",  # selfplay_ppo
        "iterations.jsonl",
        "checkpoint",
        "progress.json",  # rllib_selfplay
        "latest.npz",
        "params.npz",
        "policy.onnx",
        "summary.json",  # jax_ppo
    }
)
"""What trainers write in a run folder: what ``--overwrite`` may delete (with ``*.tmp`` leftovers)."""


class RunFolderError(TrinityError):
    """A run folder that this trainer may not use as asked; the message says why, in one line."""


@dataclass(frozen=True)
class RunFolder:
    """A claimed run folder: ``path``, and whether the trainer continues the run there (``resuming``)."""

    path: Path
    resuming: bool
    trainer: str


_HELD: dict[tuple[str, int], RunFolder] = {}


@contextmanager
def claim(
    path: str | Path,
    config: YAMLConfig,
    trainer: str,
    *,
    resume: bool = False,
    overwrite: bool = False,
    checkpoint: str = "latest.pt",
) -> Iterator[RunFolder]:
    """Lock ``path`` for ``trainer`` and check the rules above; ``RunFolderError`` says why not.

    ``checkpoint``: the file a resume continues from. Writes ``config.json`` (the new config) once the checks pass,
    the config's own ``check_files`` (a pre-trained network it names) first of all. Nested claims of the same folder
    in the same thread (the command line holds it for training and report, ``train`` claims it again) reuse the first
    one.
    """
    path = Path(path)
    key = (str(path.resolve()), threading.get_ident())
    if key in _HELD:
        yield _HELD[key]
        return
    if resume and overwrite:
        raise RunFolderError("--resume continues a run and --overwrite deletes it: choose one")
    config.check_files()  # a file the config names (initial_network), refused before the folder is touched
    if path.exists() and not path.is_dir():
        raise RunFolderError(f"run folder {path} is a file, not a folder")
    unsaved = resume and not (path / checkpoint).is_file()  # a run stopped before its first checkpoint
    if unsaved and not (path / "config.json").is_file():
        what = "does not exist" if not path.exists() else f"holds no {checkpoint} and no config.json"
        raise RunFolderError(f"nothing to resume: {path} {what} (start the run without --resume)")
    if not resume:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise RunFolderError(f"cannot create run folder {path}: {err.strerror or err}") from None
    _refuse_links(path)
    with locked(path / LOCK, RunFolderError, held=_in_use(path), opener=_open_lock) as descriptor:
        _take(path, descriptor, trainer)
        remove_leftovers(path)  # the temporary files of a killed trainer (never a live writer's)
        try:
            if resume:
                _check_resume(path, config)
            if unsaved:
                kept = worth_keeping(path)
                if kept:
                    raise RunFolderError(
                        f"cannot resume {path}: it holds no {checkpoint} to continue from, but it holds "
                        f"{', '.join(kept)}; --resume never deletes them "
                        "(--overwrite deletes the run and starts afresh)"
                    )
                print(f"{path}: its run stopped before its first checkpoint: starting it again", file=sys.stderr)
            if not resume or unsaved:
                _clear(path, overwrite or unsaved)
            write_text(path / "config.json", json.dumps(config.to_dict(), indent=1) + "\n")  # else WriteError
            folder = RunFolder(path, resume and not unsaved, trainer)
            _HELD[key] = folder
            try:
                yield folder
            finally:
                del _HELD[key]
        finally:
            (path / LOCK).unlink(missing_ok=True)  # while still locked: the next claim locks a file of its own


def saved_config(path: Path) -> dict[str, Any]:
    """The run's ``config.json``; ``RunFolderError`` if it is missing or unreadable."""
    try:
        data = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunFolderError(f"cannot resume {path}: its config.json is missing") from None
    except (OSError, ValueError) as err:
        raise RunFolderError(f"cannot resume {path}: config.json is unreadable ({err})") from None
    if not isinstance(data, dict):
        raise RunFolderError(f"cannot resume {path}: config.json is not a mapping of fields")
    return data


def resume_conflicts(config: YAMLConfig, saved: dict[str, Any]) -> list[str]:
    """``field: saved -> new`` for every field that differs and may not change on resume.

    A field missing from ``saved`` (a run from before the field existed) counts as its default; a field spelt the old
    way (the config's ``retired``: a run from before the rename) is a ``TrainConfigError`` naming its name now.
    """
    config.refuse_retired(saved, "config.json")
    new = json.loads(json.dumps(config.to_dict()))  # tuples as lists, as config.json holds them
    defaults = json.loads(json.dumps(type(config)().to_dict()))
    names = {f.name for f in fields(config)}
    conflicts = [f"{name}: unknown field {saved[name]!r}" for name in sorted(set(saved) - names)]
    for name in sorted(names - set(config.resume_may_change)):
        old = saved.get(name, defaults[name])
        if not config.resume_equivalent(name, old, new[name]):
            conflicts.append(f"{name}: {old!r} -> {new[name]!r}")
    return conflicts


def _check_resume(path: Path, config: YAMLConfig) -> None:
    try:
        conflicts = resume_conflicts(config, saved_config(path))
    except TrainConfigError as err:  # its config.json gives a field under a retired name
        raise RunFolderError(f"cannot resume {path}: {err}") from None
    if conflicts:
        may = ", ".join(sorted(config.resume_may_change))
        raise RunFolderError(
            f"cannot resume {path}: the config differs from its config.json in {'; '.join(conflicts)} "
            f"(only {may} may change on resume; start a new run for the rest)"
        )


CHECKPOINTS = ("latest.pt", "best.pt", "latest.zip", "best.zip", "progress.json", "latest.npz")
"""Files a trainer resumes or plays from: a run holding any of them is never started again by ``--resume``."""


def worth_keeping(path: Path) -> list[str]:
    """What in ``path`` a restart would lose: any checkpoint, a non-empty ``checkpoint`` folder, a ``metrics.csv`` or
    ``iterations.jsonl`` with a row of results, TensorBoard events under ``tb``."""
    kept = [name for name in CHECKPOINTS if (path / name).is_file()]
    folder = path / "checkpoint"
    if folder.is_dir() and not folder.is_symlink() and any(folder.iterdir()):
        kept.append("checkpoint/")
    for name, header_rows in (("metrics.csv", 1), ("iterations.jsonl", 0)):
        if _rows(path / name) > header_rows:
            kept.append(name)
    tb = path / "tb"
    if tb.is_dir() and not tb.is_symlink() and any("tfevents" in p.name for p in tb.rglob("*") if p.is_file()):
        kept.append("TensorBoard events in tb/")
    return kept


def _rows(file: Path) -> int:
    """Non-empty lines of ``file`` (0 if it is missing or not a regular file; an unreadable one counts as 2)."""
    if file.is_symlink() or not file.is_file():
        return 0
    try:
        with file.open("rb") as handle:
            return sum(1 for line in handle if line.strip())
    except OSError:
        return 2


def _refuse_links(path: Path) -> None:
    """Nothing a trainer writes or deletes in ``path`` may be a symbolic link (it would write or delete elsewhere)."""
    for entry in path.iterdir():
        if entry.is_symlink() and (entry.name in RUN_FILES or entry.name.endswith(".tmp") or entry.name == LOCK):
            raise RunFolderError(f"{entry} is a symbolic link: a trainer never writes through one (remove it)")


def _clear(path: Path, overwrite: bool) -> None:
    entries = sorted(p.name for p in path.iterdir() if p.name != LOCK)
    if not entries:
        return
    if not overwrite:
        shown = ", ".join(entries[:4]) + (", ..." if len(entries) > 4 else "")
        raise RunFolderError(
            f"{path} already holds a run ({shown}): --resume continues it, --overwrite deletes it and starts again"
        )
    foreign = [name for name in entries if name not in RUN_FILES and not name.endswith((".tmp", ".tmp.zip"))]
    if foreign:
        shown = ", ".join(foreign[:4]) + (", ..." if len(foreign) > 4 else "")
        raise RunFolderError(f"{path} holds files no trainer wrote ({shown}): --overwrite keeps out; use a new folder")
    for name in entries:
        target = path / name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink()


# ---------------------------------------------------------------------------------- the lock


def _open_lock(lock: Path) -> int:
    """The lock file, created if missing, never through a link."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(lock, flags, 0o644)
    except OSError as err:
        raise RunFolderError(f"cannot write to run folder {lock.parent}: {err.strerror or err}") from None


def _owner(descriptor: int) -> tuple[dict[str, Any] | None, bool]:
    """Who the lock file names (``None`` if no one readable), and whether it holds anything at all."""
    text = os.pread(descriptor, 4096, 0)
    try:
        data = json.loads(text.decode("utf-8"))
    except ValueError:
        return None, bool(text)
    return (data if isinstance(data, dict) else None), True


def _who(owner: dict[str, Any]) -> str:
    return f"{owner.get('trainer', 'a trainer')} (pid {owner.get('pid')} on {owner.get('host')})"


def _in_use(path: Path) -> Callable[[int], str]:
    """The refusal while another trainer holds the lock, naming it from what the lock file holds."""

    def message(descriptor: int) -> str:
        owner, _ = _owner(descriptor)
        if owner is None:
            return f"{path} is being claimed by another trainer ({path / LOCK} is being written)"
        return f"{path} is in use by {_who(owner)} since {owner.get('since')}: one trainer per run folder"

    return message


def _me(trainer: str) -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "trainer": trainer,
        "since": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def _take(path: Path, descriptor: int, trainer: str) -> None:
    """With the lock held: refuse a lock file naming another host, say so when taking over a dead trainer's, and
    write this trainer into it (a write that fails removes it: ``WriteError``)."""
    lock = path / LOCK
    owner, written = _owner(descriptor)
    if owner is not None and owner.get("host") != socket.gethostname():
        raise RunFolderError(f"{path} is locked by {_who(owner)}, another host: if nothing runs there, delete {lock}")
    if written:  # its trainer is gone: the lock would still be held otherwise
        stale = "an unreadable lock" if owner is None else f"the lock of {_who(owner)}, which no longer runs"
        print(f"{path}: taking over {stale}", file=sys.stderr)
    me = _me(trainer)
    try:
        os.ftruncate(descriptor, 0)
        with os.fdopen(os.dup(descriptor), "w", encoding="utf-8") as handle:
            handle.write(json.dumps(me) + "\n")
    except OSError as err:  # a full disk: a lock file left behind would say a trainer holds it
        lock.unlink(missing_ok=True)
        raise WriteError(f"cannot write {lock}: {err.strerror or err}") from None
