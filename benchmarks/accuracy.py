"""Accuracy against perfect play of the shipped agents: the figures of docs/accuracy.md.

    python -m benchmarks.accuracy                      # every agent below, writes docs/accuracy/
    python -m benchmarks.accuracy --agents mcts:400    # some agents, printed only
    python -m benchmarks.accuracy --build              # go on building the position set first

Scores each agent on the shipped position set (``trinity_env/evaluation/data/accuracy.jsonl``,
``trinity_env.evaluation.accuracy``) and prints, beside the tables, the seconds each agent took
per position and the machine's load: the figures themselves do not depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from benchmarks import load_average
from trinity_env.evaluation.accuracy import (
    DEFAULT_SET,
    build_set,
    load_set,
    network_table,
    plot,
    random_expectation,
    score_agents,
    summary,
    table,
)

AGENTS = ["greedy", "mcts:400", "mcts:1600", "mcts:6400", "ppo-standard", "az-standard:sims=0", "az-standard"]
DOCS = Path(__file__).resolve().parents[1] / "docs" / "accuracy"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="*", default=None, help=f"default: {' '.join(AGENTS)} (and write docs/)")
    parser.add_argument("--build", action="store_true", help="go on building the position set first")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.build:
        print(build_set(DEFAULT_SET, progress=True).summary())
    positions = load_set(DEFAULT_SET)
    specs = args.agents if args.agents is not None else AGENTS
    load = load_average()
    print(f"{len(positions)} positions; load average {load} ({os.cpu_count()} CPUs)")
    results, seconds = [], {}
    for spec in specs:
        start = time.perf_counter()
        results += score_agents([spec], positions, seed=args.seed, progress=True)
        seconds[spec] = time.perf_counter() - start
        print(f"  {spec}: {seconds[spec] / len(positions) * 1000:.1f} ms a position")
    expected = random_expectation(positions)
    moves, heads = table(results, expected), network_table(results)
    print(moves)
    print(heads)
    if args.agents is None:
        DOCS.mkdir(exist_ok=True)
        (DOCS / "accuracy.md").write_text(moves + "\n", encoding="utf-8")
        (DOCS / "network.md").write_text(heads + "\n", encoding="utf-8")
        document = summary(results, DEFAULT_SET.name, positions)
        (DOCS / "accuracy.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
        plot(results, DOCS / "accuracy.png", expected)
        print(f"wrote {DOCS}/accuracy.md, network.md, accuracy.json, accuracy.png")


if __name__ == "__main__":
    main()
