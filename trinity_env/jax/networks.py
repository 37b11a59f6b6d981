"""The shipped networks (``az-standard``'s ``BoardNetwork``, ``ppo-standard``'s ``MLPNetwork``) as JAX functions.

``board_network(path)`` reads a board-network checkpoint through the project's one checkpoint reader
(``trinity_env.agents.az.load_network``: checked dry before anything is built, weights only, cast to float32 and
checked finite; it needs torch, the train extra) and returns ``(params, apply)``: ``apply(params, observation,
mask)`` gives one position's masked logits (illegal actions at -1e9) and value, as ``BoardNetwork.forward``
does, with the tactical features computed in JAX from the observation as ``trinity_env.fast.tactics`` computes
them. ``jax.vmap`` it for a batch. ``mlp_network(path)`` does the same for a PPO checkpoint (default: the shipped
``ppo-standard``; ``trinity_env.agents.networks.ppo_network.load_checkpoint``). tests/test_jax_players.py holds
both to torch within 1e-5 (of each logit's size).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from trinity_env.core import PLACE_OFFSET, ArgumentError
from trinity_env.core.board import LANES, POSITIONS, TILES
from trinity_env.jax.rules import HAS_NEIGHBOUR, NEIGHBOUR_OR_SELF, SIDE_FACING, beats
from trinity_env.spec.observation import (
    BOARD_OFFSET,
    OBSERVATION_HIGH,
    OWN_CARD_FEATURES,
    OWN_DECK_OFFSET,
    SCALARS,
    THEIR_CARD_FEATURES,
    THEIR_DECK_OFFSET,
    TILE_FEATURES,
)

SHIPPED = Path(__file__).resolve().parents[1] / "agents" / "data" / "az-standard.pt"
"""The shipped ``az-standard`` checkpoint."""
SHIPPED_PPO = SHIPPED.with_name("ppo-standard.pt")
"""The shipped ``ppo-standard`` checkpoint."""
_SAME_LANE = np.array([False, True, False, True])
"""Which sides face a tile of the same lane (right and left)."""


def _geometry() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``BoardNetwork``'s tables: per tile and side the neighbour (``TILES``, a zero row, where none), the column of
    its side facing back (2 + side), whether it exists; the grid's adjacency."""
    tile = np.where(HAS_NEIGHBOUR, NEIGHBOUR_OR_SELF, TILES)
    column = np.where(HAS_NEIGHBOUR, 2 + SIDE_FACING[None, :], 2)
    adjacency = np.zeros((TILES, TILES), np.float32)
    for t in range(TILES):
        for k in range(4):
            if HAS_NEIGHBOUR[t, k]:
                adjacency[t, NEIGHBOUR_OR_SELF[t, k]] = 1.0
    return tile, column, HAS_NEIGHBOUR.astype(np.float32), adjacency


_TILE, _COLUMN, _EXISTS, _ADJACENCY = _geometry()


def tactical_features(observation):
    """``[16, 15, 6]`` float32 for one int8 observation: ``trinity_env.fast.tactics``' features of each placement
    (direct captures, the domino's rough count, completes my lane, fills the lane they hold four of, the two
    players' counts in the lane / 5)."""
    board = observation[BOARD_OFFSET:OWN_DECK_OFFSET].reshape(TILES, TILE_FEATURES).astype(jnp.int32)
    cards = observation[OWN_DECK_OFFSET:THEIR_DECK_OFFSET].reshape(-1, OWN_CARD_FEATURES)[:, :4].astype(jnp.int32)
    mine, theirs, sides = board[:, 0], board[:, 1], board[:, 2:]
    facing = sides[NEIGHBOUR_OR_SELF, SIDE_FACING[None, :]]  # [tile, side]: the neighbour's side facing back
    open_to = HAS_NEIGHBOUR & (theirs[NEIGHBOUR_OR_SELF] == 1)  # [tile, side]: an opponent card there
    chain = jnp.sum(open_to & beats(sides, facing), axis=1)  # [tile]
    captures = open_to[None] & beats(cards[:, None, :], facing[None])  # [card, tile, side]
    direct = captures.sum(-1)
    domino = jnp.sum(captures * chain[NEIGHBOUR_OR_SELF][None], axis=-1)
    in_lane = jnp.sum(captures & _SAME_LANE, axis=-1)
    own_lane = mine.reshape(LANES, POSITIONS).sum(1).repeat(POSITIONS)[None, :]
    their_lane = theirs.reshape(LANES, POSITIONS).sum(1).repeat(POSITIONS)[None, :]
    features = [
        direct,
        domino,
        own_lane + 1 + in_lane >= POSITIONS,
        jnp.broadcast_to(their_lane == POSITIONS - 1, direct.shape),
        jnp.broadcast_to(own_lane / POSITIONS, direct.shape),
        jnp.broadcast_to(their_lane / POSITIONS, direct.shape),
    ]
    return jnp.stack([f.astype(jnp.float32) for f in features], axis=-1)


def _linear(params: dict, name: str, x):
    return x @ params[f"{name}.weight"].T + params[f"{name}.bias"]


def board_apply(params: dict, observation, mask, *, layers: int, tactics: bool):
    """One position's masked logits [256] and value: ``BoardNetwork.forward`` step for step."""
    x = observation.astype(jnp.float32) / OBSERVATION_HIGH
    scalars = x[:SCALARS]
    tiles = x[BOARD_OFFSET:OWN_DECK_OFFSET].reshape(TILES, TILE_FEATURES)
    own = x[OWN_DECK_OFFSET:THEIR_DECK_OFFSET].reshape(-1, OWN_CARD_FEATURES)
    theirs = x[THEIR_DECK_OFFSET:].reshape(-1, THEIR_CARD_FEATURES)
    padded = jnp.concatenate([tiles, jnp.zeros((1, TILE_FEATURES), jnp.float32)])
    around = [padded[_TILE, 0], padded[_TILE, 1], padded[_TILE, _COLUMN], jnp.asarray(_EXISTS)]
    h = jax.nn.relu(_linear(params, "tile", jnp.concatenate([tiles, *around], axis=1)) + params["where"])
    for layer in range(layers):
        h = h + jax.nn.relu(_linear(params, f"rounds.{layer}", jnp.concatenate([h, _ADJACENCY @ h], axis=1)))
    present_own = (own[:, :4].sum(-1, keepdims=True) > 0).astype(jnp.float32)
    present_theirs = (theirs[:, :4].sum(-1, keepdims=True) > 0).astype(jnp.float32)
    cards = jax.nn.relu(_linear(params, "own_card", own)) * present_own
    their_cards = jax.nn.relu(_linear(params, "their_card", theirs)) * present_theirs
    lanes = h.reshape(LANES, POSITIONS, -1).mean(1).reshape(-1)
    g = jnp.concatenate([scalars, lanes, cards.sum(0), their_cards.sum(0)])
    g = jax.nn.relu(_linear(params, "trunk.2", jax.nn.relu(_linear(params, "trunk.0", g))))
    value = jnp.tanh(_linear(params, "value", g))[0]
    draft = _linear(
        params, "draft_out", jax.nn.relu(_linear(params, "draft_card", cards) + _linear(params, "draft_trunk", g))
    )
    keys = _linear(params, "place_tile", h) + _linear(params, "place_trunk", g)
    place = _linear(params, "place_card", cards) @ keys.T * params["where"].shape[1] ** -0.5
    if tactics:
        hidden = jax.nn.relu(_linear(params, "placement.0", tactical_features(observation)))
        place = place + _linear(params, "placement.2", hidden)[..., 0]
    logits = jnp.concatenate([draft[:, 0], place.reshape(-1)])
    return jnp.where(mask.astype(bool), logits, -1e9), value


def board_network(path: str | Path = SHIPPED) -> tuple[dict[str, Any], Any]:
    """``(params, apply)`` of a board-network checkpoint (default: the shipped ``az-standard``); a checkpoint of
    another architecture is one ``ArgumentError`` line."""
    from trinity_env.agents.az import load_network  # torch, only here

    network, _ = load_network(path)
    if getattr(network, "architecture", None) != "board":
        raise ArgumentError(
            f"{path}: a {getattr(network, 'architecture', '?')} network; only board networks run in JAX"
        )
    params = {name: jnp.asarray(t.detach().numpy()) for name, t in network.state_dict().items()}

    def apply(params, observation, mask):
        return board_apply(params, observation, mask, layers=network.layers, tactics=network.tactics)

    return params, apply


def mlp_apply(params: dict, observation, mask, *, layers: int, activation: str, bounded_value: bool, tactics: bool):
    """One position's masked logits [256] and value: ``MLPNetwork.forward`` step for step."""
    act = {"tanh": jnp.tanh, "relu": jax.nn.relu}[activation]
    features = observation.astype(jnp.float32) / OBSERVATION_HIGH
    for layer in range(layers):
        features = act(_linear(params, f"body.{2 * layer}", features))
    logits = _linear(params, "policy", features)
    if tactics:
        bonus = _linear(
            params, "placement.2", jax.nn.relu(_linear(params, "placement.0", tactical_features(observation)))
        )
        logits = jnp.concatenate([logits[:PLACE_OFFSET], logits[PLACE_OFFSET:] + bonus.reshape(-1)])
    value = _linear(params, "value", features)[0]
    return jnp.where(mask.astype(bool), logits, -1e9), jnp.tanh(value) if bounded_value else value


def mlp_network(path: str | Path = SHIPPED_PPO) -> tuple[dict[str, Any], Any]:
    """``(params, apply)`` of a PPO checkpoint's MLP (default: the shipped ``ppo-standard``)."""
    from trinity_env.agents.networks.ppo_network import load_checkpoint  # torch, only here

    network, _ = load_checkpoint(path)
    params = {name: jnp.asarray(t.detach().numpy()) for name, t in network.state_dict().items()}
    options = {
        "layers": network.layers,
        "activation": network.activation,
        "bounded_value": network.bounded_value,
        "tactics": network.tactics,
    }

    def apply(params, observation, mask):
        return mlp_apply(params, observation, mask, **options)

    return params, apply
