"""A dataset of solved positions: open-hand play-phase positions from self-play, each with its exact value and,
where recorded, every move that keeps it. Reading it: the format itself (constants, shards' bytes, the manifest) is
``solved_format``, ``solved_build`` builds one and ``trinity dataset`` is its command line (docs/dataset.md).

- ``DIR/shard-NNNNN.npz``: shard ``k`` holds the positions of games ``k * games_per_shard`` to
  ``(k + 1) * games_per_shard - 1``, in game order and play order: the fast engine's ``Batch``
  arrays (``decks``, ``status``, ``sides``, ``owner``, ``marks``, ``info``; see
  ``trinity_env/fast/layout.py``), ``value`` (int8, for the player to move), ``best`` (uint8 [32], the
  value-keeping actions packed; zeros where not recorded), ``empty`` (int8, empty tiles) and ``game`` (int32,
  the game's index). A zip of ``.npy`` members (what ``np.savez_compressed`` writes), written with fixed
  timestamps so that a rebuild is byte for byte the same file.
- ``DIR/manifest.json``: the format and version, the build's parameters (the agent and the sha256 of the files it
  reads) and, per shard, its positions and the sha256 of its file and of its arrays. A build with a node budget
  (``max_nodes``: a position is kept only where its exact solve finishes within it) records the budget and, per
  shard, ``over_budget``: how many positions it left out at each empty count. A build without one writes neither.

``load(DIR)`` checks everything before use and trusts no size a file declares: the manifest's
fields and shard names, each shard's sha256, its zip members (exactly the expected names, each
no larger than the manifest's count of positions needs), each member's ``.npy`` header (dtype,
shape) before its data is read, and every value range the kernels index with. Files are read
with ``np.load(allow_pickle=False)`` only. ``SolvedPositions.training_arrays()`` gives the
network's inputs and targets: the mover's open-hand observations (int8 [N, 339], what the AEC
env encodes), legal-action masks (int8 [N, 256]) and values (float32 [N]); ``best_masks()`` the
policy targets.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trinity_env.core import ArgumentError, GameState
from trinity_env.core.rules import IN_HAND, PLAYED, UNPICKED
from trinity_env.core.zips import open_zip
from trinity_env.evaluation.solved_format import (
    _NPY_HEADER,
    _UNREADABLE,
    ACTIONS,
    ARRAYS,
    BATCH_ARRAYS,
    DEFAULT_MAX_POSITIONS,
    SHARD_NAME,
    DatasetError,
    _fail,
    _read_file,
    _sha256,
    _whole,
    arrays_sha256,
    read_manifest,
    shard_name,
)
from trinity_env.fast import kernels
from trinity_env.fast.convert import read_state
from trinity_env.fast.layout import (
    ABSENT,
    DECK_SIZE,
    DECK_SIZE0,
    FIRST_PLAYER,
    HAND0,
    LANE,
    MAX_A,
    NOT_OVER,
    PHASE,
    PLAY,
    TERMINATION,
    TO_MOVE,
    WINNER,
    A,
    Batch,
)
from trinity_env.spec.observation import OBSERVATION_SIZE

# ---------------------------------------------------------------------- loading


def read_shard(path: str | Path, entry: dict[str, Any]) -> dict[str, np.ndarray]:
    """The arrays of one shard, checked against its manifest ``entry`` before anything is allocated:
    size and sha256 of the file, zip members, each ``.npy`` header's dtype and shape, then values."""
    path = Path(path)
    data = _read_file(path, entry["bytes"])
    if _sha256(data) != entry["sha256"]:
        raise _fail(path, "sha256 differs from the manifest's: a damaged or replaced shard (rebuild it)")
    count = entry["positions"]
    try:
        archive = open_zip(data, str(path), DatasetError)  # its entries bounded before zipfile (or np.load) parses it
        members = archive.infolist()
        names = [m.filename for m in members]
        expected = [f"{name}.npy" for name in ARRAYS]
        if sorted(names) != sorted(expected):
            raise ValueError(f"members {names[:12]!r}, expected {expected!r}")
        for member in members:
            dtype, row = ARRAYS[member.filename[:-4]]
            need = count * dtype.itemsize * int(np.prod(row))
            if member.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or member.flag_bits & 1:
                raise ValueError(f"{member.filename}: not stored or deflated")
            if not need <= member.file_size <= need + _NPY_HEADER:
                raise ValueError(f"{member.filename}: {member.file_size} bytes unpacked, {count} positions need {need}")
            with archive.open(member) as handle:
                version = np.lib.format.read_magic(handle)
                if version == (1, 0):
                    shape, fortran, found = np.lib.format.read_array_header_1_0(handle)
                elif version == (2, 0):
                    shape, fortran, found = np.lib.format.read_array_header_2_0(handle)
                else:
                    raise ValueError(f"{member.filename}: .npy version {version}")
            if found != dtype:
                raise ValueError(f"{member.filename}: dtype {found}, expected {dtype}")
            if fortran or tuple(shape) != (count, *row):
                raise ValueError(f"{member.filename}: shape {tuple(shape)}, expected {(count, *row)}")
        with np.load(io.BytesIO(data), allow_pickle=False) as loaded:
            arrays = {name: loaded[name] for name in ARRAYS}
    except DatasetError:
        raise
    except _UNREADABLE as err:
        raise _fail(path, f"not a readable shard ({' '.join(str(err).split())[:200]})") from None
    for name, (dtype, row) in ARRAYS.items():  # np.load read the headers again: the same bytes, but check
        if arrays[name].dtype != dtype or arrays[name].shape != (count, *row):
            raise _fail(path, f"{name}: {arrays[name].dtype} {arrays[name].shape}, expected {dtype} {(count, *row)}")
    if arrays_sha256(arrays) != entry["arrays_sha256"]:
        raise _fail(path, "arrays_sha256 differs from the manifest's")
    return arrays


def check_rows(
    arrays: dict[str, np.ndarray],
    games: tuple[int, int],
    empty: tuple[int, int],
    policy_empty: tuple[int, int] | None = None,
) -> str | None:
    """What is wrong with the rows (the first problem found), or ``None``: every value within the ranges the
    format allows, so that the kernels (which do not check bounds) index only inside their arrays."""
    decks, status, sides, owner, marks, info = (arrays[name] for name in BATCH_ARRAYS)
    value, count, game = arrays["value"], arrays["empty"], arrays["game"]
    n = value.shape[0]
    if not n:
        return None
    deck_size = info[:, DECK_SIZE0 : DECK_SIZE0 + 2].astype(np.int64)
    slots = np.arange(DECK_SIZE)
    checks = [
        ("value", np.isin(value, (-1, 0, 1)).all()),
        ("game", ((game >= games[0]) & (game < games[1])).all() and (np.diff(game) >= 0).all()),
        ("empty", ((count >= empty[0]) & (count <= empty[1])).all() and ((owner == -1).sum(1) == count).all()),
        ("decks", ((decks >= 0) & (decks <= A)).all()),
        ("status", np.isin(status, (UNPICKED, IN_HAND, PLAYED, ABSENT)).all()),
        (
            "deck sizes",
            ((deck_size >= 0) & (deck_size <= DECK_SIZE)).all()
            and ((status == ABSENT) == (slots[None, None, :] >= deck_size[:, :, None])).all(),
        ),
        ("sides", ((sides >= 0) & (sides <= A)).all()),
        ("owner", np.isin(owner, (-1, 0, 1)).all()),
        ("marks", ((marks >= 0) & (marks <= 3)).all()),
        (
            "info",
            np.isin(info[:, TO_MOVE], (0, 1)).all()
            and (info[:, PHASE] == PLAY).all()
            and np.isin(info[:, FIRST_PLAYER], (0, 1)).all()
            and ((info[:, MAX_A] >= 0) & (info[:, MAX_A] <= 16)).all()
            and ((info[:, HAND0 : HAND0 + 2] >= 0) & (info[:, HAND0 : HAND0 + 2] <= DECK_SIZE)).all()
            and (info[:, WINNER] == -1).all()
            and (info[:, TERMINATION] == NOT_OVER).all()
            and (info[:, LANE] == -1).all(),
        ),
    ]
    for name, ok in checks:
        if not ok:
            return f"{name} out of range"
    masks = _masks(Batch(decks, status, sides, owner, marks, info))
    if not masks.any(axis=1).all():
        return "a position whose mover has no move"
    best = np.unpackbits(arrays["best"], axis=1, bitorder="little")
    if (best > masks).any():
        return "best moves that are not legal"
    labelled = np.zeros(n, bool) if policy_empty is None else (count >= policy_empty[0]) & (count <= policy_empty[1])
    if not (best.any(axis=1) == labelled).all():
        return "best moves missing where the manifest records them, or present where it does not"
    return None


@dataclass(frozen=True)
class SolvedPositions:
    """Solved positions: ``batch`` (the fast engine's rows), ``value`` for the mover (int8), ``empty`` (int8),
    ``game`` (int32), and the ``manifest`` they came from."""

    batch: Batch
    value: np.ndarray
    best: np.ndarray
    empty: np.ndarray
    game: np.ndarray
    manifest: dict[str, Any]

    def __len__(self) -> int:
        return int(self.value.shape[0])

    def state(self, row: int) -> GameState:
        """Row ``row`` as a core ``GameState`` (without its last placement, which ``batch.marks`` holds)."""
        return read_state(self.batch, row)

    def observations(self) -> np.ndarray:
        """The mover's open-hand observations, int8 [N, 339]."""
        return observations(self.batch)

    def masks(self) -> np.ndarray:
        """The mover's legal-action masks, int8 [N, 256]."""
        return _masks(self.batch)

    def best_masks(self) -> np.ndarray:
        """Every move that keeps the exact value, int8 [N, 256] (1 where it does); a row of zeros where the
        build did not record them (outside the manifest's ``policy_empty``): see ``has_best``."""
        return np.unpackbits(self.best, axis=1, bitorder="little").view(np.int8)

    def has_best(self) -> np.ndarray:
        """bool [N]: whether row ``i`` has its value-keeping moves recorded."""
        return self.best.any(axis=1)

    def training_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(observations, masks, values)``: int8 [N, 339], int8 [N, 256], float32 [N] (the mover's exact value)."""
        return self.observations(), self.masks(), self.value.astype(np.float32)


def observations(batch: Batch) -> np.ndarray:
    """The observations of each row's player to move, open hands, int8 [N, 339] (the AEC env's encoding)."""
    out = np.zeros((batch.size, OBSERVATION_SIZE), np.int8)
    seats = batch.info[:, TO_MOVE].astype(np.int64)
    kernels.observe_batch(batch.decks, batch.status, batch.sides, batch.owner, batch.info, seats, True, out)
    return out


def _masks(batch: Batch) -> np.ndarray:
    out = np.zeros((batch.size, ACTIONS), np.int8)
    kernels.masks_batch(batch.decks, batch.status, batch.owner, batch.info, out)
    return out


def _checked_shard(directory: Path, name: str, manifest: dict[str, Any]) -> dict[str, np.ndarray]:
    entry = manifest["shards"][name]
    arrays = read_shard(directory / name, entry)
    policy = manifest["policy_empty"]
    problem = check_rows(
        arrays, tuple(entry["games"]), tuple(manifest["empty"]), None if policy is None else tuple(policy)
    )
    if problem is not None:
        raise _fail(directory / name, problem)
    return arrays


def _positions(arrays: dict[str, np.ndarray], manifest: dict[str, Any]) -> SolvedPositions:
    batch = Batch(*(np.ascontiguousarray(arrays[name]) for name in BATCH_ARRAYS))
    return SolvedPositions(batch, arrays["value"], arrays["best"], arrays["empty"], arrays["game"], manifest)


def _selected(
    directory: Path, manifest: dict[str, Any], max_positions: int, shards: Sequence[int] | None = None
) -> list[str]:
    _whole("max_positions", max_positions, 1, 2**40)
    names = sorted(manifest["shards"])
    if shards is not None:
        if not shards:
            raise ArgumentError("shards must name at least one shard")
        for index in shards:
            _whole("a shard", index, 0, 10**5 - 1)
        missing = [index for index in shards if shard_name(index) not in manifest["shards"]]
        if missing:
            raise _fail(directory, f"shard {missing[0]} is not finished (the manifest does not list it)")
        names = sorted(shard_name(index) for index in set(shards))
    if not names:
        raise _fail(directory, "the manifest lists no finished shard")
    total = sum(manifest["shards"][n]["positions"] for n in names)
    if total > max_positions:
        raise _fail(directory, f"{total} positions, more than max_positions={max_positions} (raise it to load them)")
    return names


def iter_shards(directory: str | Path, *, max_positions: int = DEFAULT_MAX_POSITIONS) -> Iterator[SolvedPositions]:
    """The dataset a shard at a time (each checked as ``load`` checks it), in shard order."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    for name in _selected(directory, manifest, max_positions):
        yield _positions(_checked_shard(directory, name, manifest), manifest)


def load(
    directory: str | Path, *, max_positions: int = DEFAULT_MAX_POSITIONS, shards: Sequence[int] | None = None
) -> SolvedPositions:
    """Every shard the manifest lists (or only the ``shards`` numbered, each of which must be finished: a study
    on a dataset still being built reads the same positions later), checked, as one ``SolvedPositions`` in shard
    order; ``DatasetError`` naming the file at the first problem. Refuses more than ``max_positions`` positions
    before reading any shard."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    names = _selected(directory, manifest, max_positions, shards)
    parts = [_checked_shard(directory, name, manifest) for name in names]
    joined = {name: np.concatenate([p[name] for p in parts]) for name in ARRAYS}
    return _positions(joined, manifest)


# ---------------------------------------------------------------------- summary


def summary(directory: str | Path) -> dict[str, Any]:
    """Every shard checked, and what the dataset holds: positions by empty count and value, bytes on disk; under a
    node budget (``max_nodes``, else ``None``), the positions left out at each empty count (``over_budget``)."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    by_count: dict[int, list[int]] = {}
    positions = games = 0
    for part in iter_shards(directory, max_positions=2**40):
        positions += len(part)
        for count in np.unique(part.empty):
            values = part.value[part.empty == count]
            row = by_count.setdefault(int(count), [0, 0, 0])
            for k, v in enumerate((1, 0, -1)):
                row[k] += int((values == v).sum())
    games = len(manifest["shards"]) * manifest["games_per_shard"]
    size = sum(e["bytes"] for e in manifest["shards"].values())
    indices = sorted(int(SHARD_NAME.fullmatch(n)[1]) for n in manifest["shards"])
    over: dict[str, int] = {}
    for entry in manifest["shards"].values():
        for count, left in entry.get("over_budget", {}).items():
            over[count] = over.get(count, 0) + left
    return {
        "agent": manifest["agent"],
        "seed": manifest["seed"],
        "empty": manifest["empty"],
        "policy_empty": manifest["policy_empty"],
        "max_nodes": manifest.get("max_nodes"),
        "games_per_shard": manifest["games_per_shard"],
        "shards": len(indices),
        "shard_indices": indices,
        "games": games,
        "positions": positions,
        "bytes": size,
        "bytes_per_position": size / positions if positions else None,
        "by_empty": {str(c): {"win": w, "draw": d, "loss": loss} for c, (w, d, loss) in sorted(by_count.items())},
        "over_budget": over,
    }
