"""AEC steps per second under random legal play: trinity_env.env() against connect_four_v3.

Both environments run the same loop in the same process: ``env.last()``, a uniformly
random legal action from the mask (numpy, seeded), ``env.step()``, resetting when the game
ends. The figure that matters is the ratio; the target is at least 2 (issue 26). The load average
is printed before and after: a busy machine slows the two unevenly.

Usage: python -m benchmarks.env [--steps N] [--runs R] [--json]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Iterator

import numpy as np

from benchmarks import load_average, report


def steps_per_second(make_env, n_steps: int, seed: int) -> float:
    env = make_env()
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = 0
    start = time.perf_counter()
    while steps < n_steps:
        for agent in env.agent_iter():
            observation, reward, termination, truncation, info = env.last()
            if termination or truncation:
                action = None
            else:
                action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
            env.step(action)
            steps += 1
            del agent, reward, info
        env.reset()
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50_000, help="AEC steps per run and env (default 50000)")
    parser.add_argument("--runs", type=int, default=3, help="runs; the median is reported (default 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()

    warnings.filterwarnings("ignore")
    from pettingzoo.classic import connect_four_v3

    import trinity_env

    load_before = load_average()
    ours, theirs = [], []
    for run in range(args.runs):
        ours.append(steps_per_second(trinity_env.env, args.steps, seed=run))
        theirs.append(steps_per_second(connect_four_v3.env, args.steps, seed=run))
    result = {
        "trinity_steps_per_s": statistics.median(ours),
        "connect_four_steps_per_s": statistics.median(theirs),
    }
    result["ratio"] = result["trinity_steps_per_s"] / result["connect_four_steps_per_s"]
    report(result, args.json, text(result, args.runs, args.steps), load_before)


def text(result: dict, runs: int, steps: int) -> Iterator[str]:
    """The figures of ``main``'s result, for a person."""
    yield f"AEC steps/s, random legal play, median of {runs} runs of {steps} steps"
    yield f"  trinity_env.env()        : {result['trinity_steps_per_s']:>9,.0f}"
    yield f"  connect_four_v3.env()    : {result['connect_four_steps_per_s']:>9,.0f}"
    yield f"  ratio (target >= 2)      : {result['ratio']:>9.2f}"


if __name__ == "__main__":
    main()
