"""Random-legal-play placements per second: the core against the numba engine.

In one run: (a) the pure-Python core, (b) the fast engine one game at a time (one kernel
call per game), (c) the fast engine batched at B = 64, 1024, 4096, on one thread and on
two. Every figure is the play phase from dealt hands (the standard deck), counted in
placements; ratios are to (a), measured in the same run. Also (d): a naive one-thread numba
kernel written only for this benchmark (random cards, random empty tiles, simple captures: no
A, no domino, no lane wins, no masks), the floor a game this size allows; the batched engine's
target is to match it. (e): ``FastGames.step`` in lockstep as training uses it (B = 1024 games with
the draft, random legal actions, restarts), alone and with every step's observations and masks.
And how long a fresh process takes to import the engine and make its first call with numba's
cache warm. The load average is printed before and after.

Usage: python -m benchmarks.fast [--quick] [--json]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

import numba
import numpy as np

from benchmarks import load_average, report
from benchmarks.engine import play_phase  # the core's play-phase loop
from trinity_env.fast import kernels
from trinity_env.fast.games import FastGames

SIZES = (64, 1024, 4096)


@numba.njit(cache=True)
def _naive_playouts(hands: np.ndarray, seed: int) -> int:  # pragma: no cover - compiled
    """One random game per row of ``hands`` ([games, 2, 8, 4] side values, dealt beforehand as the
    engine's games are) on a 3 x 5 grid, simple captures only; the placements made."""
    np.random.seed(seed)
    sides = np.zeros((15, 4), np.int8)  # top, right, bottom, left
    owner = np.empty(15, np.int8)
    order = np.empty((2, 8), np.int64)
    done = 0
    for game in range(hands.shape[0]):
        owner[:] = -1
        for p in range(2):
            for i in range(8):
                order[p, i] = i
        left = [8, 8]
        player = 0
        for _ in range(15):
            tile = np.random.randint(15)
            while owner[tile] >= 0:
                tile = np.random.randint(15)
            k = np.random.randint(left[player])
            card = order[player, k]
            order[player, k] = order[player, left[player] - 1]
            left[player] -= 1
            for side in range(4):
                sides[tile, side] = hands[game, player, card, side]
            owner[tile] = player
            row, col = tile // 5, tile % 5
            for side in range(4):
                r = row - 1 if side == 0 else row + 1 if side == 2 else row
                c = col + 1 if side == 1 else col - 1 if side == 3 else col
                if 0 <= r < 3 and 0 <= c < 5:
                    n = r * 5 + c
                    if owner[n] == 1 - player and sides[tile, side] > sides[n, (side + 2) % 4]:
                        owner[n] = player
            done += 1
            player = 1 - player
    return done


def naive(min_placements: int, seed: int) -> float:
    """Placements per second of the naive kernel on one thread (compiled or loaded, and the hands dealt,
    before the timing)."""
    hands = np.random.default_rng(seed).integers(1, 10, (min_placements // 15 + 1, 2, 8, 4), dtype=np.int8)
    _naive_playouts(hands[:2], seed)
    start = time.perf_counter()
    placements = _naive_playouts(hands, seed)
    return placements / (time.perf_counter() - start)


def starts(size: int, seed: int) -> tuple[np.ndarray, ...]:
    """``size`` new games with dealt hands, as batch arrays plus their random streams."""
    games = FastGames(size, seed=seed, draft="dealt")
    return (*(a.copy() for a in games.batch), games.rng.copy())


def batched(size: int, threads: int, min_placements: int, seed: int) -> float:
    """Placements per second of whole random playouts of ``size`` games at once."""
    kernel = kernels.random_playouts if threads == 1 else kernels.random_playouts_parallel
    numba.set_num_threads(threads)
    kernel(*starts(8, seed))  # compile or load from cache outside the timing
    placements, seconds, round_ = 0, 0.0, 0
    while placements < min_placements:
        arrays = starts(size, seed + round_)
        start = time.perf_counter()
        placements += kernel(*arrays)
        seconds += time.perf_counter() - start
        round_ += 1
    return placements / seconds


def lockstep(size: int, steps: int, seed: int, observe: bool) -> float:
    """Steps per second of ``FastGames.step`` (one thread): ``size`` games with the draft, each taking a
    random legal action, finished games restarted; with ``observe``, also every step's observations and
    masks, as a training loop reads them (none of these kernels is parallel)."""
    games = FastGames(size, seed=seed)
    live = np.arange(size)
    for _ in range(31):  # compile or load, and mix the games' phases before the timing
        games.step(games.random_actions(live))
    start = time.perf_counter()
    for _ in range(steps):
        games.step(games.random_actions(live))
        if observe:
            games.observations(), games.masks()
    return steps * size / (time.perf_counter() - start)


def one_at_a_time(n_games: int, seed: int) -> float:
    """Placements per second when each game is its own kernel call (as a search would use it)."""
    arrays = starts(n_games, seed)
    rows = [tuple(a[b : b + 1].copy() for a in arrays) for b in range(n_games)]
    kernels.random_playouts(*starts(1, seed))
    placements = 0
    start = time.perf_counter()
    for row in rows:
        placements += kernels.random_playouts(*row)
    return placements / (time.perf_counter() - start)


_FIRST_CALL = (
    "import time; t = time.perf_counter()\n"
    "from trinity_env.fast.games import FastGames\n"
    "from trinity_env.fast import kernels\n"
    "g = FastGames(8, seed=0, draft='dealt'); kernels.random_playouts(*g.batch, g.rng)\n"
    "print(time.perf_counter() - t)"
)


def first_call_seconds(cache_dir: str | None = None) -> float:
    """Seconds for a new interpreter to import the engine and run its first batch.

    With ``cache_dir`` (an empty folder) numba compiles everything: the cold cost.
    Without it, the project's cache is warmed by a first run, then the second is timed.
    """
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    else:
        subprocess.run([sys.executable, "-c", _FIRST_CALL], check=True, capture_output=True)
    out = subprocess.run([sys.executable, "-c", _FIRST_CALL], check=True, capture_output=True, text=True, env=env)
    return float(out.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller budgets: the whole run well under a minute")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    runs = 3
    core_games = 1000 if args.quick else 3000
    budget = 300_000 if args.quick else 2_000_000

    load_before = load_average()
    core = statistics.median(_core_rate(core_games, args.seed + r) for r in range(runs))
    single = one_at_a_time(2000 if args.quick else 10_000, args.seed)
    figures = {}
    for threads in (1, 2):
        for size in SIZES:
            figures[(size, threads)] = statistics.median(
                batched(size, threads, budget, args.seed + 10 * r) for r in range(runs)
            )
    floor = statistics.median(naive(budget, args.seed + r) for r in range(runs))
    step_count = 100 if args.quick else 400
    stepped = statistics.median(lockstep(1024, step_count, args.seed + r, False) for r in range(runs))
    observed = statistics.median(lockstep(1024, step_count, args.seed + r, True) for r in range(runs))
    result = {
        "core_placements_per_s": core,
        "naive_kernel_placements_per_s": floor,
        "ratio_batched_to_naive": figures[(4096, 1)] / floor,
        "fast_one_game_at_a_time_placements_per_s": single,
        "batched_placements_per_s": figures[(4096, 1)],
        "batched": {f"B={size},threads={threads}": rate for (size, threads), rate in figures.items()},
        "ratio_batched_to_core": figures[(4096, 1)] / core,
        "lockstep_steps_per_s": stepped,
        "lockstep_with_observations_and_masks_steps_per_s": observed,
        "warm_import_and_first_call_s": first_call_seconds(),
        "cpu_threads_available": numba.config.NUMBA_NUM_THREADS,
    }
    with tempfile.TemporaryDirectory() as cache_dir:
        result["cold_import_and_first_call_s"] = first_call_seconds(cache_dir)
    report(result, args.json, text(result, runs), load_before)


def _core_rate(n_games: int, seed: int) -> float:
    seconds, placements = play_phase(n_games, random.Random(seed))
    return placements / seconds


def text(result: dict, runs: int) -> Iterator[str]:
    """The figures of ``main``'s result, for a person."""
    core, single = result["core_placements_per_s"], result["fast_one_game_at_a_time_placements_per_s"]
    floor, batched = result["naive_kernel_placements_per_s"], result["batched_placements_per_s"]
    yield f"random legal play, placements/s (median of {runs} runs; ratios to the core, same run)"
    yield f"  (a) core, pure Python              : {core:>14,.0f}"
    yield f"  (b) fast engine, one game per call : {single:>14,.0f}   x{single / core:,.0f}"
    for threads in (1, 2):
        for size in SIZES:
            rate = result["batched"][f"B={size},threads={threads}"]
            label = f"B={size:<5} {threads} thread{'s' if threads > 1 else ' '}"
            yield f"  (c) fast engine, {label} : {rate:>14,.0f}   x{rate / core:,.0f}"
    yield f"  (d) naive kernel, 1 thread         : {floor:>14,.0f}   x{floor / core:,.0f}"
    yield f"  batched B=4096, 1 thread / naive kernel: {result['ratio_batched_to_naive']:.2f} (target >= 1)"
    yield f"  (e) FastGames.step, B=1024, 1 thread, draft included   : {result['lockstep_steps_per_s']:>14,.0f} steps/s"
    yield (
        "      the same, with each step's observations and masks  : "
        f"{result['lockstep_with_observations_and_masks_steps_per_s']:>14,.0f} steps/s"
    )
    yield f"  import + first call, warm cache      : {result['warm_import_and_first_call_s']:.2f} s"
    yield f"  import + first call, cold (compiles) : {result['cold_import_and_first_call_s']:.2f} s"
    target = "meets" if batched >= 5e6 and batched >= 50 * core else "MISSES"
    yield f"  target (>= 5M/s and >= 50x core at B=4096, one thread): {target}"


if __name__ == "__main__":
    main()
