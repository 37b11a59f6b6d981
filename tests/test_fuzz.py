"""Fuzz: many random games, every one must finish cleanly with a consistent record."""

from __future__ import annotations

import random

import pytest

from trinity_env.core import GameState, Replay

from games import random_game


def _fuzz(n_games: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    endings: dict[str, int] = {}
    for _ in range(n_games):
        states = random_game(rng)
        end = states[-1]
        assert end.is_over and 1 <= sum(1 for s in states if s.last and s.last.tile is not None) <= 15
        assert GameState.from_dict(end.to_dict()).to_dict() == end.to_dict()
        endings[end.outcome.termination] = endings.get(end.outcome.termination, 0) + 1
    return endings


@pytest.mark.parametrize("games", [2_000, pytest.param(10_000, marks=pytest.mark.e2e)])  # 10,000: make test-e2e
def test_ten_thousand_random_games_run_without_a_crash(games):
    endings = _fuzz(games, seed=2026)
    # both ways of ending a real game happen, each often, and only those
    assert set(endings) == {"lane_control", "full_board"}
    assert min(endings.values()) > games // 10, endings


def test_replays_of_random_games_reproduce_them():
    rng = random.Random(7)
    for _ in range(300):
        states = random_game(rng)
        replay = Replay.from_json(Replay.from_states(states).to_json())
        assert replay.states() == states


@pytest.mark.slow
def test_hundred_thousand_random_games_run_without_a_crash():
    endings = _fuzz(100_000, seed=11)
    assert set(endings) == {"lane_control", "full_board"}
    assert min(endings.values()) > 10_000, endings
