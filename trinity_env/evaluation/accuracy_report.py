"""Accuracy against perfect play, presented: the Markdown tables, the plot and the JSON document of
``trinity accuracy`` (``trinity_env.evaluation.accuracy`` builds, loads and scores the position set)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trinity_env.core.writes import write_figure
from trinity_env.evaluation.accuracy import AgentAccuracy, Position, random_expectation


def table(results: Sequence[AgentAccuracy], expected: dict[int, float] | None = None) -> str:
    """Markdown: moves that keep the value [95% interval], by empty count (rows) and agent (columns), with the
    positions counted and, given ``expected`` (``random_expectation``), a random mover's share."""
    counts = sorted({c.empty for r in results for c in r.counts})
    extra = ["random mover"] if expected else []
    lines = [
        "| empty | positions | " + " | ".join([r.agent for r in results] + extra) + " |",
        "|---:|---:|" + "---|" * (len(results) + len(extra)),
    ]
    for empty in counts:
        totals = {c.moves.total for r in results for c in r.counts if c.empty == empty}
        cells = [" / ".join(str(t) for t in sorted(totals))]
        for r in results:
            row = next((c for c in r.counts if c.empty == empty), None)
            cells.append(row.moves.text() if row else "-")
        if expected:
            cells.append(f"{expected[empty]:.1%}" if empty in expected else "-")
        lines.append(f"| {empty} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def network_table(results: Sequence[AgentAccuracy]) -> str:
    """Markdown: for the agents that play a network, the value head and raw policy by empty count."""
    networks = [r for r in results if any(c.value_sign is not None for c in r.counts)]
    if not networks:
        return ""
    lines = ["| agent | empty | value sign | value MSE | policy top-1 keeps the value |", "|---|---:|---|---:|---|"]
    for r in networks:
        for c in r.counts:
            if c.value_sign is not None:
                policy = c.policy.text() if c.policy else "-"
                lines.append(f"| {r.agent} | {c.empty} | {c.value_sign.text()} | {c.value_error:.3f} | {policy} |")
    return "\n".join(lines)


def plot(results: Sequence[AgentAccuracy], path: str | Path, expected: dict[int, float] | None = None) -> None:
    """Accuracy by empty count, one line per agent with its 95% interval as a band (and a random mover's
    expected share, dashed, given ``expected``)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.2), dpi=110)
    ax = fig.add_subplot()
    for r in results:
        xs = [c.empty for c in r.counts if c.moves.total]
        shares = [c.moves.value for c in r.counts if c.moves.total]
        lows = [c.moves.interval[0] for c in r.counts if c.moves.total]
        highs = [c.moves.interval[1] for c in r.counts if c.moves.total]
        (line,) = ax.plot(xs, shares, marker="o", ms=3, label=r.agent)
        ax.fill_between(xs, lows, highs, alpha=0.15, color=line.get_color())
    if expected:
        ax.plot(list(expected), list(expected.values()), ls="--", color="#888888", label="random mover")
    ax.set_xlabel("empty tiles")
    ax.set_ylabel("moves that keep the exact value")
    ax.set_ylim(0, 1.0)
    ax.yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    ax.set_title("Accuracy against perfect play")
    fig.tight_layout()
    write_figure(path, fig)


def summary(
    results: Sequence[AgentAccuracy], source: str, positions: Sequence[Position], partial: bool = False
) -> dict[str, Any]:
    """The JSON document ``trinity accuracy --json`` writes."""
    counts = {e: sum(1 for p in positions if p.empty == e) for e in sorted({p.empty for p in positions})}
    expected = random_expectation(positions)
    return {
        "set": source,
        "positions": {str(e): n for e, n in counts.items()},
        "partial": partial,
        "random_mover": {str(e): share for e, share in expected.items()},
        "agents": [r.to_json() for r in results],
    }
