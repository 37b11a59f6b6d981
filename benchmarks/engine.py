"""Speed of the pure-Python rules core under random legal play.

Prints, as the median of several runs:
- full games per second from a new game (16 random draft picks, then random placements);
- placements per second of the play phase alone (hands dealt at random, no draft).

Usage: python -m benchmarks.engine [--games N] [--runs R] [--seed S] [--json]
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import time
from collections.abc import Iterator

from benchmarks import load_average, report
from trinity_env.core import GameState, random_hand, standard_deck


def full_games(n_games: int, rng: random.Random) -> tuple[float, int, int]:
    """Seconds taken, picks and placements made by ``n_games`` random games with the draft."""
    picks = placements = 0
    start = time.perf_counter()
    for _ in range(n_games):
        state = GameState.new_game(first_player=rng.randint(0, 1))
        while not state.is_over:
            if state.phase == "draft":
                picks += 1
            else:
                placements += 1
            state = state.apply(rng.choice(state.legal_actions()))
    return time.perf_counter() - start, picks, placements


def play_phase(n_games: int, rng: random.Random) -> tuple[float, int]:
    """Seconds taken and placements made by ``n_games`` random play phases from dealt hands."""
    deck = standard_deck()
    starts = [
        GameState.new_game(hands=[random_hand(deck, 3, rng), random_hand(deck, 3, rng)], first_player=rng.randint(0, 1))
        for _ in range(n_games)
    ]
    placements = 0
    start = time.perf_counter()
    for state in starts:
        while not state.is_over:
            state = state.apply(rng.choice(state.legal_actions()))
            placements += 1
    return time.perf_counter() - start, placements


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000, help="games per run (default 2000)")
    parser.add_argument("--runs", type=int, default=5, help="runs; the median is reported (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = parser.parse_args()

    load_before = load_average()
    rng = random.Random(args.seed)
    games_per_s, transitions_per_s, placements_per_s = [], [], []
    for _ in range(args.runs):
        seconds, picks, placements = full_games(args.games, rng)
        games_per_s.append(args.games / seconds)
        transitions_per_s.append((picks + placements) / seconds)
        seconds, placements = play_phase(args.games, rng)
        placements_per_s.append(placements / seconds)
    result = {
        "python": platform.python_version(),
        "games_per_run": args.games,
        "runs": args.runs,
        "core_full_games_per_s": statistics.median(games_per_s),
        "core_transitions_per_s": statistics.median(transitions_per_s),
        "core_placements_per_s": statistics.median(placements_per_s),
    }
    report(result, args.json, text(result), load_before)


def text(result: dict) -> Iterator[str]:
    """The figures of ``main``'s result, for a person."""
    runs, games = result["runs"], result["games_per_run"]
    yield f"trinity-towers core, Python {result['python']}, median of {runs} runs of {games} games"
    yield f"  full games (draft + play) : {result['core_full_games_per_s']:>10,.0f} games/s"
    yield f"                            : {result['core_transitions_per_s']:>10,.0f} picks+placements/s"
    yield f"  play phase only           : {result['core_placements_per_s']:>10,.0f} placements/s"


if __name__ == "__main__":
    main()
