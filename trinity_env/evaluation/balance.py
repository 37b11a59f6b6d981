"""The balance lab: the questions a designer asks of the game, answered by strong agents.

Every study is self-play under the standard rules (the draft included): the same agent in
both seats, so any edge is the game's, not a player's. Game ``k`` of a study has its own
seed, so results do not depend on how games are spread over worker processes. Shares come
with Wilson 95% intervals.

- first mover: how often the player who places first wins;
- cards: how often each card is drafted, and the win rate of the players who drafted it;
- the A limit: the first-mover edge, A cards drafted and endings at ``max_a_cards`` 2, 3, 4;
- endings: lane control against a full board;
- the domino: how often it fires, and how often it fires in the game's last placement,
  the one that decided it;
- beside the first mover's share between agents, the same under perfect play when a file of
  solved openings is given (``trinity solve-openings``; ``openings_summary.file_summary``): how many
  dealt games the player who places first wins with best play from both sides.

Agents must draft differently from game to game for the card figures to mean anything:
MCTS with ``draft=search`` does (its searches are seeded per game); a policy network does
with ``sample=draft``.

An agent is any policy (``agents.spec.player``): a spec (``mcts:200``, ``onnx:model.onnx``, a checkpoint by path,
``py:package.module:factory`` parsed with ``allow_code``), an ``Agent``, a function ``(observation, mask) -> action``
or a ``BatchedPolicy``; each study is named by its label. Worker processes get the agents by value (a function or a
lambda of a notebook included); one that cannot travel (a closure over a lock) plays in this process, said once.

Ctrl-C stops a run within moments: the pool is terminated and ``RunInterrupted`` (a
``KeyboardInterrupt``) is raised carrying the report of the games finished so far, marked ``partial``.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from trinity_env.agents.spec import Player, player
from trinity_env.core import ArgumentError, Card, GameState
from trinity_env.core.limits import check_workers
from trinity_env.core.rules import LANE_CONTROL
from trinity_env.core.state import DRAFT
from trinity_env.core.writes import write_figure, write_text
from trinity_env.evaluation.arena import sendable_players
from trinity_env.evaluation.match import RunInterrupted, chunk_results, play_game
from trinity_env.evaluation.ratings import Share
from trinity_env.spec.agent import Agent
from trinity_env.spec.config import make_config

DEFAULT_AGENTS = ("mcts:200,draft=search", "ppo-standard:sample=draft")
A_LIMITS = (2, 3, 4)
CHUNK = 10
OUTPUT_FILES = ("balance.json", "balance.md", "balance_overview.png", "balance_cards.png", "balance_a_limit.png")
"""What ``BalanceReport.write`` may write in its folder (the A-limit plot only with more than one limit)."""


@dataclass(frozen=True)
class GameRecord:
    """What the lab needs to know about one finished game."""

    first_player: int
    winner: int | None
    termination: str
    hands: tuple[tuple[int, ...], tuple[int, ...]]
    """Deck indices each player held (drafted) at the start of play."""
    a_cards: tuple[int, int]
    domino_flips: tuple[int, int]
    """Tiles each player flipped through the domino, over the game."""
    last_domino: bool
    """Whether the game's last placement flipped a tile through the domino."""
    placements: int


def play_recorded(agents: tuple[object, object], config: dict[str, Any], seed: int) -> GameRecord:
    """One game (``agents[p]`` in seat p: an ``Agent`` as it is, reset by the game's seed; any other policy
    ``agents.spec.player`` takes built afresh) and its record."""
    states: list[GameState] = []
    seats = tuple(a if isinstance(a, Agent) else player(a).build() for a in agents)
    final = play_game(seats, make_config(config), seed, on_state=states.append)
    start = next(s for s in states if s.phase != DRAFT)  # hands as play begins
    hands = (start.hand_indices(0), start.hand_indices(1))
    placements = [s.last for s in states if s.last is not None and s.last.tile is not None]
    domino = [sum(len(step.domino) for step in placements if step.player == p) for p in (0, 1)]
    return GameRecord(
        final.first_player,
        final.winner,
        final.outcome.termination,
        hands,
        (sum(final.decks[0][i].is_a_card for i in hands[0]), sum(final.decks[1][i].is_a_card for i in hands[1])),
        (domino[0], domino[1]),
        bool(placements[-1].domino),
        len(placements),
    )


def _play_chunk(task: tuple) -> tuple[str, list[GameRecord]]:
    study, who, config, seeds = task
    seats = (who.build(), who.build())  # once a chunk (a file read once), reset by each game's seed as the arena does
    return study, [play_recorded(seats, config, s) for s in seeds]


def _summarise(records: list[GameRecord], deck: list[Card]) -> dict[str, Any]:
    """The study's figures; a study with no games (an interrupted run) has empty shares and ``None`` means."""
    n = len(records)
    first_wins = sum(0.5 if r.winner is None else float(r.winner == r.first_player) for r in records)
    cards = []
    for i, card in enumerate(deck):
        held = [(r, p) for r in records for p in (0, 1) if i in r.hands[p]]
        wins = sum(0.5 if r.winner is None else float(r.winner == p) for r, p in held)
        cards.append(
            {
                "card": card.notation,
                "index": i,
                "picked": Share(len(held), 2 * n).to_json(),
                "win_rate_when_picked": Share(wins, len(held)).to_json(),
            }
        )
    uneven = [r for r in records if r.domino_flips[0] != r.domino_flips[1]]
    more_domino_wins = sum(
        0.5 if r.winner is None else float(r.winner == (0 if r.domino_flips[0] > r.domino_flips[1] else 1))
        for r in uneven
    )
    return {
        "games": n,
        "first_mover_wins": Share(first_wins, n).to_json(),
        "lane_control_endings": Share(sum(r.termination == LANE_CONTROL for r in records), n).to_json(),
        "domino_fired": Share(sum(sum(r.domino_flips) > 0 for r in records), n).to_json(),
        "domino_in_last_placement": Share(sum(r.last_domino for r in records), n).to_json(),
        "more_domino_flips_wins": Share(more_domino_wins, len(uneven)).to_json(),
        "mean_placements": sum(r.placements for r in records) / n if n else None,
        "mean_a_cards": sum(sum(r.a_cards) for r in records) / (2 * n) if n else None,
        "cards": cards,
    }


@dataclass
class BalanceReport:
    """Per study (``"<agent>"`` under the standard rules, ``"<agent> max_a=K"`` for the A limit).

    ``games`` is the number of games per study asked for; each study's ``"games"`` counts those
    played. ``partial``: the run was interrupted, and the studies hold the games finished by then.
    ``openings``: the summary of a solved-openings file (``openings_summary.file_summary``), reported beside
    the studies' first-mover shares; ``None`` when none was given.
    """

    agents: list[str]
    games: int
    seed: int
    studies: dict[str, dict[str, Any]]
    partial: bool = False
    openings: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.partial:
            del data["partial"]  # a whole run reads as it always did
        if self.openings is None:
            del data["openings"]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BalanceReport:
        openings = data.get("openings")
        if openings is not None and "wins_all_deals" not in openings:
            raise ArgumentError("a balance report's openings summary lacks 'wins_all_deals' (rerun trinity balance)")
        return cls(
            list(data["agents"]),
            int(data["games"]),
            int(data["seed"]),
            dict(data["studies"]),
            bool(data.get("partial", False)),
            None if openings is None else dict(openings),
        )

    def openings_line(self) -> str:
        """The first mover under perfect play, from the solved openings ("" when none were given)."""
        if self.openings is None:
            return ""
        o = self.openings
        first = o["first_player"]
        where = f", in {o['file']}" if o.get("file") else ""
        line = (
            f"Perfect play ({o['solved']} dealt games solved from the first placement, {o['unsolved']} unsolved"
            f"{where}): the first mover wins {_cell(first['wins'])}, draws {_cell(first['draws'])}, "
            f"loses {_cell(first['losses'])} of the solved."
        )
        bounds = o["wins_all_deals"]
        if o["unsolved"]:
            line += (
                f" Over all {bounds['n']} deals, each unsolved one counted as not won, then as won: "
                f"{bounds['low']:.1%} to {bounds['high']:.1%}."
            )
        return line

    def partial_note(self) -> str:
        """One sentence on an interrupted run ("" for a whole one)."""
        if not self.partial:
            return ""
        played = sum(s["games"] for s in self.studies.values())
        asked = self.games * len(self.studies)
        return f"Partial results: interrupted after {played} of {asked} games; each study counts the games played."

    def table(self) -> str:
        """The headline figures, one row per study."""
        rows = [f"{'study':<36} {'games':>5}  {'first mover wins':<22} {'lane control':<22} {'domino decides':<22}"]
        for name, s in self.studies.items():
            cells = [_cell(s[key]) for key in ("first_mover_wins", "lane_control_endings", "domino_in_last_placement")]
            rows.append(f"{name:<36} {s['games']:>5}  " + " ".join(f"{c:<22}" for c in cells))
        if self.openings is not None:
            first = _cell(self.openings["first_player"]["wins"])
            rows.append(f"{'perfect play (solved openings)':<36} {self.openings['solved']:>5}  {first:<22}")
        if self.partial:
            rows.append(self.partial_note())
        return "\n".join(rows)

    def card_table(self, study: str | None = None) -> str:
        """Pick rate and win rate when picked for each card of one study (the first by default)."""
        s = self.studies[study or next(iter(self.studies))]
        rows = [f"{'card':<6} {'picked':<22} {'wins when picked':<22}"]
        for c in s["cards"]:
            rows.append(f"{c['card']:<6} {_cell(c['picked']):<22} {_cell(c['win_rate_when_picked']):<22}")
        return "\n".join(rows)

    def markdown(self) -> str:
        """The study table and, for each standard-rules study, the card table, as markdown."""
        heads = (
            "first mover wins",
            "lane-control endings",
            "domino fires",
            "domino in last placement",
            "more domino flips wins",
        )
        keys = (
            "first_mover_wins",
            "lane_control_endings",
            "domino_fired",
            "domino_in_last_placement",
            "more_domino_flips_wins",
        )
        lines = [
            "| study | games | max_a_cards | " + " | ".join(heads) + " | A cards per hand | placements |",
            "|---|---|---|" + "---|" * len(heads) + "---|---|",
        ]
        for name, s in self.studies.items():
            cells = " | ".join(_cell(s[key]) for key in keys)
            lines.append(
                f"| {name} | {s['games']} | {s['max_a_cards']} | {cells} | "
                f"{_mean(s['mean_a_cards'], 2)} | {_mean(s['mean_placements'], 1)} |"
            )
        if self.openings is not None:
            lines += ["", self.openings_line()]
        if self.partial:
            lines += ["", f"**{self.partial_note()}**"]
        for name in self.agents:
            header = "| card | drafted (share of hands) | win rate when drafted |"
            lines += ["", f"Cards, {name} self-play:", "", header, "|---|---|---|"]
            for c in self.studies[name]["cards"]:
                lines.append(f"| {c['card']} | {_cell(c['picked'])} | {_cell(c['win_rate_when_picked'])} |")
        return "\n".join(lines) + "\n"

    def write(self, out: str | Path) -> list[Path]:
        """``balance.json`` and the plots in ``out``; the paths written."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        path = out / "balance.json"
        write_text(path, json.dumps(self.to_json(), indent=1) + "\n")
        table = out / "balance.md"
        write_text(table, self.markdown())
        return [path, table, *plot_report(self, out)]


def _mean(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _cell(share: dict[str, Any]) -> str:
    return Share.from_json(share).text()


def _studies(agents: list[Player], a_limits: tuple[int, ...]) -> list[tuple[str, Player, dict[str, Any]]]:
    standard = make_config(None).to_dict()
    studies = [(who.label, who, standard) for who in agents]
    for limit in a_limits:
        if limit != standard["max_a_cards"]:
            config = make_config(standard | {"max_a_cards": limit}).to_dict()  # a bad limit fails here, not in a worker
            studies.append((f"{agents[0].label} max_a={limit}", agents[0], config))
    return studies


def run_balance(
    agents: list | tuple = DEFAULT_AGENTS,
    games: int = 200,
    *,
    seed: int = 0,
    a_limits: tuple[int, ...] = A_LIMITS,
    workers: int | None = None,
    progress: bool = True,
    openings: dict[str, Any] | None = None,
) -> BalanceReport:
    """Self-play ``games`` games per study: each agent (any policy: the module) under the standard rules, and the
    first agent at each A limit (the standard limit's games are shared with the first study).

    ``openings``: a solved-openings summary (``openings_summary.file_summary``) to report beside the studies.
    Interrupted (Ctrl-C), it stops at once and raises ``RunInterrupted`` whose ``partial`` is the
    report of the games finished so far (``partial=True``).
    """
    studies = check_balance(agents, games, a_limits, workers)
    games = int(games)

    def tasks() -> Iterator[tuple]:  # lazily: a huge ``games`` must not build a huge list first
        for s, (name, who, config) in enumerate(studies):
            for start in range(0, games, CHUNK):
                seeds = [seed * 1_000_003 + s * 100_003 + k for k in range(start, min(start + CHUNK, games))]
                yield name, who, config, seeds

    records: dict[str, list[GameRecord]] = {name: [] for name, _, _ in studies}
    workers = balance_workers(len(studies), games, workers)
    if workers > 1 and not sendable_players([who for _, who, _ in studies], "run_balance"):
        workers = 1
    bar = tqdm(total=games * len(studies), disable=not progress, desc="balance", unit="game")
    partial = False
    try:
        with chunk_results(_play_chunk, tasks(), workers) as results:
            for name, chunk in results:
                records[name].extend(chunk)
                bar.update(len(chunk))
    except KeyboardInterrupt:
        partial = True  # the pool is gone; keep what finished
    finally:
        bar.close()
    deck = list(make_config(None).decks[0])
    summaries = {name: _summarise(records[name], deck) for name, _, _ in studies}
    for name, _, config in studies:
        summaries[name]["max_a_cards"] = config["max_a_cards"]
    labels = list(dict.fromkeys(who.label for _, who, _ in studies))
    report = BalanceReport(labels, games, seed, summaries, partial, openings)
    if partial:
        raise RunInterrupted(report)
    return report


def balance_workers(studies: int, games: int, workers: int | None = None) -> int:
    """The processes ``run_balance`` starts: ``workers`` (default: every CPU) clamped to its tasks (``CHUNK`` games
    of one study each), and ``ArgumentError`` past ``core.limits.max_processes()``."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1):
        raise ArgumentError(f"workers must be a whole number, at least 1, got {workers!r}")
    tasks = studies * math.ceil(games / CHUNK)
    return check_workers("workers", None if workers is None else int(workers), tasks, ArgumentError)


def check_balance(
    agents: list | tuple, games: int, a_limits: tuple[int, ...] = A_LIMITS, workers: int | None = None
) -> list[tuple[str, Player, dict[str, Any]]]:
    """What ``run_balance`` checks before it plays (``ValueError`` if bad); the studies it would run: their names,
    their agents as ``Player`` values (a spec parsed, a policy wrapped: nothing built) and their rules."""
    if not agents:
        raise ValueError("the balance lab needs at least one agent")
    if isinstance(games, bool) or not isinstance(games, numbers.Integral) or games < 1:
        raise ValueError(f"games must be at least 1, got {games!r}")
    players = [player(agent) for agent in agents]  # a bad spec fails here, not in a worker (and nothing is built)
    labels = [who.label for who in players]
    twice = next((label for k, label in enumerate(labels) if label in labels[:k]), None)
    if twice is not None:
        raise ArgumentError(f"agent {twice} is given twice: each agent is one study, named by its label")
    studies = _studies(players, tuple(a_limits))
    balance_workers(len(studies), int(games), workers)
    return studies


def _error_bars(shares: list[dict[str, Any]]) -> list[list[float]]:
    """Matplotlib's asymmetric error bars for shares (empty shares drawn as zero)."""
    known = [(s["share"], s["low"], s["high"]) if s["total"] else (0.0, 0.0, 0.0) for s in shares]
    return [[max(0.0, v - low) for v, low, _ in known], [max(0.0, high - v) for v, _, high in known]]


def plot_report(report: BalanceReport, out: Path) -> list[Path]:
    """Three figures: headline shares per study, the cards, and the A limit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    names = list(report.studies)
    keys = [
        ("first_mover_wins", "first mover wins"),
        ("lane_control_endings", "lane-control ending"),
        ("domino_fired", "domino fires"),
        ("domino_in_last_placement", "domino in last placement"),
    ]
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(names)
    for n, name in enumerate(names):
        s = report.studies[name]
        x = [k + n * width for k in range(len(keys))]
        shares = [s[key] for key, _ in keys]
        heights = [share["share"] or 0.0 for share in shares]
        ax.bar(x, heights, width, yerr=_error_bars(shares), capsize=3, label=name)
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xticks([k + 0.4 - width / 2 for k in range(len(keys))], [label for _, label in keys])
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of games (95% interval)")
    ax.legend(fontsize=8)
    ax.set_title(f"Self-play, {report.games} games per study" + (" (partial: interrupted)" if report.partial else ""))
    fig.tight_layout()
    paths.append(out / "balance_overview.png")
    write_figure(paths[-1], fig, dpi=110)
    plt.close(fig)

    first = report.studies[names[0]]
    cards = first["cards"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.5), sharey=True)
    labels = [c["card"] for c in cards]
    for ax, key, title in (
        (axes[0], "picked", "drafted (share of hands)"),
        (axes[1], "win_rate_when_picked", "win rate when drafted"),
    ):
        shares = [c[key] for c in cards]
        values = [share["share"] or 0.0 for share in shares]
        ax.barh(
            labels, values, xerr=_error_bars(shares), capsize=2, color="tab:blue" if key == "picked" else "tab:green"
        )
        ax.axvline(0.5, color="grey", lw=0.8, ls="--")
        ax.set_xlim(0, 1)
        ax.set_title(title)
    axes[0].invert_yaxis()
    fig.suptitle(f"Standard deck, {names[0]} self-play")
    fig.tight_layout()
    paths.append(out / "balance_cards.png")
    write_figure(paths[-1], fig, dpi=110)
    plt.close(fig)

    limits = sorted(
        (s["max_a_cards"], s)
        for name, s in report.studies.items()
        if name == names[0] or name.startswith(names[0] + " ")
    )
    if len(limits) > 1:
        fig, ax = plt.subplots(figsize=(6, 4))
        xs = [k for k, _ in limits]
        for key, label in keys[:2]:
            shares = [s[key] for _, s in limits]
            ys = [share["share"] if share["total"] else math.nan for share in shares]
            ax.errorbar(xs, ys, yerr=_error_bars(shares), marker="o", capsize=3, label=label)
        ax.set_xticks(xs)
        ax.set_xlabel("max_a_cards")
        ax.set_ylim(0, 1)
        ax.set_ylabel("share of games (95% interval)")
        ax.legend()
        ax.set_title(f"The A limit, {names[0]} self-play")
        fig.tight_layout()
        paths.append(out / "balance_a_limit.png")
        write_figure(paths[-1], fig, dpi=110)
        plt.close(fig)
    return paths
