"""Every checkpoint names its network and whether it has tactics: the shipped ones carry both fields and load; the
same files without either (the format from before the fields were required) are refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from trinity_env.agents import az  # noqa: E402
from trinity_env.agents.loaders.checkpoint import CheckpointError  # noqa: E402
from trinity_env.agents.networks import ppo_network  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted([*(ROOT / "trinity_env" / "agents" / "data").glob("*.pt"), *(ROOT / "docs").glob("**/*.pt")])
LOADERS = {ppo_network.FORMAT: ppo_network.load_checkpoint, az.FORMAT: az.load_network}


def test_the_shipped_checkpoints_are_the_ones_expected():
    names = {str(path.relative_to(ROOT)) for path in SHIPPED}
    assert {"trinity_env/agents/data/ppo-standard.pt", "docs/alphazero/mlp-96k/network.pt"} <= names


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_shipped_checkpoint_names_its_network_and_tactics_and_loads(path):
    payload = torch.load(path, weights_only=True)
    assert type(payload["network"]) is str and type(payload["tactics"]) is bool
    network, loaded = LOADERS[payload["format"]](path)
    assert network.architecture == payload["network"] and network.tactics == payload["tactics"]
    for key, tensor in payload["model"].items():
        assert torch.equal(network.state_dict()[key], tensor.to(torch.float32)), key


@pytest.mark.parametrize("field", ["network", "tactics"])
@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: str(path.relative_to(ROOT)))
def test_a_checkpoint_without_the_field_is_refused_in_one_line(tmp_path, path, field):
    payload = torch.load(path, weights_only=True)
    old = tmp_path / path.name
    torch.save({key: value for key, value in payload.items() if key != field}, old)
    with pytest.raises(CheckpointError) as refused:
        LOADERS[payload["format"]](old)
    assert str(refused.value).startswith(f"{old} is missing the field '{field}'"), refused.value
    assert "\n" not in str(refused.value)
