"""Puzzles: solved positions from strong self-play in which few moves win, and scores of agents on them.

A puzzle is an open-hand play-phase position, won for the player to move, in which at
least one and at most a third of the legal moves (distinct card and tile) win; its
solution is exactly the set of winning moves, as the exact solver finds them. Positions
come from games of an agent against itself (``mcts:400`` by default) on dealt hands, taken
when the board has a chosen number of empty tiles (8 to 10 by default): each game draws
its target in that range and offers its positions from there down to the lower end, and
gives at most one puzzle. A position the solver cannot settle within ``max_nodes`` nodes is
skipped (the same outcome on any machine).

An agent's score is the share of puzzles in which its move is one of the winning moves,
with a 95% Wilson interval. Any file of records with a ``position`` and its winning moves
can be scored: this module's puzzle files (``solution``), and the endgame suite's records
that are won for the mover (``best_moves`` with ``value`` 1).

A puzzle file is JSON lines (``trinity_env.core.records``): a header naming the build
(``format``, ``agent``, ``seed``, ``empty``, ``max_nodes``; only ``format`` for a set picked by hand)
and one puzzle a line. ``build_file`` builds one from scratch without destroying the old one
first: it writes ``FILE.partial`` and renames it over ``FILE`` only when the build is complete,
so a build stopped by Ctrl-C or a full disk leaves ``FILE`` as it was (the puzzles found so far
in ``FILE.partial``); where no ``FILE`` was, the puzzles found so far become it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from trinity_env.agents.spec import AgentSpec, player, recorded
from trinity_env.core import ArgumentError, GameState, Move, Phase, PositionError, TrinityError, records
from trinity_env.evaluation.endgames import FORMAT as SUITE_FORMAT
from trinity_env.evaluation.match import RunInterrupted
from trinity_env.evaluation.ratings import Share
from trinity_env.search.solver import Solver, SolverBudgetError
from trinity_env.spec.agent import Agent
from trinity_env.spec.config import make_config
from trinity_env.spec.observation import observation_dict

FORMAT = "trinity-towers-puzzles"
DEFAULT_SET = Path(str(resources.files("trinity_env.evaluation") / "data" / "puzzles.jsonl"))
DEFAULT_AGENT = "mcts:400"
DEFAULT_EMPTY = (8, 10)
DEFAULT_MAX_NODES = 20_000_000
"""Solver nodes per position: most positions with 10 empty tiles are classified within it."""
MAX_SHARE = 1 / 3
"""At most this share of the legal moves may win."""


@dataclass(frozen=True)
class Puzzle:
    """A position won for its mover, and ``solution``: every winning ``Move``."""

    position: GameState
    solution: frozenset[Move]
    source: dict[str, Any] | None = None

    @property
    def empty(self) -> int:
        return len(self.position.empty_tiles())

    @property
    def legal_moves(self) -> int:
        return len(self.position.legal_moves())

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "position": self.position.to_dict(),
            "empty_tiles": self.empty,
            "to_move": self.position.to_move,
            "value": 1,
            "solution": [move.to_json() for move in sorted(self.solution)],
            "legal_moves": self.legal_moves,
        }
        if self.source is not None:
            data["source"] = self.source
        return data


def classify(
    position: GameState, solver: Solver, max_nodes: int | None, max_share: float = MAX_SHARE
) -> frozenset[Move] | None:
    """The winning moves of ``position`` if it makes a puzzle (won, at most ``max_share`` of its moves win),
    else ``None``; ``SolverBudgetError`` past ``max_nodes`` (for the value, then for the moves)."""
    if solver.value(position, max_nodes=max_nodes) != 1:  # cheap: most positions stop here
        return None
    solution = solver.solve(position, max_nodes=max_nodes)
    legal = len(position.legal_moves())
    if solution.value != 1 or not solution.best_moves or len(solution.best_moves) > max_share * legal:
        return None
    return frozenset(solution.best_moves)


def check_build(count: int, empty: tuple[int, int], agent: AgentSpec | str, max_nodes: int) -> AgentSpec:
    """Bad arguments of ``build_puzzles`` raise here, before any game is played; the self-play agent's
    ``AgentSpec`` (spec text parsed here, once: ``agents.spec.recorded``)."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ArgumentError(f"count must be a whole number >= 1, got {count!r}")
    low, high = empty
    if not (isinstance(low, int) and isinstance(high, int) and 1 <= low <= high <= 14):
        raise ArgumentError(f"empty tiles must be a range within 1-14 (low <= high), got {low}-{high}")
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
        raise ArgumentError(f"max_nodes must be a whole number >= 1, got {max_nodes!r}")
    return recorded(agent, "a puzzle set's build (trinity puzzles build)")


@dataclass(frozen=True)
class PuzzleBuild:
    """What a build looks for, checked when made (``check_build``), before any game is played: ``count`` puzzles
    from games of ``agent`` against itself, reproducible from ``seed``, each position taken with a number of empty
    tiles in ``empty`` and solved within ``max_nodes`` nodes; the build gives up after ``max_games`` games (default
    ``50 * count``)."""

    count: int
    empty: tuple[int, int] = DEFAULT_EMPTY
    agent: AgentSpec | str = DEFAULT_AGENT
    """Its self-play agent, an ``AgentSpec`` once made (spec text given here is parsed then, once)."""
    seed: int = 0
    max_nodes: int = DEFAULT_MAX_NODES
    max_games: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "agent", check_build(self.count, self.empty, self.agent, self.max_nodes))

    @property
    def game_limit(self) -> int:
        """Games played at the most before the build gives up."""
        return 50 * self.count if self.max_games is None else self.max_games

    def header(self) -> dict[str, Any]:
        """The puzzle file's header naming this build."""
        return {
            "format": FORMAT,
            "agent": self.agent.text,
            "seed": self.seed,
            "empty": list(self.empty),
            "max_nodes": self.max_nodes,
        }


@dataclass
class BuildReport:
    """What a build found: the puzzles, and how many games and positions it went through."""

    puzzles: list[Puzzle]
    games: int = 0
    positions: int = 0
    over_budget: int = 0
    partial: bool = False
    file: str | None = None
    """Where ``build_file`` wrote the puzzles: the file asked for, or (stopped while an older file was there,
    which is kept) its ``.partial``."""
    kept: bool = False
    """Whether ``build_file`` stopped and left an older file as it was."""

    def summary(self) -> str:
        return (
            f"{len(self.puzzles)} puzzles from {self.games} games ({self.positions} positions solved, "
            f"{self.over_budget} over the node budget)"
        )


def build_puzzles(
    build: PuzzleBuild, *, progress: bool = False, on_puzzle: Callable[[Puzzle], object] | None = None
) -> BuildReport:
    """The puzzles ``build`` asks for, from self-play.

    Game ``k`` is seeded by the build's ``seed`` and ``k`` alone, so a longer build starts with the puzzles
    of a shorter one. ``on_puzzle`` sees each puzzle as it is found (to write it at once).
    Ctrl-C raises ``RunInterrupted`` whose ``partial`` is the report of the puzzles found so far.
    """
    count, empty, agent, seed = build.count, build.empty, build.agent, build.seed
    config = make_config(draft="dealt", open_hands=True)
    players = (agent.build(), agent.build())
    solver = Solver()
    seen: set[str] = set()
    report = BuildReport([])
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=count, desc="puzzles", unit="puzzle")
    try:
        while len(report.puzzles) < count and report.games < build.game_limit:
            game = report.games
            report.games += 1
            rng = random.Random(seed * 1_000_003 + game)
            target = rng.randint(*empty)
            state = config.new_game(rng)
            for seat, player in enumerate(players):
                player.reset(rng.randrange(2**31) + seat)
            while not state.is_over and len(state.empty_tiles()) >= empty[0]:
                if len(state.empty_tiles()) <= target:
                    key = json.dumps(state.to_dict(), sort_keys=True)
                    if key not in seen:
                        seen.add(key)
                        position = GameState.from_dict(state.to_dict())
                        try:
                            solution = classify(position, solver, build.max_nodes)
                            report.positions += 1
                        except SolverBudgetError:
                            solution = None
                            report.over_budget += 1
                        if solution is not None:
                            source = {"agent": agent.text, "seed": seed, "game": game}
                            puzzle = Puzzle(position, solution, source)
                            report.puzzles.append(puzzle)
                            if on_puzzle is not None:
                                on_puzzle(puzzle)
                            if bar is not None:
                                bar.update(1)
                            break
                seat = state.to_move
                state = state.apply(players[seat].act(observation_dict(state, seat, True), state))
    except KeyboardInterrupt:
        report.partial = True
        raise RunInterrupted(report) from None
    finally:
        if bar is not None:
            bar.close()
    return report


# ---------------------------------------------------------------------- files


def build_file(path: str | Path, build: PuzzleBuild, *, progress: bool = False) -> BuildReport:
    """``build_puzzles`` into the file ``path``, each puzzle on disk as it is found; ``path`` is replaced only when
    the build is complete (the module's docstring). Ctrl-C raises ``RunInterrupted`` whose ``partial`` report says
    where the puzzles found are (``file``) and whether an older ``path`` was kept (``kept``)."""
    with records.rebuilding(path, build.header(), PositionError) as out:
        try:
            report = build_puzzles(build, progress=progress, on_puzzle=lambda puzzle: out.append(puzzle.to_json()))
        except RunInterrupted as stop:
            stop.partial.file = str(out.partial if out.existed else out.path)
            stop.partial.kept = out.existed
            raise
    report.file = str(path)
    return report


def puzzle_line(puzzle: Puzzle) -> str:
    return json.dumps(puzzle.to_json())


def save_puzzles(puzzles: Iterable[Puzzle], path: str | Path) -> None:
    """Write ``puzzles`` to ``path`` (a header with the format alone: a set picked by hand), replacing it only once
    written whole."""
    with records.rebuilding(path, {"format": FORMAT}, PositionError) as out:
        for puzzle in puzzles:
            out.append(puzzle.to_json())


def parse_moves(records: object) -> frozenset[Move]:
    """A JSON list of ``{card, tile}`` objects as a set of moves; ``TypeError`` says what is malformed."""
    if not isinstance(records, list):
        raise TypeError("the winning moves are a list of {card, tile} objects")
    moves = set()
    for move in records:
        if not isinstance(move, dict) or set(move) != {"card", "tile"}:
            raise TypeError(f"a move is an object with card and tile, got {move!r}")
        if not isinstance(move["card"], str) or isinstance(move["tile"], bool) or not isinstance(move["tile"], int):
            raise TypeError(f"a move has a card string and a tile number, got {move!r}")
        moves.add(Move(move["card"], move["tile"]))
    return frozenset(moves)


def _puzzle(data: object) -> Puzzle | None:
    """A record as a puzzle; ``None`` for an endgame-suite record that is not won for the mover."""
    if not isinstance(data, dict) or "position" not in data:
        raise TypeError("a puzzle record is a JSON object with a 'position'")
    position = GameState.from_dict(data["position"])
    if "solution" in data:
        solution = parse_moves(data["solution"])
    elif "best_moves" in data and "value" in data:  # an endgame-suite record
        if data["value"] != 1:
            return None
        solution = parse_moves(data["best_moves"])
    else:
        raise TypeError("a puzzle record needs 'solution' (or an endgame's 'value' and 'best_moves')")
    if position.phase != Phase.PLAY or position.is_over:
        raise ValueError("the position is not in the play phase: there is no move to find")
    if not solution:
        raise ValueError("the solution is empty: a puzzle has at least one winning move")
    legal = set(position.legal_moves())
    illegal = sorted(solution - legal)
    if illegal:
        raise ValueError(f"solution moves that are not legal in the position: {', '.join(map(str, illegal))}")
    return Puzzle(position, solution, data.get("source"))


def load_puzzles(path: str | Path = DEFAULT_SET) -> list[Puzzle]:
    """Read a puzzle file or an endgame suite (JSON lines, the header first; by default the shipped set);
    ``PositionError`` names the file and the first bad line; a last line cut short (a build killed while writing
    it) is left out, with a warning."""
    if not Path(path).exists():
        raise PositionError(f"cannot read puzzle file {path}: No such file or directory")
    contents = records.read(
        path,
        lambda record: None,
        PositionError,
        what="puzzle record",
        kind="puzzle file",
        header=(FORMAT, SUITE_FORMAT),
    )
    if contents.cut:
        records.warn_cut(str(path))
    puzzles = []
    for number, record in contents.records:
        try:
            puzzle = _puzzle(record)
        except (ValueError, KeyError, TypeError, TrinityError, RecursionError) as err:
            raise PositionError(f"{path}, line {number}: not a puzzle record ({err})") from None
        if puzzle is not None:
            puzzles.append(puzzle)
    if not puzzles:
        raise PositionError(f"{path}: no puzzles in the file")
    return puzzles


# ---------------------------------------------------------------------- scoring


@dataclass(frozen=True)
class PuzzleScore:
    """The puzzles ``agent`` solved: ``share``, solved of set, with its 95% Wilson interval."""

    agent: str
    share: Share

    def to_json(self) -> dict[str, Any]:
        figures = self.share.to_json()
        return {
            "agent": self.agent,
            "solved": figures["hits"],
            "puzzles": figures["total"],
            "share": figures["share"],
            "low": figures["low"],
            "high": figures["high"],
        }


def agent_move(agent: Agent, position: GameState, seed: int) -> Move:
    """The ``Move`` that ``agent`` plays in ``position`` (open hands), reset with ``seed``."""
    seat = position.to_move
    agent.reset(seed)
    step = position.apply(agent.act(observation_dict(position, seat, True), position)).last
    assert step is not None and step.tile is not None
    return Move.placed(step)


def agent_moves(
    agent: Agent, positions: Sequence[GameState], seed: int, on_position: Callable[[], object] | None = None
) -> list[Move]:
    """The ``Move`` that ``agent`` plays in each of ``positions`` (open hands), position ``k`` reset with
    ``seed + k``. A stateless agent with ``act_batch`` (``BatchedPolicy``, an ONNX policy: the same observation
    always gets the same action) is asked once for all of them: the fast path for a network."""
    if not (getattr(agent, "stateless", False) and callable(getattr(agent, "act_batch", None))):
        moves = []
        for k, position in enumerate(positions):
            moves.append(agent_move(agent, position, seed + k))
            if on_position is not None:
                on_position()
        return moves
    if not positions:
        return []
    views = [observation_dict(p, p.to_move, True) for p in positions]
    actions = agent.act_batch(
        np.stack([v["observation"] for v in views]).astype(np.int8),
        np.stack([v["action_mask"] for v in views]).astype(np.int8),
    )
    moves = []
    for position, action in zip(positions, actions):
        step = position.apply(int(action)).last
        moves.append(Move.placed(step))
        if on_position is not None:
            on_position()
    return moves


def score_agent(
    agent: Agent | str | Any, puzzles: Sequence[Puzzle], seed: int = 0, label: str | None = None
) -> PuzzleScore:
    """How many ``puzzles`` ``agent`` solves with its first move (puzzle ``k`` resets it with ``seed + k``).
    ``agent``: an ``Agent`` (played as it is), a spec string, a ``Player`` or a policy function
    (``agents.spec.player``, built here); ``label`` names it in the score (its own label by default)."""
    who = None if isinstance(agent, Agent) else player(agent)  # parsed once
    built = agent if who is None else who.build()
    moves = agent_moves(built, [p.position for p in puzzles], seed)
    solved = sum(move in p.solution for move, p in zip(moves, puzzles))
    own = who.label if who is not None else getattr(agent, "name", type(agent).__name__)
    name = label if label is not None else own
    return PuzzleScore(name, Share(solved, len(puzzles)))


def describe_set(puzzles: Sequence[Puzzle]) -> dict[str, Any]:
    """What a set holds: puzzles by empty tiles, how many have a single winning move, and the share a mover
    picking uniformly among the legal moves expects to solve (the floor every score is read against)."""
    by_empty: dict[int, int] = {}
    for puzzle in puzzles:
        by_empty[puzzle.empty] = by_empty.get(puzzle.empty, 0) + 1
    expected = sum(len(p.solution) / p.legal_moves for p in puzzles) / len(puzzles) if puzzles else 0.0
    return {
        "by_empty": {str(k): by_empty[k] for k in sorted(by_empty)},
        "single_winning_move": sum(len(p.solution) == 1 for p in puzzles),
        "random_expected": expected,
    }


def describe_line(puzzles: Sequence[Puzzle]) -> str:
    """``describe_set`` in one printed line."""
    facts = describe_set(puzzles)
    counts = ", ".join(f"{n} with {k} empty" for k, n in facts["by_empty"].items())
    return (
        f"{counts}; {facts['single_winning_move']} with a single winning move; "
        f"a uniformly random mover expects {facts['random_expected']:.1%}"
    )


def score_table(scores: Sequence[PuzzleScore]) -> str:
    """A markdown table: agent, puzzles solved, share and its 95% interval."""
    lines = ["| agent | solved | share [95% interval] |", "|---|---:|---|"]
    for s in scores:
        lines.append(f"| {s.agent} | {s.share.hits} / {s.share.total} | {s.share.text()} |")
    return "\n".join(lines)


def score_agents(specs: Sequence[Any], puzzles: Sequence[Puzzle], seed: int = 0) -> list[PuzzleScore]:
    """Each agent's score (spec strings or any ``Player``); Ctrl-C raises ``RunInterrupted`` whose ``partial`` is
    the scores finished."""
    players = [player(spec) for spec in specs]  # every bad spec raises before anything is built
    agents = [who.build() for who in players]  # every checkpoint is read before any puzzle is played
    scores: list[PuzzleScore] = []
    try:
        for who, agent in zip(players, agents):
            scores.append(score_agent(agent, puzzles, seed, label=who.label))
    except KeyboardInterrupt:
        raise RunInterrupted(scores) from None
    return scores
