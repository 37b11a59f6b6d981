"""RLlib self-play throughput: env steps per second with 1 and 2 env runners, same run.

Each setting trains ``--iterations`` iterations of configs/train/rllib.yaml (local Ray,
evaluation reduced to a token final one) and reports the median steps per second over
the iterations after the first (which includes start-up). Needs the rllib extra.

Usage: python -m benchmarks.rllib [--iterations N] [--runners 1 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from training.rllib_selfplay import RLlibConfig, train


def steps_per_second(runners: int, iterations: int) -> float:
    config = RLlibConfig.load(
        "rllib",
        num_env_runners=runners,
        eval_every_iterations=10**6,
        eval_games=2,
        eval_endgames=False,
        tensorboard=False,
    )
    with tempfile.TemporaryDirectory() as run:
        train(config, Path(run), iterations=iterations, progress=False)
        rows = [json.loads(line) for line in (Path(run) / "iterations.jsonl").read_text().splitlines()]
    return statistics.median(row["steps_per_second"] for row in rows[1:] or rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    rates = {runners: steps_per_second(runners, args.iterations) for runners in args.runners}
    print("RLlib self-play, env steps per second (sampling and learning; median over iterations)")
    for runners, rate in rates.items():
        print(f"  {runners} env runner(s): {rate:>8,.0f}")
    if len(rates) > 1:
        first, last = min(rates), max(rates)
        print(f"  ratio {last} / {first} runners: {rates[last] / rates[first]:.2f}")


if __name__ == "__main__":
    main()
