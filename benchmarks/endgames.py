"""The endgame suite: build it (solved positions, JSONL) and score agents on it.

    python -m benchmarks.endgames --build [--count 60] [--seed 0]   # re-create the suite
    python -m benchmarks.endgames --agents random greedy lookahead mcts:400

The suite ships in the package (trinity_env/evaluation/data/endgames.jsonl), so training
runs can score agents on it without rebuilding it.
"""

from __future__ import annotations

import argparse
import time

from trinity_env.agents import make
from trinity_env.evaluation.endgames import DEFAULT_SUITE, build_suite, load_suite, save_suite, score_agent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", action="store_true", help="build and save the suite first")
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--path", default=str(DEFAULT_SUITE))
    parser.add_argument("--agents", nargs="*", default=["random", "greedy", "lookahead", "mcts:400"])
    args = parser.parse_args()
    if args.build:
        start = time.perf_counter()
        suite = build_suite(args.count, args.seed)
        save_suite(suite, args.path)
        print(f"built {len(suite)} positions in {time.perf_counter() - start:.0f} s -> {args.path}")
    suite = load_suite(args.path)
    empties = sorted(e.empty for e in suite)
    print(f"suite: {len(suite)} won positions, {empties[0]}-{empties[-1]} empty tiles")
    for spec in args.agents:
        print(f"  {spec:<14} finds a winning move in {score_agent(make(spec), suite):6.1%} of them")


if __name__ == "__main__":
    main()
