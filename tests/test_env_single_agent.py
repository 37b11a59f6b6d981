"""The single-agent gymnasium env: checkers, the opponent inside step(), rewards, MaskablePPO."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import trinity_env
from trinity_env.agents import Agent
from trinity_env.core import HAND_SIZE, IllegalMoveError
from trinity_env.envs.single_agent import TrinityTowersEnv


def test_gymnasium_check_env_passes():
    check_env(gymnasium.make("trinity_env/TrinityTowers-v0").unwrapped)
    check_env(TrinityTowersEnv(open_hands=False, draft="dealt", render_mode="rgb_array"))


def test_sb3_check_env_passes():
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    sb3_check_env(TrinityTowersEnv(), warn=True)


def test_gymnasium_make_passes_config_through():
    env = gymnasium.make("trinity_env/TrinityTowers-v0", draft="dealt", seat=1)
    _, info = env.reset(seed=0)
    assert info["seat"] == 1 and env.unwrapped.game_state.phase == "play"


class Recorder(Agent):
    """Plays the first legal action and records what it was shown."""

    def __init__(self):
        self.seen = []

    def act(self, observation, state=None):
        self.seen.append((observation, state))
        return int(np.flatnonzero(observation["action_mask"])[0])


def _play(env: TrinityTowersEnv, seed: int) -> tuple[float, dict, int]:
    observation, info = env.reset(seed=seed)
    total, steps, done = 0.0, 0, False
    rng = np.random.default_rng(seed)
    while not done:
        assert env.game_state.to_move == env.seat, "the learner is only asked to act on its own turn"
        assert (env.action_masks() == (info["action_mask"] == 1)).all()
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        observation, reward, done, truncated, info = env.step(action)
        assert not truncated
        total += reward
        steps += 1
    return total, info, steps


def test_the_opponent_moves_inside_step_and_the_learner_gets_its_own_result():
    opponent = Recorder()
    env = TrinityTowersEnv(opponent=opponent)
    seats, results = set(), set()
    for seed in range(60):
        total, info, steps = _play(env, seed)
        seats.add(info["seat"])
        won = info["winner"] == info["seat"]
        assert total == (1.0 if won else -1.0)
        results.add(won)
        assert steps <= 2 * HAND_SIZE  # its own picks and placements only
    assert seats == {0, 1} and results == {True, False}
    assert opponent.seen, "the opponent was asked to act"
    # the opponent never sees the state during the draft (secret picks)
    assert all(state is None for obs, state in opponent.seen if obs["observation"][0] == 1)
    assert any(state is not None for _, state in opponent.seen)


def test_a_plain_function_can_be_the_opponent():
    env = TrinityTowersEnv(opponent=lambda obs: int(np.flatnonzero(obs["action_mask"])[-1]), draft="dealt")
    total, info, _ = _play(env, 3)
    assert total in (-1.0, 1.0)


def test_illegal_actions_end_the_episode_or_raise():
    env = TrinityTowersEnv(draft="dealt", seat=0, first_player=0)
    env.reset(seed=0)
    _, reward, done, _, info = env.step(0)  # a pick during play
    assert (reward, done, info["illegal_action"]) == (-1.0, True, True)
    with pytest.raises(IllegalMoveError, match="reset"):
        env.step(16)
    strict = TrinityTowersEnv(draft="dealt", seat=0, first_player=0, illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalMoveError, match="picks a card"):
        strict.step(0)


def test_same_seed_same_episode():
    def episode(seed):
        env = TrinityTowersEnv(deck="random")
        observation, info = env.reset(seed=seed)
        return observation.tobytes(), info["seat"], env.game_state.decks

    assert episode(4) == episode(4)
    assert episode(4) != episode(5)


def test_renders():
    env = TrinityTowersEnv(render_mode="ansi", draft="dealt")
    env.reset(seed=0)
    assert "to move" in env.render()
    env = TrinityTowersEnv(render_mode="rgb_array", draft="dealt")
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3


def _maskable_ppo_example():
    """examples/maskable_ppo.py as a module (examples/ is a folder of scripts, not a package)."""
    path = Path(__file__).resolve().parent.parent / "examples" / "maskable_ppo.py"
    spec = importlib.util.spec_from_file_location("maskable_ppo", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FirstLegalModel:
    """Stands in for a trained model in the example's ``evaluate``: the first legal action, every time."""

    def predict(self, observation, action_masks, deterministic=False):
        return np.flatnonzero(action_masks)[0], None


def test_the_examples_win_rate_is_the_share_of_games_the_env_scored_as_won():
    example = _maskable_ppo_example()
    games, seed = 20, 100
    env = TrinityTowersEnv(opponent="random", draft="dealt")
    returns = []
    for game in range(games):
        env.reset(seed=seed + game)
        total, done = 0.0, False
        while not done:
            _, reward, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
            total += reward
        returns.append(total)
    assert set(returns) == {-1.0, 1.0}  # both results occur, so a miscount would show
    assert example.evaluate(FirstLegalModel(), games, seed, draft="dealt") == returns.count(1.0) / games


@pytest.mark.e2e  # a whole training run: make test-e2e
def test_the_maskable_ppo_example_trains_and_reports_a_reproducible_win_rate(capsys):
    """The README's MaskablePPO example end to end, with a tiny budget, twice with one seed."""
    example = _maskable_ppo_example()
    argv = ["--steps", "512", "--eval-games", "10", "--seed", "3"]
    win_rate = example.main(argv)
    assert f"wins {win_rate:.0%} [" in capsys.readouterr().out
    assert example.main(argv) == win_rate  # seeded training and evaluation: the same figure
    # a MaskablePPO policy given the env's masks only ever picks legal moves
    env = TrinityTowersEnv(draft="dealt")
    model = example.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, seed=0)
    observation, _ = env.reset(seed=0)
    for _ in range(30):
        action, _ = model.predict(observation, action_masks=env.action_masks())
        assert env.action_masks()[int(action)]
        observation, _, done, _, info = env.step(int(action))
        assert not info.get("illegal_action")
        if done:
            observation, _ = env.reset()


def test_package_exports():
    assert trinity_env.ENV_ID == "trinity_env/TrinityTowers-v0"


def test_human_render_prints_the_board_in_the_terminal(capsys):
    """``render_mode="human"`` draws the text board on reset and every step, as the AEC env does, without
    gymnasium's pygame window (it once went through gymnasium's HumanRendering fallback)."""
    import gymnasium

    import trinity_env

    env = gymnasium.make(trinity_env.ENV_ID, render_mode="human", draft="dealt")
    assert "HumanRendering" not in str(env)
    env.reset(seed=0)
    assert str(env.unwrapped.game_state) in capsys.readouterr().out
    mask = env.unwrapped.action_masks()
    env.step(int(np.flatnonzero(mask)[0]))
    assert str(env.unwrapped.game_state) in capsys.readouterr().out
    assert env.render() is None
