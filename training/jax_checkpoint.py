"""The JAX trainer's checkpoint, ``latest.npz``: its whole training state and its progress, so that ``--resume``
continues a run exactly as the run would have gone on (the same seed gives the same policy, stopped or not).

The state is ``training.jax_ppo.TrainState``: the network, Adam's moments, the pool of past selves, the games under
way, the key and the update count. The file is an ``.npz`` of plain arrays: ``leaf_000``, ``leaf_001``, ... (the
state's leaves in its tree's order) and ``progress`` (the trainer's counts and evaluation history, as JSON bytes).
It is read through the zip door (``open_zip``) and nothing in it is unpickled: each entry's header is checked against
the shape and dtype the run's config gives that leaf before its data is read, so loading allocates no more than the
state it restores; anything else is a ``RunFolderError`` in one line.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from trinity_env.core.writes import atomic_file
from trinity_env.core.zips import open_zip

from .run_folder import RunFolderError

CHECKPOINT = "latest.npz"
"""The checkpoint's name in the run folder."""
MAX_PROGRESS_BYTES = 1 << 24
"""The largest progress record read back (its evaluation history grows by about 600 bytes an evaluation)."""
_PROGRESS = "progress"


def save_checkpoint(path: Path, state: Any, progress: dict[str, Any]) -> None:
    """Write ``state`` (a pytree of arrays) and ``progress`` (JSON-able) to ``path``, whole or not at all."""
    arrays = {f"leaf_{i:03d}": np.asarray(leaf) for i, leaf in enumerate(jax.tree_util.tree_leaves(state))}
    arrays[_PROGRESS] = np.frombuffer(json.dumps(progress).encode("utf-8"), np.uint8)
    with atomic_file(path) as handle:  # the write door: a failed write leaves the last checkpoint whole
        np.savez(handle, **arrays)


def load_checkpoint(path: Path, template: Any) -> tuple[Any, dict[str, Any]]:
    """The state and progress ``save_checkpoint`` wrote to ``path``; ``template``: the state's tree with each leaf's
    shape and dtype (``jax.eval_shape`` of the run's initial state). ``RunFolderError`` for any other file."""
    leaves, tree = jax.tree_util.tree_flatten(template)
    expected = {f"leaf_{i:03d}": (tuple(leaf.shape), np.dtype(leaf.dtype)) for i, leaf in enumerate(leaves)}
    try:
        with open(path, "rb") as handle, open_zip(handle, str(path)) as archive:
            names = {name.removesuffix(".npy") for name in archive.namelist()}
            if names != set(expected) | {_PROGRESS}:
                raise RunFolderError(
                    f"cannot resume from {path}: it holds {len(names)} entries, not this run's training state "
                    f"({len(expected)} arrays and its progress)"
                )
            arrays = {name: _read(archive, name, *expected[name], path) for name in expected}
            record = _read(archive, _PROGRESS, None, np.dtype(np.uint8), path)
    except OSError as err:
        raise RunFolderError(f"cannot resume from {path}: {err.strerror or err}") from None
    try:
        progress = json.loads(record.tobytes().decode("utf-8"))
    except ValueError:
        raise RunFolderError(f"cannot resume from {path}: its progress is not JSON") from None
    if not isinstance(progress, dict):
        raise RunFolderError(f"cannot resume from {path}: its progress is not a mapping")
    state = jax.tree_util.tree_unflatten(tree, [jnp.asarray(arrays[name]) for name in expected])
    return state, progress


def _read(archive, name: str, shape: tuple[int, ...] | None, dtype: np.dtype, path: Path) -> np.ndarray:
    """Entry ``name``'s array, its header checked first (``shape`` ``None``: any one-dimensional length up to
    ``MAX_PROGRESS_BYTES``)."""
    with archive.open(f"{name}.npy") as entry:
        try:
            version = np.lib.format.read_magic(entry)
            readers = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
            if version not in readers:
                raise ValueError(f"format version {version}")
            found, fortran, found_dtype = readers[version](entry)
        except ValueError as err:
            raise RunFolderError(f"cannot resume from {path}: entry {name} is not an array ({err})") from None
        found = tuple(found)
        fits = found == shape if shape is not None else len(found) == 1 and found[0] <= MAX_PROGRESS_BYTES
        if not fits or found_dtype != dtype or fortran:
            want = f"{dtype}{list(shape)}" if shape is not None else f"{dtype}[<= {MAX_PROGRESS_BYTES}]"
            raise RunFolderError(
                f"cannot resume from {path}: entry {name} is {found_dtype}{list(found)}, this run's state has {want}"
            )
        size = math.prod(found) * dtype.itemsize
        data = entry.read(size)
    if len(data) != size:
        raise RunFolderError(f"cannot resume from {path}: entry {name} is cut short")
    return np.frombuffer(data, dtype).reshape(found).copy()
