"""Any policy, everywhere: a spec, an Agent, a function (observation, mask) -> action, a batched function and an
ONNX file are each taken by every evaluation tool, and give the same figures whichever way the same policy came."""

from __future__ import annotations

import numpy as np
import pytest

from trinity_env.agents import GreedyAgent
from trinity_env.agents.policies import AgentPlayer, BatchedPolicy, Policy, checked_actions, policy_as_agent
from trinity_env.agents.spec import AgentSpec, player
from trinity_env.core import ArgumentError, IllegalMoveError
from trinity_env.evaluation import accuracy, puzzles
from trinity_env.evaluation.arena import round_robin

WEIGHTS = np.random.default_rng(0).normal(size=(339, 256)).astype(np.float32)


def scores(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A fixed linear policy's legal argmax: the reference every form of it must match."""
    logits = observations.astype(np.float32) @ WEIGHTS
    return np.where(masks > 0, logits, -np.inf).argmax(axis=1)


def one(observation: np.ndarray, mask: np.ndarray) -> int:
    return int(scores(observation[None], mask[None])[0])


@pytest.fixture(scope="module")
def onnx_spec(tmp_path_factory) -> str:
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnxruntime")
    from trinity_env.agents.loaders.onnx_policy import export_policy

    module = torch.nn.Linear(339, 256, bias=False)
    with torch.no_grad():
        module.weight.copy_(torch.from_numpy(WEIGHTS.T))
    return f"onnx:{export_policy(module, tmp_path_factory.mktemp('onnx') / 'linear.onnx')}"


def forms(onnx_spec: str) -> dict[str, object]:
    return {
        "function": one,
        "Policy": Policy(one, name="linear"),
        "BatchedPolicy": BatchedPolicy(scores, name="linear"),
        "onnx spec": onnx_spec,
        "onnx AgentSpec": AgentSpec.parse(onnx_spec),
    }


@pytest.fixture(scope="module")
def positions():
    return accuracy.first_per_count(accuracy.load_set(), 6)


@pytest.fixture(scope="module")
def shipped_puzzles():
    return puzzles.load_puzzles(puzzles.DEFAULT_SET)[:30]


KINDS = ["function", "Policy", "BatchedPolicy", "onnx spec", "onnx AgentSpec"]


@pytest.mark.parametrize("kind", KINDS)
def test_accuracy_takes_every_policy_kind_and_scores_it_alike(kind, onnx_spec, positions):
    reference = accuracy.score_agent(Policy(one, name="linear"), positions)
    result = accuracy.score_agents([forms(onnx_spec)[kind]], positions)[0]
    assert [row.moves for row in result.counts] == [row.moves for row in reference.counts]


@pytest.mark.parametrize("kind", KINDS)
def test_puzzles_take_every_policy_kind_and_score_it_alike(kind, onnx_spec, shipped_puzzles):
    reference = puzzles.score_agent(Policy(one), shipped_puzzles)
    result = puzzles.score_agents([forms(onnx_spec)[kind]], shipped_puzzles)[0]
    assert result.share == reference.share


@pytest.mark.parametrize("kind", KINDS)
def test_the_arena_takes_every_policy_kind_and_plays_it_alike(kind, onnx_spec):
    reference = round_robin([Policy(one, name="linear"), "greedy"], 6, seed=4, workers=1, progress=False)
    result = round_robin([forms(onnx_spec)[kind], "greedy"], 6, seed=4, workers=1, progress=False)
    np.testing.assert_array_equal(result.score, reference.score)


def test_a_batched_policy_is_asked_once_for_every_position(positions):
    calls = []

    def batched(observations, masks):
        calls.append(len(observations))
        return scores(observations, masks)

    accuracy.score_agent(BatchedPolicy(batched), positions)
    assert calls == [sum(p.counts_for_moves for p in positions)]


def test_an_agent_object_is_copied_per_build_and_labelled_by_its_name():
    agent = GreedyAgent()
    who = player(agent)
    assert isinstance(who, AgentPlayer) and who.label == "greedy"
    assert who.build() is not agent and isinstance(who.build(), GreedyAgent)


def test_a_one_argument_function_is_pettingzoos_observation_dict_policy():
    agent = policy_as_agent(lambda observation: int(np.flatnonzero(observation["action_mask"])[0]))
    assert type(agent).__name__ == "PolicyAgent"


def test_illegal_or_malformed_actions_are_one_line_naming_the_policy():
    masks = np.zeros((2, 256), np.int8)
    masks[:, 20] = 1
    cases = [
        ([20, 21], "played action 21, which is not legal \\(position 1\\)"),
        ([20], "returned \\(1,\\) actions for 2 positions"),
        (["a", "b"], "dtype <U1"),
        ([20.5, 20], "dtype float64"),
        ([20, 300], "action 300"),
    ]
    for actions, problem in cases:
        with pytest.raises(IllegalMoveError, match=problem) as caught:
            checked_actions(actions, masks, "mine")
        assert "mine" in str(caught.value) and "\n" not in str(caught.value)
    np.testing.assert_array_equal(checked_actions(np.array([20.0, 20.0]), masks, "mine"), [20, 20])


def test_a_lambda_plays_in_worker_processes_and_a_non_policy_is_one_line():
    pooled = round_robin([lambda o, m: one(o, m), "greedy"], 20, seed=1, workers=2, progress=False)
    alone = round_robin([lambda o, m: one(o, m), "greedy"], 20, seed=1, workers=1, progress=False)
    np.testing.assert_array_equal(pooled.score, alone.score)
    with pytest.raises(ArgumentError, match="an agent is given as a spec"):
        player(42)
