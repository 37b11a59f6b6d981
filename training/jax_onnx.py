"""The JAX trainer's policy as an ONNX file built with ``onnx.helper`` (no code runs when it is loaded).

``export_onnx(params, layers, path)`` writes ``MLPNetwork``'s forward pass (``trinity_env.jax.networks.mlp_apply``
with a tanh body, tactical features and a bounded value) as a straight-line graph of standard operators, the
contract of ``trinity_env.agents.loaders.onnx_policy``: input ``observation`` int8 ``[batch, 339]``, outputs ``logits``
float32 ``[batch, 256]`` (unmasked: the player reads only the legal ones) and ``value`` float32 ``[batch]`` in
[-1, 1]. The per-placement tactical features (``networks.tactical_features``) are built from the observation with
constant gathers, comparisons and sums. tests/test_jax_ppo.py holds the file's outputs to the JAX network's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from trinity_env.core import DECK_SIZE, NUM_ACTIONS, PLACE_OFFSET
from trinity_env.core.board import LANES, POSITIONS, TILES
from trinity_env.core.cards import A  # the A side's value, as the observation writes it
from trinity_env.core.writes import write_bytes
from trinity_env.jax.rules import HAS_NEIGHBOUR, NEIGHBOUR_OR_SELF, SIDE_FACING
from trinity_env.spec.observation import (
    BOARD_OFFSET,
    OBSERVATION_HIGH,
    OBSERVATION_SIZE,
    OWN_CARD_FEATURES,
    OWN_DECK_OFFSET,
    THEIR_DECK_OFFSET,
    TILE_FEATURES,
)

OPSET = 17


class _Graph:
    """A graph under construction: ``node`` adds one node and returns its output's name."""

    def __init__(self) -> None:
        import onnx.helper

        self.helper = onnx.helper
        self.nodes: list = []
        self.initializers: list = []
        self._count = 0

    def const(self, array, name: str | None = None) -> str:
        from onnx import numpy_helper

        self._count += 1
        name = name or f"c{self._count}"
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(self, op: str, *inputs: str, **attributes) -> str:
        self._count += 1
        out = f"{op.lower()}{self._count}"
        self.nodes.append(self.helper.make_node(op, list(inputs), [out], **attributes))
        return out

    def linear(self, x: str, weight, bias) -> str:
        """``x @ weight.T + bias``, the weight in torch's ``[out, in]`` layout."""
        return self.node("Add", self.node("MatMul", x, self.const(np.asarray(weight, np.float32).T)), self.const(bias))

    def slice(self, x: str, start: int, stop: int, axis: int) -> str:
        return self.node(
            "Slice", x, self.const(np.array([start])), self.const(np.array([stop])), self.const(np.array([axis]))
        )

    def reshape(self, x: str, shape) -> str:
        return self.node("Reshape", x, self.const(np.array(shape, np.int64)))

    def gather(self, x: str, indices, axis: int) -> str:
        return self.node("Gather", x, self.const(np.asarray(indices, np.int64)), axis=axis)

    def cast(self, x: str) -> str:
        return self.node("Cast", x, to=1)  # float


def _beats(g: _Graph, side: str, facing: str) -> str:
    """The capture rule (``rules.beats``) on float tensors: a higher side, or A against A."""
    higher = g.node("Greater", side, facing)
    both_a = g.node("And", g.node("Equal", side, facing), g.node("Equal", side, g.const(np.float32(A))))
    return g.node("Or", higher, both_a)


def _tactical_features(g: _Graph, x: str) -> str:
    """``[batch, 16, 15, 6]``: ``networks.tactical_features`` of each row of the float observation ``x``."""
    board = g.reshape(g.slice(x, BOARD_OFFSET, OWN_DECK_OFFSET, 1), [-1, TILES, TILE_FEATURES])
    own_deck = g.reshape(g.slice(x, OWN_DECK_OFFSET, THEIR_DECK_OFFSET, 1), [-1, DECK_SIZE, OWN_CARD_FEATURES])
    cards = g.slice(own_deck, 0, 4, 2)  # [B, 16, 4]
    mine, theirs = g.slice(board, 0, 1, 2), g.slice(board, 1, 2, 2)  # [B, 15, 1]
    mine, theirs = g.reshape(mine, [-1, TILES]), g.reshape(theirs, [-1, TILES])
    sides = g.reshape(g.slice(board, 2, 6, 2), [-1, TILES * 4])
    facing = g.gather(sides, NEIGHBOUR_OR_SELF * 4 + SIDE_FACING[None, :], 1)  # [B, 15, 4]
    their_there = g.node("Equal", g.gather(theirs, NEIGHBOUR_OR_SELF, 1), g.const(np.float32(1)))
    open_to = g.node("And", their_there, g.const(HAS_NEIGHBOUR))  # [B, 15, 4]
    board_sides = g.reshape(sides, [-1, TILES, 4])
    chain = g.node(
        "ReduceSum", g.cast(g.node("And", open_to, _beats(g, board_sides, facing))), g.const(np.array([2])), keepdims=0
    )
    card_sides = g.reshape(cards, [-1, DECK_SIZE, 1, 4])
    facing4 = g.reshape(facing, [-1, 1, TILES, 4])
    captures = g.node("And", g.reshape(open_to, [-1, 1, TILES, 4]), _beats(g, card_sides, facing4))  # [B,16,15,4]
    captured = g.cast(captures)
    last = g.const(np.array([3]))
    direct = g.node("ReduceSum", captured, last, keepdims=0)  # [B, 16, 15]
    chain_there = g.reshape(g.gather(chain, NEIGHBOUR_OR_SELF, 1), [-1, 1, TILES, 4])
    domino = g.node("ReduceSum", g.node("Mul", captured, chain_there), last, keepdims=0)
    same_lane = g.const(np.array([0, 1, 0, 1], np.float32))
    in_lane = g.node("ReduceSum", g.node("Mul", captured, same_lane), last, keepdims=0)
    lane_of = np.repeat(np.arange(LANES), POSITIONS)

    def lane_count(owned: str) -> str:  # [B, 1, 15]: the owned cards in each tile's lane
        per_lane = g.node("ReduceSum", g.reshape(owned, [-1, LANES, POSITIONS]), g.const(np.array([2])), keepdims=0)
        return g.reshape(g.gather(per_lane, lane_of, 1), [-1, 1, TILES])

    own_lane, their_lane = lane_count(mine), lane_count(theirs)
    zeros = g.node("Mul", direct, g.const(np.float32(0)))  # [B, 16, 15]: broadcasts the lane features
    completes = g.node("Add", g.node("Add", own_lane, in_lane), g.const(np.float32(1)))
    completes = g.cast(g.node("GreaterOrEqual", completes, g.const(np.float32(POSITIONS))))
    blocks = g.node("Add", zeros, g.cast(g.node("Equal", their_lane, g.const(np.float32(POSITIONS - 1)))))
    fifth = g.const(np.float32(1 / POSITIONS))
    own_share = g.node("Add", zeros, g.node("Mul", own_lane, fifth))
    their_share = g.node("Add", zeros, g.node("Mul", their_lane, fifth))
    columns = [direct, domino, completes, blocks, own_share, their_share]
    return g.node("Concat", *[g.node("Unsqueeze", c, g.const(np.array([3]))) for c in columns], axis=3)


def build_model(params: dict, layers: int):
    """The ``onnx.ModelProto`` of the policy ``params`` (``training.jax_ppo.init_params``' names, numpy or JAX)."""
    import onnx
    from onnx import TensorProto, helper

    p = {name: np.asarray(value, np.float32) for name, value in params.items()}
    g = _Graph()
    raw = g.cast("observation")
    h = g.node("Mul", raw, g.const(np.float32(1 / OBSERVATION_HIGH)))
    for layer in range(layers):
        h = g.node("Tanh", g.linear(h, p[f"body.{2 * layer}.weight"], p[f"body.{2 * layer}.bias"]))
    logits = g.linear(h, p["policy.weight"], p["policy.bias"])
    features = _tactical_features(g, raw)
    hidden = g.node("Relu", g.linear(features, p["placement.0.weight"], p["placement.0.bias"]))
    bonus = g.reshape(
        g.linear(hidden, p["placement.2.weight"], p["placement.2.bias"]), [-1, NUM_ACTIONS - PLACE_OFFSET]
    )
    placed = g.node("Add", g.slice(logits, PLACE_OFFSET, NUM_ACTIONS, 1), bonus)
    g.nodes.append(helper.make_node("Concat", [g.slice(logits, 0, PLACE_OFFSET, 1), placed], ["logits"], axis=1))
    value = g.node("Tanh", g.linear(h, p["value.weight"], p["value.bias"]))
    g.nodes.append(helper.make_node("Reshape", [value, g.const(np.array([-1], np.int64))], ["value"]))
    graph = helper.make_graph(
        g.nodes,
        "trinity_jax_ppo",
        [helper.make_tensor_value_info("observation", TensorProto.INT8, ["batch", OBSERVATION_SIZE])],
        [
            helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", NUM_ACTIONS]),
            helper.make_tensor_value_info("value", TensorProto.FLOAT, ["batch"]),
        ],
        g.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="trinity jax_ppo")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def export_onnx(params: dict, layers: int, path: str | Path) -> Path:
    """Write the policy to ``path`` (atomically, as every file of the project) and return the path."""
    write_bytes(path, build_model(params, layers).SerializeToString())
    return Path(path)
