"""Reviewing a game: every placement of a replay with the value before and after it, the best moves, the blunders.

A value is always for the player about to move: +1 the position is won, 0 drawn, -1 lost
under perfect play from both sides. Where the exact solver answers within ``max_nodes``
nodes (a budget per position: the same outcome on any machine), the value is exact and the
best moves are every move that keeps it (``Solution.best_moves``). Where it does not (many
empty tiles), the value is an **estimate** by an agent, and says so: for an ``mcts`` agent
the share of its simulations won by the mover (``2 * share - 1``, so +1 means it won every
simulation) and the moves it visited most; for any other agent the mean result of a few
self-play games from the position. An estimate is never called a blunder: a placement is a
blunder only when the solver proves it, a won position made drawn or lost, or a drawn one
made lost. A placement whose estimated value falls by ``suspect_drop`` or more is marked
*questionable*, nothing stronger.

The solver needs both hands, so only play-phase positions are reviewed (the draft is not),
and a game played with hidden hands is reviewed with both hands revealed: its values are
what a player who saw both hands could achieve, which the review says.

Positions are evaluated from the end of the game backwards, so the solver's transposition
table, kept from one position to the next, carries what it learnt to the earlier ones.
Ctrl-C stops a review within moments and raises ``RunInterrupted`` carrying the review of
the positions finished so far, marked ``partial``. How one position is valued (solver, MCTS
share, playouts) lives in ``review_values``; this module reviews the placements and presents them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trinity_env.agents.mcts import MCTSAgent
from trinity_env.agents.spec import Player, player
from trinity_env.core import ArgumentError, GameState, Move, Phase, PositionError, Replay, Termination
from trinity_env.core.writes import write_figure, write_text
from trinity_env.evaluation.match import RunInterrupted
from trinity_env.evaluation.review_values import (
    PLAYOUTS,
    Evaluation,
    exact_evaluation,
    mcts_estimate,
    playout_estimate,
    result_value,
    value_for_player_0,
)
from trinity_env.search.solver import Solver
from trinity_env.spec.agent import Agent

DEFAULT_MAX_NODES = 2_000_000
"""Solver nodes per position: enough for most positions with up to 9 empty tiles (about 1.5 s each)."""
DEFAULT_AGENT = "mcts:1600"
SUSPECT_DROP = 0.5
FORMAT = "trinity-towers-review"
VERSION = 1
_OUTCOME = {1: "won", 0: "drawn", -1: "lost"}
_SEAT = {0: "0 (w)", 1: "1 (b)"}


@dataclass(frozen=True)
class PlacementReview:
    """One placement: ``before`` is the position it was made in (for the mover), ``after_value``
    the value of the position it led to, for the same player (``None``: not evaluated)."""

    number: int
    player: int
    card: str
    tile: int
    empty_tiles: int
    legal_moves: int
    before: Evaluation | None
    after_value: float | None
    after_exact: bool | None
    blunder: str | None
    questionable: bool

    @property
    def best_moves(self) -> list[Move] | None:
        """The solver's best moves, when the position before was solved."""
        if self.before is None or not self.before.exact:
            return None
        return [move for move, _ in self.before.moves]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "number": self.number,
            "player": self.player,
            "card": self.card,
            "tile": self.tile,
            "empty_tiles": self.empty_tiles,
            "legal_moves": self.legal_moves,
            "before": None if self.before is None else self.before.to_json(),
            "after": None
            if self.after_value is None
            else {
                "value": int(self.after_value) if self.after_exact else self.after_value,
                "exact": bool(self.after_exact),
                "kind": "exact" if self.after_exact else "estimate",
            },
            "blunder": self.blunder,
            "questionable": self.questionable,
        }
        if self.before is not None and self.before.exact:
            data["best_moves"] = [move.to_json() for move, _ in self.before.moves]
        elif self.before is not None:
            data["estimated_best_moves"] = [move.to_json() | {"share": s} for move, s in self.before.moves]
        return data


@dataclass
class Review:
    """The review of one replay; ``text()``, ``to_json()`` and ``plot(path)`` present it."""

    states: list[GameState]
    """The play-phase states: before each placement, then the last one."""
    evaluations: list[Evaluation | None]
    rules: dict[str, Any]
    max_nodes: int
    agent: str
    seed: int
    source: str | None = None
    partial: bool = False
    suspect_drop: float = SUSPECT_DROP
    placements: list[PlacementReview] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.placements = [self._placement(k) for k in range(len(self.states) - 1)]

    @property
    def hands_revealed(self) -> bool:
        """True for a game played with hidden hands: it is reviewed with both hands shown."""
        return not self.rules.get("open_hands", True)

    @property
    def blunders(self) -> list[PlacementReview]:
        return [p for p in self.placements if p.blunder]

    def _placement(self, k: int) -> PlacementReview:
        state, after = self.states[k], self.states[k + 1]
        step = after.last
        assert step is not None and step.tile is not None
        mover = state.to_move
        before = self.evaluations[k]
        following = self.evaluations[k + 1]
        after_value: float | None = None
        after_exact: bool | None = None
        if after.is_over:
            after_value, after_exact = float(result_value(after, mover)), True
        elif following is not None:
            same_player = after.to_move == mover  # the opponent had to pass
            after_value = following.value if same_player else -following.value
            after_exact = following.exact
        blunder = None
        if before is not None and before.exact:
            best = {move for move, _ in before.moves}
            if Move.placed(step) not in best:  # the move does worse than the position's value
                now = _OUTCOME.get(int(after_value)) if after_exact and after_value is not None else None
                was = _OUTCOME[int(before.value)]
                blunder = f"{was} -> {now}" if now else f"{was} -> worse"
        questionable = (
            blunder is None
            and before is not None
            and after_value is not None
            and not before.exact
            and before.value - after_value >= self.suspect_drop
        )
        return PlacementReview(
            number=k + 1,
            player=mover,
            card=step.card.notation,
            tile=step.tile,
            empty_tiles=len(state.empty_tiles()),
            legal_moves=len(state.legal_moves()),
            before=before,
            after_value=after_value,
            after_exact=after_exact,
            blunder=blunder,
            questionable=bool(questionable),
        )

    # ------------------------------------------------------------------ output

    def result_line(self) -> str:
        final = self.states[-1]
        if not final.is_over:
            return "the game is unfinished"
        outcome = final.outcome
        assert outcome is not None
        scores = f"lane scores {outcome.scores[0]}-{outcome.scores[1]}"
        how = {
            Termination.LANE_CONTROL: f"by controlling lane {outcome.lane}",
            Termination.FULL_BOARD: "on the full board",
            Termination.NO_MOVES: "when nobody could place",
        }.get(outcome.termination, str(outcome.termination))
        if outcome.winner is None:
            return f"a draw {how}, {scores}"
        return f"player {_SEAT[outcome.winner]} won {how}, {scores}"

    def text(self) -> str:
        """The review as a table, one line per placement, with a summary and the blunders."""
        solved = sum(1 for e in self.evaluations[:-1] if e is not None and e.exact)
        estimated = sum(1 for e in self.evaluations[:-1] if e is not None and not e.exact)
        missing = sum(1 for e in self.evaluations[:-1] if e is None)
        lines = [
            f"Review of {self.source or 'a replay'}: {len(self.placements)} placements, {self.result_line()}.",
        ]
        if self.partial:
            lines.append(f"PARTIAL REVIEW: interrupted; {missing} of {len(self.placements)} positions not evaluated.")
        if self.hands_revealed:
            lines.append(
                "This game was played with hidden hands; it is reviewed with both hands revealed: the values are "
                "what a player who saw both hands could achieve."
            )
        lines.append(
            f"Exact values: the solver ({self.max_nodes:,} nodes per position) solved {solved} of "
            f"{len(self.placements)} positions; {estimated} are estimates by {self.agent} (marked ~, not proven)."
        )
        lines.append(
            "Values are for the player to move: won / drawn / lost exactly, or ~+0.40 (estimate in [-1, 1]); "
            "'after' is the position the move led to, for the same player."
        )
        single = sum(1 for e in self.evaluations[:-1] if e is not None and e.distinct_games == 1)
        if single:
            lines.append(
                f"{single} of the estimates rest on {PLAYOUTS} identical self-play games ({self.agent} plays "
                "deterministically there): each is one game's result, not an average."
            )
        lines.append("")
        header = f"{'#':>3}  {'player':<6}  {'move':<10} {'empty':>5}  {'before':<8} {'after':<8} best moves"
        lines.append(header)
        lines.append("-" * len(header))
        for p in self.placements:
            move = f"{p.card} -> {p.tile}"
            before = _show_value(p.before.value, p.before.exact) if p.before else "?"
            after = _show_value(p.after_value, p.after_exact) if p.after_value is not None else "?"
            note = _best_text(p)
            if p.blunder:
                note = f"BLUNDER ({p.blunder}); {note}"
            elif p.questionable:
                note = f"questionable (estimate fell {p.before.value - p.after_value:.2f}); {note}"  # type: ignore[union-attr,operator]
            lines.append(
                f"{p.number:>3}  {_SEAT[p.player]:<6}  {move:<10} {p.empty_tiles:>5}  {before:<8} {after:<8} {note}"
            )
        lines.append("")
        if self.blunders:
            lines.append(f"Blunders (proven by the solver): {len(self.blunders)}")
            for p in self.blunders:
                lines.append(
                    f"  placement {p.number}: player {_SEAT[p.player]} played {p.card} on {p.tile}, {p.blunder}"
                )
        else:
            lines.append("Blunders (proven by the solver): none")
        questionable = [p for p in self.placements if p.questionable]
        if questionable:
            numbers = ", ".join(str(p.number) for p in questionable)
            lines.append(f"Questionable (estimates only, not proven): placements {numbers}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "source": self.source,
            "rules": dict(self.rules),
            "hands_revealed": self.hands_revealed,
            "max_nodes": self.max_nodes,
            "agent": self.agent,
            "seed": self.seed,
            "partial": self.partial,
            "result": None if not self.states[-1].is_over else _result_json(self.states[-1]),
            "value_meaning": "for the player to move: +1 won, 0 drawn, -1 lost (exact), or an estimate in [-1, 1]",
            "placements": [p.to_json() for p in self.placements],
            "blunders": [p.number for p in self.blunders],
            "questionable": [p.number for p in self.placements if p.questionable],
        }

    def write_json(self, path: str | Path) -> None:
        write_text(path, json.dumps(self.to_json(), indent=1) + "\n")

    def plot(self, path: str | Path) -> None:
        """A PNG: player 0's value over the game (exact and estimated, blunders marked) and the
        board after each blunder (or the final board when there is none)."""
        _plot(self, path)


# ---------------------------------------------------------------------- the text's parts


def _result_json(state: GameState) -> dict[str, Any]:
    outcome = state.outcome
    assert outcome is not None
    return {"winner": outcome.winner, "scores": list(outcome.scores), "termination": outcome.termination.value}


def _show_value(value: float | None, exact: bool | None) -> str:
    if value is None:
        return "?"
    if exact:
        return _OUTCOME[int(value)]
    return f"~{value:+.2f}"


def _best_text(p: PlacementReview, limit: int = 4) -> str:
    if p.before is None:
        return "not evaluated"
    moves = p.before.moves
    if p.before.exact:
        if p.before.value == -1 and len(moves) == p.legal_moves:
            return "every move loses"
        shown = ", ".join(f"{m.card} on {m.tile}" for m, _ in moves[:limit])
        more = f" (+{len(moves) - limit} more)" if len(moves) > limit else ""
        return f"best: {shown}{more}"
    if p.before.distinct_games == 1 and moves:  # one game played PLAYOUTS times: no share to show
        return (
            f"{p.before.method.split(' ')[0]} plays {moves[0][0].card} on {moves[0][0].tile} (its playouts: one game)"
        )
    shown = ", ".join(f"{m.card} on {m.tile}" + (f" {s:.0%}" if s is not None else "") for m, s in moves[:3])
    return f"{p.before.method.split(' ')[0]} prefers {shown}"


# ---------------------------------------------------------------------- reviewing a replay


def _load(replay: Replay | Mapping[str, Any] | str | Path) -> tuple[Replay, str | None]:
    if isinstance(replay, Replay):
        return replay, None
    if isinstance(replay, Mapping):
        return Replay.from_dict(replay), None
    if isinstance(replay, str | Path):
        return Replay.load(replay), str(replay)
    raise ArgumentError(f"review_replay needs a Replay, a replay dict or a path, got {type(replay).__name__}")


def check_review(agent: object, max_nodes: int) -> Player:
    """The estimating agent as a ``Player`` (``agents.spec.player``: a spec parsed, a policy wrapped; nothing
    built); bad arguments raise before any work starts."""
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int | np.integer) or max_nodes <= 0:
        raise ArgumentError(f"max_nodes must be a positive whole number, got {max_nodes!r}")
    return player(agent)


def review_replay(
    replay: Replay | Mapping[str, Any] | str | Path,
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    agent: object = DEFAULT_AGENT,
    seed: int = 0,
    progress: bool = False,
    suspect_drop: float = SUSPECT_DROP,
    solver: Solver | None = None,
    source: str | None = None,
) -> Review:
    """Review every placement of ``replay`` (a ``Replay``, its dict, or a path to its JSON).

    Positions the solver answers within ``max_nodes`` nodes get exact values and best moves;
    the others an estimate by ``agent``, labelled as one: any policy (``agents.spec.player``: a spec, an ``Agent``,
    a policy function, a ``BatchedPolicy``), named by its label. Ctrl-C
    raises ``RunInterrupted`` whose ``partial`` is the review of what was finished. ``source``
    names the replay in the text (default: its path, when given one).
    """
    who = check_review(agent, max_nodes)
    estimator = who.build()
    game, path = _load(replay)
    source = source or path
    states = [s for s in game.states() if s.phase != Phase.DRAFT]
    if not states:
        raise PositionError("the replay has no play phase: nothing to review")
    if len(states) < 2:
        raise PositionError("the replay has no placement: nothing to review")
    solver = solver or Solver()
    evaluations: list[Evaluation | None] = [None] * len(states)

    def review(partial: bool) -> Review:
        return Review(
            states, list(evaluations), dict(game.rules), int(max_nodes), who.label, seed, source, partial, suspect_drop
        )

    players: tuple[Agent, Agent] | None = None  # the two seats of the playouts, built once
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(states), desc="review", unit="position")
    try:
        # exact values from the end backwards (the table carries over), then estimates for the rest
        for k in reversed(range(len(states))):
            evaluations[k] = exact_evaluation(solver, states[k], int(max_nodes))
            if bar is not None and evaluations[k] is not None:
                bar.update(1)
        for k, state in enumerate(states):
            if evaluations[k] is not None:
                continue
            if isinstance(estimator, MCTSAgent):
                evaluations[k] = mcts_estimate(estimator, state, seed * 1_000_003 + k)
            else:
                players = players or (estimator, who.build())
                evaluations[k] = playout_estimate(who.label, players, state, seed * 1_000_003 + k)
            if bar is not None:
                bar.update(1)
    except KeyboardInterrupt:
        raise RunInterrupted(review(partial=True)) from None
    finally:
        if bar is not None:
            bar.close()
    return review(partial=False)


# ---------------------------------------------------------------------- the picture


def _plot(review: Review, path: str | Path) -> None:
    """Player 0's value after each placement (filled: exact, hollow: estimate, red X: a blunder),
    and below it the board right after each blunder (at most three), or the final board."""
    from matplotlib.figure import Figure

    from trinity_env.envs.image import render_rgb

    n = len(review.states)
    xs = np.arange(n)
    values = np.full(n, np.nan)
    exact = np.zeros(n, bool)
    for k, (state, evaluation) in enumerate(zip(review.states, review.evaluations)):
        if state.is_over:
            values[k], exact[k] = (0.0 if state.winner is None else (1.0 if state.winner == 0 else -1.0)), True
        elif evaluation is not None:
            values[k], exact[k] = value_for_player_0(evaluation.value, state.to_move), evaluation.exact
    blunders = review.blunders
    boards = [review.states[p.number] for p in blunders[:3]] or [review.states[-1]]
    titles = [
        f"after #{p.number}: {'white' if p.player == 0 else 'black'} {p.card} on {p.tile} ({p.blunder})"
        for p in blunders[:3]
    ] or ["final position"]

    fig = Figure(figsize=(11, 7.4), dpi=110, layout="constrained")
    grid = fig.add_gridspec(2, len(boards), height_ratios=[1.15, 1.0])
    ax = fig.add_subplot(grid[0, :])
    ax.axhline(0, color="#bbbbbb", lw=0.8)
    ax.plot(xs, values, color="#888888", lw=1, zorder=1)
    estimated = ~exact & ~np.isnan(values)
    if estimated.any():
        ax.fill_between(
            xs,
            -1.15,
            1.15,
            where=estimated,
            step="mid",
            color="#f3ead4",
            zorder=0,
            label=f"estimate ({review.agent}), not proven",
        )
    ax.scatter(xs[exact], values[exact], s=46, color="#2e3440", zorder=3, label="exact (solver)")
    ax.scatter(
        xs[estimated], values[estimated], s=46, facecolors="white", edgecolors="#2e3440", zorder=3, label="estimate"
    )
    for p in blunders:
        ax.scatter([p.number], [values[p.number]], marker="X", s=150, color="#bf616a", zorder=4)
        offset = (0, -18 if values[p.number] >= 0 else 10)
        who = "white" if p.player == 0 else "black"
        ax.annotate(
            f"#{p.number} {who}: {p.blunder}",
            (p.number, values[p.number]),
            textcoords="offset points",
            xytext=offset,
            ha="center",
            fontsize=8,
            color="#bf616a",
            bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.85},
        )
    if blunders:
        ax.scatter([], [], marker="X", s=80, color="#bf616a", label="blunder (proven)")
    labels = ["start"] + [
        f"{p.number}\n{'w' if p.player == 0 else 'b'} {p.card}\n\u2192{p.tile}" for p in review.placements
    ]
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(-1.15, 1.15)
    ax.set_yticks([-1, 0, 1])
    ax.set_yticklabels(["black wins  -1", "draw  0", "white wins  +1"], fontsize=8)
    ax.set_ylabel("value for white (player 0)", fontsize=9)
    title = f"Review: {review.result_line()}"
    if review.hands_revealed:
        title += " (hidden-hand game, reviewed with both hands revealed)"
    if review.partial:
        title += " [PARTIAL]"
    ax.set_title(title, fontsize=10, pad=22)
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=4, fontsize=8, frameon=False)
    for column, (state, caption) in enumerate(zip(boards, titles)):
        board = fig.add_subplot(grid[1, column])
        board.imshow(render_rgb(state))
        board.set_axis_off()
        board.set_title(caption, fontsize=8, color="#bf616a" if blunders else "black")
    write_figure(path, fig)
