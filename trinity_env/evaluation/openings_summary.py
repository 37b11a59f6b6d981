"""Solved openings summarised: the designers' figures from the records of a solved-openings file (the share of
solved deals the first mover wins, with bounds over every deal, the first placements that keep the value, the
unsolved deals), as JSON (``summarise``, ``file_summary``) and as text (``summary_text``).

``trinity_env.evaluation.openings`` solves the deals; ``trinity_env.evaluation.openings_file`` reads and writes the
file.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trinity_env.evaluation.openings_file import OpeningsError, read_records
from trinity_env.evaluation.ratings import Share


def _bounds(wins: int, unsolved: int, deals: int) -> dict[str, Any] | None:
    """The first player's share of wins over every deal, with each unsolved deal counted first as
    not a win (``low``), then as a win (``high``); ``interval`` is the 95% Wilson interval that
    covers both (from the low count's lower end to the high count's upper end)."""
    if not deals:
        return None
    return {
        "low": wins / deals,
        "high": (wins + unsolved) / deals,
        "interval": [Share(wins, deals).interval[0], Share(wins + unsolved, deals).interval[1]],
        "n": deals,
    }


def mover_tile(tile: int, first_player: int) -> int:
    """``tile`` as the first player sees it from their own tower: player 1's tower is at position 4,
    so their tiles are mirrored (position p becomes 4 - p); player 0's are as they are."""
    lane, position = divmod(tile, 5)
    return tile if first_player == 0 else 5 * lane + 4 - position


def summarise(records: Iterable[dict], top: int = 10) -> dict[str, Any]:
    """The designers' figures from solved-openings records: the share of solved deals the first
    player wins, draws and loses under perfect play (Wilson 95% intervals), the count solved and
    unsolved, the share of all deals the first player wins whatever the unsolved ones hold
    (``wins_all_deals``: bounds, since the solved deals are not a fair sample of them: an opening
    the first player does not win is the dearer to solve, every first placement needing its
    refutation), and the ``top`` best first placements (card and tile as placed) and tiles (seen from
    the first player's tower) by the number of solved deals in which they keep the value."""
    records = sorted(records, key=lambda r: r["seed"])
    solved = [r for r in records if r["solved"]]
    unsolved = [r for r in records if not r["solved"]]
    outcomes = Counter(r["value"] for r in solved)
    placements: Counter = Counter()
    tiles: Counter = Counter()
    for r in solved:
        placements.update({(m["card"], m["tile"]) for m in r["best_moves"]})
        tiles.update({mover_tile(m["tile"], r["first_player"]) for m in r["best_moves"]})
    order = lambda item: (-item[1], item[0])  # noqa: E731 - most deals first, then by name: deterministic
    nodes = [r["nodes"] for r in solved]
    lost = [r["nodes"] for r in unsolved]
    seconds = [r["seconds"] for r in solved if isinstance(r.get("seconds"), int | float)]
    return {
        "deal": records[0]["deal"] if records else None,
        "deals": len(records),
        "solved": len(solved),
        "unsolved": len(unsolved),
        "seeds": [records[0]["seed"], records[-1]["seed"]] if records else None,
        "budget_nodes": sorted({r["budget_nodes"] for r in records}),
        "first_player": {
            "wins": Share(outcomes[1], len(solved)).to_json(),
            "draws": Share(outcomes[0], len(solved)).to_json(),
            "losses": Share(outcomes[-1], len(solved)).to_json(),
        },
        "wins_all_deals": _bounds(outcomes[1], len(unsolved), len(records)),
        "all_best_moves": sum(r["all_best_moves"] for r in solved),
        "placements": [{"card": c, "tile": t, "deals": n} for (c, t), n in sorted(placements.items(), key=order)[:top]],
        "tiles": [{"tile": t, "deals": n} for t, n in sorted(tiles.items(), key=order)[:top]],
        "nodes_solved": {"median": statistics.median(nodes), "max": max(nodes)} if nodes else None,
        "nodes_unsolved": {"median": statistics.median(lost), "max": max(lost)} if lost else None,
        "seconds_solved": {"median": statistics.median(seconds), "max": max(seconds)} if seconds else None,
        "unsolved_seeds": [r["seed"] for r in unsolved][:100],
    }


def summary_text(summary: dict[str, Any], source: str = "") -> str:
    """The summary in a few lines, for people."""
    where = f" in {source}" if source else ""
    if not summary["deals"]:
        return f"no deals recorded{where}"
    budgets = ", ".join(f"{b:,}" for b in summary["budget_nodes"])
    lines = [
        f"{summary['deals']} deals{where} (seeds {summary['seeds'][0]}-{summary['seeds'][1]}, {summary['deal']}): "
        f"{summary['solved']} solved, {summary['unsolved']} unsolved within {budgets} nodes"
    ]
    first = summary["first_player"]
    if summary["solved"]:
        lines.append(
            f"the first player under perfect play: wins {Share.from_json(first['wins']).text()}, "
            f"draws {Share.from_json(first['draws']).text()}, loses {Share.from_json(first['losses']).text()} "
            f"of {summary['solved']} solved deals"
        )
        shown = ", ".join(f"{p['card']} on tile {p['tile']} ({p['deals']})" for p in summary["placements"])
        lines.append(
            f"best first placements (solved deals where each keeps the value; every best placement "
            f"found in {summary['all_best_moves']} of {summary['solved']}): {shown}"
        )
        tiles = ", ".join(f"{t['tile']} ({t['deals']})" for t in summary["tiles"])
        lines.append(f"best first tiles, seen from the first player's tower: {tiles}")
        nodes, seconds = summary["nodes_solved"], summary["seconds_solved"]
        timing = f", {seconds['median']:,.1f} s (max {seconds['max']:,.1f} s)" if seconds else ""
        lines.append(f"per solved deal: median {nodes['median']:,.0f} nodes (max {nodes['max']:,}){timing}")
    if summary["unsolved"]:
        bounds = summary["wins_all_deals"]
        low, high = bounds["interval"]
        lines.append(
            f"over all {summary['deals']} deals, each unsolved one counted as not won, then as won: "
            f"the first player wins {bounds['low']:.1%} to {bounds['high']:.1%} "
            f"(95%: [{low:.1%}, {high:.1%}])"
        )
        nodes = summary["nodes_unsolved"]
        lines.append(
            f"unsolved deals spent a median {nodes['median']:,.0f} nodes; seeds "
            + " ".join(str(s) for s in summary["unsolved_seeds"])
            + (" ..." if summary["unsolved"] > len(summary["unsolved_seeds"]) else "")
        )
    return "\n".join(lines)


def file_summary(path: str | Path) -> dict[str, Any]:
    """``summarise`` of every record of a solved-openings file, with the file's name in ``"file"``;
    ``OpeningsError`` for a file that is not one or holds no deal."""
    records = read_records(path)
    if not records:
        raise OpeningsError(f"{path}: no solved-openings records in it")
    return {"file": str(path)} | summarise(records.values())
