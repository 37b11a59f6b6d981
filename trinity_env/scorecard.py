"""The score card: one versioned protocol that measures any policy on numbers a paper can cite.

``trinity benchmark --agent SPEC`` and ``trinity_env.benchmark(policy)`` (the policy in any form the tools take:
a spec such as ``onnx:model.onnx`` or ``mcts:400``, an ``Agent``, a function ``(observation, mask) ->
action``, a ``BatchedPolicy``: ``trinity_env.agents.policies``) report, each with its 95% interval:

- **rating**, dealt hands: Elo on the fixed scale of the frozen dealt-hands reference pool
  (``trinity_env.evaluation.anchored``): the policy plays every pool member, seats swapped, on dealt hands, and
  its rating is fitted with the pool's ratings held fixed, so it means the same whatever else was measured
  beside it;
- **rating, with the draft** (``rating_draft``): the same against the draft pool, the same number of games
  against each member, every game starting with the secret draft (the standard rules), which the policy plays
  through the same observation and mask as its placements: the whole game, its draft included;
- **accuracy** against perfect play: how often its move keeps the exact value, by empty tiles, on the shipped
  accuracy set (``trinity_env.evaluation.accuracy``), and its value head's sign where it has one;
- **puzzles**: the share of the shipped 200-puzzle set it solves with its first move;
- **endgames**: the share of the endgame suite's won positions in which it picks a winning move;
- optionally **exploitability**: what a best response trained for a stated number of learner steps wins
  against it (``evaluation.exploit``).

The protocol is versioned (``BENCHMARK_VERSION``, written as ``benchmark`` in the JSON): its sets, its pools,
its budgets and its intervals are frozen, and any change to them or to the rules bumps it (and the env id with the
rules). Version 2 added the rating with the draft (``rating_draft``, against the draft pool
``reference_pool_draft.json``); each rating also names its pool (``pool_name``) and rules (``config``). Version 1
cards have the dealt-hands rating alone. Version 3 gives the ratings the robust interval (``ratings.ROBUST``, which
holds where the model does not fit: ``benchmarks/rating_coverage.py``) in place of the likelihood ratio's; its
games are version 2's.

The card names what it measured (``trinity_env.provenance``): the policy's label, a normalised spec; every file
the policy reads, by name, plain sha256 and size (``files``); the code that measured it (``code``: the package's
version and source hash, and in a git checkout its commit). ``trinity benchmark --verify CARD`` checks them again.
Two protocols: ``quick`` (a few minutes for a network) and ``full``. Budgets are in games and positions,
never seconds; the results depend on the seed alone, not on the worker count. The rating games, the card's
longest part, are kept as they finish when a ``games_folder`` is given (``trinity benchmark`` gives ``--out``): a
stopped run, started again, plays only what is missing, and the files go when the card is written.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BENCHMARK_VERSION = 3
"""The protocol's version: the sets, the pools, the budgets below and the intervals; bumped by any change to them
(2: the rating with the draft added; 3: the ratings' robust interval)."""


@dataclass(frozen=True)
class Protocol:
    """What one protocol measures: games against each pool member (in each pool: dealt hands, and with the draft),
    positions of the accuracy set per count of empty tiles (its first ones), puzzles of the shipped set (its first
    ones), and the endgame suite."""

    name: str
    rating_games: int
    accuracy_per_count: int
    puzzles: int
    endgames: bool = True


PROTOCOLS = {
    "quick": Protocol("quick", rating_games=20, accuracy_per_count=40, puzzles=100),
    "full": Protocol("full", rating_games=100, accuracy_per_count=400, puzzles=200),
}
"""``quick``: a few minutes for a network, intervals about twice as wide; ``full``: the figures to publish."""


@dataclass
class ScoreCard:
    """What ``benchmark`` measured (the JSON it writes is ``to_json()``)."""

    agent: str
    protocol: Protocol
    seed: int
    rating: dict[str, Any]
    rating_draft: dict[str, Any]
    accuracy: dict[str, dict[str, Any]]
    value_sign: dict[str, dict[str, Any]] | None
    puzzles: dict[str, Any]
    endgames: dict[str, Any] | None
    exploitability: dict[str, Any] | None = None
    files: list[dict[str, Any]] = field(default_factory=list)
    """Every file the policy reads: ``name``, plain ``sha256`` and ``bytes`` (``provenance.policy_files``)."""
    code: dict[str, Any] | None = None
    """The code that measured it (``provenance.code_provenance``); ``None``: the code running ``to_json``."""
    partial: bool = False
    notes: list[str] = field(default_factory=list)
    games_files: list[Path] = field(default_factory=list, repr=False, compare=False)
    """The files its rating games were kept in (``benchmark``'s ``games_folder``): removed once ``write`` has
    written the card, never before."""
    pools: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """The reference pools its ratings were measured against, by name (``benchmark``'s, read once): the plot draws
    them; a card read back from JSON reads them again from the shipped files."""

    def to_json(self) -> dict[str, Any]:
        from trinity_env.provenance import code_provenance
        from trinity_env.registration import ENV_ID

        code = self.code or code_provenance()
        return {
            "benchmark": BENCHMARK_VERSION,
            "protocol": asdict(self.protocol),
            "env": ENV_ID,
            "package": code["package"],
            "code": code,
            "agent": self.agent,
            "files": self.files,
            "seed": self.seed,
            "rating": self.rating,
            "rating_draft": self.rating_draft,
            "accuracy": self.accuracy,
            "value_sign": self.value_sign,
            "puzzles": self.puzzles,
            "endgames": self.endgames,
            "exploitability": self.exploitability,
            "partial": self.partial,
            "notes": self.notes,
        }

    def markdown(self) -> str:
        """The card as a page section: the headline figures, then accuracy by empty tiles."""

        def share(cell: dict[str, Any] | None) -> str:
            if not cell or cell.get("share") is None:
                return "-"
            return f"{cell['share']:.1%} [{cell['low']:.1%}, {cell['high']:.1%}]"

        rating, draft = self.rating, self.rating_draft
        lines = [
            f"### `{self.agent}`",
            "",
            f"Trinity Towers benchmark {BENCHMARK_VERSION}, `{self.protocol.name}` protocol, seed {self.seed}"
            + (" (partial: interrupted)" if self.partial else ""),
            "",
            "| figure | value (95% interval) |",
            "|---|---|",
            f"| rating, dealt hands (reference pool, {rating['games']} games) | "
            f"{rating['elo']:+.0f} [{rating['low']:+.0f}, {rating['high']:+.0f}] |",
            f"| rating, with the draft (reference pool, {draft['games']} games) | "
            f"{draft['elo']:+.0f} [{draft['low']:+.0f}, {draft['high']:+.0f}] |",
            f"| puzzles solved ({self.puzzles['total']}) | {share(self.puzzles)} |",
        ]
        if self.endgames is not None:
            lines.append(f"| endgame suite, winning move found ({self.endgames['total']}) | {share(self.endgames)} |")
        if self.exploitability is not None:
            e = self.exploitability
            lines.append(
                f"| a best response's win rate ({e['steps']:,} learner steps, {e['games']} games) | {share(e)} |"
            )
        counts = sorted(self.accuracy, key=int)
        lines += ["", "| empty tiles | " + " | ".join(counts) + " |", "|---|" + "---:|" * len(counts)]
        lines.append("| moves keep the exact value | " + " | ".join(share(self.accuracy[c]) for c in counts) + " |")
        lines.append(
            "| positions scored (the set's positions of that count that are not lost) | "
            + " | ".join(str(self.accuracy[c].get("total", "-")) for c in counts)
            + " |"
        )
        if self.value_sign:
            lines.append(
                "| value head's sign right | " + " | ".join(share(self.value_sign.get(c)) for c in counts) + " |"
            )
            lines.append(
                "| positions scored (value sign) | "
                + " | ".join(str((self.value_sign.get(c) or {}).get("total", "-")) for c in counts)
                + " |"
            )
        if self.code is not None or self.files:  # a card upgraded from version 2 recorded neither
            lines += ["", "Files the policy reads (sha256, as `sha256sum` prints it):"]
            lines += [f"- `{f['name']}`: `{f['sha256']}`" for f in self.files] or ["- none"]
        lines += [f"\nNote: {note}" for note in self.notes]
        return "\n".join(lines) + "\n"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ScoreCard:
        """The card a ``scorecard.json`` holds (its code and files as recorded), to draw or print it again without
        measuring anything."""
        return cls(
            data["agent"],
            Protocol(**data["protocol"]),
            data["seed"],
            data["rating"],
            data["rating_draft"],
            data["accuracy"],
            data["value_sign"],
            data["puzzles"],
            data["endgames"],
            data.get("exploitability"),
            files=data.get("files", []),
            code=data.get("code"),
            partial=data.get("partial", False),
            notes=data.get("notes", []),
        )

    def plot(self, path: str | Path) -> None:
        """Two panels: accuracy and value sign by empty tiles, with their intervals, beside the reference lines of the
        same positions (``reference_accuracy``: a uniformly random mover's expectation and greedy's share); and both
        ratings with their intervals among the members of the pools they are fitted against."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        counts = sorted(self.accuracy, key=int)
        x = [int(c) for c in counts]
        figure, (axis, ratings) = plt.subplots(1, 2, figsize=(11, 4.2), width_ratios=(3, 2))
        for name, cells in (("moves keep the value", self.accuracy), ("value sign right", self.value_sign or {})):
            shown = [c for c in counts if cells.get(c) and cells[c]["share"] is not None]
            if not shown:
                continue
            y = [cells[c]["share"] for c in shown]
            low = [cells[c]["share"] - cells[c]["low"] for c in shown]
            high = [cells[c]["high"] - cells[c]["share"] for c in shown]
            axis.errorbar([int(c) for c in shown], y, yerr=[low, high], marker="o", capsize=3, label=name)
        references = reference_accuracy(self.protocol.accuracy_per_count, self.seed)
        for (name, shares), style in zip(references.items(), (":", "--"), strict=True):
            drawn = [c for c in x if c in shares]
            axis.plot(drawn, [shares[c] for c in drawn], linestyle=style, color="grey", label=name)
        axis.set_xticks(x)
        axis.set_ylim(0, 1)
        axis.set_xlabel("empty tiles")
        axis.set_title("against perfect play", fontsize=10)
        axis.grid(alpha=0.3)
        axis.legend(loc="lower left", fontsize=8)
        _rating_panel(ratings, [("dealt hands", self.rating), ("with the draft", self.rating_draft)], self.pools)
        figure.suptitle(
            f"{self.agent}\n(benchmark {BENCHMARK_VERSION}, {self.protocol.name} protocol, seed {self.seed})"
        )
        figure.tight_layout()
        from trinity_env.core.writes import write_figure

        try:
            write_figure(path, figure, dpi=110)  # the one write door: never through a link
        finally:
            plt.close(figure)

    def write(self, folder: str | Path) -> list[Path]:
        """``scorecard.json``, ``scorecard.md`` and ``scorecard.png`` in ``folder`` (each written whole)."""
        from trinity_env.core.writes import write_text

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        paths = [folder / "scorecard.json", folder / "scorecard.md", folder / "scorecard.png"]
        write_text(paths[0], json.dumps(self.to_json(), indent=1) + "\n")
        write_text(paths[1], self.markdown())
        self.plot(paths[2])
        for file in self.games_files:  # the card is on disk: its games are no longer needed
            file.unlink(missing_ok=True)
        return paths


def _rating_panel(axis, rows: list[tuple[str, dict[str, Any]]], known: dict[str, Any]) -> None:
    """Each rating with its interval on its own line, above the ratings of the pool members it was fitted against
    (grey, named): where the policy stands on the fixed scale. ``known``: the pools already read, by name; any other
    is read from the shipped files."""
    from trinity_env.evaluation.anchored import POOL_FILES, ReferencePool

    files = {Path(file).stem: file for file in POOL_FILES.values()}
    pools = [known.get(rating["pool_name"]) or ReferencePool.load(files[rating["pool_name"]]) for _, rating in rows]
    for y, ((_, rating), pool) in enumerate(zip(rows, pools, strict=True)):
        axis.scatter(pool.elo, [y] * len(pool.elo), marker="|", s=200, color="grey")
        for k, (member, elo) in enumerate(zip(pool.labels, pool.elo, strict=True)):
            axis.annotate(
                member,
                (elo, y),
                xytext=(0, -14 - 9 * (k % 2)),
                textcoords="offset points",
                fontsize=6,
                ha="center",
                color="grey",
            )
        low, high = rating["elo"] - rating["low"], rating["high"] - rating["elo"]
        axis.errorbar([rating["elo"]], [y + 0.25], xerr=[[low], [high]], marker="o", capsize=4, color="C0")
        axis.annotate(
            f"{rating['elo']:+.0f}",
            (rating["elo"], y + 0.25),
            xytext=(0, 6),
            textcoords="offset points",
            fontsize=8,
            ha="center",
            color="C0",
        )
    every = [elo for _, rating in rows for elo in (rating["low"], rating["high"])]
    every += [elo for pool in pools for elo in pool.elo]
    axis.set_xlim(min(every) - 120, max(every) + 120)  # room for the members' names at both ends
    axis.set_yticks(range(len(rows)), [name for name, _ in rows])
    axis.set_ylim(-0.7, len(rows) - 0.35)
    axis.set_xlabel("Elo, the pool's fixed scale (random = 0)")
    axis.set_title("rating among the pool's members (95% interval)", fontsize=10)
    axis.grid(alpha=0.3, axis="x")


def reference_accuracy(per_count: int, seed: int) -> dict[str, dict[int, float]]:
    """The card plot's reference lines, by empty tiles, on the positions its accuracy is measured on (the first
    ``per_count`` of each count in the shipped set): ``random (expected)``, the share of legal moves that keep the
    value, averaged (what a uniformly random mover expects), and ``greedy``'s share, played with ``seed``."""
    from trinity_env.agents.baselines import GreedyAgent
    from trinity_env.evaluation import accuracy

    positions = accuracy.first_per_count(accuracy.load_set(), per_count)
    expected: dict[int, list[float]] = {}
    for item in positions:
        if item.counts_for_moves:
            expected.setdefault(item.empty, []).append(len(item.best_moves) / item.legal_moves)
    greedy = accuracy.score_agent(GreedyAgent(), positions, seed)  # the agent as a value: no spec text to read
    return {
        "random (expected)": {empty: sum(shares) / len(shares) for empty, shares in sorted(expected.items())},
        "greedy": {row.empty: row.moves.hits / row.moves.total for row in greedy.counts if row.moves.total},
    }


def check_protocol(protocol: object) -> Protocol:
    if isinstance(protocol, Protocol):
        return protocol
    if protocol not in PROTOCOLS:
        from trinity_env.core import ArgumentError

        raise ArgumentError(f"protocol must be one of {', '.join(sorted(PROTOCOLS))}, got {protocol!r}")
    return PROTOCOLS[protocol]


def benchmark(
    policy: Any,
    protocol: str | Protocol = "quick",
    *,
    seed: int = 0,
    workers: int | None = None,
    exploit_steps: int | None = None,
    progress: bool = False,
    games_folder: str | Path | None = None,
) -> ScoreCard:
    """The score card of ``policy`` (see the module) under ``protocol``; deterministic for a seed.

    ``games_folder``: where the rating games are kept as they finish (``games_files``; a rerun goes on from
    them), removed when the card is written (``ScoreCard.write``). The card is the same, played at once or resumed."""
    from trinity_env.agents.spec import AgentSpec, player
    from trinity_env.evaluation import accuracy, endgames, puzzles
    from trinity_env.evaluation.anchored import pools_for
    from trinity_env.evaluation.arena import ARENA_DEFAULTS
    from trinity_env.evaluation.ratings import Share
    from trinity_env.provenance import code_provenance, policy_files, policy_label
    from trinity_env.spec.config import make_config

    plan = check_protocol(protocol)
    who = player(policy)
    if isinstance(who, AgentSpec):  # every build (rating workers, accuracy) re-hashes the files it read
        who = who.pinned()
    pools = pools_for([make_config(ARENA_DEFAULTS), make_config(draft="pick")])  # both read before a game
    agent = who.build()  # a policy its loader refuses is one line before any games file is made
    read, code = policy_files(who, agent), code_provenance()  # what the card says it measured
    files = games_files(who, plan, seed, pools, games_folder)
    rating, draft = (_rating(who, plan, pool, seed, workers, progress, f) for pool, f in zip(pools, files))
    positions = accuracy.first_per_count(accuracy.load_set(), plan.accuracy_per_count)
    scored = accuracy.score_agent(agent, positions, seed, label=who.label)
    moves = {str(row.empty): row.moves.to_json() for row in scored.counts}
    signs = {str(row.empty): row.value_sign.to_json() for row in scored.counts if row.value_sign is not None} or None
    solved = puzzles.score_agent(agent, puzzles.load_puzzles(puzzles.DEFAULT_SET)[: plan.puzzles], seed)
    suite = None
    if plan.endgames:
        won = [e for e in endgames.load_suite(endgames.DEFAULT_SUITE) if e.value == 1]
        played = puzzles.agent_moves(agent, [e.position for e in won], 0)  # endgames.score_agent's seeds: 0, 1, ...
        suite = Share(sum(move in e.best_moves for move, e in zip(played, won)), len(won)).to_json()
    label = policy_label(who, agent)
    card = ScoreCard(
        label, plan, seed, rating, draft, moves, signs, solved.share.to_json(), suite, files=read, code=code
    )
    if exploit_steps is not None:
        from trinity_env.evaluation.exploit import exploit

        found = exploit(agent, exploit_steps, seed=seed, progress=progress)
        card.exploitability = {
            "steps": found.steps,
            "games": found.games,
            **Share(found.points, found.games).to_json(),  # a draw is half a point: kept
        }
    card.games_files = [file for file in files if file is not None]
    card.pools = {pool.name: pool for pool in pools}
    return card


def games_files(who: Any, plan: Protocol, seed: int, pools: list, folder: str | Path | None) -> list[Path | None]:
    """Where each pool's rating games are kept in ``folder``: a name of the pool and a digest of what the games
    depend on (``anchored.games_header``), so another policy, seed or protocol in the same folder never meets
    them."""
    if folder is None:
        return [None] * len(pools)
    import hashlib

    from trinity_env.evaluation.anchored import games_header

    names = []
    for pool in pools:
        header = games_header([who], plan.rating_games, seed, pool)
        digest = hashlib.sha256(json.dumps(header, sort_keys=True).encode("utf-8")).hexdigest()[:16]
        names.append(Path(folder) / f"rating-games-{pool.name}-{digest}.jsonl")
    return names


def _rating(
    who: Any, plan: Protocol, pool: Any, seed: int, workers: int | None, progress: bool, games_file: Path | None
) -> dict[str, Any]:
    """``who``'s anchored rating against ``pool`` (``plan.rating_games`` games against each member), as the card
    writes it: the Elo and its interval, the games, the pool (version, name, rules) and the points against each."""
    from trinity_env.evaluation.anchored import POOL_VERSION, rate_against_pool
    from trinity_env.evaluation.ratings import ROBUST

    anchored = rate_against_pool(
        who, plan.rating_games, seed=seed, workers=workers, pool=pool, progress=progress, games_file=games_file
    )
    return {
        "elo": anchored.elo,
        "low": anchored.low,
        "high": anchored.high,
        "games": sum(anchored.games),
        "interval": ROBUST,
        "pool": POOL_VERSION,
        "pool_name": pool.name,
        "config": pool.config(),
        "opponents": list(anchored.opponents),
        "score": list(anchored.score),
    }
