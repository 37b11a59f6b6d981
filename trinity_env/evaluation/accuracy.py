"""Accuracy against perfect play: how often an agent's move keeps the exact value of a position.

Puzzles (``trinity_env.evaluation.puzzles``) ask one hard question per position; this asks the
everyday one, on the positions an agent meets in real games: *does your move keep what the
position is worth?* A won position must stay won, a drawn one drawn (a lost position cannot
be spoiled, so it does not count for moves). The exact solver knows the answer for every legal
move, so the figure has no noise but the sampling of positions, and for a network it also
scores what the search leans on: the value head's sign and squared error against the exact
value, and the raw policy's first choice.

The position set: open-hand play-phase positions from games of ``mcts:400`` against itself on
dealt hands (game ``k`` seeded by the set's seed and ``k`` alone), at each count of empty tiles
(4 to 11 by default), one position per game and count, solved with every move that keeps the
value. Each count takes games in order until it holds ``per_count`` positions the mover does not
lose (those that count for moves; the lost ones met on the way stay, for the value head), so a
longer build starts with a shorter one's positions. A position the solver cannot settle within
``max_nodes`` is recorded as such and skipped (the same outcome on any machine).

The file is JSON lines: a header line (``format``, the build's ``agent``, ``agent_sha256``: the
sha256 of the files the agent reads, absent for one that reads none such as ``mcts:400``, ``seed``,
``max_nodes``) and then one record per game and count, ``{"game", "empty_tiles", "position",
"value", "best_moves", "legal_moves"}`` (``value`` for the player to move: 1, 0 or -1;
``best_moves`` every ``{"card", "tile"}`` that keeps it) or ``{"game", "empty_tiles",
"over_budget": true}``. A build appends record by record, so an interrupted one resumes where
it stopped (``build_set`` with the same file). The file follows ``trinity_env.core.records``: a
build with other settings is refused (so is one whose agent file, ``./agent.pt``, was replaced since),
a last line cut short (a killed build) is dropped with a warning, a full disk is one line naming the
file and the build resumes after it, the file is locked while a build writes it, and every field is
checked by type (one line naming the line).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from trinity_env.agents.spec import AgentSpec, player, recorded
from trinity_env.core import ArgumentError, GameState, Move, PositionError, records
from trinity_env.evaluation.match import RunInterrupted
from trinity_env.evaluation.puzzles import agent_move, agent_moves, parse_moves
from trinity_env.evaluation.ratings import Share
from trinity_env.search.solver import Solver, SolverBudgetError
from trinity_env.spec.agent import Agent
from trinity_env.spec.config import make_config
from trinity_env.spec.observation import observation_dict

FORMAT = "trinity-towers-accuracy"
DEFAULT_SET = Path(str(resources.files("trinity_env.evaluation") / "data" / "accuracy.jsonl"))
DEFAULT_AGENT = "mcts:400"
DEFAULT_EMPTY = (4, 11)
"""Empty counts of the default set. Every move's value costs many times the position's value alone: in the shipped
build about half the positions tried with 11 empty tiles and every one with 12 ran past ``DEFAULT_MAX_NODES``
(docs/accuracy.md has the counts), so the set stops at 11."""
DEFAULT_PER_COUNT = 400
"""Positions per count that the mover does not lose: a 95% interval of about ±3% at 90% accuracy."""
DEFAULT_MAX_NODES = 50_000_000
"""Solver nodes per position (its value and every move's): every position with 10 empty tiles or fewer fits."""
MAX_PER_COUNT = 100_000


@dataclass(frozen=True)
class Position:
    """A solved position: ``value`` for its mover and ``best_moves``, the moves that keep it."""

    game: int
    position: GameState
    value: int
    best_moves: frozenset[Move]
    legal_moves: int

    @property
    def empty(self) -> int:
        return len(self.position.empty_tiles())

    @property
    def counts_for_moves(self) -> bool:
        """Whether a move can spoil it: it is won or drawn for the mover."""
        return self.value >= 0

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "empty_tiles": self.empty,
            "position": self.position.to_dict(),
            "value": self.value,
            "best_moves": [move.to_json() for move in sorted(self.best_moves)],
            "legal_moves": self.legal_moves,
        }


# ---------------------------------------------------------------------- building


def check_build(per_count: int, empty: tuple[int, int], agent: AgentSpec | str, max_nodes: int, seed: int) -> AgentSpec:
    """Bad arguments of ``build_set`` raise here, before any game is played; the self-play agent's ``AgentSpec``
    (spec text parsed here, once: ``agents.spec.recorded``)."""
    if isinstance(per_count, bool) or not isinstance(per_count, int) or not 1 <= per_count <= MAX_PER_COUNT:
        raise ArgumentError(f"per_count must be a whole number from 1 to {MAX_PER_COUNT}, got {per_count!r}")
    low, high = empty
    if not (type(low) is int and type(high) is int and 1 <= low <= high <= 14):
        raise ArgumentError(f"empty tiles must be a range within 1-14 (low <= high), got {low}-{high}")
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
        raise ArgumentError(f"max_nodes must be a whole number >= 1, got {max_nodes!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ArgumentError(f"seed must be a whole number >= 0, got {seed!r}")
    return recorded(agent, "a position set's build (trinity accuracy build)")


def game_positions(agent: Agent, seed: int, game: int, empty: tuple[int, int]) -> dict[int, GameState]:
    """The positions of game ``game`` (of ``agent`` against itself) by empty count; seeded by ``seed`` and
    ``game`` alone (``self_play_positions``)."""
    return self_play_positions(agent, random.Random(seed * 1_000_003 + game), empty)


def self_play_positions(agent: Agent, rng: random.Random, empty: tuple[int, int]) -> dict[int, GameState]:
    """The positions of one game of ``agent`` against itself on hands dealt from ``rng`` (open hands), with
    ``empty[1]`` down to ``empty[0]`` empty tiles in which the mover has a move, by empty count in play order."""
    state = make_config(draft="dealt", open_hands=True).new_game(rng)
    agent.reset(rng.randrange(2**31))
    found: dict[int, GameState] = {}
    while not state.is_over and len(state.empty_tiles()) >= empty[0]:
        count = len(state.empty_tiles())
        if count <= empty[1] and count not in found and state.legal_moves():
            found[count] = state
        state = state.apply(agent.act(observation_dict(state, state.to_move, True), state))
    return found


@dataclass
class BuildProgress:
    """What a build has done so far: positions by empty count, and those over the node budget."""

    header: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)

    def counting(self, empty: int) -> int:
        """The positions with ``empty`` empty tiles that count for moves."""
        return sum(1 for r in self.records if r["empty_tiles"] == empty and r.get("value", -1) >= 0)

    def summary(self) -> str:
        counts = sorted({r["empty_tiles"] for r in self.records})
        parts = [f"{e} empty: {self.counting(e)}" for e in counts]
        over = sum(1 for r in self.records if r.get("over_budget"))
        return f"{len(self.records)} records ({', '.join(parts)} not lost for the mover; {over} over the node budget)"


def build_set(
    path: str | Path,
    *,
    per_count: int = DEFAULT_PER_COUNT,
    empty: tuple[int, int] = DEFAULT_EMPTY,
    agent: AgentSpec | str = DEFAULT_AGENT,
    seed: int = 0,
    max_nodes: int = DEFAULT_MAX_NODES,
    progress: bool = False,
) -> BuildProgress:
    """Build (or go on building) the position set at ``path``; each record is on disk when solved.

    Counts are filled from the fewest empty tiles up (the cheapest to solve first). A file that
    exists must come from a build with the same ``agent`` (the same content of the files it reads: a replaced
    ``./agent.pt`` is refused), ``seed`` and ``max_nodes``; its records are kept and the build goes on after
    the last. Ctrl-C raises ``RunInterrupted`` whose ``partial`` is the progress so far, every finished
    record written.
    """
    pinned = check_build(per_count, empty, agent, max_nodes, seed).pinned()  # each build holds its files to this hash
    files = pinned.sha256()  # a file replaced between two runs of a build must not mix two networks' games
    hashed = {} if files is None else {"agent_sha256": files}  # mcts:400 reads no file: the header it always had
    header = {"format": FORMAT, "agent": pinned.text, **hashed, "seed": seed, "max_nodes": max_nodes}
    with records.appending(
        path, header, record_problem, PositionError, what="accuracy record", kind="accuracy set"
    ) as (out, contents):
        done = BuildProgress(header, [record for _, record in contents.records])
        _build(out, done, per_count, empty, pinned, seed, max_nodes, progress)
    return done


def _build(
    out: records.RecordFile,
    done: BuildProgress,
    per_count: int,
    empty: tuple[int, int],
    agent: AgentSpec,
    seed: int,
    max_nodes: int,
    progress: bool,
) -> None:
    self_player = agent.build()
    solver = Solver()
    games: dict[int, dict[int, GameState]] = {}
    bar = None
    if progress:
        from tqdm import tqdm

        total = per_count * (empty[1] - empty[0] + 1)
        bar = tqdm(
            total=total,
            initial=sum(min(done.counting(e), per_count) for e in range(empty[0], empty[1] + 1)),
            desc="positions",
            unit="position",
        )
    try:
        for count in range(empty[0], empty[1] + 1):
            seen = {r["game"] for r in done.records if r["empty_tiles"] == count}
            game = max(seen) + 1 if seen else 0
            while done.counting(count) < per_count:
                if game not in games:
                    games[game] = game_positions(self_player, seed, game, empty)
                state = games[game].get(count)
                if state is not None:
                    record = _solve_record(solver, state, game, max_nodes)
                    out.append(record)
                    done.records.append(record)
                    if bar is not None and record.get("value", -1) >= 0:
                        bar.update(1)
                game += 1
    except KeyboardInterrupt:
        raise RunInterrupted(done) from None
    finally:
        if bar is not None:
            bar.close()


def _solve_record(solver: Solver, state: GameState, game: int, max_nodes: int) -> dict[str, Any]:
    count = len(state.empty_tiles())
    try:
        solution = solver.solve(state, max_nodes=max_nodes)
    except SolverBudgetError:
        return {"game": game, "empty_tiles": count, "over_budget": True}
    best = frozenset(solution.best_moves)
    return Position(game, state, solution.value, best, len(state.legal_moves())).to_json()


# ---------------------------------------------------------------------- loading

_WHERE = {"game": records.whole(0), "empty_tiles": records.whole(1, 15)}
_OVER_BUDGET = _WHERE | {"over_budget": records.TRUE}
_SOLVED = _WHERE | {
    "position": records.OBJECT,
    "value": records.one_of(-1, 0, 1),
    "best_moves": records.LIST,
    "legal_moves": records.whole(1),
}


def record_problem(record: object) -> str | None:
    """What is wrong with one line of a set as a record, field by field (``None``: nothing); the position
    and its moves are checked by ``load_set``."""
    if isinstance(record, dict) and "over_budget" in record:
        return records.problem(record, _OVER_BUDGET)
    return records.problem(record, _SOLVED)


def _read_records(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    contents = records.read(
        path, record_problem, PositionError, what="accuracy record", kind="accuracy set", header=FORMAT
    )
    if contents.header is None:
        raise PositionError(f"{path}: empty file, expected an accuracy set header")
    if contents.cut:
        records.warn_cut(str(path))
    return contents.header, [record for _, record in contents.records]


def _position(record: dict[str, Any], where: str) -> Position:
    try:
        state = GameState.from_dict(record["position"])
        value = record["value"]
        if type(value) is not int or value not in (-1, 0, 1):
            raise ValueError(f"value must be -1, 0 or 1, got {value!r}")
        best = parse_moves(record["best_moves"])
        legal = set(state.legal_moves())
        if not best or not best <= legal:
            raise ValueError("best_moves must be a non-empty list of legal moves of the position")
        if len(state.empty_tiles()) != record["empty_tiles"]:
            raise ValueError(f"empty_tiles says {record['empty_tiles']}, the position has {len(state.empty_tiles())}")
    except (KeyError, TypeError, ValueError, RecursionError) as err:
        raise PositionError(f"{where}: not an accuracy record ({err})") from None
    return Position(record["game"], state, value, best, len(legal))


def load_set(path: str | Path = DEFAULT_SET) -> list[Position]:
    """The solved positions of a set file (those over the node budget left out), checked record by record."""
    path = Path(path)
    _, records = _read_records(path)
    positions = [_position(r, f"{path}, record {k}") for k, r in enumerate(records, 1) if not r.get("over_budget")]
    if not positions:
        raise PositionError(f"{path}: no solved positions in the file")
    return positions


@functools.lru_cache(maxsize=4)
def validation_set(per_count: int = 40) -> tuple[Position, ...]:
    """The first ``per_count`` positions of each count in the shipped set (both values, the lost ones too): what a
    trainer measures its network's heads on at every evaluation (read and checked once per process)."""
    return tuple(first_per_count(load_set(DEFAULT_SET), per_count))


def first_per_count(positions: Sequence[Position], limit: int) -> list[Position]:
    """The first ``limit`` positions of each empty count, in the set's order (a smaller set of the same kind)."""
    taken: dict[int, int] = {}
    kept = []
    for p in positions:
        taken[p.empty] = taken.get(p.empty, 0) + 1
        if taken[p.empty] <= limit:
            kept.append(p)
    return kept


# ---------------------------------------------------------------------- scoring


@dataclass(frozen=True)
class CountScore:
    """An agent's figures on the positions with one count of empty tiles."""

    empty: int
    moves: Share
    """Moves that keep the value, over the positions the mover does not lose."""
    value_sign: Share | None = None
    """The value head's sign equal to the exact value's, over the positions not drawn."""
    value_error: float | None = None
    """The value head's mean squared error against the exact value, over all positions."""
    policy: Share | None = None
    """The raw policy's most likely legal move keeps the value, over the positions not lost."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"empty_tiles": self.empty, "moves": self.moves.to_json()}
        if self.value_sign is not None:
            data |= {
                "value_sign": self.value_sign.to_json(),
                "value_mse": self.value_error,
                "policy_top1": self.policy.to_json() if self.policy else None,
            }
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CountScore:
        if "value_sign" not in data:
            return cls(data["empty_tiles"], Share.from_json(data["moves"], "moves"))
        policy = Share.from_json(data["policy_top1"], "policy_top1") if data["policy_top1"] else None
        return cls(
            data["empty_tiles"],
            Share.from_json(data["moves"], "moves"),
            Share.from_json(data["value_sign"], "value_sign"),
            data["value_mse"],
            policy,
        )


@dataclass(frozen=True)
class AgentAccuracy:
    """An agent's accuracy at every count of empty tiles in the set."""

    agent: str
    counts: tuple[CountScore, ...]

    def to_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "counts": [c.to_json() for c in self.counts]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AgentAccuracy:
        """The scores ``to_json`` wrote (``trinity accuracy --json``'s ``agents`` entries): its tables and plot
        can be drawn again from the file."""
        return cls(data["agent"], tuple(CountScore.from_json(c) for c in data["counts"]))


def check_network_outputs(agent: Agent) -> Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]] | None:
    """The agent's ``evaluate(observations, masks) -> (logits, values)`` if it plays a network, else ``None``."""
    evaluate = getattr(agent, "evaluate", None)
    return evaluate if callable(evaluate) else None


def score_agent(
    agent: Agent | str | Any,
    positions: Sequence[Position],
    seed: int = 0,
    on_position: Callable[[], object] | None = None,
    label: str | None = None,
) -> AgentAccuracy:
    """``agent``'s accuracy on ``positions``, by empty count; position ``k`` resets it with ``seed + k``.

    ``agent``: an ``Agent`` (played as it is), a spec string, a ``Player`` or a policy function
    (``agents.spec.player``, built here); a stateless batched policy is asked once for every position
    (``puzzles.agent_moves``). Its value head is scored where it has one (``evaluate`` giving values)."""
    who = None if isinstance(agent, Agent) else player(agent)  # parsed once
    built = agent if who is None else who.build()
    own = who.label if who is not None else getattr(agent, "name", type(agent).__name__)
    spec = label if label is not None else own
    evaluate = check_network_outputs(built)
    kept: dict[int, list[bool]] = {}
    if getattr(built, "stateless", False) and callable(getattr(built, "act_batch", None)):
        chosen = [item for item in positions if item.counts_for_moves]
        for item, move in zip(chosen, agent_moves(built, [item.position for item in chosen], seed)):
            kept.setdefault(item.empty, []).append(move in item.best_moves)
        for _ in positions if on_position is not None else ():
            on_position()
    else:
        for k, item in enumerate(positions):
            if item.counts_for_moves:
                kept.setdefault(item.empty, []).append(agent_move(built, item.position, seed + k) in item.best_moves)
            if on_position is not None:
                on_position()
    heads = {row.empty: row for row in score_network(evaluate, positions)} if evaluate is not None else {}
    rows = []
    for empty in sorted({p.empty for p in positions}):
        hits = kept.get(empty, [])
        moves = Share(sum(hits), len(hits))
        head = heads.get(empty)
        rows.append(
            CountScore(empty, moves)
            if head is None
            else CountScore(empty, moves, head.value_sign, head.value_error, head.policy)
        )
    return AgentAccuracy(spec, tuple(rows))


def score_network(
    evaluate: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]], positions: Sequence[Position]
) -> list[CountScore]:
    """A network's heads on ``positions``, by empty count, from one batched ``evaluate(observations, masks) ->
    (logits, values)`` per count: ``moves`` and ``policy`` are both the raw policy's first choice."""
    rows = []
    for empty in sorted({p.empty for p in positions}):
        row = _network_row(empty, [p for p in positions if p.empty == empty], evaluate)
        if row is not None:
            rows.append(CountScore(empty, row.policy, row.value_sign, row.value_error, row.policy))
    return rows


def _network_row(empty: int, group: Sequence[Position], evaluate) -> CountScore | None:
    """The heads' figures on ``group``; ``None`` for a network without a value output (an ONNX policy's may have
    none: its raw policy is what it plays, scored as its moves)."""
    views = [observation_dict(p.position, p.position.to_move, True) for p in group]
    observations = np.stack([v["observation"] for v in views]).astype(np.int8)
    masks = np.stack([v["action_mask"] for v in views]).astype(np.int8)
    logits, values = evaluate(observations, masks)
    if values is None:
        return None
    exact = np.array([p.value for p in group], np.float64)
    values = np.asarray(values, np.float64)
    decided = exact != 0
    sign = Share(int((np.sign(values[decided]) == exact[decided]).sum()), int(decided.sum()))
    error = float(np.mean((values - exact) ** 2))
    top = []
    for p, row, mask in zip(group, np.asarray(logits), masks):
        if p.counts_for_moves:
            legal = np.flatnonzero(mask)
            step = p.position.apply(int(legal[np.argmax(row[legal])])).last
            top.append(Move.placed(step) in p.best_moves)
    policy = Share(sum(top), len(top))
    return CountScore(empty, policy, sign, error, policy)


def random_expectation(positions: Sequence[Position]) -> dict[int, float]:
    """By empty count, the share of moves a uniformly random mover keeps the value with, on average: how much
    of an agent's figure the positions give away by themselves."""
    shares: dict[int, list[float]] = {}
    for p in positions:
        if p.counts_for_moves:
            shares.setdefault(p.empty, []).append(len(p.best_moves) / p.legal_moves)
    return {empty: sum(values) / len(values) for empty, values in sorted(shares.items())}


def score_agents(
    specs: Sequence[Any], positions: Sequence[Position], seed: int = 0, progress: bool = False
) -> list[AgentAccuracy]:
    """Each agent's accuracy (spec strings or any ``Player``); Ctrl-C raises ``RunInterrupted`` whose ``partial``
    is the agents finished."""
    players = [player(spec) for spec in specs]  # every bad spec raises before anything is built
    agents = [who.build() for who in players]  # every checkpoint is read before any position is played
    results: list[AgentAccuracy] = []
    try:
        for who, agent in zip(players, agents):
            if not progress:
                results.append(score_agent(agent, positions, seed, label=who.label))
                continue
            from tqdm import tqdm

            with tqdm(total=len(positions), desc=who.label, unit="position") as bar:
                results.append(score_agent(agent, positions, seed, bar.update, label=who.label))
    except KeyboardInterrupt:
        raise RunInterrupted(results) from None
    return results
