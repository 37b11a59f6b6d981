"""The arena's game seeds: no two games of a round robin share one, and every game the first derivation kept apart
keeps its seed (so the published arenas of at most 101 games a pair, and every two-agent one, replay as they were).
And ``trinity arena`` stopped by SIGTERM says so in one line and keeps what it played, as after Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from itertools import combinations
from pathlib import Path

import pytest

from trinity_env.evaluation import arena
from trinity_env.evaluation.arena import game_seed, round_robin

ROOT = Path(__file__).resolve().parent.parent


def first_derivation(seed: int, i: int, j: int, k: int) -> int:
    return seed * 1_000_003 + i * 10_007 + j * 101 + k


def seeds(agents: int, games: int, seed: int = 5) -> list[int]:
    return [game_seed(seed, i, j, k, agents) for i, j in combinations(range(agents), 2) for k in range(games)]


@pytest.mark.parametrize(
    "agents, games",
    [(3, 102), (3, 400), (4, 200), (8, 400), (5, 10_200), (2, 30_000), (99, 101), (120, 101), (40, 150)],
)
def test_no_two_games_of_a_round_robin_share_a_seed(agents, games):
    every = seeds(agents, games)
    assert len(set(every)) == len(every)


def test_a_rating_against_the_pool_seeds_each_game_apart_too():
    """``anchored``: game ``k`` against member ``m`` of a pool of 8 is ``game_seed(seed, m, 8, k)``."""
    every = [game_seed(7, m, 8, k) for m in range(8) for k in range(12_000)]
    assert len(set(every)) == len(every)


def test_the_games_the_first_derivation_kept_apart_keep_their_seeds():
    for agents in (2, 3, 4, 5, 8, 98):  # the first 101 games of every pair
        for i, j in combinations(range(agents), 2):
            assert all(game_seed(3, i, j, k, agents) == first_derivation(3, i, j, k) for k in range(101))
    assert all(game_seed(11, 0, 1, k, 2) == first_derivation(11, 0, 1, k) for k in range(20_000))  # two agents
    for m in range(8):  # a rating against the pool of 8 (the agent appended last), past 101 games a member
        assert all(game_seed(12, m, 8, k) == first_derivation(12, m, 8, k) for k in range(0, 9_000, 7))
        assert game_seed(12, m, 8, 500) == game_seed(12, m, 8, 500, 9)
    assert game_seed(0, 0, 1, 101, 3) != first_derivation(0, 0, 1, 101) == first_derivation(0, 0, 2, 0)


def test_a_round_robin_plays_each_game_with_the_seed_game_seed_gives(monkeypatch):
    """The seeds the games are really played with: three random agents, 103 games a pair."""
    played: dict[tuple[int, int], list[int]] = {}
    original = arena.seat_swapped_points

    def recording(agent_i, agent_j, config, games, seed_of, on_game=None):
        key = (agent_i.name, agent_j.name)
        played.setdefault(key, []).extend(seed_of(k) for k in games)
        return original(agent_i, agent_j, config, games, seed_of, on_game)

    monkeypatch.setattr(arena, "seat_swapped_points", recording)
    round_robin(["random", "random:seed=1", "random:seed=2"], 103, seed=4, workers=1, progress=False)
    every = [s for run in played.values() for s in run]
    assert len(every) == 3 * 103 and len(set(every)) == len(every)
    assert played[("random", "random:seed=1")] == [game_seed(4, 0, 1, k, 3) for k in range(103)]


def test_sigterm_during_arena_anchored_says_interrupted_keeps_the_round_robin_and_exits_143(tmp_path):
    """SIGTERM (a scheduler, ``kill``) is Ctrl-C's twin: stopped while the agents play the reference pool, the round
    robin's results are kept, one line says so, and the status is 143."""
    out = tmp_path / "arena"
    command = [sys.executable, "-m", "trinity_env.cli", "arena", "--agents", "greedy", "random", "--anchored"]
    run = subprocess.Popen(
        [*command, "--games", "40", "--workers", "1", "--quiet", "--out", str(out)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ | {"PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"},
    )
    lines = []
    try:
        for line in run.stdout:  # the round robin's files written: the pool's games are being played now
            lines.append(line)
            if line.startswith("wrote") and line.strip().endswith("arena_heatmap.png"):
                break
        time.sleep(1)
        run.send_signal(signal.SIGTERM)
        rest, stderr = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 143, stderr
    ours = [line for line in stderr.splitlines() if line.startswith("trinity arena")]  # not a compiler's warning
    assert ours == ["trinity arena: interrupted: the round robin's 40 games written, the anchored ratings unfinished"]
    assert "Traceback" not in stderr, stderr
    assert (out / "arena.json").exists() and not (out / "anchored.json").exists()


def test_a_stop_whose_keyboard_interrupt_was_swallowed_still_stops_at_the_next_game():
    """Python prints and drops an exception raised in a weakref callback or a ``__del__``: a SIGTERM whose
    ``KeyboardInterrupt`` landed there let ``arena --anchored`` play on and exit 0 (seen on a cold cache, where
    the garbage collector ran at the moment). The stop is noted too, and the next game raises it again."""
    from trinity_env.agents.baselines import GreedyAgent
    from trinity_env.cli.common import stop_on_signals
    from trinity_env.core.stops import check_stopped
    from trinity_env.evaluation.match import seat_swapped_points
    from trinity_env.spec.agent import RandomAgent
    from trinity_env.spec.config import make_config

    with stop_on_signals() as stopped:
        with contextlib.suppress(KeyboardInterrupt):  # as Python does with one raised inside a __del__
            signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)
        with pytest.raises(KeyboardInterrupt):
            seat_swapped_points(GreedyAgent(), RandomAgent(), make_config(None), range(2), lambda k: k)
    assert stopped == [signal.SIGTERM]
    check_stopped()  # the block is over: nothing is pending
