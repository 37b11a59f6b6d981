"""The arena: a round robin between agents named by spec, seats swapped, in parallel.

Each pair plays ``games`` games; in game ``k`` the first-named agent takes seat ``k % 2``,
and game ``k`` of a pair has its own seed, so results do not depend on how games are
spread over worker processes. By default hands are dealt at random (``draft: dealt``):
two deterministic agents drafting from the same deck would otherwise play the same two
games over and over, and the confidence intervals would count repeats as evidence. Pass
a config with ``draft: pick`` to measure drafting too. Agents are given as ``Player`` values (``AgentSpec``,
``trinity_env.agents.spec``; spec strings are parsed once, here): each is checked without being built, travels to
the workers as a value, and is built once in each process that plays it (never once per chunk of games).

Ctrl-C stops a round robin within moments: the pool is terminated and ``RunInterrupted`` (a
``KeyboardInterrupt``) is raised carrying the result of the games finished so far, marked ``partial``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import numbers
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from trinity_env.agents.spec import Player, player
from trinity_env.core import ArgumentError, Replay
from trinity_env.core.files import short
from trinity_env.core.limits import check_workers
from trinity_env.core.paths import prepare_folder
from trinity_env.core.replay import MAX_AGENT_LABEL, agent_label
from trinity_env.core.workers import sendable
from trinity_env.core.writes import write_figure, write_text
from trinity_env.evaluation.match import RunInterrupted, chunk_results, seat_swapped_points
from trinity_env.evaluation.ratings import Share, bootstrap_elo, fit_elo
from trinity_env.spec.agent import Agent
from trinity_env.spec.config import EnvConfig, make_config

CHUNK = 10  # games per task
ARENA_DEFAULTS = {"draft": "dealt"}
OUTPUT_FILES = ("arena.csv", "arena.md", "arena.json", "arena_heatmap.png")
"""What ``ArenaResult.write`` writes in its folder."""


def replay_name(k: int, first: str, second: str) -> str:
    """The file of game ``k`` between the agents labelled ``first`` and ``second`` (seat 0 named first)."""
    white, black = (first, second) if k % 2 == 0 else (second, first)
    return f"{_file_word(white)}_vs_{_file_word(black)}_game{k:05d}.json"


def _file_word(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9.=-]+", "_", label).strip("_.")[:40] or "agent"


_BUILT: dict[tuple[int, Player], Agent] = {}
"""The agents this process has built, by their place in the round robin and their ``Player``: each is built once
a process (a checkpoint read once), then reset with each game's seed, so chunks score as one run."""


def _agent(index: int, who: Player) -> Agent:
    agent = _BUILT.get((index, who))
    if agent is None:
        agent = _BUILT[(index, who)] = who.build()
    return agent


def load_files(players: list[Player]) -> None:
    """Build here, once, every agent that reads a file (a checkpoint, an ONNX model): a file that loading refuses
    (weights that turn infinite in float32) is one line before any folder is made or game played. A round robin in
    this process (one worker) plays these very agents; worker processes build their own."""
    for index, who in enumerate(players):
        if getattr(who, "path", None) is not None:
            _agent(index, who)


FIRST_SEEDS = 1 << 40
"""Where ``game_seed``'s second range begins (past ``seed * 1_000_003``): the games the first derivation could not
keep apart."""


def game_seed(seed: int, i: int, j: int, k: int, agents: int | None = None) -> int:
    """The seed of game ``k`` between agents ``i`` < ``j`` of a round robin of ``agents`` (in the order given; ``None``:
    ``j`` is the last, as an agent rated against the reference pool is): public, so a round robin's games can be
    replayed one by one (``play_game`` with this seed, agent ``i`` in seat ``k % 2``). No two games of a round robin
    share a seed.

    A game keeps the first derivation's seed, ``seed * 1_000_003 + i * 10_007 + j * 101 + k``, wherever that was its
    own: every game of the first 101 of a pair (in a round robin of at most 99 agents), every game of a round robin
    of two agents, and every game against its last agent (while ``j * 101 + k < 10_007``; every game of its last
    pair). The rest, where that sum repeated another game's (game 101 of agents 0 and 1 was game 0 of agents 0 and
    2), are seeded apart, ``FIRST_SEEDS`` and up, by a pairing of the pair's place (``j (j - 1) / 2 + i``) and
    ``k``."""
    last = j + 1 if agents is None else agents
    offset = i * 10_007 + j * 101 + k
    own = (k < 101 or j == last - 1) and (j * 101 + k < 10_007 or i == last - 2)
    if not (own and offset < FIRST_SEEDS):
        pair = j * (j - 1) // 2 + i
        offset = FIRST_SEEDS + (pair + k) * (pair + k + 1) // 2 + k
    return seed * 1_000_003 + offset


def _play_chunk(task: tuple) -> tuple[int, int, float, int]:
    i, j, player_i, player_j, first_game, count, seed, agents, env_config, replays = task
    agent_i, agent_j = _agent(i, player_i), _agent(j, player_j)
    games = range(first_game, first_game + count)

    def save(k: int, states: list) -> None:
        seats = (player_i.label, player_j.label) if k % 2 == 0 else (player_j.label, player_i.label)
        replay = Replay.from_states(states, open_hands=env_config.open_hands, agents=seats)
        write_text(Path(replays) / replay_name(k, player_i.label, player_j.label), replay.to_json(indent=1) + "\n")

    points = seat_swapped_points(
        agent_i,
        agent_j,
        env_config,
        games,
        lambda k: game_seed(seed, i, j, k, agents),
        on_game=None if replays is None else save,
    )
    return i, j, points, count


@dataclass
class ArenaResult:
    """``score[i, j]``: points of agent i against agent j (a win 1, a draw 0.5); ``games[i, j]`` played.

    ``partial``: the round robin was interrupted; ``games`` counts the games actually played and
    ``requested`` is the number per pair that was asked for.
    """

    agents: list[str]
    score: np.ndarray
    games: np.ndarray
    ratings: np.ndarray
    rating_low: np.ndarray
    rating_high: np.ndarray
    partial: bool = False
    requested: int | None = None

    @property
    def win_rate(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = self.score / self.games
        np.fill_diagonal(rate, np.nan)
        return rate

    def share(self, i: int, j: int) -> Share:
        """Agent i's points against agent j, of the games they played, with its 95% interval."""
        return Share(float(self.score[i, j]), int(self.games[i, j]))

    def order(self) -> list[int]:
        """Agents from the highest rating down."""
        return list(np.argsort(-self.ratings))

    def partial_note(self) -> str:
        """One sentence on an interrupted round robin ("" for a whole one)."""
        if not self.partial:
            return ""
        played = int(self.games.sum() // 2)
        pairs = len(self.agents) * (len(self.agents) - 1) // 2
        asked = f" of {self.requested * pairs}" if self.requested is not None else ""
        return f"Partial results: interrupted after {played}{asked} games; the counts are the games played."

    # ------------------------------------------------------------------ reports

    def table(self) -> str:
        """Win rates (row against column) with 95% intervals, and ratings, best first."""
        order = self.order()
        width = max(10, *(len(self.agents[i]) for i in order))
        header = f"{'':<{width}} | " + " | ".join(f"{self.agents[j]:^17}" for j in order) + " | Elo (95% CI)"
        lines = [header, "-" * len(header)]
        for i in order:
            cells = []
            for j in order:
                if i == j:
                    cells.append(f"{'-':^17}")
                elif not self.games[i, j]:
                    cells.append(f"{'no games':^17}")
                else:
                    low, high = self.share(i, j).interval
                    cells.append(f"{self.win_rate[i, j]:5.0%} [{low:3.0%}-{high:3.0%}]".center(17))
            elo = f"{self.ratings[i]:+6.0f} [{self.rating_low[i]:+.0f}, {self.rating_high[i]:+.0f}]"
            lines.append(f"{self.agents[i]:<{width}} | " + " | ".join(cells) + f" | {elo}")
        if self.partial:
            lines.append(self.partial_note())
        return "\n".join(lines)

    def markdown(self) -> str:
        order = self.order()
        lines = [
            "| agent | " + " | ".join(f"vs {self.agents[j]}" for j in order) + " | Elo (95% CI) |",
            "|---|" + "---|" * (len(order) + 1),
        ]
        for i in order:
            cells = []
            for j in order:
                if i == j:
                    cells.append("-")
                elif not self.games[i, j]:
                    cells.append("no games")
                else:
                    low, high = self.share(i, j).interval
                    cells.append(f"{self.win_rate[i, j]:.1%} [{low:.1%}, {high:.1%}]")
            elo = f"{self.ratings[i]:+.0f} [{self.rating_low[i]:+.0f}, {self.rating_high[i]:+.0f}]"
            lines.append(f"| {self.agents[i]} | " + " | ".join(cells) + f" | {elo} |")
        if self.partial:
            lines += ["", f"**{self.partial_note()}**"]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """The summary; ``"partial": true`` (and ``"games_requested"`` per pair) when interrupted."""
        rate = self.win_rate
        data = {
            "agents": self.agents,
            "win_rate": [[None if np.isnan(x) else float(x) for x in row] for row in rate],
            "games": self.games.astype(int).tolist(),
            "elo": [float(r) for r in self.ratings],
            "elo_95": [[float(lo), float(hi)] for lo, hi in zip(self.rating_low, self.rating_high)],
        }
        if self.partial:
            data |= {"partial": True, "games_requested": self.requested}
        return data

    def write(self, out_dir: str | Path) -> list[Path]:
        """CSV, markdown, JSON and a heatmap PNG in ``out_dir``; the paths written."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / name for name in OUTPUT_FILES]
        table = io.StringIO(newline="")
        writer = csv.writer(table)
        writer.writerow(["agent", "opponent", "games", "score", "win_rate", "ci_low", "ci_high"])
        for i, j in ((i, j) for i in range(len(self.agents)) for j in range(len(self.agents)) if i != j):
            low, high = self.share(i, j).interval
            writer.writerow(
                [
                    self.agents[i],
                    self.agents[j],
                    int(self.games[i, j]),
                    self.score[i, j],
                    self.win_rate[i, j],
                    low,
                    high,
                ]
            )
        write_text(paths[0], table.getvalue())
        write_text(paths[1], self.markdown() + "\n")
        write_text(paths[2], json.dumps(self.to_json(), indent=1) + "\n")
        self.heatmap(paths[3])
        return paths

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ArenaResult:
        """Rebuild a result from ``to_json()`` output (to re-draw its reports)."""
        games = np.array(data["games"], float)
        rate = np.array([[0.0 if x is None else x for x in row] for row in data["win_rate"]])
        low, high = np.array(data["elo_95"]).T
        partial = bool(data.get("partial", False))
        return cls(
            list(data["agents"]),
            rate * games,
            games,
            np.array(data["elo"]),
            low,
            high,
            partial,
            data.get("games_requested"),
        )

    def heatmap(self, path: str | Path) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        order = self.order()
        names = [self.agents[i] for i in order]
        rate = self.win_rate[np.ix_(order, order)]
        fig, ax = plt.subplots(figsize=(1.3 * len(names) + 2.5, 1.1 * len(names) + 1.5))
        image = ax.imshow(rate, cmap="RdBu", vmin=0, vmax=1)
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
        ax.set_yticks(range(len(names)), names)
        for r in range(len(names)):
            for c in range(len(names)):
                if r != c and not math.isnan(rate[r, c]):
                    ink = "white" if abs(rate[r, c] - 0.5) > 0.3 else "black"
                    ax.text(c, r, f"{rate[r, c]:.0%}", ha="center", va="center", color=ink)
        ax.set_xlabel("opponent")
        ax.set_ylabel("agent")
        title = "Win rate of row agent against column agent (seats swapped)"
        ax.set_title(title + ("\n(partial: interrupted)" if self.partial else ""))
        fig.colorbar(image, ax=ax, fraction=0.046)
        fig.tight_layout()
        try:
            write_figure(path, fig, dpi=120)
        finally:
            plt.close(fig)


def arena_workers(agents: int, games: int, workers: int | None = None) -> int:
    """The processes ``round_robin`` starts: ``workers`` (default: every CPU) clamped to its tasks (``CHUNK`` games
    of one pair each), and ``ArgumentError`` past ``core.limits.max_processes()``."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1):
        raise ArgumentError(f"workers must be a whole number, at least 1, got {workers!r}")
    tasks = math.comb(agents, 2) * math.ceil(games / CHUNK)
    return check_workers("workers", None if workers is None else int(workers), tasks, ArgumentError)


def sendable_players(players: list[Player], caller: str) -> bool:
    """Whether worker processes can receive ``players`` (``core.workers.sendable``: functions and classes of a notebook
    or script, lambdas included, travel by value); if one cannot (a closure over a lock), one line says the run plays
    in this process instead, and the caller plays with one worker."""
    return sendable(((who.label, who) for who in players), caller)


def check_arena(agents: list, games: int, workers: int | None = None) -> list[Player]:
    """What ``round_robin`` checks before it plays: ``ValueError`` (``AgentSpecError`` for a spec) if bad.

    Returns the agents as ``Player`` values (a spec string parsed by ``AgentSpec.parse``), checked and not built:
    their labels are their specs as given (stripped). A built-in name always means the built-in agent and a file
    or folder is named by a path (``trinity_env.agents.spec``), so a checkpoint is never labelled ``greedy``
    because a file ``greedy.pt`` lay in the working directory. A label no replay could hold
    (``core.replay.agent_label``: empty, longer than ``MAX_AGENT_LABEL``, not printable) is refused here, not when
    the first replay is written.
    """
    if len(agents) < 2:
        raise ValueError(f"the arena needs at least two agents, got {len(agents)}")
    if isinstance(games, bool) or not isinstance(games, numbers.Integral) or games < 1:
        raise ValueError(f"games must be a whole number, at least 1, got {games!r}")
    arena_workers(len(agents), int(games), workers)
    players = [player(agent) for agent in agents]
    for index, who in enumerate(players):  # each names its seat in the replays: refused here, not mid-run
        if not agent_label(who.label):
            raise ValueError(
                f"agent {index + 1}'s label must be 1 to {MAX_AGENT_LABEL} printable characters "
                f"(its name in tables and replays), got {short(who.label)}"
            )
    return players


def round_robin(
    specs: list,
    games: int,
    *,
    seed: int = 0,
    config: EnvConfig | dict[str, Any] | None = None,
    workers: int | None = None,
    progress: bool = True,
    replays: str | Path | None = None,
) -> ArenaResult:
    """Every pair of ``specs`` (spec strings or ``Player`` values) plays ``games`` games (seats swapped); ratings
    fitted to all of them. Game ``k`` of agents ``i`` < ``j`` is seeded by ``game_seed(seed, i, j, k, len(specs))``.

    ``replays``: a folder that gets every game as a replay (``replay_name``: the seat-0 agent first),
    for ``trinity review`` and the web app's replay view; the same games as without it.

    Interrupted (Ctrl-C), it stops at once and raises ``RunInterrupted`` whose ``partial`` is the
    result of the games finished so far (``partial=True``).
    """
    players = check_arena(specs, games, workers)
    labels = [who.label for who in players]
    games = int(games)
    env_config = config if isinstance(config, EnvConfig) else make_config(config or ARENA_DEFAULTS)
    pairs = list(combinations(range(len(players)), 2))
    folder = None if replays is None else str(replays)
    if folder is not None:  # created and proved writable before any game, as the CLI's --replays is
        prepare_folder(folder, "replays", (), ArgumentError)

    def tasks() -> Iterator[tuple]:  # lazily: a huge ``games`` must not build a huge list first
        for i, j in pairs:
            for start in range(0, games, CHUNK):
                count = min(CHUNK, games - start)
                yield i, j, players[i], players[j], start, count, seed, len(players), env_config, folder

    n = len(players)
    score = np.zeros((n, n))
    played = np.zeros((n, n))
    workers = arena_workers(len(players), games, workers)
    if workers > 1 and not sendable_players(players, "round_robin"):
        workers = 1
    bar = tqdm(total=games * len(pairs), disable=not progress, desc="arena", unit="game")
    partial = False
    try:
        with chunk_results(_play_chunk, tasks(), workers) as results:
            for i, j, points, count in results:
                score[i, j] += points
                score[j, i] += count - points
                played[i, j] += count
                played[j, i] += count
                bar.update(count)
    except KeyboardInterrupt:
        partial = True  # the pool is gone; keep what finished
    finally:
        _BUILT.clear()
        bar.close()
    ratings = fit_elo(score, played)
    low, high = bootstrap_elo(score, played, np.random.default_rng(seed))
    result = ArenaResult(labels, score, played, ratings, low, high, partial, games if partial else None)
    if partial:
        raise RunInterrupted(result)
    return result
