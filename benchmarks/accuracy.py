"""Accuracy against perfect play of the shipped agents: the figures of docs/accuracy.md.

    python -m benchmarks.accuracy                      # every agent below, writes docs/accuracy/
    python -m benchmarks.accuracy --agents mcts:400    # some agents, printed only
    python -m benchmarks.accuracy --build              # go on building the position set first
    python -m benchmarks.accuracy --rescore az-standard:sims=0 az-standard
                                                       # score these again, keep the others' figures

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
    AgentAccuracy,
    build_set,
    load_set,
    random_expectation,
    score_agents,
)
from trinity_env.evaluation.accuracy_report import network_table, plot, summary, table

AGENTS = ["greedy", "mcts:400", "mcts:1600", "mcts:6400", "ppo-standard", "az-standard:sims=0", "az-standard"]
DOCS = Path(__file__).resolve().parents[1] / "docs" / "accuracy"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="*", default=None, help=f"default: {' '.join(AGENTS)} (and write docs/)")
    parser.add_argument("--build", action="store_true", help="go on building the position set first")
    parser.add_argument(
        "--rescore",
        nargs="+",
        metavar="AGENT",
        default=None,
        help="score these agents of the default list again (a new network) and keep the other "
        "agents' figures from docs/accuracy/accuracy.json; rewrites docs/",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.rescore is not None and (args.agents is not None or args.build):
        parser.error("--rescore keeps figures measured on the set as it is: it excludes --agents and --build")
    kept = _kept_results(args.rescore, parser.error) if args.rescore is not None else {}
    if args.build:
        print(build_set(DEFAULT_SET, progress=True).summary())
    positions = load_set(DEFAULT_SET)
    specs = args.agents if args.agents is not None else [a for a in AGENTS if a not in kept]
    load = load_average()
    print(f"{len(positions)} positions; load average {load} ({os.cpu_count()} CPUs)")
    results, seconds = [], {}
    for spec in specs:
        start = time.perf_counter()
        results += score_agents([spec], positions, seed=args.seed, progress=True)
        seconds[spec] = time.perf_counter() - start
        print(f"  {spec}: {seconds[spec] / len(positions) * 1000:.1f} ms a position")
    if kept:
        scored = {r.agent: r for r in results}
        results = [kept[a] if a in kept else scored[a] for a in AGENTS]
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


def _kept_results(rescore: list[str], error) -> dict[str, AgentAccuracy]:
    """The figures of every default agent not in ``rescore``, read back from the written document (which
    must score the same position set, and every one of them)."""
    unknown = [a for a in rescore if a not in AGENTS]
    if unknown:
        error(f"--rescore: {', '.join(unknown)} is not one of the default agents ({' '.join(AGENTS)})")
    written = DOCS / "accuracy.json"
    try:
        document = json.loads(written.read_text(encoding="utf-8"))
    except (OSError, ValueError) as problem:
        error(f"--rescore needs a complete {written}: {problem}")
    if document.get("set") != DEFAULT_SET.name or document.get("partial"):
        error(f"--rescore: {written} is partial or scores another set than {DEFAULT_SET.name}")
    found = {a["agent"]: AgentAccuracy.from_json(a) for a in document.get("agents", [])}
    missing = [a for a in AGENTS if a not in rescore and a not in found]
    if missing:
        error(f"--rescore: {written} lacks {', '.join(missing)}; score every agent (no --rescore)")
    return {a: found[a] for a in AGENTS if a not in rescore}


if __name__ == "__main__":
    main()
