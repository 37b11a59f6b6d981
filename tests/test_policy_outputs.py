"""The output contract of every policy (``trinity_env.agents.outputs``), held at load on a probe batch of real
positions and in play: a legal action's logit finite, a value finite (and in [-1, 1] where it is bounded).

A network of finite but huge weights once loaded everywhere and overflowed to NaN in play: the search then chose
action -1, so ``trinity arena --agents az:big.pt`` stopped with "action -1 is outside the layout" naming no file and
an ``initial_network`` run died in a 34-line traceback (float32, bfloat16 and int8 alike). Every form of policy is
now refused at load in one line naming its file (``test_every_policy_form_is_held_to_the_contract_at_load``, whose
forms are checked against every agent spec that reads a policy file)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trinity_env.agents import make, registry  # noqa: E402
from trinity_env.agents.az import AZAgent, evaluator, make_network, save_network  # noqa: E402
from trinity_env.agents.loaders.checkpoint import CheckpointError  # noqa: E402
from trinity_env.agents.networks.ppo_network import PolicyNetwork, save_checkpoint  # noqa: E402
from trinity_env.agents.outputs import PROBE_POSITIONS, output_problem, probe, probe_positions  # noqa: E402
from trinity_env.agents.spec_arguments import PARAMETERS  # noqa: E402
from trinity_env.cli import main  # noqa: E402

FORMS = ("onnx", "az", "az-standard", "ppo-standard", "state_dict", "a .pt by path", "an SB3 zip", "initial_network")
"""Every form a policy file is played in: the agent specs that read one, a checkpoint or SB3 zip named by its path,
and AlphaZero's ``initial_network``."""


def overflowing(network: torch.nn.Module, scale: float = 3e38) -> torch.nn.Module:
    """``network`` with finite weights of magnitude ``scale``, random signs: its forward pass overflows."""
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for parameter in network.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator).sign() * scale)
    return network


def big_board(scale: float = 1e30):
    torch.manual_seed(0)
    return overflowing(make_network("board", 16, 1, True), scale)


def test_the_probe_batch_is_real_positions_each_with_a_legal_action():
    observations, masks = probe_positions()
    assert observations.shape == (PROBE_POSITIONS, 339) and masks.shape == (PROBE_POSITIONS, 256)
    assert masks.any(axis=1).all()
    drafting = ~masks[:, 16:].any(axis=1)
    assert drafting.any() and (~drafting).any()  # draft picks and placements
    observations[0, 0] = 99  # a fresh copy each call
    assert probe_positions()[0][0, 0] != 99


def test_only_legal_logits_and_values_are_read():
    masks = np.array([[1, 0, 1, 0]], np.int8)
    assert output_problem(np.array([[0.5, np.nan, 1.0, np.inf]]), np.array([0.2]), masks, True) is None
    assert "logit inf" in output_problem(np.array([[np.inf, 0, 1, 0]]), None, masks, True)
    assert "value 2.0: a value must be in [-1, 1]" in output_problem(np.zeros((1, 4)), np.array([2.0]), masks, True)
    assert output_problem(np.zeros((1, 4)), np.array([2.0]), masks, False) is None  # PPO's value: a return
    assert "value nan: a value must be finite" in output_problem(np.zeros((1, 4)), np.array([np.nan]), masks, False)


def _onnx_nan(tmp_path):
    pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper, numpy_helper

    weights = numpy_helper.from_array(np.ones((339, 256), np.float32), "w")
    nodes = [
        helper.make_node("MatMul", ["observation", "w"], ["out"]),
        helper.make_node("Sub", ["out", "out"], ["zero"]),
        helper.make_node("Div", ["zero", "zero"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes,
        "policy",
        [helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", 339])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 256])],
        initializer=[weights],
    )
    path = tmp_path / "nan.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    return path


def _sb3_zip(tmp_path):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from test_checkpoint_allocation import pth_bytes, with_member

    from trinity_env.envs.single_agent import TrinityTowersEnv

    clean = tmp_path / "clean.zip"
    env = TrinityTowersEnv(opponent="random", draft="dealt")
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0, policy_kwargs={"net_arch": [16, 16]})
    overflowing(model.policy)
    model.save(clean)
    state = {key: value for key, value in model.policy.state_dict().items()}
    return with_member(clean, tmp_path / "big.zip", "policy.pth", pth_bytes(state))


def _hostile_forms(tmp_path, monkeypatch) -> dict[str, tuple[object, str]]:
    """Per form: a call that loads a policy whose outputs break the contract, and the file its refusal names."""
    from trainer_runs import AZ_TWO_ITERATIONS

    from training.az_config import AZConfig, pretrained_weights

    save_network(tmp_path / "big.pt", big_board())
    torch.save(big_board().state_dict(), tmp_path / "big-state.pt")
    torch.manual_seed(0)
    save_checkpoint(tmp_path / "big-ppo.pt", overflowing(PolicyNetwork(16, 1)))
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    save_network(shipped / "az-standard.pt", big_board())
    save_checkpoint(shipped / "ppo-standard.pt", overflowing(PolicyNetwork(16, 1)))
    monkeypatch.setattr(registry, "SHIPPED_DIR", shipped)
    config = AZConfig.from_dict(AZ_TWO_ITERATIONS | {"network": "board", "initial_network": str(tmp_path / "big.pt")})
    return {
        "onnx": (lambda: make(f"onnx:{_onnx_nan(tmp_path)}"), "nan.onnx"),
        "az": (lambda: make(f"az:{tmp_path / 'big.pt'},sims=4"), "big.pt"),
        "az-standard": (lambda: make("az-standard:sims=0"), "az-standard.pt"),
        "ppo-standard": (lambda: make("ppo-standard"), "ppo-standard.pt"),
        "state_dict": (lambda: make(f"state_dict:{tmp_path / 'big-state.pt'}"), "big-state.pt"),
        "a .pt by path": (lambda: make(str(tmp_path / "big-ppo.pt")), "big-ppo.pt"),
        "an SB3 zip": (lambda: make(str(_sb3_zip(tmp_path))), "big.zip"),
        "initial_network": (lambda: pretrained_weights(config), "initial_network"),
    }


def test_the_forms_are_every_spec_that_reads_a_policy_file():
    reading = {name for name, (_, arguments) in PARAMETERS.items() if "path" in arguments}
    assert reading | set(registry.shipped()) | {"a .pt by path", "an SB3 zip", "initial_network"} == set(FORMS)


def test_every_policy_form_is_held_to_the_contract_at_load(tmp_path, monkeypatch):
    cases = _hostile_forms(tmp_path, monkeypatch)
    assert set(cases) == set(FORMS), "a new form of policy belongs in FORMS and here"
    for form, (load, name) in cases.items():
        with pytest.raises(CheckpointError) as refused:
            load()
        message = str(refused.value)
        assert name in message and "gave a legal action the logit" in message and "\n" not in message, (form, message)


@pytest.mark.parametrize("precision", ["float32", "bfloat16", "int8"])
def test_an_overflowing_initial_network_is_refused_in_every_precision(tmp_path, precision):
    """Finite weights of 1e30 overflow to NaN in every evaluator: refused at load, before the run folder."""
    from trainer_runs import AZ_TWO_ITERATIONS

    from training.alphazero import train
    from training.az_config import AZConfig

    if precision == "int8":
        pytest.importorskip("onnxruntime")
    network = big_board()
    with np.errstate(all="ignore"):
        evaluate = evaluator(network, precision)
    with pytest.raises(CheckpointError, match=r"big\.pt gave a legal action the logit nan"):
        probe("big.pt", evaluate, bounded=True)  # the search's own evaluator in this precision
    save_network(tmp_path / "big.pt", network)
    fields = {"network": "board", "initial_network": str(tmp_path / "big.pt"), "precision": precision}
    config = AZConfig.from_dict(AZ_TWO_ITERATIONS | fields)
    with pytest.raises(CheckpointError, match=r"^initial_network .*big\.pt gave a legal action the logit nan"):
        train(config, tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()


def test_an_overflowing_az_network_in_the_arena_is_one_line_naming_the_file(tmp_path, capsys):
    save_network(tmp_path / "big.pt", big_board())
    out = tmp_path / "arena"
    assert (
        main(["arena", "--agents", f"az:{tmp_path / 'big.pt'},sims=4", "random", "--games", "2", "--out", str(out)])
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "big.pt gave a legal action the logit nan" in err and "action -1" not in err
    assert not out.exists()


def test_a_network_that_turns_bad_in_play_is_one_line_naming_the_file(tmp_path, monkeypatch):
    """The contract holds on every evaluation in play, not only on the probe batch: the search never sees NaN."""
    torch.manual_seed(0)
    save_network(tmp_path / "small.pt", make_network("board", 16, 1, True))
    real = evaluator  # the board network's numpy evaluator, which the agent plays through
    calls = []

    def turning(network):
        evaluate = real(network)

        def evaluate_then_nan(observations, masks):
            calls.append(len(observations))
            logits, values = evaluate(observations, masks)
            return (logits if len(calls) == 1 else np.full_like(logits, np.nan)), values

        return evaluate_then_nan

    monkeypatch.setattr("trinity_env.agents.az.numpy_evaluator", turning)
    agent = AZAgent.from_checkpoint(str(tmp_path / "small.pt"), simulations=8)
    observations, masks = probe_positions()
    with pytest.raises(CheckpointError, match=r"small\.pt gave a legal action the logit nan"):
        agent.act({"observation": observations[5], "action_mask": masks[5]})
