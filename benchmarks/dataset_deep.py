"""How far a node budget takes the solved-positions dataset past 10 empty tiles: the table of docs/dataset.md.

    python -m benchmarks.dataset_deep                      # 25 games, budgets 1e6 1e7 1e8, printed
    python -m benchmarks.dataset_deep --games 25 --write   # also write docs/dataset/deep_budget.json

Plays the default agent's games on the dataset's own game seeds (what ``trinity dataset build DIR --empty 11-12
--max-nodes N`` plays) and labels their positions with 11 and 12 empty tiles as such a build does, once per budget:
``solved_build.label`` under the budget, a fresh solver a game, 12 empty tiles first. For each budget and empty count
it prints the share of positions settled within the budget, the CPU time (of the process, the solver's thread
included, so a shared machine changes it little) spent a position tried and a label kept (everything spent,
over-budget positions too, over the labels), and the share of wins among the labels (for the player to move: the
bias of a budget shows there, against the largest budget's). The load average is printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from benchmarks import load_average
from trinity_env.agents.spec import make
from trinity_env.arguments import whole_number
from trinity_env.evaluation.solved_build import game_positions, label
from trinity_env.evaluation.solved_format import DEFAULT_AGENT, MOST_MAX_NODES
from trinity_env.search.solver import Solver

DOCS = Path(__file__).resolve().parents[1] / "docs" / "dataset" / "deep_budget.json"
EMPTY = (11, 12)
BUDGETS = (1_000_000, 10_000_000, 100_000_000)


def measure(games: int, budgets: tuple[int, ...], seed: int = 0) -> list[dict[str, object]]:
    """A row per budget and empty count (and one for both counts): positions tried and settled, CPU seconds."""
    agent = make(DEFAULT_AGENT)
    played = [game_positions(agent, seed, game, EMPTY) for game in range(games)]
    label(Solver(), played[0][0], None, 100_000)  # compile (the hints' search too) before timing
    rows: list[dict[str, object]] = []
    for budget in budgets:
        tried: dict[int, list[tuple[bool, float, int]]] = {count: [] for count in range(EMPTY[1], EMPTY[0] - 1, -1)}
        for states in played:
            solver = Solver()  # as the build: a fresh solver a game
            for state in states:
                start = time.process_time()
                labelled = label(solver, state, None, budget)
                seconds = time.process_time() - start
                tried[len(state.empty_tiles())].append((labelled is not None, seconds, labelled and labelled[0]))
        for count, results in [*tried.items(), (None, [r for rs in tried.values() for r in rs])]:
            settled = [r for r in results if r[0]]
            cpu = sum(r[1] for r in results)
            rows.append(
                {
                    "max_nodes": budget,
                    "empty": "11-12" if count is None else count,
                    "positions": len(results),
                    "settled": len(settled),
                    "share": round(len(settled) / len(results), 4) if results else None,
                    "cpu_s_per_position": round(cpu / len(results), 3) if results else None,
                    "cpu_s_per_label": round(cpu / len(settled), 3) if settled else None,
                    "win_share": round(sum(r[2] == 1 for r in settled) / len(settled), 4) if settled else None,
                }
            )
    return rows


def table(rows: list[dict[str, object]]) -> str:
    """The rows as the markdown table docs/dataset.md quotes."""
    lines = [
        "| budget (nodes) | empty | positions | settled within it | CPU a position | CPU a label | wins among labels |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        share = "-" if row["share"] is None else f"{row['share']:.1%}"
        label_cpu = "-" if row["cpu_s_per_label"] is None else f"{row['cpu_s_per_label']:.3f} s"
        wins = "-" if row["win_share"] is None else f"{row['win_share']:.1%}"
        lines.append(
            f"| {row['max_nodes']:,} | {row['empty']} | {row['positions']} | {row['settled']} ({share}) | "
            f"{row['cpu_s_per_position']:.3f} s | {label_cpu} | {wins} |"
        )
    return "\n".join(lines)


def _processor() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=whole_number(1, 10_000), default=25, help="games played (default 25)")
    parser.add_argument(
        "--budgets",
        type=whole_number(1, MOST_MAX_NODES),
        nargs="+",
        default=list(BUDGETS),
        help="node budgets to try (default 1000000 10000000 100000000)",
    )
    parser.add_argument("--write", action="store_true", help=f"also write {DOCS.relative_to(DOCS.parents[2])}")
    args = parser.parse_args()
    before = load_average()
    print(f"load average {before} ({os.cpu_count()} CPUs)")
    start = time.process_time()
    rows = measure(args.games, tuple(args.budgets))
    text = table(rows)
    print(text)
    cpu = time.process_time() - start
    print(f"{cpu:.0f} s of CPU in all; load average now {load_average()}")
    if args.write:
        document = {
            "agent": DEFAULT_AGENT,
            "seed": 0,
            "empty": list(EMPTY),
            "games": args.games,
            "budgets": list(args.budgets),
            "processor": _processor(),
            "load_average_before": before,
            "load_average_after": load_average(),
            "cpu_s": round(cpu, 1),
            "rows": rows,
            "table": text,
        }
        DOCS.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {DOCS}")


if __name__ == "__main__":
    main()
