"""Building the solved-positions dataset (``solved_format`` holds the format): games of one agent against
itself on dealt hands (``mcts:200`` by default), every position from ``empty[1]`` down to ``empty[0]`` empty tiles
in which the mover has a move, each labelled by the exact solver with its value for the player to move and, where
its empty tiles lie in ``policy_empty``, every move that keeps that value. The hands are open (both known), so the
labels are the values of the positions the network sees.

With a node budget (``max_nodes``) a position is labelled only where its exact solve (the value, and at
``policy_empty`` every move's too) finishes within that many solver nodes, and is left out otherwise, counted per
empty count in the manifest (``over_budget``): deeper positions (11-12 empty tiles) get labels, but only those the
solver settles cheaply, a biased sample of them. The solver searches with one
thread under a node budget, and each game starts a fresh solver (an empty table, no move history), so which
positions are kept depends on the game alone: the same on every machine, whatever the shards built before.

Game ``k`` depends on the agent, the seed and ``k`` alone (its random stream is drawn from the
three; a stream of its own, so that the dataset never replays the accuracy set's games, which
``trinity_env.evaluation.accuracy`` seeds from ``seed * 1_000_003 + k``), so shard ``k``
depends on the build's parameters and ``k`` alone: shards can be built in any order, by
several processes on disjoint ranges, and an interrupted build resumes where it stopped.
Each shard is written to a temporary file in ``DIR`` and renamed into place, then entered in
the manifest (under a lock, so two builders in one folder do not lose each other's entries):
Ctrl-C or a kill keeps every finished shard (Ctrl-C or SIGTERM while one is written waits for its file and
entry). A folder built with other parameters, or whose agent's files changed (their sha256), is refused.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trinity_env.agents.spec import AgentSpec, recorded
from trinity_env.core import ArgumentError, GameState, Move
from trinity_env.core.errors import BudgetExhausted
from trinity_env.core.locks import locked
from trinity_env.core.stops import signals_held
from trinity_env.core.writes import remove_leftovers, write_bytes
from trinity_env.evaluation.solved_format import (
    ACTIONS,
    ARRAYS,
    BATCH_ARRAYS,
    DEFAULT_AGENT,
    DEFAULT_EMPTY,
    DEFAULT_GAMES_PER_SHARD,
    FORMAT,
    MANIFEST,
    MAX_GAMES_PER_SHARD,
    MAX_SEED,
    MAX_SHARDS,
    VERSION,
    DatasetError,
    _read_file,
    _sha256,
    _whole,
    _write_manifest,
    arrays_sha256,
    check_empty,
    check_max_nodes,
    check_policy_empty,
    read_manifest,
    shard_bytes,
    shard_name,
)
from trinity_env.fast.convert import from_states
from trinity_env.fast.layout import TILES, Batch

# ---------------------------------------------------------------------- arguments


def check_build(
    agent: AgentSpec | str, seed: int, empty: tuple[int, int], games_per_shard: int
) -> tuple[AgentSpec, tuple[int, int]]:
    """Bad build arguments raise ``ArgumentError`` here (one line), before any game is played; the self-play agent's
    ``AgentSpec`` (spec text parsed here, once: ``agents.spec.recorded``) and the empty range."""
    if not isinstance(agent, AgentSpec) and (not isinstance(agent, str) or not agent):
        raise ArgumentError(f"agent must be an agent spec such as 'mcts:200', got {agent!r}")
    _whole("seed", seed, 0, MAX_SEED)
    _whole("games_per_shard", games_per_shard, 1, MAX_GAMES_PER_SHARD)
    return recorded(agent, "a dataset build (trinity dataset build)"), check_empty(empty)


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


# ---------------------------------------------------------------------- building


def game_rng(seed: int, game: int) -> random.Random:
    """Game ``game``'s random stream: its deal, first mover and the agent's seed come from it alone."""
    return random.Random(f"{FORMAT}/{seed}/{game}")


def game_positions(agent, seed: int, game: int, empty: tuple[int, int]) -> list[GameState]:
    """The positions of game ``game`` of ``agent`` against itself (open hands, dealt hands) with
    ``empty[1]`` down to ``empty[0]`` empty tiles in which the mover has a move, in play order
    (``accuracy.self_play_positions`` on this dataset's own game seeds)."""
    from trinity_env.evaluation.accuracy import self_play_positions

    return list(self_play_positions(agent, game_rng(seed, game), empty).values())


def best_actions(state: GameState, best_moves: Sequence[Move]) -> np.ndarray:
    """The packed 256-action mask (uint8 [32], bit ``a % 8`` of byte ``a // 8``) of the mover's legal actions
    that play one of ``best_moves``: every copy of an identical card counts."""
    wanted = set(best_moves)
    deck = state.decks[state.to_move]
    mask = np.zeros(ACTIONS, np.uint8)
    for action in state.legal_actions():
        card, tile = divmod(action - 16, TILES)
        if Move(deck[card], tile) in wanted:
            mask[action] = 1
    return np.packbits(mask, bitorder="little")


def label(
    solver, state: GameState, policy_empty: tuple[int, int] | None, max_nodes: int | None = None
) -> tuple[int, np.ndarray] | None:
    """The exact value of ``state`` for its mover and, where its empty tiles lie in ``policy_empty``, the packed
    mask of every action that keeps it (``best_actions``; zeros elsewhere). ``None`` where the solve (the value and
    those moves together) runs past ``max_nodes`` solver nodes."""
    count = len(state.empty_tiles())
    try:
        if policy_empty is not None and policy_empty[0] <= count <= policy_empty[1]:
            solution = solver.solve(state, max_nodes=max_nodes)
            return solution.value, best_actions(state, solution.best_moves)
        return solver.value(state, max_nodes=max_nodes), np.zeros(ACTIONS // 8, np.uint8)
    except BudgetExhausted:  # the solver's SolverBudgetError: only ever under max_nodes
        return None


def build_shard(
    index: int,
    agent,
    solver,
    seed: int,
    empty: tuple[int, int],
    games_per_shard: int,
    on_game=None,
    policy_empty: tuple[int, int] | None = None,
    max_nodes: int | None = None,
    over_budget: dict[int, int] | None = None,
) -> dict[str, np.ndarray]:
    """Shard ``index``'s arrays: its games played by ``agent`` (an ``Agent``), every position solved; where
    its empty tiles lie in ``policy_empty``, every move that keeps the value recorded too (``best``).

    With ``max_nodes``, each game is solved by a fresh solver and a position whose solve runs past the budget is
    left out, counted in ``over_budget`` (empty tiles -> positions, updated in place) where given."""
    max_nodes = check_max_nodes(max_nodes)
    if max_nodes is not None:
        from trinity_env.search.solver import Solver
    states: list[GameState] = []
    values: list[int] = []
    best: list[np.ndarray] = []
    games: list[int] = []
    first = index * games_per_shard
    for game in range(first, first + games_per_shard):
        labeller = solver if max_nodes is None else Solver()  # a fresh table: the game's labels depend on it alone
        for state in game_positions(agent, seed, game, empty):
            labelled = label(labeller, state, policy_empty, max_nodes)
            if labelled is None:
                if over_budget is not None:
                    count = len(state.empty_tiles())
                    over_budget[count] = over_budget.get(count, 0) + 1
                continue
            value, moves = labelled
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


def _header(
    agent: str,
    seed: int,
    empty: tuple[int, int],
    games_per_shard: int,
    policy_empty: tuple[int, int] | None,
    agent_sha256: str | None,
    max_nodes: int | None = None,
) -> dict[str, Any]:
    """The manifest's fields before any shard; ``max_nodes`` only where the build has a node budget, so that a build
    without one writes the manifest it always did."""
    budget = {} if max_nodes is None else {"max_nodes": max_nodes}
    return {
        "format": FORMAT,
        "version": VERSION,
        "agent": agent,
        "agent_sha256": agent_sha256,
        "seed": seed,
        "empty": list(empty),
        "policy_empty": None if policy_empty is None else list(policy_empty),
        **budget,
        "games_per_shard": games_per_shard,
        "draft": "dealt",
        "open_hands": True,
        "arrays": {name: {"dtype": dtype.str, "row": list(shape)} for name, (dtype, shape) in ARRAYS.items()},
        "shards": {},
    }


def _describe(manifest: dict[str, Any]) -> str:
    low, high = manifest["empty"]
    policy = manifest["policy_empty"]
    moves = "no best moves" if policy is None else f"best moves at {policy[0]}-{policy[1]} empty"
    files = "" if manifest["agent_sha256"] is None else f" (files sha256 {manifest['agent_sha256'][:12]})"
    budget = manifest.get("max_nodes")
    labels = "every position labelled" if budget is None else f"labels only within {budget} nodes"
    return (
        f"agent {manifest['agent']}{files}, seed {manifest['seed']}, {low}-{high} empty, {moves}, "
        f"{manifest['games_per_shard']} games a shard, {labels}"
    )


@dataclass
class BuildReport:
    """What a build did: shards built and skipped (already complete), positions in them, seconds spent, and under a
    node budget the positions of the shards built that were left out (empty tiles -> positions)."""

    built: list[int]
    skipped: list[int]
    positions_built: int
    positions_total: int
    seconds: float
    over_budget: dict[int, int] | None = None


def build(
    directory: str | Path,
    shards: int | tuple[int, int] | range | None = None,
    *,
    positions: int | None = None,
    agent: AgentSpec | str = DEFAULT_AGENT,
    seed: int = 0,
    empty: tuple[int, int] = DEFAULT_EMPTY,
    games_per_shard: int = DEFAULT_GAMES_PER_SHARD,
    policy_empty: tuple[int, int] | str | None = "auto",
    max_nodes: int | None = None,
    progress: bool = False,
) -> BuildReport:
    """Build (or complete) the dataset in ``directory``: the ``shards`` given (``N``: 0 to N-1; ``(A, B)``:
    A to B), or shards from 0 on until the folder holds ``positions`` positions. ``policy_empty``: the empty
    tiles (within ``empty``) at which every value-keeping move is recorded too, or ``None``. ``max_nodes``: a node
    budget for each position's solve (positions past it are left out and counted), or ``None``: every position.

    A shard already in the manifest whose file has the manifest's sha256 is kept; any other is
    (re)built. A folder with a manifest must come from a build with the same parameters. Ctrl-C
    (``KeyboardInterrupt``) stops between or inside shards: every finished shard stays.
    """
    spec, empty = check_build(agent, seed, empty, games_per_shard)
    policy_empty = check_policy_empty(policy_empty, empty)
    max_nodes = check_max_nodes(max_nodes)
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
    pinned = spec.pinned()  # its every build holds its files to this hash
    header = _header(spec.text, seed, empty, games_per_shard, policy_empty, pinned.sha256(), max_nodes)
    with locked(directory, ArgumentError, blocking=True):  # the manifest's lock: the folder itself, one file less
        remove_leftovers(directory)  # a killed builder's half shards (never a live builder's)
        if (directory / MANIFEST).exists():
            manifest = read_manifest(directory)
            mine = {k: v for k, v in header.items() if k != "shards"} | {"max_nodes": max_nodes}
            if {k: manifest.get(k) for k in mine} != mine:
                raise DatasetError(
                    f"{directory}: built with {_describe(manifest)}, not {_describe(header)}; "
                    "give another folder to build a different dataset"
                )
        else:
            manifest = header
            _write_manifest(directory, manifest)

    from trinity_env.search.solver import Solver

    player = pinned.build()  # hashed again once read: files replaced since the hash above are refused
    solver = Solver() if max_nodes is None else None  # under a budget each game gets a fresh one (build_shard)
    start = time.perf_counter()
    built: list[int] = []
    skipped: list[int] = []
    made = 0
    over_budget = None if max_nodes is None else dict.fromkeys(range(empty[0], empty[1] + 1), 0)
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

            over = None if max_nodes is None else dict.fromkeys(range(empty[0], empty[1] + 1), 0)
            arrays = build_shard(
                index, player, solver, seed, empty, games_per_shard, on_game, policy_empty, max_nodes, over
            )
            with signals_held():  # a stop now waits for the shard's file and entry (a second at most)
                data = shard_bytes(arrays)
                write_bytes(directory / name, data)
                entry = {
                    "games": [index * games_per_shard, (index + 1) * games_per_shard],
                    "positions": int(arrays["value"].shape[0]),
                    "bytes": len(data),
                    "sha256": _sha256(data),
                    "arrays_sha256": arrays_sha256(arrays),
                }
                if over is not None:  # what the budget left out, by empty tiles
                    entry["over_budget"] = {str(count): left for count, left in over.items()}
                    for count, left in over.items():
                        over_budget[count] += left
                # another builder may have added shards since: merge into the file's manifest
                with locked(directory, ArgumentError, blocking=True):
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
    return BuildReport(built, skipped, made, total_positions, time.perf_counter() - start, over_budget)


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
