"""MCTS simulations per second on one core, in the draft and mid-game (open hands).

Searches run as the agent runs them: ``run_search``, in chunks that return to Python
between them (so Ctrl-C stops a long search); ``--one-call`` runs the kernel in a single
call instead, to measure what the chunks cost.

Usage: python -m benchmarks.mcts [--simulations N] [--positions P] [--one-call]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

import numba
import numpy as np

from benchmarks import load_average
from trinity_env.agents.mcts import BRANCHING, search_rows
from trinity_env.agents.view import decode
from trinity_env.core import GameState
from trinity_env.search.mcts import Tree, run_search, search
from trinity_env.spec.observation import encode_observation


def rate(state: GameState, simulations: int, seed: int, one_call: bool = False) -> float:
    rows = search_rows(decode(encode_observation(state, state.to_move, True)).batch)
    tree = Tree(simulations * BRANCHING + 512)
    tree.clear(1)
    rng = np.random.default_rng(seed).integers(1, 2**63, 2, dtype=np.uint64)
    start = time.perf_counter()
    if one_call:
        search(*rows, 0, simulations, 0.7, 0.5, rng, *tree.arrays())
    else:
        run_search(rows, 0, simulations, 0.7, 0.5, rng, tree)
    return simulations / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=50_000)
    parser.add_argument("--positions", type=int, default=5)
    parser.add_argument("--one-call", action="store_true", help="one kernel call per search, no chunks")
    args = parser.parse_args()
    numba.set_num_threads(1)
    rng = random.Random(0)
    rate(GameState.new_game(), 10, 0, args.one_call)  # compile or load the kernels first
    phases = {"draft (first pick)": [], "mid-game (after 4 placements)": []}
    for p in range(args.positions):
        state = GameState.new_game(first_player=rng.randint(0, 1))
        phases["draft (first pick)"].append(rate(state, args.simulations, p, args.one_call))
        while state.phase == "draft":
            state = state.apply(rng.choice(state.legal_actions()))
        for _ in range(4):
            state = state.apply(rng.choice(state.legal_actions()))
        phases["mid-game (after 4 placements)"].append(rate(state, args.simulations, p, args.one_call))
    how = "one kernel call" if args.one_call else "in chunks"
    print(f"MCTS, {args.simulations} simulations per search ({how}), one core, median of {args.positions} positions")
    for name, rates in phases.items():
        print(f"  {name:<30}: {statistics.median(rates):>10,.0f} simulations/s")
    print("target: at least 50,000 simulations/s mid-game")
    print("load average " + load_average() + f" ({os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
