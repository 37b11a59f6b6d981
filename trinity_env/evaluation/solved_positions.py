"""A dataset of solved positions: open-hand play-phase positions from self-play, each with its exact value and,
where recorded, every move that keeps it. The format, and reading it; ``solved_build`` builds one and
``trinity dataset`` is its command line (docs/dataset.md).

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

import hashlib
import io
import json
import re
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trinity_env.core import ArgumentError, GameState, TrinityError
from trinity_env.core.files import MAX_DOCUMENT_BYTES, parse_json, read_text
from trinity_env.core.paths import open_regular
from trinity_env.core.rules import IN_HAND, PLAYED, UNPICKED
from trinity_env.core.writes import write_bytes
from trinity_env.core.zips import open_zip
from trinity_env.fast import kernels
from trinity_env.fast.convert import read_state
from trinity_env.fast.layout import (
    ABSENT,
    DECK_SIZE,
    DECK_SIZE0,
    FIRST_PLAYER,
    HAND0,
    INFO_COLUMNS,
    LANE,
    MAX_A,
    NOT_OVER,
    PHASE,
    PLAY,
    TERMINATION,
    TILES,
    TO_MOVE,
    WINNER,
    A,
    Batch,
)
from trinity_env.spec.observation import OBSERVATION_SIZE

FORMAT = "trinity-towers-solved-positions"
VERSION = 2
DEFAULT_AGENT = "mcts:200"
DEFAULT_EMPTY = (4, 10)
MOST_POLICY_EMPTY = 9
"""By default (``policy_empty="auto"``) the value-keeping moves are recorded at the build's empty counts up to this
one: at 10 empty tiles finding every one costs about six times the value alone (measured on 30 games of the default
build: the value 13 ms a position over 4-10; every move too, 78 ms; every move at 4-9 and the value at 10, 23 ms)."""
DEFAULT_GAMES_PER_SHARD = 500
"""About 3,000 positions a shard (2 minutes of one core with ``mcts:200`` at 4-10 empty): what Ctrl-C can cost."""
MAX_GAMES_PER_SHARD = 100_000
MAX_SHARDS = 100_000
"""Shard numbers are five digits."""
MAX_SEED = 2**63 - 1
MOST_MAX_NODES = 10**11
"""The largest node budget a build takes: about four hours of one core for a single position."""
DEFAULT_MAX_POSITIONS = 4_000_000
"""What ``load`` takes at most unless told otherwise: 4M positions are about 1.2 GB of arrays (303 bytes each)."""
MANIFEST = "manifest.json"
SHARD_NAME = re.compile(r"shard-([0-9]{5})\.npz")
ACTIONS = 256

ARRAYS: dict[str, tuple[np.dtype, tuple[int, ...]]] = {
    "decks": (np.dtype(np.int8), (2, DECK_SIZE, 4)),
    "status": (np.dtype(np.int8), (2, DECK_SIZE)),
    "sides": (np.dtype(np.int8), (TILES, 4)),
    "owner": (np.dtype(np.int8), (TILES,)),
    "marks": (np.dtype(np.int8), (TILES,)),
    "info": (np.dtype(np.int8), (INFO_COLUMNS,)),
    "value": (np.dtype(np.int8), ()),
    "best": (np.dtype(np.uint8), (ACTIONS // 8,)),
    "empty": (np.dtype(np.int8), ()),
    "game": (np.dtype("<i4"), ()),
}
"""Every array of a shard: its dtype and the shape of one row (the first axis is the position)."""
BATCH_ARRAYS = Batch._fields
ROW_BYTES = sum(dtype.itemsize * int(np.prod(shape)) for dtype, shape in ARRAYS.values())
"""303 bytes a position in memory."""
_NPY_HEADER = 4096
"""Room for a member's ``.npy`` header (numpy writes 128 bytes, and never more than 64 KiB)."""
_ZIP_OVERHEAD = 1 << 16
"""What a zip adds to its members' data, at most (headers, the central directory, deflate's worst case slack)."""


_UNREADABLE = (ValueError, TypeError, OSError, EOFError, KeyError, zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error)
"""What reading a damaged zip or ``.npy`` member can raise (a bad deflate stream is a ``zlib.error``)."""


class DatasetError(TrinityError):
    """A dataset folder, manifest or shard that is not what the format says, or was built otherwise."""


# ---------------------------------------------------------------------- arguments


def _whole(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ArgumentError(f"{name} must be a whole number from {low} to {high}, got {value!r}")
    return value


def check_empty(empty: object) -> tuple[int, int]:
    """``empty`` as ``(low, high)`` within 1-14, low <= high; else ``ArgumentError``."""
    if not (
        isinstance(empty, (tuple, list))
        and len(empty) == 2
        and all(type(e) is int for e in empty)
        and 1 <= empty[0] <= empty[1] <= 14
    ):
        raise ArgumentError(f"empty tiles must be a range LOW-HIGH within 1-14 (low <= high), got {empty!r}")
    return int(empty[0]), int(empty[1])


def check_policy_empty(policy_empty: object, empty: tuple[int, int]) -> tuple[int, int] | None:
    """``policy_empty`` as ``(low, high)`` within ``empty``, or ``None`` (no best moves recorded); ``"auto"`` is
    ``empty`` up to ``MOST_POLICY_EMPTY`` empty tiles (``None`` when ``empty`` starts above it)."""
    if policy_empty == "auto":
        return (empty[0], min(empty[1], MOST_POLICY_EMPTY)) if empty[0] <= MOST_POLICY_EMPTY else None
    if policy_empty is None:
        return None
    low, high = check_empty(policy_empty)
    if not empty[0] <= low <= high <= empty[1]:
        raise ArgumentError(f"policy empty tiles {low}-{high} must lie within the empty tiles {empty[0]}-{empty[1]}")
    return low, high


def check_max_nodes(max_nodes: object) -> int | None:
    """A build's node budget: ``None`` (every position labelled) or a whole number from 1 to ``MOST_MAX_NODES``."""
    return None if max_nodes is None else _whole("max_nodes", max_nodes, 1, MOST_MAX_NODES)


def shard_name(index: int) -> str:
    return f"shard-{index:05d}.npz"


# ---------------------------------------------------------------------- shards and the manifest


def arrays_sha256(arrays: dict[str, np.ndarray]) -> str:
    """A hash of the arrays themselves (names, dtypes, shapes, bytes), whatever the zip around them."""
    digest = hashlib.sha256()
    for name in ARRAYS:
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}:{array.dtype.str}:{array.shape};".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def shard_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """The ``.npz`` file of ``arrays``: what ``np.savez_compressed`` writes, but with fixed timestamps and
    attributes, so that the same arrays always make the same bytes (with the same zlib)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, (dtype, shape) in ARRAYS.items():
            array = np.ascontiguousarray(arrays[name])
            if array.dtype != dtype or array.shape[1:] != shape:
                raise ValueError(f"{name}: expected {dtype} rows of shape {shape}, got {array.dtype} {array.shape}")
            member = io.BytesIO()
            np.lib.format.write_array(member, array, version=(1, 0), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            info.external_attr = 0o644 << 16
            archive.writestr(info, member.getvalue(), compresslevel=9)
    return out.getvalue()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def manifest_text(manifest: dict[str, Any]) -> str:
    """The manifest as written: a field a line, an array or a shard a line, shards in order."""
    lines = [
        f" {json.dumps(key)}: {json.dumps(value)},"
        for key, value in manifest.items()
        if key not in ("arrays", "shards")
    ]
    lines.append(' "arrays": {')
    lines.append(",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in manifest["arrays"].items()))
    lines.append(" },")
    lines.append(' "shards": {')
    shards = sorted(manifest["shards"].items())
    lines.append(",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in shards))
    lines.append(" }")
    return "{\n" + "\n".join(line for line in lines if line) + "\n}\n"


def _write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    write_bytes(directory / MANIFEST, manifest_text(manifest).encode())


# ---------------------------------------------------------------------- the manifest


def _fail(where: object, problem: str) -> DatasetError:
    return DatasetError(f"{where}: {problem}")


def read_manifest(directory: str | Path) -> dict[str, Any]:
    """``DIR/manifest.json``, checked field by field (not the shards themselves: see ``load``)."""
    path = Path(directory) / MANIFEST
    if not path.exists():
        raise _fail(
            directory,
            f"no {MANIFEST}: not a solved-positions dataset (build one with trinity dataset build DIR --shards N)",
        )
    manifest = parse_json(read_text(path, "manifest", DatasetError, MAX_DOCUMENT_BYTES), str(path), DatasetError)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _fail(path, f"not a solved-positions manifest (format must be {FORMAT!r})")
    if manifest.get("version") != VERSION:
        raise _fail(path, f"format version {manifest.get('version')!r}; this loader reads version {VERSION}")
    try:
        if not isinstance(manifest.get("agent"), str):
            raise ValueError("agent must be a string")
        files = manifest.get("agent_sha256", "")
        if files is not None and not (isinstance(files, str) and re.fullmatch(r"[0-9a-f]{64}", files)):
            raise ValueError("agent_sha256 must be 64 hex digits or null")
        _whole("seed", manifest.get("seed"), 0, MAX_SEED)
        games_per_shard = _whole("games_per_shard", manifest.get("games_per_shard"), 1, MAX_GAMES_PER_SHARD)
        low, high = check_empty(manifest.get("empty"))
        policy = manifest.get("policy_empty", "")
        check_policy_empty(
            None if policy is None else tuple(policy) if isinstance(policy, list) else policy, (low, high)
        )
        max_nodes = check_max_nodes(manifest.get("max_nodes"))
        if manifest.get("draft") != "dealt" or manifest.get("open_hands") is not True:
            raise ValueError("draft must be 'dealt' and open_hands true")
        arrays = {name: {"dtype": dtype.str, "row": list(shape)} for name, (dtype, shape) in ARRAYS.items()}
        if manifest.get("arrays") != arrays:
            raise ValueError("arrays differ from this version's layout")
        shards = manifest.get("shards")
        if not isinstance(shards, dict) or len(shards) > MAX_SHARDS:
            raise ValueError(f"shards must be a mapping of at most {MAX_SHARDS} shard files")
        most = games_per_shard * (high - low + 1)
        fields = ["games", "positions", "bytes", "sha256", "arrays_sha256"] + (["over_budget"] if max_nodes else [])
        for name, entry in shards.items():
            match = SHARD_NAME.fullmatch(name)
            if match is None:
                raise ValueError(f"{name!r} is not a shard name (shard-NNNNN.npz)")
            index = int(match[1])
            if not isinstance(entry, dict) or set(entry) != set(fields):
                raise ValueError(f"{name}: expected {', '.join(fields[:-1])} and {fields[-1]}")
            if entry["games"] != [index * games_per_shard, (index + 1) * games_per_shard]:
                raise ValueError(f"{name}: games {entry['games']!r} are not shard {index}'s")
            _whole(f"{name}: positions", entry["positions"], 0, most)
            if max_nodes is not None:
                over = entry["over_budget"]
                if not isinstance(over, dict) or list(over) != [str(c) for c in range(low, high + 1)]:
                    raise ValueError(f"{name}: over_budget must count the positions at each of {low}-{high} empty")
                left = sum(_whole(f"{name}: over_budget", n, 0, most) for n in over.values())
                _whole(f"{name}: positions and over_budget", entry["positions"] + left, 0, most)
            _whole(f"{name}: bytes", entry["bytes"], 1, _most_bytes(entry["positions"]))
            for key in ("sha256", "arrays_sha256"):
                if not (isinstance(entry[key], str) and re.fullmatch(r"[0-9a-f]{64}", entry[key])):
                    raise ValueError(f"{name}: {key} must be 64 hex digits")
    except (ValueError, TypeError, ArgumentError) as err:
        raise _fail(path, str(err)) from None
    return manifest


def _most_bytes(positions: int) -> int:
    """The largest file a shard of ``positions`` positions may be: its arrays stored, plus the zip's own bytes."""
    return positions * ROW_BYTES + len(ARRAYS) * _NPY_HEADER + _ZIP_OVERHEAD


# ---------------------------------------------------------------------- loading


def _read_file(path: Path, size: int) -> bytes:
    """The bytes of ``path``, a regular file of exactly ``size`` bytes (never more is read)."""
    try:
        handle, kind, actual = open_regular(path)
    except OSError as err:
        raise _fail(path, f"cannot read it ({err.strerror or err}); the manifest lists it") from None
    if handle is None:
        raise _fail(path, f"is {kind}, not a file")
    with handle:
        if actual != size:
            raise _fail(path, f"{actual} bytes, the manifest says {size}")
        data = handle.read(size + 1)
    if len(data) != size:
        raise _fail(path, f"{len(data)} bytes, the manifest says {size}")
    return data


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
