"""``state_dict:PATH`` (issue 41): a bare ``torch.save(network.state_dict())`` of one of the project's networks plays
exactly as the network it came from, which network and its size read from its keys and shapes alone; every file
that matches none, or that the checkpoint readers refuse (a pickled object, a huge declared tensor), is one line
naming it, checked before torch reads the file."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from test_checkpoint_allocation import compressed_copy, rewrite_record
from test_checkpoint_safety import Payload, real_observations

from trinity_env.agents import make
from trinity_env.agents.az import AZAgent, AZNetwork
from trinity_env.agents.loaders.checkpoint import MAX_HIDDEN, MAX_LAYERS, CheckpointError
from trinity_env.agents.loaders.state_dict import NetworkShape, load_state_dict
from trinity_env.agents.networks.board_network import BoardNetwork
from trinity_env.agents.networks.ppo_network import NetworkAgent, PolicyNetwork
from trinity_env.agents.registry import AgentSpecError
from trinity_env.agents.spec import AgentSpec
from trinity_env.cli import main

NETWORKS = {
    "ppo": (lambda: PolicyNetwork(8, 2), ",trainer=ppo", NetworkShape("mlp", 8, 2, False)),
    "ppo-tactics": (lambda: PolicyNetwork(6, 1, tactics=True), ",trainer=ppo", NetworkShape("mlp", 6, 1, True)),
    "az-mlp": (lambda: AZNetwork(8, 3, tactics=True), ",trainer=az", NetworkShape("mlp", 8, 3, True)),
    "az-board": (lambda: BoardNetwork(8, 2, tactics=True), "", NetworkShape("board", 8, 2, True)),
    "az-board-plain": (lambda: BoardNetwork(4, 1, tactics=False), "", NetworkShape("board", 4, 1, False)),
}
"""Each network kind: how to build one, what its spec adds after the path, and the shape read back from its keys."""


def trained_like(network: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """``network`` with its weights moved well away from the initialisation, so that its policy is far from uniform
    and a network read with the wrong activation or size would choose other moves."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in network.parameters():
            parameter.add_(torch.randn(parameter.shape, generator=generator) * 0.5)
    return network.eval()


def saved(path: Path, state) -> Path:
    torch.save(state, path)
    return path


@pytest.fixture(scope="module")
def positions():
    observations, masks = real_observations(48)
    return observations.astype(np.int8), masks.astype(np.int8)


def actions_of(agent, positions) -> list[int]:
    observations, masks = positions
    return [agent.act({"observation": o, "action_mask": m}) for o, m in zip(observations, masks)]


# ---------------------------------------------------------------------- each kind plays as the network it came from


@pytest.mark.parametrize("kind", sorted(NETWORKS))
def test_a_state_dict_plays_exactly_as_the_network_it_came_from(kind, tmp_path, positions):
    build, suffix, shape = NETWORKS[kind]
    torch.manual_seed(1)
    network = trained_like(build())
    path = saved(tmp_path / f"{kind}.pt", network.state_dict())
    spec = f"state_dict:{path}{suffix}"
    agent = make(spec)
    assert agent.name == spec and load_state_dict(path, "ppo" if kind.startswith("ppo") else "az")[1] == shape
    original = NetworkAgent(network) if kind.startswith("ppo") else AZAgent(network, 0)
    assert type(agent) is type(original)
    chosen = actions_of(agent, positions)
    assert chosen == actions_of(original, positions)
    assert len(set(chosen)) > 5  # a policy far from uniform: the comparison means something
    logits, values = agent.evaluate(*positions)  # the value head, as trinity accuracy reads it
    expected_logits, expected_values = original.evaluate(*positions)
    np.testing.assert_array_equal(logits, expected_logits)
    np.testing.assert_array_equal(values, expected_values)


def test_every_load_says_in_one_line_what_the_file_is_played_as(tmp_path, positions):
    """A ReLU MLP under PPO's names is read as PPO's Tanh network and plays other moves: keys and shapes cannot
    show it, so the load says what it assumes and where such a network goes instead (issue 51)."""
    from trinity_env.agents.networks.network import MLPNetwork

    torch.manual_seed(3)
    relu = trained_like(MLPNetwork(8, 2, activation="relu", bounded_value=False, orthogonal_policy=True))
    path = saved(tmp_path / "relu.pt", relu.state_dict())
    with pytest.warns(UserWarning, match=r"relu\.pt is played as PPO's PolicyNetwork \(Tanh hidden layers") as caught:
        agent = make(f"state_dict:{path},trainer=ppo")
    message = str(caught[0].message)
    assert "\n" not in message and "onnx:PATH" in message and "observations divided by 10" in message
    assert actions_of(agent, positions) != actions_of(NetworkAgent(relu), positions)  # what the line warns of
    for kind, played_as in (("az-mlp", "AlphaZero's MLP (ReLU"), ("az-board", "AlphaZero's board network")):
        build, suffix, _ = NETWORKS[kind]
        board = saved(tmp_path / f"{kind}.pt", build().state_dict())
        with pytest.warns(UserWarning, match=re.escape(f"is played as {played_as}")):
            make(f"state_dict:{board}{suffix}")


@pytest.mark.parametrize("kind", ["az-mlp", "az-board"])
def test_an_alphazero_state_dict_searches_with_sims_as_az_does(kind, tmp_path, positions):
    build, suffix, _ = NETWORKS[kind]
    torch.manual_seed(2)
    network = trained_like(build())
    path = saved(tmp_path / f"{kind}.pt", network.state_dict())
    agent = make(f"state_dict:{path}{suffix},sims=8,worlds=2,seed=3")
    assert agent.simulations == 8 and agent.worlds == 2
    few = (positions[0][:12], positions[1][:12])
    assert actions_of(agent, few) == actions_of(AZAgent(network, 8, worlds=2, seed=3), few)


def test_the_spec_is_checked_and_hashed_without_reading_the_file(tmp_path):
    path = saved(tmp_path / "board.pt", BoardNetwork(4, 1).state_dict())
    spec = AgentSpec.parse(f"state_dict:{path},sims=4")
    assert spec.path == str(path) and spec.families == ("tactical features", "AlphaZero search")
    assert AgentSpec.parse(f"state_dict:{path},trainer=ppo").families == ()
    assert spec.sha256() is not None and spec.sha256() != AgentSpec.parse("greedy").sha256()
    path.write_bytes(b"replaced")  # parsing read nothing: only build does
    assert AgentSpec.parse(f"state_dict:{path}").path == str(path)


@pytest.mark.parametrize(
    ("rest", "message"),
    [
        ("", "state_dict needs a file"),
        ("{path},trainer=sac", "trainer must be one of ppo, az, got 'sac'"),
        ("{path},trainer=ppo,sims=4", "trainer=ppo plays PPO's raw policy: .* got sims"),
        ("{path},sims=999999", "sims must be"),
        ("{path},threads=2", "state_dict takes no argument 'threads' \\(it takes path, trainer, sims"),
        ("{path},4", "state_dict .*positional"),
    ],
)
def test_bad_arguments_are_one_line_before_the_file_is_read(rest, message, tmp_path):
    path = tmp_path / "unread.pt"
    path.write_bytes(b"never read: the arguments are refused first")
    with pytest.raises(AgentSpecError, match=message) as refused:
        AgentSpec.parse(f"state_dict:{rest.format(path=path)}")
    assert "\n" not in str(refused.value)


def test_a_missing_file_or_a_folder_is_refused_at_parse(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint at"):
        AgentSpec.parse(f"state_dict:{tmp_path / 'absent.pt'}")
    saved(tmp_path / "absent.pt.pt", {})  # never PATH.pt, as a checkpoint path would
    with pytest.raises(CheckpointError, match="no checkpoint at"):
        AgentSpec.parse(f"state_dict:{tmp_path / 'absent.pt'}")
    with pytest.raises(CheckpointError, match="is a folder, not a state_dict file"):
        AgentSpec.parse(f"state_dict:{tmp_path}")


# ---------------------------------------------------------------------- files that match no network: one line each


def refused_files(tmp_path: Path) -> list[tuple[Path, str, str]]:
    """``(file, what the spec adds, the refusal)`` for each file that must not play."""
    torch.manual_seed(0)
    mlp = PolicyNetwork(8, 2).state_dict()
    board = BoardNetwork(4, 1).state_dict()
    body = {f"body.{2 * k}.weight": torch.zeros(8, 8) for k in range(MAX_LAYERS + 1)}
    cases = [
        ("renamed", {("policy.w" if k == "policy.weight" else k): v for k, v in mlp.items()}, "unexpected"),
        ("missing", {k: v for k, v in mlp.items() if k != "value.bias"}, r"missing \['value\.bias'\]"),
        ("extra", mlp | {"extra.weight": torch.zeros(2)}, r"unexpected \['extra\.weight'\]"),
        ("shape", mlp | {"policy.bias": torch.zeros(255)}, r"'policy\.bias' has shape \(255,\), expected \(256,\)"),
        ("inputs", mlp | {"body.0.weight": torch.zeros(8, 338)}, r"'body\.0\.weight' has shape \(8, 338\)"),
        ("gap", {k.replace("body.2.", "body.4."): v for k, v in mlp.items()}, r"missing \['body\.2\.bias'"),
        ("boardshape", board | {"where": torch.zeros(14, 4)}, r"'where' has shape \(14, 4\), expected \(15, 4\)"),
        ("foreign", {"fc1.weight": torch.zeros(64, 339), "fc2.weight": torch.zeros(256, 64)}, "matches none"),
        ("empty", {}, "is not a state_dict"),
        ("list", list(mlp.values()), "is not a state_dict"),
        ("keys", {1: torch.zeros(1)}, "a key that is not a string"),
        ("vector", {"body.0.weight": torch.zeros(8)}, r"'body\.0\.weight' must be a matrix"),
        ("deep", body, f"layers must be between 1 and {MAX_LAYERS}, got {MAX_LAYERS + 1}"),
        ("int", mlp | {"value.bias": torch.zeros(1, dtype=torch.int32)}, "dtype int32, not a floating-point"),
        ("nan", mlp | {"value.bias": torch.tensor([float("nan")])}, "holds NaN"),
        ("checkpoint", {"format": "trinity-towers-policy", "hidden": 8, "layers": 2, "model": mlp}, "matches none"),
    ]
    out = [(saved(tmp_path / f"{name}.pt", state), ",trainer=ppo", message) for name, state, message in cases]
    out.append((saved(tmp_path / "ambiguous.pt", mlp), "", "name its trainer: .*,trainer=ppo or .*,trainer=az"))
    out.append((saved(tmp_path / "board.pt", board), ",trainer=ppo", "holds a board network.*drop trainer=ppo"))
    return out


def test_every_file_matching_no_network_is_one_line_naming_it(tmp_path):
    for path, suffix, message in refused_files(tmp_path):
        with pytest.raises(CheckpointError, match=message) as refused:
            make(f"state_dict:{path}{suffix}")
        assert str(path) in str(refused.value) and "\n" not in str(refused.value), refused.value


def test_the_expected_shapes_are_listed_when_nothing_matches(tmp_path):
    path = saved(tmp_path / "foreign.pt", {"net.0.weight": torch.zeros(4, 339)})
    with pytest.raises(CheckpointError) as refused:
        make(f"state_dict:{path}")
    for named in ("'net.0.weight'", "body.0.weight [hidden, 339]", "policy.weight [256, hidden]", "tile.weight"):
        assert named in str(refused.value)


# ---------------------------------------------------------------------- the checkpoint readers' attacks, refused


def test_a_pickled_object_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / "marker"
    state = PolicyNetwork(8, 2).state_dict()
    state["value.bias"] = Payload(marker)
    path = saved(tmp_path / "hostile.pt", state)
    with pytest.raises(CheckpointError, match=r"hostile\.pt: refused without running it") as refused:
        make(f"state_dict:{path},trainer=ppo")
    assert not marker.exists() and "\n" not in str(refused.value)


def test_a_huge_declared_tensor_is_refused_before_anything_is_built(tmp_path):
    with torch.device("meta"):
        shapes = {key: tuple(t.shape) for key, t in AZNetwork(MAX_HIDDEN, 1).state_dict().items()}
    expanded = saved(tmp_path / "expanded.pt", {key: torch.zeros(1).expand(*shape) for key, shape in shapes.items()})
    assert expanded.stat().st_size < 30_000  # a few KB declaring tens of millions of weights
    with pytest.raises(CheckpointError, match=r"expanded\.pt: a tensor of shape .* is an expanded or strided view"):
        make(f"state_dict:{expanded},trainer=az")
    good = saved(tmp_path / "good.pt", PolicyNetwork(8, 2).state_dict())
    short = rewrite_record(good, tmp_path / "short.pt", lambda n, d: d[:8] if n.endswith("data/0") else d)
    with pytest.raises(CheckpointError, match=r"short\.pt: storage '0' declares .* but its record holds 8 bytes"):
        make(f"state_dict:{short},trainer=ppo")
    packed = compressed_copy(good, tmp_path / "packed.pt")
    with pytest.raises(CheckpointError, match=r"packed\.pt: the zip member .* is compressed"):
        make(f"state_dict:{packed},trainer=ppo")


def test_the_file_is_checked_before_torch_reads_it(tmp_path, monkeypatch):
    """A refused file never reaches ``torch.load``; a good one reaches it once, weights-only."""
    loads = []
    real = torch.load
    monkeypatch.setattr(torch, "load", lambda *args, **kwargs: loads.append(kwargs) or real(*args, **kwargs))
    bad = saved(tmp_path / "bad.pt", PolicyNetwork(8, 2).state_dict() | {"extra": torch.zeros(1)})
    with pytest.raises(CheckpointError, match="unexpected"):
        make(f"state_dict:{bad},trainer=ppo")
    assert loads == []
    make(f"state_dict:{saved(tmp_path / 'good.pt', PolicyNetwork(8, 2).state_dict())},trainer=ppo")
    assert [kwargs.get("weights_only") for kwargs in loads] == [True]


# ---------------------------------------------------------------------- the command line


def test_the_command_line_plays_it_and_refuses_a_bad_one_in_one_line(tmp_path, capsys):
    good = saved(tmp_path / "board.pt", trained_like(BoardNetwork(4, 1)).state_dict())
    assert main(["accuracy", "score", "--agents", f"state_dict:{good}", "--empty", "4", "--limit", "2", "--quiet"]) in (
        0,
        None,
    )
    assert f"state_dict:{good}" in capsys.readouterr().out
    ambiguous = saved(tmp_path / "mlp.pt", PolicyNetwork(8, 1).state_dict())
    assert main(["accuracy", "score", "--agents", f"state_dict:{ambiguous}", "--empty", "4", "--limit", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trinity accuracy: ") and err.count("\n") == 1 and "trainer=ppo" in err


def test_a_bare_state_dict_given_as_a_checkpoint_path_is_pointed_to_state_dict(tmp_path):
    path = saved(tmp_path / "weights.pt", PolicyNetwork(8, 2).state_dict())
    for spec in (str(path), f"az:{path}"):
        with pytest.raises(
            CheckpointError, match=f"not a trinity-towers .* plays as state_dict:{re.escape(str(path))}$"
        ) as refused:
            make(spec)
        assert "\n" not in str(refused.value)
    full = saved(tmp_path / "other.pt", {"format": "other", "model": PolicyNetwork(8, 2).state_dict()})
    with pytest.raises(CheckpointError, match=r"no format 'trinity-towers-policy'\)$"):
        make(str(full))  # a dict with fields is not a bare state_dict: no hint
