"""The RLlib integration (needs the ``rllib`` extra: ``make test-rllib``).

The env follows RLlib's turn-based multi-agent conventions and agrees with the core; the
slow test runs one training iteration on a local Ray instance with two env runners.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="the rllib extra is not installed")

from training.config import TrainConfigError
from training.rllib_selfplay import RLlibConfig, league_mapping
from trinity_env.core import IllegalMoveError
from trinity_env.envs import make_config
from trinity_env.envs.observation import action_mask, encode_observation
from trinity_env.integrations.rllib import AGENTS, TrinityTowersMultiAgentEnv


def test_only_the_mover_observes_and_both_see_the_end():
    env = TrinityTowersMultiAgentEnv({"draft": "pick"})
    observations, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    decisions = 0
    while True:
        assert len(observations) == 1
        ((agent, observation),) = observations.items()
        assert env.observation_spaces[agent].contains(observation)
        action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        observations, rewards, terminated, truncated, _ = env.step({agent: action})
        decisions += 1
        assert not truncated["__all__"]
        if terminated["__all__"]:
            break
        assert rewards == {}
    assert 16 < decisions <= 16 + 15  # the draft, then at most 15 placements
    assert set(observations) == set(AGENTS) and sorted(rewards.values()) == [-1.0, 1.0]
    assert rewards[AGENTS[env.game_state.winner]] == 1.0


def test_the_env_agrees_with_the_core():
    config = {"draft": "random", "open_hands": False}
    env = TrinityTowersMultiAgentEnv(config)
    for game in range(20):
        observations, _ = env.reset(seed=game)
        state = make_config(config).new_game(random.Random(game))
        assert env.game_state == state
        while not state.is_over:
            ((agent, observation),) = observations.items()
            seat = AGENTS.index(agent)
            assert seat == state.to_move
            assert (observation["observations"] == encode_observation(state, seat, False)).all()
            assert (observation["action_mask"] == action_mask(state, seat)).all()
            action = random.Random(game).choice(state.legal_actions())
            state = state.apply(action)
            observations, *_ = env.step({agent: action})


def test_illegal_and_out_of_turn_actions_are_refused():
    env = TrinityTowersMultiAgentEnv({"draft": "random", "first_player": 0})
    env.reset(seed=0)
    with pytest.raises(IllegalMoveError, match="player_0 is to move"):
        env.step({"player_1": 16})
    illegal = int(np.flatnonzero(action_mask(env.game_state, 0) == 0)[-1])
    with pytest.raises(IllegalMoveError):
        env.step({"player_0": illegal})


class _Episode:
    def __init__(self, id_):
        self.id_ = id_


def test_the_league_puts_main_in_one_seat_and_an_opponent_in_the_other():
    seats, opponents = set(), set()
    for k in range(200):
        episode = _Episode(f"episode-{k}")
        modules = [league_mapping(agent, episode, versions=3, p_random=0.2) for agent in AGENTS]
        assert modules.count("main") == 1
        seats.add(modules.index("main"))
        opponents.add(next(m for m in modules if m != "main"))
    assert seats == {0, 1} and opponents == {"random", "main_v1", "main_v2", "main_v3"}
    early = {league_mapping(a, _Episode(f"e{k}"), versions=0, p_random=0.2) for k in range(50) for a in AGENTS}
    assert early == {"main", "random"}


def test_bad_rllib_configs_name_the_field():
    with pytest.raises(TrainConfigError, match="'num_env_runners'"):
        RLlibConfig.from_dict({"num_env_runners": -1})
    with pytest.raises(TrainConfigError, match="'minibatch'"):
        RLlibConfig.from_dict({"train_batch": 100, "minibatch": 200})
    assert RLlibConfig.load("rllib").num_env_runners >= 1


@pytest.mark.slow
def test_training_on_local_ray_with_two_env_runners(tmp_path):
    """Two iterations: the first learns and (threshold 0) freezes main into the league, the second plays it."""
    from training.rllib_selfplay import train

    config = RLlibConfig.load(
        "rllib", num_env_runners=2, envs_per_runner=1, train_batch=1000, minibatch=250, epochs=2, eval_games=10,
        eval_every=1, league_threshold=0.0, p_random=0.0, tensorboard=False,
    )  # fmt: skip
    history = train(config, tmp_path, iterations=2, progress=False)
    first, second = (json.loads(line) for line in (tmp_path / "iterations.jsonl").read_text().splitlines())
    assert first["steps"] >= 1000 and second["steps"] >= 2000 and first["steps_per_second"] > 0
    assert first["main_win_rate"] is not None and 0 <= first["main_win_rate"] <= 1
    assert (first["league_size"], second["league_size"]) == (1, 2)
    assert set(history[-1]["results"]) == {"random", "greedy", "endgames"}
    assert (tmp_path / "metrics.csv").read_text().count("\n") == 6
    assert any((tmp_path / "checkpoint").rglob("*")), "no checkpoint written"
