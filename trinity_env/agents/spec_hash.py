"""The files an agent spec reads and their hash: what ``AgentSpec.files`` lists and ``AgentSpec.sha256`` hashes.

A run folder plays its ``best`` checkpoint unless that is damaged, so both its ``best`` and ``latest`` count
(``run_files``). A file is hashed by its name, its size and its bytes (``hash_file``), read as every loader reads
one: a regular file only (a named pipe or device is refused without blocking), at most ``MAX_HASHED_BYTES``, and
never past the size its stat gave. Every refusal is one ``CheckpointError`` line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from trinity_env.agents import registry
from trinity_env.agents.loaders.checkpoint import MAX_CHECKPOINT_BYTES, CheckpointError
from trinity_env.core.files import short
from trinity_env.core.paths import open_regular

MAX_HASHED_BYTES = MAX_CHECKPOINT_BYTES
"""The most bytes ``AgentSpec.sha256`` reads of one file: the most a checkpoint is read at."""


def run_files(folder: Path, suffix: str) -> list[Path]:
    """A run folder's ``best`` and ``latest`` of ``suffix`` that are there; neither is one ``CheckpointError`` line."""
    files = [folder / f"{n}{suffix}" for n in ("best", "latest") if os.path.lexists(folder / f"{n}{suffix}")]
    if not files:
        raise CheckpointError(f"no checkpoint in the run folder {folder}: no best{suffix} or latest{suffix}")
    return files


def hash_file(path: Path, spec: str, digest: Any) -> None:
    """Feed ``path``'s size and bytes to ``digest``; a file that is not a plain, bounded, readable file is one
    ``CheckpointError`` line (a named pipe or device is refused without blocking, as every loader does)."""
    try:
        handle, kind, size = open_regular(path)
    except FileNotFoundError:
        raise CheckpointError(f"no checkpoint at {path} (agent {short(spec)})") from None
    except OSError as err:
        raise registry.unreadable(spec, err) from None
    if handle is None:
        raise CheckpointError(f"{path} is {kind}, not a checkpoint file (agent {short(spec)})")
    if size > MAX_HASHED_BYTES:
        handle.close()
        raise CheckpointError(f"{path} is over {MAX_HASHED_BYTES:,} bytes, the most a checkpoint is read at")
    digest.update(f"{path.name}\x00{size}\x00".encode())
    read = 0
    try:
        with handle:  # never past the size its stat gave (+1 to notice more): a /proc file's 0 says nothing
            while read <= size:
                block = handle.read(min(1 << 20, size + 1 - read))
                if not block:
                    break
                digest.update(block)
                read += len(block)
    except OSError as err:
        raise registry.unreadable(spec, err) from None
    if read != size:
        got = "more" if read > size else f"{read:,}"
        raise CheckpointError(
            f"{path} does not hold the {size:,} bytes its stat gives ({got} read): a /proc file or one being written"
        )
