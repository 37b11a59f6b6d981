"""The leaderboard's cards: every listed agent's score card under one protocol, written to docs/benchmark/.

    python -m scripts.make_leaderboard                       # the quick protocol, every agent below
    python -m scripts.make_leaderboard --agents greedy mcts:400 --protocol full

Each agent's card goes to ``docs/benchmark/<protocol>/<agent>/`` (``scorecard.json``, ``.md``, ``.png``); an agent
whose card is there already is skipped (a stopped run goes on where it stopped). ``docs/benchmark.md`` shows the
cards' headline figures, read from those files by its test (tests/test_docs.py).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from trinity_env.scorecard import PROTOCOLS, benchmark

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ("random", "greedy", "lookahead", "mcts:400", "ppo-standard", "az-standard:sims=0")
"""The shipped and built-in agents on the leaderboard, cheapest first."""


def folder_of(protocol: str, agent: str) -> Path:
    return ROOT / "docs" / "benchmark" / protocol / re.sub(r"[^A-Za-z0-9.=-]+", "_", agent)


def _cell(share: dict | None) -> str:
    if not share or share.get("share") is None:
        return "-"
    return f"{share['share']:.1%} [{share['low']:.1%}, {share['high']:.1%}]"


def leaderboard(protocol: str = "quick") -> str:
    """The leaderboard's table, from the cards in ``docs/benchmark/<protocol>/``: best rating first."""
    cards = [
        json.loads(path.read_text(encoding="utf-8"))
        for path in sorted((ROOT / "docs" / "benchmark" / protocol).glob("*/scorecard.json"))
    ]
    cards.sort(key=lambda card: -card["rating"]["elo"])
    head = "| agent | rating (random = 0) | moves keep the value at 10 empty | value sign at 10 | puzzles | endgames |"
    lines = [head, "|---|---|---|---|---|---|"]
    for card in cards:
        r = card["rating"]
        signs = card["value_sign"] or {}
        lines.append(
            f"| `{card['agent']}` | {r['elo']:+.0f} [{r['low']:+.0f}, {r['high']:+.0f}] | "
            f"{_cell(card['accuracy'].get('10'))} | {_cell(signs.get('10'))} | {_cell(card['puzzles'])} | "
            f"{_cell(card['endgames'])} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="+", default=list(AGENTS))
    parser.add_argument("--protocol", choices=sorted(PROTOCOLS), default="quick")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    for agent in args.agents:
        folder = folder_of(args.protocol, agent)
        if (folder / "scorecard.json").is_file():
            print(f"{agent}: already there ({folder})", flush=True)
            continue
        card = benchmark(agent, args.protocol, workers=args.workers)
        card.write(folder)
        print(f"{agent}: rating {card.rating['elo']:+.0f}, wrote {folder}", flush=True)
    print(leaderboard(args.protocol))


if __name__ == "__main__":
    main()
