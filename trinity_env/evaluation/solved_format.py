"""The solved-positions dataset's format (docs/dataset.md): its constants and array layout, the build's
arguments, a shard's bytes and hashes, and the manifest written and read back checked field by field.

``solved_positions`` reads a dataset (``load``) on top of this; ``solved_build`` writes one.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from trinity_env.core import ArgumentError, TrinityError
from trinity_env.core.files import MAX_DOCUMENT_BYTES, parse_json, read_text
from trinity_env.core.paths import open_regular
from trinity_env.core.writes import write_bytes
from trinity_env.fast.layout import (
    DECK_SIZE,
    INFO_COLUMNS,
    TILES,
    Batch,
)

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


# ---------------------------------------------------------------------- reading a file


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
