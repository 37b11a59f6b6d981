"""The RLlib integration (needs the ``rllib`` extra: ``make test-rllib``).

The env follows RLlib's turn-based multi-agent conventions, passes RLlib's own pre-check and
agrees with the core; ``main`` is the batched trainer's network; the slow test trains on a
local Ray instance with two env runners and resumes the run.
"""

from __future__ import annotations

import itertools
import json
import random

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="the rllib extra is not installed")

import torch

from training.config import TrainConfigError
from training.rllib_selfplay import RLlibConfig, league_mapping
from training.run_folder import RunFolderError
from trinity_env.core import IllegalMoveError
from trinity_env.envs import make_config
from trinity_env.integrations.rllib import AGENTS, TrinityTowersMultiAgentEnv
from trinity_env.spec.config import ConfigError
from trinity_env.spec.observation import action_mask, encode_observation


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
    config = {"draft": "dealt", "open_hands": False}
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


def test_an_illegal_action_ends_the_game_at_minus_one_as_terminate_illegal_does():
    env = TrinityTowersMultiAgentEnv({"draft": "dealt", "first_player": 0})
    env.reset(seed=0)
    before = env.game_state
    illegal = int(np.flatnonzero(action_mask(before, 0) == 0)[-1])
    observations, rewards, terminated, truncated, infos = env.step({"player_0": np.int64(illegal)})
    assert rewards == {"player_0": -1.0, "player_1": 0.0}
    assert terminated["__all__"] and not truncated["__all__"]
    assert set(observations) == set(AGENTS) and infos == {"player_0": {"illegal_action": True}}
    assert env.game_state == before  # the illegal move was not played
    with pytest.raises(IllegalMoveError, match="episode is over"):
        env.step({"player_0": 16})


def test_rllibs_own_env_pre_check_passes():
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    check_multiagent_environments(TrinityTowersMultiAgentEnv({"draft": "dealt"}))
    check_multiagent_environments(TrinityTowersMultiAgentEnv({"draft": "pick"}))


def test_illegal_actions_raise_when_asked_and_bad_actions_always_do():
    env = TrinityTowersMultiAgentEnv({"draft": "dealt", "first_player": 0, "illegal_action": "raise"})
    env.reset(seed=0)
    with pytest.raises(IllegalMoveError, match="player_0 is to move"):
        env.step({"player_1": 16})
    illegal = int(np.flatnonzero(action_mask(env.game_state, 0) == 0)[-1])
    with pytest.raises(IllegalMoveError):
        env.step({"player_0": illegal})
    for bad in (16.0, True, "16", 256, -1):
        with pytest.raises(IllegalMoveError, match="an action is an integer 0-255"):
            env.step({"player_0": bad})
    with pytest.raises(ConfigError, match="illegal_action must be"):
        TrinityTowersMultiAgentEnv({"illegal_action": "ignore"})


def test_main_is_the_batched_trainers_network_and_saves_as_its_checkpoint(tmp_path):
    from ray.rllib.core.columns import Columns

    from trinity_env.agents import make
    from trinity_env.agents.networks.ppo_network import save_checkpoint
    from trinity_env.integrations.rllib import TrinityPPOModule, observation_space

    env = TrinityTowersMultiAgentEnv({"draft": "dealt"})
    module = TrinityPPOModule(
        observation_space=observation_space(),
        action_space=env.action_spaces["player_0"],
        model_config={"hidden": 32, "layers": 2, "tactics": True},
    )
    rows = []
    for game in range(8):
        observations, _ = env.reset(seed=game)
        rows.append(next(iter(observations.values())))
    batch = {Columns.OBS: {k: torch.as_tensor(np.stack([r[k] for r in rows])) for k in rows[0]}}
    logits, values = module.network(batch[Columns.OBS]["observations"], batch[Columns.OBS]["action_mask"])
    train = module.forward_train(batch)
    assert torch.equal(module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS], logits)
    assert torch.equal(train[Columns.ACTION_DIST_INPUTS], logits)
    assert torch.equal(module.compute_values(batch, train[Columns.EMBEDDINGS]), values)
    assert torch.equal(module.compute_values(batch), values)
    assert (logits[batch[Columns.OBS]["action_mask"] == 0] < -1e8).all()
    save_checkpoint(tmp_path / "main.pt", module.network, {"steps": 0})
    agent = make(str(tmp_path / "main.pt"))
    for row, expected in zip(rows, logits.argmax(-1)):
        observation = {
            "observation": row["observations"].astype(np.int8),
            "action_mask": row["action_mask"].astype(np.int8),
        }
        assert agent.act(observation) == int(expected)


def test_the_agent_module_plays_the_registry_agent_on_the_observation():
    from ray.rllib.core.columns import Columns

    from trinity_env.agents import make
    from trinity_env.integrations.rllib import AgentModule, observation_space

    env = TrinityTowersMultiAgentEnv({"draft": "dealt"})
    module = AgentModule(
        observation_space=observation_space(),
        action_space=env.action_spaces["player_0"],
        model_config={"agent": "greedy"},
    )
    greedy = make("greedy")
    for game in range(10):
        observations, _ = env.reset(seed=game)
        ((_, row),) = observations.items()
        batch = {Columns.OBS: {k: torch.as_tensor(v[None]) for k, v in row.items()}}
        action = int(module.forward_inference(batch)[Columns.ACTIONS][0])
        observation = {
            "observation": row["observations"].astype(np.int8),
            "action_mask": row["action_mask"].astype(np.int8),
        }
        assert action == greedy.act(observation)


class _Episode:
    def __init__(self, id_):
        self.id_ = id_


def test_the_league_puts_main_in_one_seat_and_an_opponent_in_the_other():
    shares = {"p_random": 0.2, "p_greedy": 0.2, "p_latest": 0.3}
    seats, opponents = set(), []
    for k in range(1000):
        episode = _Episode(f"episode-{k}")
        modules = [league_mapping(agent, episode, versions=3, **shares) for agent in AGENTS]
        assert "main" in modules
        seats.add(modules.index("main"))
        opponents.append(modules[0] if modules[1] == "main" and modules[0] != "main" else modules[1])
    assert seats == {0, 1}
    assert set(opponents) == {"random", "greedy", "main", "main_v1", "main_v2", "main_v3"}
    assert 0.15 < opponents.count("random") / 1000 < 0.25 and 0.25 < opponents.count("main") / 1000 < 0.35
    early = {league_mapping(a, _Episode(f"e{k}"), versions=0, **shares) for k in range(100) for a in AGENTS}
    assert early == {"main", "random", "greedy"}  # no copies yet: main itself instead


def test_bad_rllib_configs_name_the_field():
    with pytest.raises(TrainConfigError, match="'num_env_runners'"):
        RLlibConfig.from_dict({"num_env_runners": -1})
    with pytest.raises(TrainConfigError, match="'minibatch'"):
        RLlibConfig.from_dict({"train_batch": 100, "minibatch": 200})
    with pytest.raises(TrainConfigError, match="'p_random' \\+ 'p_greedy' \\+ 'p_latest'"):
        RLlibConfig.from_dict({"p_random": 0.5, "p_greedy": 0.4, "p_latest": 0.3})
    assert RLlibConfig.load("rllib").num_env_runners >= 1


@pytest.mark.slow
def test_training_on_local_ray_with_two_env_runners_and_resuming(tmp_path):
    """Two iterations (a league copy after each), then --resume to a third: counts, league and files carry on."""
    from training.rllib_selfplay import train
    from trinity_env.agents import make

    config = {
        "num_env_runners": 2,
        "envs_per_runner": 1,
        "train_batch": 1000,
        "minibatch": 250,
        "epochs": 2,
        "eval_games": 10,
        "eval_every_iterations": 1,
        "snapshot_every_iterations": 1,
        "tensorboard": False,
    }
    train(RLlibConfig.load("rllib", **config, iterations=2), tmp_path, progress=False)
    with (tmp_path / "iterations.jsonl").open("a") as handle:  # as a session killed after its checkpoint leaves it
        handle.write(json.dumps({"iteration": 3, "env_steps": 0}) + "\n")
    with pytest.raises(RunFolderError, match="already holds a run"):  # a fresh start refuses the run that is there
        train(RLlibConfig.load("rllib", **config, iterations=3), tmp_path, progress=False)
    history = train(RLlibConfig.load("rllib", **config, iterations=3), tmp_path, progress=False, resume=True)
    records = [json.loads(line) for line in (tmp_path / "iterations.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in records] == [1, 2, 3]
    assert [r["league_size"] for r in records] == [1, 2, 3]
    assert all(b["env_steps"] - a["env_steps"] in range(1000, 1100) for a, b in itertools.pairwise(records))
    assert 0 < records[0]["main_steps"] < records[0]["env_steps"]
    assert [h["env_steps"] for h in history] == [r["env_steps"] for r in records]
    assert set(history[-1]["results"]) == {"random", "greedy", "endgames"}
    assert (tmp_path / "metrics.csv").read_text().count("\n") == 1 + 9  # the header, 3 evaluations of 3 measures
    assert (tmp_path / "metrics.csv").read_text().startswith("steps,seconds,measure,rate,low,high\n")
    progress = json.loads((tmp_path / "progress.json").read_text())
    assert (progress["iteration"], progress["versions"]) == (3, 3)
    agent = make(str(tmp_path))  # best.pt plays as any checkpoint does
    env = TrinityTowersMultiAgentEnv({"draft": "dealt"})
    ((_, row),) = env.reset(seed=0)[0].items()
    observation = {
        "observation": row["observations"].astype(np.int8),
        "action_mask": row["action_mask"].astype(np.int8),
    }
    assert row["action_mask"][agent.act(observation)] == 1
