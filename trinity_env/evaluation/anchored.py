"""Ratings on a fixed scale: an agent rated against the frozen reference pool.

A round robin fits its ratings to mean 0 among the agents present, so one policy's Elo moves with the company it
keeps. A reference pool (made by ``scripts/make_reference_pool.py``) is the difficulty ladder's eight agents
(``trinity_env.agents.ladder``) with ratings fitted once, on many games, and shipped: ``random`` (``level:1``) is
rated 0 and the others relative to it. There is one pool a draft mode (``POOL_FILES``): ``dealt`` (hands dealt at
random, the arena's default) and ``pick`` (the secret draft, the standard rules), each fitted on its own games, so
a rating says which rules it was measured on; ``pool_for`` picks the pool of a game's rules and refuses rules no
pool was fitted on (hidden hands, random decks, fixed hands, any other change). ``rate_against_pool`` plays a new
agent against each pool member (seats swapped, on the pool's rules) and finds the Elo that best explains its
results with the pool's ratings held fixed (``ratings.fit_against_fixed``: the one-dimensional maximum likelihood,
with a 95% robust interval, ``ratings.ROBUST``). Its games are only against the pool, so its rating does not depend
on which other agents are being rated: "our agent is rated X" means the same in every report.

Game ``k`` against pool member ``m`` is seeded by ``arena.game_seed(seed, m, len(pool), k)``, the pool member in
seat ``k % 2``: exactly the games a round robin of the pool with the agent appended would play between them, the
same with any number of workers and whatever else is rated at the same time.

A rating can take hours (an agent that drafts by search plays about a minute a game), so ``games_file`` keeps what
was played: each finished chunk of games is one record of a JSON-lines file (``core.records``: locked, fsynced,
a cut last line dropped) whose header names everything the games depend on (the pool's members and rules, the
seed, the games per opponent, the agents and the hashes of the files they read). A rerun with the same file plays
only the chunks not yet there; a file of other settings is refused in one line. The rating is the same, played at
once or resumed.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from trinity_env.agents.spec import CODE_PREFIX, AgentSpec, Player, player
from trinity_env.core import ArgumentError, TrinityError, records
from trinity_env.core.files import read_json, short
from trinity_env.core.limits import check_workers
from trinity_env.core.rewards import RewardMode
from trinity_env.evaluation.arena import _BUILT, CHUNK, _play_chunk, sendable_players
from trinity_env.evaluation.match import chunk_results
from trinity_env.evaluation.ratings import fit_against_fixed
from trinity_env.spec.config import EnvConfig, make_config

_DATA = Path(str(resources.files("trinity_env.evaluation") / "data"))
POOL_FILES = {"dealt": _DATA / "reference_pool.json", "pick": _DATA / "reference_pool_draft.json"}
"""The shipped reference pools by draft mode (``scripts/make_reference_pool.py [--draft pick]`` wrote them;
docs/arena.md shows them): the pool file's ``config`` says the rules its games were played on."""
POOL_FILE = POOL_FILES["dealt"]
"""The default pool: dealt hands, the rules of the arena's default games."""
POOL_VERSION = 1
MAX_POOL_AGENTS = 64
"""The most agents a pool file may list (the shipped one has 8)."""
GAMES_FORMAT = "trinity-anchored-games"
"""The header's ``format`` of a rating's games file (``rate_all_against_pool``'s ``games_file``)."""


class PoolError(TrinityError):
    """A reference pool file that is not one: one line saying what is wrong."""


@dataclass(frozen=True)
class ReferencePool:
    """Agents with ratings held fixed, read from a pool file and parsed once: ``elo[m]`` is ``agents[m]``'s rating
    (an ``AgentSpec``), ``elo_95[m]`` its 95% bootstrap interval from the games that fitted it; ``anchor`` is the
    agent rated 0, ``rules`` the rules the pool's games were played on (an ``EnvConfig``), ``command`` what made the
    file, ``name`` the file's stem (``reference_pool``, ``reference_pool_draft``)."""

    agents: tuple[AgentSpec, ...]
    elo: tuple[float, ...]
    elo_95: tuple[tuple[float, float], ...]
    anchor: AgentSpec
    rules: EnvConfig
    games_per_pair: int
    seed: int
    command: str
    name: str = "reference_pool"

    @classmethod
    def load(cls, path: str | Path = POOL_FILE) -> ReferencePool:
        """The pool in ``path`` (JSON, read within ``core.files``' size bound), every field checked and its agents
        and rules parsed; ``PoolError`` in one line naming the file and the problem."""
        data = read_json(path, "reference pool", PoolError)
        if not isinstance(data, dict) or data.get("version") != POOL_VERSION:
            raise PoolError(f"{path}: not a reference pool of version {POOL_VERSION}")
        agents, elo, elo_95 = data.get("agents"), data.get("elo"), data.get("elo_95")
        if not isinstance(agents, list) or not 2 <= len(agents) <= MAX_POOL_AGENTS:
            raise PoolError(f"{path}: agents must be a list of 2 to {MAX_POOL_AGENTS} agent specs")
        if not all(isinstance(a, str) for a in agents) or len(set(agents)) != len(agents):
            raise PoolError(f"{path}: agents must be distinct spec strings")
        if not _numbers(elo, len(agents)) or not isinstance(elo_95, list) or len(elo_95) != len(agents):
            raise PoolError(f"{path}: elo and elo_95 must give each of the {len(agents)} agents a finite rating")
        if not all(isinstance(pair, list) and _numbers(pair, 2) for pair in elo_95):
            raise PoolError(f"{path}: each elo_95 entry must be two finite numbers")
        anchor, config, command = data.get("anchor"), data.get("config"), data.get("command")
        if anchor not in agents or elo[agents.index(anchor)] != 0:
            raise PoolError(f"{path}: anchor must name an agent of the pool rated 0, got {short(anchor)}")
        if not isinstance(config, dict) or not isinstance(command, str):
            raise PoolError(f"{path}: config must be a rules mapping and command a string")
        counts = [data.get("games_per_pair"), data.get("seed")]
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts):
            raise PoolError(f"{path}: games_per_pair and seed must be whole numbers")
        try:
            rules = make_config(config)
        except (ValueError, TypeError) as err:
            raise PoolError(f"{path}: bad config: {err}") from None
        try:
            specs = tuple(AgentSpec.parse(agent) for agent in agents)  # parsed here, once: the pool holds values
        except ValueError as err:
            raise PoolError(f"{path}: bad agent: {err}") from None
        return cls(
            specs,
            tuple(float(x) for x in elo),
            tuple((float(a), float(b)) for a, b in elo_95),
            specs[agents.index(anchor)],
            rules,
            *counts,
            command,
            Path(path).stem,
        )

    @property
    def labels(self) -> tuple[str, ...]:
        """The agents' spec texts, as the pool file, tables and documents name them."""
        return tuple(agent.label for agent in self.agents)

    def only(self, agents: Sequence[AgentSpec | str]) -> ReferencePool:
        """The pool cut to ``agents`` (specs or their texts, kept in the pool's order), their ratings unchanged: a
        quicker rating on the same scale, from fewer opponents. One line naming an agent the pool does not hold."""
        wanted = [str(a) for a in agents]
        missing = [a for a in wanted if a not in self.labels]
        if missing or not wanted:
            raise ArgumentError(
                f"the reference pool holds no agent {short(missing[0] if missing else '')}; "
                f"it holds {', '.join(self.labels)}"
            )
        keep = [m for m, a in enumerate(self.labels) if a in wanted]
        return replace(
            self,
            agents=tuple(self.agents[m] for m in keep),
            elo=tuple(self.elo[m] for m in keep),
            elo_95=tuple(self.elo_95[m] for m in keep),
        )

    def config(self) -> dict[str, Any]:
        """The rules as the pool file writes them, for a document: the draft mode always, then every other field
        that differs from the standard rules (``{"draft": "dealt"}``)."""
        return {"draft": self.rules.draft.value} | self.rules.changes()


def _rules(config: EnvConfig) -> EnvConfig:
    """The part of a config that decides the games: every field but the reward, which pays the same outcomes."""
    return replace(config, reward=RewardMode.WIN_LOSS)


def pool_for(config: EnvConfig, files: Mapping[str, str | Path] | None = None) -> ReferencePool:
    """The reference pool whose games were played on ``config``'s rules (the reward aside), from ``files`` (default
    ``POOL_FILES``: the shipped pools); ``ArgumentError`` in one line naming the rules that have a pool where none
    was fitted on these (hidden hands, random decks, fixed hands, any other change), ``PoolError`` for a bad file."""
    return pools_for([config], files)[0]


def pools_for(configs: Sequence[EnvConfig], files: Mapping[str, str | Path] | None = None) -> list[ReferencePool]:
    """``pool_for`` each of ``configs``, every pool file read (and its agents parsed) once."""
    files = POOL_FILES if files is None else files
    pools = [ReferencePool.load(path) for path in files.values() if Path(path).is_file()]
    found = []
    for config in configs:
        wanted = _rules(config)
        pool = next((pool for pool in pools if _rules(pool.rules) == wanted), None)
        if pool is None:
            have = "; ".join(f"{pool.name} ({describe_rules(pool.rules)})" for pool in pools) or "none"
            missing = [Path(path).name for path in files.values() if not Path(path).is_file()]
            raise ArgumentError(
                f"no reference pool was fitted on these rules ({describe_rules(config)}); pools exist for: {have}"
                + (f" (not found: {', '.join(missing)}; scripts/make_reference_pool.py writes it)" if missing else "")
            )
        found.append(pool)
    return found


def describe_rules(config: EnvConfig) -> str:
    """A config's rules in words for a message: ``the standard rules with draft: dealt, open_hands: false``."""
    changes = _rules(config).changes()
    if not changes:
        return "the standard rules"
    return "the standard rules with " + ", ".join(
        f"{key}: {value if isinstance(value, str) else json.dumps(value)}" for key, value in changes.items()
    )


def _numbers(values: object, length: int) -> bool:
    return (
        isinstance(values, list)
        and len(values) == length
        and all(type(v) in (int, float) and math.isfinite(v) for v in values)
    )


@dataclass(frozen=True)
class AnchoredRating:
    """One agent's rating on the pool's scale: ``elo`` in ``[low, high]`` (95%, ``ratings.ROBUST``), from ``score[m]``
    points in ``games[m]`` games against ``opponents[m]``."""

    agent: str
    elo: float
    low: float
    high: float
    opponents: tuple[str, ...]
    score: tuple[float, ...]
    games: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "elo": self.elo,
            "elo_95": [self.low, self.high],
            "opponents": list(self.opponents),
            "score": list(self.score),
            "games": list(self.games),
        }


def _play(task: tuple[int, tuple]) -> tuple[int, int, int, float, int]:
    """One chunk of the arena's games between a pool member and the agent numbered ``t``: its first game, the
    agent's points, the games."""
    t, chunk = task
    m, _, points, count = _play_chunk(chunk)
    return t, m, chunk[4], count - points, count


_CHUNK_FIELDS = {
    "agent": records.whole(0),
    "member": records.whole(0),
    "first_game": records.whole(0),
    "games": records.whole(1, CHUNK),
    "points": records.Field(
        lambda value: (
            type(value) in (int, float) and math.isfinite(value) and value >= 0 and value * 2 == int(value * 2)
        ),
        "a whole or half number >= 0",
    ),
}


class GamesFileError(TrinityError):
    """A rating's games file that cannot be used: one line naming it and the problem."""


@cache
def source_sha256() -> str:
    """A hash of the package's Python source (every ``.py`` file of ``trinity_env``, by path and bytes): the code
    that plays the games. A games file made by other code is not gone on with."""
    import hashlib

    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def games_header(players: Sequence[Player], games_per_opponent: int, seed: int, pool: ReferencePool) -> dict:
    """What a rating's games depend on, as its games file's header: the pool's members and full rules, the seed,
    the games per opponent, the agents, the hashes of the files they read and of the code that plays them. A rerun
    with any of them changed cannot go on."""
    if not all(isinstance(p, AgentSpec) for p in players):
        raise ArgumentError(
            "a games file needs agents named by spec (a file's contents can be checked, a function's cannot)"
        )
    if any(p.text.startswith(CODE_PREFIX) for p in players):
        raise ArgumentError(f"a games file cannot check outside code ({CODE_PREFIX}...): rate it in one run")
    return {
        "format": GAMES_FORMAT,
        "pool": list(pool.labels),
        "rules": pool.rules.to_dict(),
        "seed": int(seed),
        "games_per_opponent": int(games_per_opponent),
        "agents": [p.label for p in players],
        "sha256": [p.sha256() for p in players],
        "source_sha256": source_sha256(),
    }


def _finished(
    contents: records.Contents, name: str, players: int, members: int, games: int
) -> dict[tuple[int, int, int], tuple]:
    """The chunks a games file holds, by (agent, member, first game); one line naming the file and the line for a
    record no chunk of this rating plays, or with more points than games."""
    done: dict[tuple[int, int, int], tuple] = {}
    for number, record in contents.records:
        t, m, first, count = record["agent"], record["member"], record["first_game"], record["games"]
        if t >= players or m >= members or first % CHUNK or count != min(CHUNK, games - first):
            raise GamesFileError(f"{name}, line {number}: no chunk of this rating starts there ({record})")
        if record["points"] > count:
            raise GamesFileError(f"{name}, line {number}: {record['points']} points in {count} games")
        done[t, m, first] = (float(record["points"]), count)
    return done


def check_rating(players: Sequence[object], games_per_opponent: int, workers: int | None, pool: ReferencePool) -> int:
    """What ``rate_all_against_pool`` checks before it plays (one ``ArgumentError``/``AgentSpecError`` line): the
    processes it will start."""
    if not players:
        raise ArgumentError("nothing to rate: give at least one agent")
    count = games_per_opponent
    if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1:
        raise ArgumentError(f"games per opponent must be a whole number, at least 1, got {short(count)}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1):
        raise ArgumentError(f"workers must be a whole number, at least 1, got {short(workers)}")
    tasks = len(players) * len(pool.agents) * math.ceil(int(count) / CHUNK)
    return check_workers("workers", None if workers is None else int(workers), tasks, ArgumentError)


def rate_all_against_pool(
    players: Sequence[object],
    games_per_opponent: int,
    seed: int = 0,
    workers: int | None = None,
    *,
    pool: ReferencePool | None = None,
    progress: bool = False,
    games_file: str | Path | None = None,
) -> list[AnchoredRating]:
    """Each of ``players`` (spec strings or ``Player`` values) rated against ``pool`` (default: the dealt-hands one,
    ``POOL_FILE``; ``pool_for`` picks the pool of other rules), on the pool's rules:
    ``games_per_opponent`` games against each member, seats swapped. Each rating comes from that agent's games
    alone, seeded as the module says, so it is the same whatever else is rated with it and however many
    ``workers`` play. ``games_file``: where finished games are kept, and a rerun goes on from (see the module)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ArgumentError(f"seed must be a whole number, at least 0, got {short(seed)}")
    pool = ReferencePool.load() if pool is None else pool
    workers = check_rating(players, games_per_opponent, workers, pool)
    who: list[Player] = [player(p) for p in players]
    if games_file is not None:  # its header records the files' hash: every build of them is held to it
        who = [p.pinned() if isinstance(p, AgentSpec) else p for p in who]
    members = pool.agents
    env_config: EnvConfig = pool.rules
    games, index = int(games_per_opponent), len(members)
    if workers > 1 and not sendable_players(who, "rate_against_pool"):
        workers = 1
    score = np.zeros((len(who), len(members)))
    played = np.zeros((len(who), len(members)), dtype=int)
    with ExitStack() as stack:
        journal, done = None, {}
        if games_file is not None:
            header = games_header(who, games, seed, pool)
            for one in who:  # a policy its loader refuses is one line before the games file is made
                one.build()
            journal, contents = stack.enter_context(
                records.appending(
                    games_file,
                    header,
                    lambda r: records.problem(r, _CHUNK_FIELDS),
                    GamesFileError,
                    what="chunk of games",
                    kind="rating's games file",
                )
            )
            done = _finished(contents, str(games_file), len(who), len(members), games)
        for (t, m, _), (points, count) in done.items():
            score[t, m] += points
            played[t, m] += count

        def tasks() -> Iterator[tuple]:
            for t, one in enumerate(who):
                for m, member in enumerate(members):
                    for start in range(0, games, CHUNK):
                        if (t, m, start) not in done:
                            yield (
                                t,
                                (m, index, member, one, start, min(CHUNK, games - start), seed, None, env_config, None),
                            )

        total = games * len(members) * len(who)
        bar = tqdm(total=total, initial=int(played.sum()), disable=not progress, desc="anchored", unit="game")
        _BUILT.clear()
        try:
            with chunk_results(_play, tasks(), workers) as results:
                for t, m, start, points, count in results:
                    score[t, m] += points
                    played[t, m] += count
                    bar.update(count)
                    if journal is not None:
                        record = {"agent": t, "member": m, "first_game": start, "games": count, "points": points}
                        journal.append(record)
        finally:
            _BUILT.clear()
            bar.close()
    fixed = np.array(pool.elo)
    ratings = []
    for t, one in enumerate(who):
        elo, low, high = fit_against_fixed(fixed, score[t], played[t])
        ratings.append(
            AnchoredRating(
                one.label,
                elo,
                low,
                high,
                pool.labels,
                tuple(float(s) for s in score[t]),
                tuple(int(n) for n in played[t]),
            )
        )
    return ratings


def rate_against_pool(
    agent: object,
    games_per_opponent: int,
    seed: int = 0,
    workers: int | None = None,
    *,
    pool: ReferencePool | None = None,
    progress: bool = False,
    games_file: str | Path | None = None,
) -> AnchoredRating:
    """``agent`` (a spec string or ``Player``) rated on the reference pool's fixed scale: ``games_per_opponent``
    seat-swapped games against each pool member, then the maximum-likelihood Elo with the pool's ratings held fixed
    and its 95% robust interval (``ratings.fit_against_fixed``, ``ratings.ROBUST``). Deterministic for a ``seed``, the
    same with 1 or 2 ``workers``."""
    return rate_all_against_pool(
        [agent], games_per_opponent, seed, workers, pool=pool, progress=progress, games_file=games_file
    )[0]


def anchored_table(ratings: Sequence[AnchoredRating], pool: ReferencePool) -> str:
    """The ratings as a text table, best first, with a line saying what scale they are on."""
    width = max(10, *(len(r.agent) for r in ratings))
    lines = [f"{'agent':<{width}} | anchored Elo (95% CI) | games vs pool", "-" * (width + 40)]
    for r in sorted(ratings, key=lambda r: -r.elo):
        lines.append(
            f"{r.agent:<{width}} | {r.elo:+6.0f} [{r.low:+.0f}, {r.high:+.0f}]".ljust(width + 25) + f" | {sum(r.games)}"
        )
    lines.append(
        f"On the fixed scale of the reference pool {pool.name} ({describe_rules(pool.rules)}; "
        f"{pool.anchor.label} = 0; {len(pool.agents)} agents held fixed)."
    )
    return "\n".join(lines)


def anchored_columns(ratings: Sequence[AnchoredRating]) -> dict[str, Any]:
    """What ``trinity arena --anchored`` adds to the arena's JSON summary, one entry per agent in its order."""
    return {"anchored_elo": [r.elo for r in ratings], "anchored_elo_95": [[r.low, r.high] for r in ratings]}


def anchored_document(ratings: Sequence[AnchoredRating], pool: ReferencePool) -> dict[str, Any]:
    """The ratings with the pool they were measured against (``anchored.json``): every agent's games and points."""
    return {
        "pool": dict(zip(pool.labels, pool.elo)),
        "pool_name": pool.name,
        "config": pool.config(),
        "anchor": pool.anchor.label,
        "interval": "95% robust (the results' own spread), the pool's ratings held fixed",
        "ratings": [r.to_json() for r in ratings],
    }


def pool_markdown(pool: ReferencePool) -> str:
    """The pool as a markdown table (docs/arena.md shows it; a test keeps the page equal to the file)."""
    from trinity_env.agents.ladder import LADDER

    levels = {spec: f"level:{level}" for level, spec in LADDER.items()}
    lines = [f"| level | agent | Elo ({pool.anchor.label} = 0) | 95% CI |", "|---|---|---|---|"]
    for agent, elo, (low, high) in zip(pool.labels, pool.elo, pool.elo_95):
        anchor = agent == pool.anchor.label
        interval = "the anchor" if anchor else f"[{low:+.0f}, {high:+.0f}]"
        lines.append(f"| {levels.get(agent, '')} | `{agent}` | {'0' if anchor else f'{elo:+.0f}'} | {interval} |")
    return "\n".join(lines)
