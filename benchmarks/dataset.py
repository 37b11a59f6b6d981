"""What the solved-positions dataset costs to build: the figures of docs/dataset.md.

    python -m benchmarks.dataset                 # 100 games of the default build, printed
    python -m benchmarks.dataset --games 200 --write   # also write docs/dataset/cost.md

Plays the default build's first games (``trinity dataset build``: ``mcts:200`` against
itself, 4-10 empty tiles, every value-keeping move recorded at 4-9) and times, in one process,
the playing and the labelling by empty count (the value, and the value-keeping moves where the
build records them; CPU time, so a shared machine slows the wall clock, not these figures much),
the bytes a position takes in a shard, and what a million positions would take on one core at
that rate.
The load average is printed beside them.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from benchmarks import load_average
from trinity_env.agents.spec import make
from trinity_env.evaluation.solved_build import build_shard, game_positions, label
from trinity_env.evaluation.solved_format import DEFAULT_AGENT, DEFAULT_EMPTY, check_policy_empty, shard_bytes
from trinity_env.search.solver import Solver

DOCS = Path(__file__).resolve().parents[1] / "docs" / "dataset" / "cost.md"


def measure(games: int, seed: int = 0) -> str:
    """A markdown table of the costs, measured on ``games`` games of the default build."""
    agent, solver = make(DEFAULT_AGENT), Solver()
    policy = check_policy_empty("auto", DEFAULT_EMPTY)
    solver.solve(game_positions(agent, seed, 0, DEFAULT_EMPTY)[-1])  # compile before timing
    playing = 0.0
    solving: dict[int, list[float]] = {}
    for game in range(games):
        start = time.process_time()
        states = game_positions(agent, seed, game, DEFAULT_EMPTY)
        playing += time.process_time() - start
        for state in states:
            start = time.process_time()
            label(solver, state, policy)
            solving.setdefault(len(state.empty_tiles()), []).append(time.process_time() - start)
    positions = sum(len(times) for times in solving.values())
    solved = sum(sum(times) for times in solving.values())
    per_position = (playing + solved) / positions
    # the shard's size from the real builder: it replays the games, its values already in the solver's table
    size = len(shard_bytes(build_shard(0, agent, solver, seed, DEFAULT_EMPTY, games, policy_empty=policy)))
    lines = [
        f"{games} games of `{DEFAULT_AGENT}` against itself, {positions:,} positions "
        f"({positions / games:.1f} a game); CPU time a position:",
        "",
        "| | CPU time a position |",
        "|---|---|",
        f"| playing the games | {playing / positions * 1000:.1f} ms ({playing / (playing + solved):.0%}) |",
    ]
    for empty in sorted(solving):
        times = solving[empty]
        share = sum(times) / solved
        what = "value and best moves" if policy and policy[0] <= empty <= policy[1] else "value"
        lines.append(
            f"| solving, {empty} empty ({len(times)}; {what}) | {sum(times) / len(times) * 1000:.1f} ms "
            f"({share:.0%} of solving) |"
        )
    lines += [
        f"| all | {per_position * 1000:.1f} ms: {1 / per_position:.0f} positions a second a core |",
        "",
        f"A shard of these {games} games takes {size / positions:.1f} bytes a position; a million positions "
        f"take about {1e6 * per_position / 3600:.1f} hours of one core at this rate.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--write", action="store_true", help=f"also write {DOCS.relative_to(DOCS.parents[2])}")
    args = parser.parse_args()
    print("load average " + load_average() + f" ({os.cpu_count()} CPUs)")
    table = measure(args.games)
    print(table)
    if args.write:
        DOCS.write_text(table + "\n", encoding="utf-8")
        print(f"wrote {DOCS}")


if __name__ == "__main__":
    main()
