"""The endgame suite: solved positions that score how often an agent finds a winning move.

Positions come from games between baseline agents (open hands, standard deck), taken
when 6 to 10 tiles are empty, and are solved exactly. An agent is scored on the positions
that are won for the player to move and where not every move wins: the share in which
its move is one of the winning moves.

A suite file is JSON lines (``trinity_env.core.records``): a header (``{"format": FORMAT}``), then
one solved position a line (``position``, ``empty_tiles``, ``value``, ``winner``, ``best_moves``).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from tqdm import tqdm

from trinity_env.agents.spec import make
from trinity_env.core import GameState, Move, PositionError, records
from trinity_env.evaluation.ratings import Share
from trinity_env.search.solver import Solver
from trinity_env.spec.agent import Agent
from trinity_env.spec.config import make_config
from trinity_env.spec.observation import observation_dict

FORMAT = "trinity-towers-endgames"


@dataclass(frozen=True)
class Endgame:
    position: GameState
    value: int
    best_moves: frozenset[Move]

    @property
    def empty(self) -> int:
        return len(self.position.empty_tiles())

    def to_json(self) -> dict:
        return {
            "position": self.position.to_dict(),
            "empty_tiles": self.empty,
            "value": self.value,
            "winner": None
            if self.value == 0
            else (self.position.to_move if self.value == 1 else 1 - self.position.to_move),
            "best_moves": [move.to_json() for move in sorted(self.best_moves)],
        }


def build_suite(count: int, seed: int = 0, empty: tuple[int, int] = (6, 10), progress: bool = True) -> list[Endgame]:
    """``count`` solved positions, won for the mover and not won by every move, reproducible from ``seed``."""
    rng = random.Random(seed)
    config = make_config(draft="dealt")
    pairings = [("greedy", "random"), ("lookahead", "greedy"), ("greedy", "greedy"), ("lookahead", "random")]
    solver = Solver()
    suite: list[Endgame] = []
    bar = tqdm(total=count, disable=not progress, desc="endgames", unit="position")
    while len(suite) < count:
        names = rng.choice(pairings)
        agents = (make(names[0]), make(names[1]))
        target = rng.randint(*empty)
        state = config.new_game(rng)
        for seat, agent in enumerate(agents):
            agent.reset(rng.randrange(2**31) + seat)
        while not state.is_over and len(state.empty_tiles()) > target:
            seat = state.to_move
            observation = observation_dict(state, seat, True)
            state = state.apply(agents[seat].act(observation, state))
        if state.is_over or len(state.empty_tiles()) != target:
            continue
        position = GameState.from_dict(state.to_dict())
        solution = solver.solve(position)
        if solution.value != 1 or len(solution.best_moves) == len(position.legal_moves()):
            continue
        suite.append(Endgame(position, solution.value, frozenset(solution.best_moves)))
        bar.update(1)
    bar.close()
    return suite


def save_suite(suite: Iterable[Endgame], path: str | Path) -> None:
    """Write ``suite`` to ``path``, its header first, replacing it only once written whole."""
    with records.rebuilding(path, {"format": FORMAT}, PositionError) as out:
        for endgame in suite:
            out.append(endgame.to_json())


def load_suite(path: str | Path) -> list[Endgame]:
    """Read a suite written by ``save_suite``; ``PositionError`` names the file and the first bad line (a file
    whose first line is not the header included); a last line cut short is left out, with a warning."""
    contents = records.read(
        path, lambda record: None, PositionError, what="endgame record", kind="endgame suite", header=FORMAT
    )
    if contents.cut:
        records.warn_cut(str(path))
    suite = []
    for number, data in contents.records:
        try:
            suite.append(
                Endgame(
                    GameState.from_dict(data["position"]),
                    int(data["value"]),
                    frozenset(Move(m["card"], int(m["tile"])) for m in data["best_moves"]),
                )
            )
        except (ValueError, KeyError, TypeError, RecursionError) as err:
            raise PositionError(f"{path}, line {number}: not an endgame record ({err})") from None
    return suite


def score_agent(agent: Agent, suite: Iterable[Endgame]) -> float:
    """Share of the suite's won positions in which ``agent`` picks a winning move (``suite_share``'s value)."""
    return suite_share(agent, suite).value


def suite_share(agent: Agent, suite: Iterable[Endgame]) -> Share:
    """The suite's won positions in which ``agent`` picks a winning move, of all its won positions."""
    hits = total = 0
    for endgame in suite:
        if endgame.value != 1:
            continue
        state = endgame.position
        seat = state.to_move
        agent.reset(total)
        observation = observation_dict(state, seat, True)
        action = agent.act(observation, state)
        step = state.apply(action).last
        hits += Move.placed(step) in endgame.best_moves
        total += 1
    return Share(hits, total)


DEFAULT_SUITE = Path(str(resources.files("trinity_env.evaluation") / "data" / "endgames.jsonl"))
