"""``state_dict:PATH``: a bare torch ``state_dict`` of one of the project's networks, played as that network.

A file written by ``torch.save(network.state_dict(), path)`` holds the weights and nothing else: no ``format``,
``hidden``, ``layers`` or ``tactics`` field (the project's own checkpoints, ``trinity_env.agents.loaders.checkpoint``,
carry them). Which network it is and its size are read here from its keys and tensor shapes alone:

- an MLP (``body.0.weight`` ``[hidden, 339]``, ``body.2.weight``... one per layer, ``policy.weight`` ``[256, hidden]``,
  ``value.weight`` ``[1, hidden]``): PPO's ``PolicyNetwork`` (``trinity_env.agents.networks.ppo_network``: Tanh, an
  unbounded value) or AlphaZero's ``AZNetwork`` (``trinity_env.agents.az``: ReLU, a value in [-1, 1]). The two have the
  same keys and shapes, so the spec says which: ``trainer=ppo`` or ``trainer=az``;
- AlphaZero's board network (``tile.weight`` ``[hidden, 22]``, ``where`` ``[15, hidden]``, ``rounds.N.weight``
  one per layer; ``trinity_env.agents.networks.board_network``);
- either with ``tactics`` when it holds the tactical head (``placement.0.weight``...).

The size found is checked against the shared limits, the network of that size built on the meta device and the
file's keys and shapes compared with it exactly: a missing, extra or misshapen entry is one ``CheckpointError``
line naming the file. All of it happens on the dry run (``checkpoint.read_torch``: no code in the file runs, no
tensor is built, every storage checked against the bytes the file holds); only then is the file read with
``torch.load(weights_only=True)`` and the weights cast to float32 and checked finite.

Keys and shapes cannot tell how the network computes: another activation or input scaling under the same names
(a ReLU MLP read as PPO's Tanh one, inputs not divided by ``OBSERVATION_HIGH``) would play wrongly without an
error. So every load says in one line (a ``UserWarning``) what the file is played as (``PLAYED_AS``), and points a
network of another kind to ONNX (``onnx:PATH``), which carries its computation with it.

An AlphaZero network plays its raw policy, or with search given ``sims=N`` (``AZAgent``'s arguments, as
``az:`` takes them); a PPO network plays its raw policy (``NetworkAgent``). torch is imported here, so only
``make("state_dict:...")`` loads this module.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from trinity_env.agents.az import NETWORKS, AZAgent
from trinity_env.agents.loaders.checkpoint import (
    CheckpointError,
    TensorInfo,
    check_state_dict,
    float32_weights,
    network_size_problem,
    read_torch,
)
from trinity_env.agents.networks.board_network import TILE_INPUTS
from trinity_env.agents.networks.ppo_network import NetworkAgent, PolicyNetwork
from trinity_env.core.board import TILES
from trinity_env.spec.agent import Agent
from trinity_env.spec.observation import OBSERVATION_HIGH, OBSERVATION_SIZE

TRAINERS = ("ppo", "az")
"""Whose MLP a ``state_dict:`` file holds (``trainer=``): PPO's (``PolicyNetwork``) or AlphaZero's (``AZNetwork``)."""
EXPECTED = (
    f"an MLP's (body.0.weight [hidden, {OBSERVATION_SIZE}], body.2.weight ... one a layer, policy.weight "
    f"[256, hidden], value.weight [1, hidden]) or a board network's (tile.weight [hidden, {TILE_INPUTS}], "
    f"where [{TILES}, hidden], rounds.N.weight one a layer, trunk.*, place_*, draft_*, value.*), either with "
    "placement.0/placement.2 for tactics"
)
"""What a ``state_dict:`` file must hold, named in the refusal of one that matches neither network."""

_SCALED = f"observations divided by {OBSERVATION_HIGH}"
PLAYED_AS = {
    ("mlp", "ppo"): f"PPO's PolicyNetwork (Tanh hidden layers, {_SCALED})",
    ("mlp", "az"): f"AlphaZero's MLP (ReLU hidden layers, {_SCALED}, value through tanh)",
    ("board", "az"): f"AlphaZero's board network (ReLU, {_SCALED}, read tile by tile, value through tanh)",
}
"""What a bare ``state_dict`` is played as, by network and trainer: the computation its keys cannot show."""

_ANCHORS = {"mlp": ("body.0.weight", r"body\.(\d+)\.weight"), "board": ("tile.weight", r"rounds\.(\d+)\.weight")}
"""Per network: the key whose first dimension is ``hidden``, and the pattern of the keys counting ``layers``."""


@dataclass(frozen=True)
class NetworkShape:
    """What a ``state_dict`` holds: its ``network`` (``"mlp"`` or ``"board"``), ``hidden``, ``layers``, ``tactics``."""

    network: str
    hidden: int
    layers: int
    tactics: bool

    def __str__(self) -> str:
        return f"{self.network} network (hidden={self.hidden}, layers={self.layers}, tactics={self.tactics})"


def _build(shape: NetworkShape, trainer: str) -> torch.nn.Module:
    build = PolicyNetwork if shape.network == "mlp" and trainer == "ppo" else NETWORKS[shape.network]
    return build(shape.hidden, shape.layers, shape.tactics)


def infer_shape(name: str, model: Any) -> NetworkShape:
    """The network a described ``state_dict`` (``TensorInfo`` values, the dry run's) is, from its keys and shapes
    alone, checked exactly against that network built on the meta device; one ``CheckpointError`` line if none."""
    if not isinstance(model, dict) or not model:
        raise CheckpointError(f"{name} is not a state_dict (a dict of tensor names to tensors): expected {EXPECTED}")
    if not all(isinstance(key, str) for key in model):
        raise CheckpointError(f"{name}: the state_dict has a key that is not a string")
    network = next((kind for kind, (anchor, _) in _ANCHORS.items() if anchor in model), None)
    if network is None:
        shown = [key[:40] for key in sorted(model)[:4]]
        raise CheckpointError(
            f"{name} matches none of the project's networks (its keys begin {shown}): expected {EXPECTED}"
        )
    anchor, pattern = _ANCHORS[network]
    first = model[anchor]
    if not isinstance(first, TensorInfo) or len(first.shape) != 2:
        got = first.shape[:4] if isinstance(first, TensorInfo) else type(first).__name__
        raise CheckpointError(f"{name}: {anchor!r} must be a matrix [hidden, inputs], got {got}")
    layers = sum(1 for key in model if re.fullmatch(pattern, key))
    shape = NetworkShape(network, first.shape[0], layers, "placement.0.weight" in model)
    problem = network_size_problem(shape.hidden, shape.layers, network)
    if problem:
        raise CheckpointError(f"{name}: {problem}")
    with torch.device("meta"):
        expected = {key: tuple(t.shape) for key, t in _build(shape, "az").state_dict().items()}
    check_state_dict(name, model, expected, str(shape))
    return shape


def _trainer_of(name: str, shape: NetworkShape, trainer: str | None) -> str:
    """Whose network ``shape`` is: the spec's ``trainer``, which an MLP needs and a board network may only say az."""
    if shape.network == "board":
        if trainer == "ppo":
            raise CheckpointError(f"{name} holds a board network, which only AlphaZero trains: drop trainer=ppo")
        return "az"
    if trainer is None:
        raise CheckpointError(
            f"{name} holds an {shape}: PPO's and AlphaZero's MLPs have the same keys and shapes, so name its trainer: "
            f"state_dict:{name},trainer=ppo or state_dict:{name},trainer=az"
        )
    return trainer


def load_state_dict(path: str | Path, trainer: str | None = None) -> tuple[torch.nn.Module, NetworkShape, str]:
    """The network a bare ``state_dict`` file holds, with its weights, its shape and its trainer (``"ppo"`` or
    ``"az"``); everything is checked on the dry run, before torch reads the file (see the module)."""
    if trainer is not None and trainer not in TRAINERS:
        raise ValueError(f"trainer must be one of {', '.join(TRAINERS)}, got {trainer!r}")
    name = str(path)
    found: list[tuple[NetworkShape, str]] = []

    def validate(payload: Any) -> None:
        shape = infer_shape(name, payload)
        found.append((shape, _trainer_of(name, shape, trainer)))

    weights = read_torch(Path(path), name, validate)
    shape, whose = found[0]
    network = _build(shape, whose)
    network.load_state_dict(float32_weights(name, dict(weights)))
    warnings.warn(
        f"{name} is played as {PLAYED_AS[shape.network, whose]}: a bare state_dict's keys and shapes cannot show "
        "another activation or input scaling, which would play wrongly; export such a network to ONNX (onnx:PATH)",
        UserWarning,
        stacklevel=2,
    )
    return network.eval(), shape, whose


def state_dict_agent(path: str | Path, trainer: str | None = None, **search: Any) -> Agent:
    """The agent of a ``state_dict:`` file: an AlphaZero network's ``AZAgent`` (``search``: its keywords,
    ``simulations`` 0 unless given: the raw policy), a PPO network's ``NetworkAgent`` (its raw policy, which takes
    no search keywords). Every argument is checked before the file is read."""
    if trainer == "ppo" and search:
        raise ValueError(f"trainer=ppo plays its raw policy: it takes no search argument, got {', '.join(search)}")
    search = {"simulations": 0} | search
    AZAgent.check_arguments(**search)
    network, _, whose = load_state_dict(path, trainer)
    if whose == "ppo":  # only where the spec said trainer=ppo, which took no search argument
        return NetworkAgent(network, name=str(path))
    return AZAgent(network, **search, name=str(path))
