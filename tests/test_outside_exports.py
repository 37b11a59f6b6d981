"""The outside-library examples write what every evaluation tool takes (the leaderboard's outside cards start here).

``examples/cleanrl_ppo.py --export`` and ``examples/tianshou_dqn.py --export`` write ONNX files that ``onnx:PATH``
plays exactly as the trained network would (the legal action with the highest score); ``examples/maskable_ppo.py
--save`` writes an SB3 zip the agent spec of its path plays. Each test skips when its library is not installed;
BenchMARL's export is in tests/test_benchmarl.py (``make test-benchmarl`` runs it in its own venv).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.test_integrations import example


def _positions(count: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """Observations of real positions (the AEC env's, both seats) and their masks."""
    import trinity_env

    env = trinity_env.env(draft="dealt")
    env.reset(seed=3)
    observations, masks = [], []
    for _ in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation or len(observations) == count:
            break
        observations.append(observation["observation"])
        masks.append(observation["action_mask"])
        env.step(int(np.flatnonzero(observation["action_mask"])[-1]))
    return np.asarray(observations, np.int8), np.asarray(masks, np.int8)


def _torch_choices(network, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    import torch

    with torch.no_grad():
        scores = network(torch.as_tensor(observations, dtype=torch.float32)).numpy()
    return np.where(masks != 0, scores, -np.inf).argmax(axis=1)


def test_the_cleanrl_example_exports_its_actor_to_an_onnx_file_that_plays_as_the_actor(tmp_path, monkeypatch, capsys):
    """Also the default suite's run of the example on the fast vector env (its e2e twin in test_integrations)."""
    pytest.importorskip("torch", reason="the train extra is not installed")
    pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
    from trinity_env.agents import make

    module = example("cleanrl_ppo")
    actors = []
    original = module.Agent.__init__

    def keep(self, *args):
        original(self, *args)
        actors.append(self.actor)

    monkeypatch.setattr(module.Agent, "__init__", keep)
    path = tmp_path / "cleanrl.onnx"
    rate = module.main(
        ["--total-timesteps", "512", "--num-envs", "8", "--num-steps", "16", "--eval-games", "4", "--export", str(path)]
    )
    assert 0.0 <= rate <= 1.0 and "against random" in capsys.readouterr().out
    observations, masks = _positions()
    played = make(f"onnx:{path}").act_batch(observations, masks)
    assert (played == _torch_choices(actors[-1], observations, masks)).all()


def test_the_maskable_ppo_example_saves_a_zip_the_agent_spec_plays(tmp_path):
    pytest.importorskip("sb3_contrib", reason="the train extra is not installed")
    from trinity_env.agents import make

    path = tmp_path / "maskable.zip"
    example("maskable_ppo").main(["--steps", "512", "--eval-games", "2", "--save", str(path)])
    agent = make(str(path))
    observations, masks = _positions(2)
    for observation, mask in zip(observations, masks):
        assert mask[agent.act({"observation": observation, "action_mask": mask})]


@pytest.mark.slow
def test_the_tianshou_example_exports_its_q_network_to_an_onnx_file_that_plays_as_the_network(tmp_path, monkeypatch):
    pytest.importorskip("tianshou", reason="Tianshou is not installed (the integrations extra)")
    pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
    from trinity_env.agents import make

    module = example("tianshou_dqn")
    policies = []
    original = module.export
    monkeypatch.setattr(module, "export", lambda policy, path: policies.append(policy) or original(policy, path))
    path = tmp_path / "dqn.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        argv = ["--epochs", "1", "--epoch-steps", "200", "--eval-games", "2", "--train-envs", "2", "--test-envs", "2"]
        module.main([*argv, "--draft", "dealt", "--export", str(path)])
    observations, masks = _positions()
    played = make(f"onnx:{path}").act_batch(observations, masks)
    assert (played == _torch_choices(module.QValues(policies[0].model), observations, masks)).all()


def test_every_page_that_asks_for_an_onnx_file_says_how_to_export_one_from_torch(tmp_path):
    """``torch.onnx.export`` with its defaults needs ``onnxscript``, which no extra installs; the pages said nothing."""
    from pathlib import Path

    docs = Path(__file__).resolve().parent.parent / "docs"
    asking = [
        page for page in sorted(docs.glob("*.md")) if "onnx:" in page.read_text() and "export" in page.read_text()
    ]
    assert {page.name for page in asking} >= {"agents.md", "benchmark.md", "evaluate.md"}
    for page in asking:
        text = page.read_text()
        assert "export_policy" in text and "dynamo=False" in text, f"{page.name} does not say how to export from torch"

    torch = pytest.importorskip("torch", reason="the train extra is not installed")
    pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
    from trinity_env.agents import make

    network = torch.nn.Linear(339, 256)
    path = tmp_path / "policy.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation warning
        torch.onnx.export(network, (torch.zeros(1, 339),), path, input_names=["observation"], dynamo=False)
    observations, masks = _positions()
    agent = make(f"onnx:{path}")
    played = [
        agent.act({"observation": observation, "action_mask": mask})
        for observation, mask in zip(observations, masks, strict=True)
    ]
    assert played == _torch_choices(network, observations, masks).tolist()
