"""The gymnasium vector env on the fast engine."""

from __future__ import annotations

import numpy as np
import pytest

from trinity_env.agents import AgentSpecError, RandomAgent
from trinity_env.envs import ConfigError
from trinity_env.fast.vector_env import TrinityTowersVectorEnv


def _run(env: TrinityTowersVectorEnv, steps: int, seed: int):
    observations, infos = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    history = []
    for _ in range(steps):
        masks = infos["action_mask"]
        assert masks.any(axis=1).all(), "every game waits on the learner"
        assert observations.shape == (env.num_envs, 339) and observations.dtype == np.int8
        assert (observations[:, 3] == 1).all(), "the observation is the learner's, on its turn"
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        seats = env.seats.copy()
        observations, rewards, terminated, truncated, infos = env.step(actions)
        history.append((rewards.copy(), terminated.copy(), infos["winner"].copy(), seats))
    return history, infos


def test_episodes_end_with_the_learners_own_result():
    env = TrinityTowersVectorEnv(16, draft="random")
    history, _ = _run(env, 120, seed=0)
    seats_seen = set()
    ended = 0
    for rewards, terminated, winner, seats in history:
        assert (rewards[~terminated] == 0).all()
        expected = np.where(winner == seats, 1.0, -1.0)
        assert (rewards[terminated] == expected[terminated]).all()
        ended += terminated.sum()
        seats_seen.update(seats.tolist())
    assert ended > 50
    assert seats_seen == {0, 1}


def test_final_observations_come_with_same_step_autoreset():
    env = TrinityTowersVectorEnv(8)
    observations, infos = env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(200):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in infos["action_mask"]])
        observations, rewards, terminated, truncated, infos = env.step(actions)
        if terminated.any():
            final = infos["final_obs"][terminated]
            assert (final[:, 2] == 1).all(), "the final observation shows the game over"
            assert (observations[terminated][:, 2] == 0).all(), "the returned observation starts the next game"
            assert (infos["_final_obs"] == terminated).all()
            return
    raise AssertionError("no game ended")


def test_same_seed_same_run_and_opponents_of_every_kind():
    def total(seed, opponent="random"):
        history, _ = _run(TrinityTowersVectorEnv(6, opponent=opponent, deck="random"), 60, seed)
        return np.array([r for r, _, _, _ in history])

    assert (total(3) == total(3)).all()
    first_legal = lambda obs, masks: masks.argmax(axis=1)  # noqa: E731
    assert total(3, first_legal).shape == (60, 6)
    assert total(3, RandomAgent(0)).shape == (60, 6)
    assert total(3, "greedy").shape == (60, 6)  # any agent spec, as in the single-agent env


def test_bad_arguments_are_named():
    with pytest.raises(ConfigError, match="seat"):
        TrinityTowersVectorEnv(2, seat=3)
    with pytest.raises(ConfigError, match="opponent"):
        TrinityTowersVectorEnv(2, opponent=42)
    with pytest.raises(AgentSpecError, match="no agent named 'nobody'"):
        TrinityTowersVectorEnv(2, opponent="nobody")
    with pytest.raises(ConfigError, match="draft"):
        TrinityTowersVectorEnv(2, draft="auction")
