"""A policy the loaders refuse says what to do instead and leaves nothing behind (issue 51): an SB3 zip of another
kind (plain PPO, another activation) points at ``onnx:PATH``, and ``benchmark`` and ``rate_against_pool`` refuse it
before any rating-games file is made."""

from __future__ import annotations

import pytest

pytest.importorskip("sb3_contrib", reason="the train extra is not installed")
torch = pytest.importorskip("torch", reason="the train extra is not installed")

from trinity_env.agents import make  # noqa: E402
from trinity_env.agents.loaders.checkpoint import CheckpointError  # noqa: E402


@pytest.fixture(scope="module")
def foreign_zips(tmp_path_factory):
    """A plain PPO zip and a MaskablePPO zip with ReLU (SB3's own saves, untrained)."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    from trinity_env.envs.single_agent import TrinityTowersEnv

    folder = tmp_path_factory.mktemp("zips")
    env = TrinityTowersEnv(opponent="random", draft="dealt")
    PPO("MlpPolicy", env, n_steps=64, policy_kwargs={"net_arch": [16]}).save(folder / "plain_ppo.zip")
    kwargs = {"net_arch": [16], "activation_fn": torch.nn.ReLU}
    MaskablePPO("MlpPolicy", env, n_steps=64, policy_kwargs=kwargs).save(folder / "relu.zip")
    return {"plain PPO": folder / "plain_ppo.zip", "ReLU": folder / "relu.zip"}


@pytest.mark.parametrize("kind, reason", [("plain PPO", "policy_class is not"), ("ReLU", "policy_kwargs are pickled")])
def test_a_zip_of_another_kind_is_refused_with_a_pointer_to_onnx(foreign_zips, kind, reason):
    with pytest.raises(CheckpointError, match=reason) as caught:
        make(str(foreign_zips[kind]))
    assert "onnx:PATH" in str(caught.value) and "\n" not in str(caught.value)


def test_benchmark_refuses_such_a_zip_before_any_rating_games_file(foreign_zips, tmp_path):
    from trinity_env.scorecard import benchmark

    for path in foreign_zips.values():
        with pytest.raises(CheckpointError):
            benchmark(str(path), workers=1, games_folder=tmp_path)
        assert list(tmp_path.iterdir()) == []  # a header-only rating-games-*.jsonl was left behind


def test_rate_against_pool_refuses_such_a_zip_before_its_games_file(foreign_zips, tmp_path):
    from trinity_env.evaluation.anchored import rate_against_pool

    games_file = tmp_path / "rating-games.jsonl"
    with pytest.raises(CheckpointError, match="onnx:PATH"):
        rate_against_pool(str(foreign_zips["ReLU"]), 2, workers=1, games_file=games_file)
    assert not games_file.exists()  # a header-only games file was left behind
