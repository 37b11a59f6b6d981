"""A dataset of solved positions: open-hand play-phase positions from self-play, each with its exact value.

For supervised pre-training of a value head (and mixing into self-play): positions of games
of one agent against itself on dealt hands (``mcts:200`` by default), every position from
``empty[1]`` down to ``empty[0]`` empty tiles (4-10 by default) in which the mover has a move,
each labelled by the exact solver with its value for the player to move (1, 0 or -1). The
hands are open (both known), so the label is the value of the position the network sees.
docs/dataset.md describes the format; in short:

- ``DIR/shard-NNNNN.npz``: shard ``k`` holds the positions of games ``k * games_per_shard`` to
  ``(k + 1) * games_per_shard - 1``, in game order and play order: the fast engine's ``Batch``
  arrays (``decks``, ``status``, ``sides``, ``owner``, ``marks``, ``info``; see
  ``trinity_env/fast/layout.py``), ``value`` (int8), ``empty`` (int8, empty tiles) and ``game``
  (int32, the game's index). A zip of ``.npy`` members (what ``np.savez_compressed`` writes),
  written with fixed timestamps so that a rebuild is byte for byte the same file.
- ``DIR/manifest.json``: the format and version, the build's parameters and, per shard, its
  positions and the sha256 of its file and of its arrays.

Game ``k`` depends on the agent, the seed and ``k`` alone (its random stream is drawn from the
three; a stream of its own, so that the dataset never replays the accuracy set's games, which
``trinity_env.evaluation.accuracy`` seeds from ``seed * 1_000_003 + k``), so shard ``k``
depends on the build's parameters and ``k`` alone: shards can be built in any order, by
several processes on disjoint ranges, and an interrupted build resumes where it stopped.
Each shard is written to a temporary file in ``DIR`` and renamed into place, then entered in
the manifest (under a lock, so two builders in one folder do not lose each other's entries):
Ctrl-C or a kill keeps every finished shard.

``load(DIR)`` checks everything before use and trusts no size a file declares: the manifest's
fields and shard names, each shard's sha256, its zip members (exactly the expected names, each
no larger than the manifest's count of positions needs), each member's ``.npy`` header (dtype,
shape) before its data is read, and every value range the kernels index with. Files are read
with ``np.load(allow_pickle=False)`` only. ``SolvedPositions.training_arrays()`` gives the
network's inputs and targets: the mover's open-hand observations (int8 [N, 339], what the AEC
env encodes), legal-action masks (int8 [N, 256]) and values (float32 [N]).

The command line: ``python -m training.solved_positions build DIR --shards N`` (or ``A-B``, or
``--positions P``) and ``python -m training.solved_positions info DIR``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import random
import re
import signal
import sys
import threading
import time
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trinity_env.arguments import OneLineParser, UsageError, empty_range, whole_number
from trinity_env.core import ArgumentError, GameState, TrinityError
from trinity_env.core.files import MAX_DOCUMENT_BYTES, open_regular, parse_json, read_text
from trinity_env.core.rules import IN_HAND, PLAYED, UNPICKED
from trinity_env.core.writes import write_bytes
from trinity_env.fast import kernels
from trinity_env.fast.convert import from_states, read_state
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
    if not (isinstance(empty, (tuple, list)) and len(empty) == 2 and all(type(e) is int for e in empty)
            and 1 <= empty[0] <= empty[1] <= 14):  # fmt: skip
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


def check_build(agent: str, seed: int, empty: tuple[int, int], games_per_shard: int) -> tuple[int, int]:
    """Bad build arguments raise ``ArgumentError`` here (one line), before any game is played."""
    if not isinstance(agent, str) or not agent:
        raise ArgumentError(f"agent must be an agent spec such as 'mcts:200', got {agent!r}")
    _whole("seed", seed, 0, MAX_SEED)
    _whole("games_per_shard", games_per_shard, 1, MAX_GAMES_PER_SHARD)
    from trinity_env.agents.spec import AgentSpec

    AgentSpec.parse(agent)
    return check_empty(empty)


def shard_range(shards: object) -> range:
    """``N`` (shards 0 to N-1), ``(A, B)`` (shards A to B, both included) or a ``range``, checked."""
    if isinstance(shards, range):
        low, high = shards.start, shards.stop - 1
        if shards.step != 1:
            raise ArgumentError(f"shards must be a range with step 1, got {shards!r}")
    elif isinstance(shards, (tuple, list)) and len(shards) == 2:
        low, high = shards
    else:
        low, high = 0, _whole("shards", shards, 1, MAX_SHARDS) - 1
    _whole("first shard", low, 0, MAX_SHARDS - 1)
    _whole("last shard", high, 0, MAX_SHARDS - 1)
    if low > high:
        raise ArgumentError(f"shards must run from a lower number to a higher one, got {low}-{high}")
    return range(low, high + 1)


def shard_name(index: int) -> str:
    return f"shard-{index:05d}.npz"


# ---------------------------------------------------------------------- building


def game_seed(seed: int, game: int) -> random.Random:
    """Game ``game``'s random stream: its deal, first mover and the agent's seed come from it alone."""
    return random.Random(f"{FORMAT}/{seed}/{game}")


def game_positions(agent, seed: int, game: int, empty: tuple[int, int]) -> list[GameState]:
    """The positions of game ``game`` of ``agent`` against itself (open hands, dealt hands) with
    ``empty[1]`` down to ``empty[0]`` empty tiles in which the mover has a move, in play order
    (``accuracy.self_play_positions`` on this dataset's own game seeds)."""
    from trinity_env.evaluation.accuracy import self_play_positions

    return list(self_play_positions(agent, game_seed(seed, game), empty).values())


def best_actions(state: GameState, best_moves: Sequence[tuple[str, int]]) -> np.ndarray:
    """The packed 256-action mask (uint8 [32], bit ``a % 8`` of byte ``a // 8``) of the mover's legal actions
    that play one of ``best_moves`` (``(card, tile)`` pairs): every copy of an identical card counts."""
    wanted = set(best_moves)
    deck = state.decks[state.to_move]
    mask = np.zeros(ACTIONS, np.uint8)
    for action in state.legal_actions():
        card, tile = divmod(action - 16, TILES)
        if (deck[card].notation, tile) in wanted:
            mask[action] = 1
    return np.packbits(mask, bitorder="little")


def label(solver, state: GameState, policy_empty: tuple[int, int] | None) -> tuple[int, np.ndarray]:
    """The exact value of ``state`` for its mover and, where its empty tiles lie in ``policy_empty``, the packed
    mask of every action that keeps it (``best_actions``; zeros elsewhere)."""
    count = len(state.empty_tiles())
    if policy_empty is not None and policy_empty[0] <= count <= policy_empty[1]:
        solution = solver.solve(state)
        return solution.value, best_actions(state, solution.best_moves)
    return solver.value(state), np.zeros(ACTIONS // 8, np.uint8)


def build_shard(
    index: int,
    agent,
    solver,
    seed: int,
    empty: tuple[int, int],
    games_per_shard: int,
    on_game=None,
    policy_empty: tuple[int, int] | None = None,
) -> dict[str, np.ndarray]:
    """Shard ``index``'s arrays: its games played by ``agent`` (an ``Agent``), every position solved; where
    its empty tiles lie in ``policy_empty``, every move that keeps the value recorded too (``best``)."""
    states: list[GameState] = []
    values: list[int] = []
    best: list[np.ndarray] = []
    games: list[int] = []
    first = index * games_per_shard
    for game in range(first, first + games_per_shard):
        for state in game_positions(agent, seed, game, empty):
            value, moves = label(solver, state, policy_empty)
            values.append(value)
            best.append(moves)
            states.append(state)
            games.append(game)
        if on_game is not None:
            on_game(len(states))
    batch = from_states(states) if states else Batch.empty(0)
    arrays = {name: getattr(batch, name) for name in BATCH_ARRAYS}
    arrays["value"] = np.array(values, np.int8)
    arrays["best"] = np.array(best, np.uint8).reshape(len(best), ACTIONS // 8)
    arrays["empty"] = (batch.owner == -1).sum(axis=1).astype(np.int8)
    arrays["game"] = np.array(games, "<i4")
    return arrays


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


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """The manifest's lock: POSIX ``flock`` on the folder itself (no lock file left behind); elsewhere none,
    one builder a folder."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock


def _header(agent: str, seed: int, empty: tuple[int, int], games_per_shard: int,
            policy_empty: tuple[int, int] | None, agent_sha256: str | None) -> dict[str, Any]:  # fmt: skip
    return {"format": FORMAT, "version": VERSION, "agent": agent, "agent_sha256": agent_sha256, "seed": seed,
            "empty": list(empty), "policy_empty": None if policy_empty is None else list(policy_empty),
            "games_per_shard": games_per_shard, "draft": "dealt", "open_hands": True,
            "arrays": {name: {"dtype": dtype.str, "row": list(shape)} for name, (dtype, shape) in ARRAYS.items()},
            "shards": {}}  # fmt: skip


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


def _describe(manifest: dict[str, Any]) -> str:
    low, high = manifest["empty"]
    policy = manifest["policy_empty"]
    moves = "no best moves" if policy is None else f"best moves at {policy[0]}-{policy[1]} empty"
    files = "" if manifest["agent_sha256"] is None else f" (files sha256 {manifest['agent_sha256'][:12]})"
    return (f"agent {manifest['agent']}{files}, seed {manifest['seed']}, {low}-{high} empty, {moves}, "
            f"{manifest['games_per_shard']} games a shard")  # fmt: skip


@dataclass
class BuildReport:
    """What a build did: shards built and skipped (already complete), positions in them, seconds spent."""

    built: list[int]
    skipped: list[int]
    positions_built: int
    positions_total: int
    seconds: float


def build(
    directory: str | Path,
    shards: int | tuple[int, int] | range | None = None,
    *,
    positions: int | None = None,
    agent: str = DEFAULT_AGENT,
    seed: int = 0,
    empty: tuple[int, int] = DEFAULT_EMPTY,
    games_per_shard: int = DEFAULT_GAMES_PER_SHARD,
    policy_empty: tuple[int, int] | str | None = "auto",
    progress: bool = False,
) -> BuildReport:
    """Build (or complete) the dataset in ``directory``: the ``shards`` given (``N``: 0 to N-1; ``(A, B)``:
    A to B), or shards from 0 on until the folder holds ``positions`` positions. ``policy_empty``: the empty
    tiles (within ``empty``) at which every value-keeping move is recorded too, or ``None``.

    A shard already in the manifest whose file has the manifest's sha256 is kept; any other is
    (re)built. A folder with a manifest must come from a build with the same parameters. Ctrl-C
    (``KeyboardInterrupt``) stops between or inside shards: every finished shard stays.
    """
    empty = check_build(agent, seed, empty, games_per_shard)
    policy_empty = check_policy_empty(policy_empty, empty)
    if (shards is None) == (positions is None):
        raise ArgumentError("give a budget: shards (N or A-B) or positions, not both and not neither")
    wanted = shard_range(shards) if shards is not None else range(0, MAX_SHARDS)
    if positions is not None:
        _whole("positions", positions, 1, MAX_SHARDS * games_per_shard * (empty[1] - empty[0] + 1))
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ArgumentError(f"{directory}: cannot make the folder ({err.strerror or err})") from None
    if not directory.is_dir():
        raise ArgumentError(f"{directory}: not a folder")
    from trinity_env.agents.registry import spec_sha256

    header = _header(agent, seed, empty, games_per_shard, policy_empty, spec_sha256(agent))
    with _locked(directory):
        if (directory / MANIFEST).exists():
            manifest = read_manifest(directory)
            mine = {k: v for k, v in header.items() if k != "shards"}
            if {k: manifest.get(k) for k in mine} != mine:
                raise DatasetError(f"{directory}: built with {_describe(manifest)}, not {_describe(header)}; "
                                   "give another folder to build a different dataset")  # fmt: skip
        else:
            manifest = header
            _write_manifest(directory, manifest)

    from trinity_env.agents.spec import make
    from trinity_env.search.solver import Solver

    player = make(agent)
    if spec_sha256(agent) != header["agent_sha256"]:  # replaced between the hash above and the read just now
        raise DatasetError(f"the files of agent {agent} changed while it was being loaded; run the build again")
    solver = Solver()
    start = time.perf_counter()
    built: list[int] = []
    skipped: list[int] = []
    made = 0
    bar = None
    if progress:
        from tqdm import tqdm

        total = None if positions is not None else len(wanted) * games_per_shard
        bar = tqdm(total=total, desc="games", unit="game", dynamic_ncols=True)
    try:
        held = 0  # positions in shards 0..k-1 (for a positions budget)
        for index in wanted:
            if positions is not None and held >= positions:
                break
            name = shard_name(index)
            manifest = read_manifest(directory)  # what other builders of this folder finished counts too
            entry = _complete(directory, name, manifest)
            if entry is not None:
                skipped.append(index)
                held += entry["positions"]
                if bar is not None:
                    bar.update(games_per_shard)
                continue

            def on_game(count: int, index: int = index, before: int = made) -> None:
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(shard=index, positions=before + count, refresh=False)

            arrays = build_shard(index, player, solver, seed, empty, games_per_shard, on_game, policy_empty)
            data = shard_bytes(arrays)
            write_bytes(directory / name, data)
            entry = {"games": [index * games_per_shard, (index + 1) * games_per_shard],
                     "positions": int(arrays["value"].shape[0]), "bytes": len(data), "sha256": _sha256(data),
                     "arrays_sha256": arrays_sha256(arrays)}  # fmt: skip
            with _locked(directory):  # another builder may have added shards since: merge into the file's manifest
                manifest = read_manifest(directory)
                manifest["shards"][name] = entry
                _write_manifest(directory, manifest)
            built.append(index)
            made += entry["positions"]
            held += entry["positions"]
    finally:
        if bar is not None:
            bar.close()
    total_positions = sum(e["positions"] for e in manifest["shards"].values())
    return BuildReport(built, skipped, made, total_positions, time.perf_counter() - start)


def _complete(directory: Path, name: str, manifest: dict[str, Any]) -> dict[str, Any] | None:
    """The manifest's entry for ``name`` if the file is there with the manifest's sha256, else ``None``."""
    entry = manifest["shards"].get(name)
    if entry is None:
        return None
    try:
        data = _read_file(directory / name, entry["bytes"])
    except (DatasetError, OSError):
        return None
    return entry if _sha256(data) == entry["sha256"] else None


# ---------------------------------------------------------------------- the manifest


def _fail(where: object, problem: str) -> DatasetError:
    return DatasetError(f"{where}: {problem}")


def read_manifest(directory: str | Path) -> dict[str, Any]:
    """``DIR/manifest.json``, checked field by field (not the shards themselves: see ``load``)."""
    path = Path(directory) / MANIFEST
    if not path.exists():
        raise _fail(directory, f"no {MANIFEST}: not a solved-positions dataset (build one with "
                               "python -m training.solved_positions build DIR --shards N)")  # fmt: skip
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
        check_policy_empty(None if policy is None else tuple(policy) if isinstance(policy, list) else policy,
                           (low, high))  # fmt: skip
        if manifest.get("draft") != "dealt" or manifest.get("open_hands") is not True:
            raise ValueError("draft must be 'dealt' and open_hands true")
        arrays = {name: {"dtype": dtype.str, "row": list(shape)} for name, (dtype, shape) in ARRAYS.items()}
        if manifest.get("arrays") != arrays:
            raise ValueError("arrays differ from this version's layout")
        shards = manifest.get("shards")
        if not isinstance(shards, dict) or len(shards) > MAX_SHARDS:
            raise ValueError(f"shards must be a mapping of at most {MAX_SHARDS} shard files")
        most = games_per_shard * (high - low + 1)
        for name, entry in shards.items():
            match = SHARD_NAME.fullmatch(name)
            if match is None:
                raise ValueError(f"{name!r} is not a shard name (shard-NNNNN.npz)")
            index = int(match[1])
            if not isinstance(entry, dict) or set(entry) != {"games", "positions", "bytes", "sha256", "arrays_sha256"}:
                raise ValueError(f"{name}: expected games, positions, bytes, sha256 and arrays_sha256")
            if entry["games"] != [index * games_per_shard, (index + 1) * games_per_shard]:
                raise ValueError(f"{name}: games {entry['games']!r} are not shard {index}'s")
            _whole(f"{name}: positions", entry["positions"], 0, most)
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
        archive = zipfile.ZipFile(io.BytesIO(data))
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


def check_rows(arrays: dict[str, np.ndarray], games: tuple[int, int], empty: tuple[int, int],
               policy_empty: tuple[int, int] | None = None) -> str | None:  # fmt: skip
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
        ("deck sizes", ((deck_size >= 0) & (deck_size <= DECK_SIZE)).all()
         and ((status == ABSENT) == (slots[None, None, :] >= deck_size[:, :, None])).all()),
        ("sides", ((sides >= 0) & (sides <= A)).all()),
        ("owner", np.isin(owner, (-1, 0, 1)).all()),
        ("marks", ((marks >= 0) & (marks <= 3)).all()),
        ("info", np.isin(info[:, TO_MOVE], (0, 1)).all() and (info[:, PHASE] == PLAY).all()
         and np.isin(info[:, FIRST_PLAYER], (0, 1)).all() and ((info[:, MAX_A] >= 0) & (info[:, MAX_A] <= 16)).all()
         and ((info[:, HAND0 : HAND0 + 2] >= 0) & (info[:, HAND0 : HAND0 + 2] <= DECK_SIZE)).all()
         and (info[:, WINNER] == -1).all() and (info[:, TERMINATION] == NOT_OVER).all()
         and (info[:, LANE] == -1).all()),
    ]  # fmt: skip
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


def _selected(directory: Path, manifest: dict[str, Any], max_positions: int) -> list[str]:
    _whole("max_positions", max_positions, 1, 2**40)
    names = sorted(manifest["shards"])
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


def load(directory: str | Path, *, max_positions: int = DEFAULT_MAX_POSITIONS) -> SolvedPositions:
    """Every shard the manifest lists, checked, as one ``SolvedPositions``; ``DatasetError`` naming the
    file at the first problem. Refuses more than ``max_positions`` positions before reading any shard."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    parts = [_checked_shard(directory, name, manifest) for name in _selected(directory, manifest, max_positions)]
    joined = {name: np.concatenate([p[name] for p in parts]) for name in ARRAYS}
    return _positions(joined, manifest)


# ---------------------------------------------------------------------- summary


def summary(directory: str | Path) -> dict[str, Any]:
    """Every shard checked, and what the dataset holds: positions by empty count and value, bytes on disk."""
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
    return {"agent": manifest["agent"], "seed": manifest["seed"], "empty": manifest["empty"],
            "policy_empty": manifest["policy_empty"],
            "games_per_shard": manifest["games_per_shard"], "shards": len(indices), "shard_indices": indices,
            "games": games, "positions": positions, "bytes": size,
            "bytes_per_position": size / positions if positions else None,
            "by_empty": {str(c): {"win": w, "draw": d, "loss": loss}
                         for c, (w, d, loss) in sorted(by_count.items())}}  # fmt: skip


def _ranges(indices: Sequence[int]) -> str:
    parts: list[str] = []
    for i in indices:
        if parts and parts[-1][1] == i - 1:
            parts[-1][1] = i
        else:
            parts.append([i, i])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in parts) or "none"


def _print_summary(directory: str, info: dict[str, Any]) -> None:
    per = info["bytes_per_position"]
    low, high = info["empty"]
    print(f"{directory}: {info['positions']} positions from {info['games']} games of {info['agent']} "
          f"(seed {info['seed']}, {low}-{high} empty, {info['games_per_shard']} games a shard)")  # fmt: skip
    print(f"shards: {info['shards']} ({_ranges(info['shard_indices'])}), all checked; "
          f"{info['bytes']} bytes on disk" + (f", {per:.1f} a position" if per else ""))  # fmt: skip
    print("empty  positions   win  draw  loss")
    for count, row in info["by_empty"].items():
        total = row["win"] + row["draw"] + row["loss"]
        shares = " ".join(f"{row[key] / total:5.1%}" for key in ("win", "draw", "loss"))
        print(f"{count:>5}  {total:>9}  {shares}")


# ---------------------------------------------------------------------- command line


def _shards_argument(text: str) -> int | tuple[int, int]:
    match = re.fullmatch(r"([0-9]{1,6})(?:-([0-9]{1,6}))?", text)
    if match is None or (match[2] is None and not 1 <= int(match[1]) <= MAX_SHARDS):
        raise argparse.ArgumentTypeError(f"expected N (shards 0 to N-1) or A-B (shards A to B), got {text!r}")
    if match[2] is None:
        return int(match[1])
    low, high = int(match[1]), int(match[2])
    if not low <= high < MAX_SHARDS:
        raise argparse.ArgumentTypeError(f"expected A-B with A <= B < {MAX_SHARDS}, got {text!r}")
    return low, high


def _policy_argument(text: str) -> tuple[int, int] | str | None:
    return None if text == "none" else text if text == "auto" else empty_range(text)


def parser() -> argparse.ArgumentParser:
    top = OneLineParser(prog="python -m training.solved_positions", description=__doc__.split("\n")[0])
    commands = top.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    make = commands.add_parser("build", help="build shards (skipping finished ones): deterministic and resumable")
    make.add_argument("directory", metavar="DIR")
    budget = make.add_mutually_exclusive_group(required=True)
    budget.add_argument("--shards", type=_shards_argument, help="N (shards 0 to N-1) or A-B (shards A to B)")
    budget.add_argument(
        "--positions", type=whole_number(1, 10**12), help="shards from 0 until the folder holds P positions"
    )
    make.add_argument("--agent", default=DEFAULT_AGENT, help=f"self-play agent spec (default {DEFAULT_AGENT})")
    make.add_argument("--seed", type=whole_number(0, MAX_SEED), default=0, help="the dataset's seed (default 0)")
    make.add_argument("--empty", type=empty_range, default=DEFAULT_EMPTY,
                      help="empty tiles, N or LOW-HIGH within 1-14 (default 4-10)")  # fmt: skip
    make.add_argument("--games-per-shard", type=whole_number(1, MAX_GAMES_PER_SHARD), default=DEFAULT_GAMES_PER_SHARD,
                      help=f"games in a shard (default {DEFAULT_GAMES_PER_SHARD})")  # fmt: skip
    make.add_argument("--policy-empty", type=_policy_argument, default="auto",
                      help="empty tiles, N or LOW-HIGH within --empty, at which every value-keeping move is recorded "
                           f"too; 'none'; or 'auto' (the default: --empty up to {MOST_POLICY_EMPTY})")  # fmt: skip
    make.add_argument("--quiet", action="store_true", help="no progress bar")
    show = commands.add_parser("info", help="check every shard and say what the dataset holds")
    show.add_argument("directory", metavar="DIR")
    show.add_argument("--json", action="store_true", help="print the summary as JSON")
    return top


def _stop_on_signals() -> list[int]:
    """Ctrl-C and SIGTERM both raise ``KeyboardInterrupt`` (a shell's background job inherits SIGINT ignored, and
    SIGTERM would otherwise kill the build without a word); the list holds the signal that stopped it."""
    stopped = [signal.SIGINT]

    def stop(signum, frame) -> None:
        stopped[0] = signum
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
    return stopped


def main(argv: Sequence[str] | None = None) -> int:
    """0, 2 for bad input (one line on stderr), 130 when interrupted by Ctrl-C and 143 by SIGTERM (finished shards
    kept)."""
    prog = "solved_positions"
    try:
        args, extra = parser().parse_known_args(argv)
        if extra:
            raise UsageError(prog, f"unrecognized arguments: {' '.join(extra)}")
    except UsageError as err:
        print(f"{prog}: {' '.join(err.message.split())}", file=sys.stderr)
        return 2
    stopped = _stop_on_signals() if args.command == "build" else [signal.SIGINT]
    try:
        if args.command == "build":
            report = build(args.directory, args.shards, positions=args.positions, agent=args.agent, seed=args.seed,
                           empty=args.empty, games_per_shard=args.games_per_shard,
                           policy_empty=args.policy_empty, progress=not args.quiet)  # fmt: skip
            rate = report.positions_built / report.seconds if report.seconds else 0.0
            print(f"{args.directory}: built {len(report.built)} shard(s) ({report.positions_built} positions, "
                  f"{report.seconds:.0f} s, {rate:.1f} positions/s), {len(report.skipped)} already complete; "
                  f"{report.positions_total} positions in the folder")  # fmt: skip
        else:
            info = summary(args.directory)
            if args.json:
                print(json.dumps(info, indent=1))
            else:
                _print_summary(args.directory, info)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; finished shards are kept (run the same command to resume)", file=sys.stderr)
        return 128 + int(stopped[0])
    except (TrinityError, ValueError, OSError) as err:
        print(f"{prog}: {' '.join(str(err).split())[:500]}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
