"""The board network's layers with int8 products (``FastBoardEvaluator``'s ``int8`` precision).

A round's product ``h @ [own | around]`` (``board_fast``) is most of the evaluation's work. Here
its inputs are 8-bit integers and it sums in int32 (onnxruntime's ``MatMulInteger``: VNNI's ``vpdpbusd``, four
times float32's multiply-adds per instruction, where the processor has it):

- **Weights**, per output column: ``w ~ q * scale``, ``q`` in [-127, 127], ``scale = max |w| / 127``, once.
- **Inputs**, per row (a tile of a position): the tile embeddings are never negative (ReLUs and a residual sum of
  them), so ``h ~ q * scale`` with ``q`` in [0, ``ACTIVATION_LEVELS``], ``scale = max h / ACTIVATION_LEVELS``; each
  row's scale follows its own largest entry.
- **One pass** per round (``_int8_round``) turns the int32 sums back into float32 (row scale x column scale), adds
  the bias and the neighbours' halves, the ReLU and the residual (the residual stream stays float32), and
  quantizes the updated row for the next round's product.

``Int8Linear`` does the same for one layer whose inputs are ReLU outputs (the placement's card layer): quantize the
rows, the product, one pass for the scales, the bias and the ReLU.

``ACTIVATION_LEVELS`` is 127, not 255: a processor without VNNI multiplies unsigned by signed bytes with
``vpmaddubsw``, which saturates a pair's sum at 32767 (255 x 127 x 2 would pass it); 127 x 127 x 2 does not, so the
figures are the same on every x86 processor. onnxruntime (the ``onnx`` extra) is imported here only; no torch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

__all__ = ["ACTIVATION_LEVELS", "WEIGHT_LEVELS", "Int8Linear", "Int8Rounds", "quantize_columns"]

ACTIVATION_LEVELS = 127
"""The largest quantized input (see the module: no pair of products passes int16 on any x86 processor)."""
WEIGHT_LEVELS = 127
"""The largest quantized weight's magnitude (symmetric, per output column)."""


def quantize_columns(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``weight ~ q * scale`` per column: int8 ``q`` in [-``WEIGHT_LEVELS``, ``WEIGHT_LEVELS``], float32 scales (1
    for a zero column)."""
    largest = np.abs(weight).max(axis=0)
    scale = np.where(largest > 0, largest / WEIGHT_LEVELS, 1.0).astype(np.float32)
    return np.round(weight / scale).astype(np.int8), scale


@njit(cache=True, fastmath=True)
def _quantize_rows(h, bits, q, scales):
    """Each row of ``h`` (``[rows, hidden]``, never negative; ``bits`` the same memory as int32) as ``q *
    scales[row]``, ``q`` uint8 in [0, ``ACTIVATION_LEVELS``]."""
    for r in range(h.shape[0]):
        _quantize_row(h[r], bits[r], q[r], scales, r)


@njit(cache=True, fastmath=True, inline="always")
def _quantize_row(row, bits, q, scales, r):
    """``row`` into ``q`` and ``scales[r]``. Its largest entry is taken over its bits as int32 (``bits``): for floats
    that are not negative the order is the same, and an integer maximum vectorizes where a float one does not
    (measured: 5x faster)."""
    top = 0
    for j in range(bits.size):
        top = max(top, bits[j])
    largest = np.float32(0.0) if top == 0 else np.float32(np.int32(top).view(np.float32))
    if largest <= 0:
        scales[r] = 1.0
        q[:] = 0
        return
    scales[r] = largest / np.float32(ACTIVATION_LEVELS)
    inverse = np.float32(ACTIVATION_LEVELS) / largest
    for j in range(row.size):
        q[j] = np.uint8(np.int32(row[j] * inverse + np.float32(0.5)))


@njit(cache=True, fastmath=True)
def _int8_round(h, bits, sums, row_scales, column_scales, bias, neighbours, q, next_scales, quantize):
    """One round in place from its int32 products ``sums`` (``[TILES, B, 2H]``, the quantized ``h @ [own |
    around]``): ``h[t] += relu(own + bias + the neighbours' around)``, each sum times its row's and column's scale
    (the neighbours' rows scaled first, their sum by the column's); then, where ``quantize``, the updated rows into
    ``q`` / ``next_scales`` (the next round's input). ``bits``: ``h``'s memory as int32; ``neighbours``: per tile,
    its neighbours' indices (-1 past the last)."""
    hidden = h.shape[2]
    batch = h.shape[1]
    around = np.empty(hidden, np.float32)
    for t in range(h.shape[0]):
        for b in range(batch):
            around[:] = 0.0
            for s in range(neighbours.shape[1]):
                n = neighbours[t, s]
                if n >= 0:
                    other = row_scales[n * batch + b]
                    for j in range(hidden):
                        around[j] += np.float32(sums[n, b, hidden + j]) * other
            scale = row_scales[t * batch + b]
            for j in range(hidden):
                total = np.float32(sums[t, b, j]) * scale * column_scales[j] + bias[j]
                total += around[j] * column_scales[hidden + j]
                if total > 0:
                    h[t, b, j] += total
            if quantize:
                _quantize_row(h[t, b], bits[t, b], q[t * batch + b], next_scales, t * batch + b)


def _session(weight: np.ndarray):
    """An onnxruntime session of one ``MatMulInteger`` by the constant int8 ``weight``: uint8 ``[rows, K]`` in,
    int32 ``[rows, N]`` out, on one thread that does not spin."""
    try:
        import onnxruntime
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        raise ImportError("the int8 precision needs onnxruntime and onnx: pip install 'trinity-towers[onnx]'") from None

    inputs, outputs = weight.shape
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["x", "weight"], ["sums"])],
        "int8_product",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [None, inputs])],
        [helper.make_tensor_value_info("sums", TensorProto.INT32, [None, outputs])],
        [numpy_helper.from_array(weight, "weight")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


class Int8Rounds:
    """The rounds of message passing with int8 products: ``rounds(h)`` updates tile-major float32 embeddings ``h``
    (``[TILES, B, hidden]``) in place and returns them, as ``FastBoardEvaluator._rounds`` does in float32.
    ``rounds``: each round's ``([own | around] weight [hidden, 2 hidden], bias)`` in float32; ``neighbours``: per
    tile, its neighbours' indices, -1 past the last (``board_fast.NEIGHBOUR_TILES``)."""

    def __init__(self, rounds: Sequence[tuple[np.ndarray, np.ndarray]], neighbours: np.ndarray):
        self.neighbours = neighbours
        self.rounds = []
        for weight, bias in rounds:
            q, scale = quantize_columns(weight)
            self.rounds.append((_session(q), scale, bias))

    def __call__(self, h: np.ndarray) -> np.ndarray:
        tiles, batch, hidden = h.shape
        h = np.ascontiguousarray(h)
        q = np.empty((tiles * batch, hidden), np.uint8)
        scales = np.empty(tiles * batch, np.float32)
        next_scales = np.empty_like(scales)
        bits = h.view(np.int32)
        _quantize_rows(h.reshape(tiles * batch, hidden), bits.reshape(tiles * batch, hidden), q, scales)
        for k, (session, column_scales, bias) in enumerate(self.rounds):
            sums = session.run(None, {"x": q})[0].reshape(tiles, batch, 2 * hidden)
            _int8_round(
                h, bits, sums, scales, column_scales, bias, self.neighbours, q, next_scales, k + 1 < len(self.rounds)
            )
            scales, next_scales = next_scales, scales
        return h


@njit(cache=True, fastmath=True)
def _dequantize(sums, row_scales, column_scales, bias, relu, out):
    """``out = sums * row scale * column scale + bias``, then the ReLU where ``relu`` (float32 ``[rows, N]``)."""
    for r in range(sums.shape[0]):
        scale = row_scales[r]
        for j in range(sums.shape[1]):
            out[r, j] = np.float32(sums[r, j]) * scale * column_scales[j] + bias[j]
            if relu and out[r, j] < 0:
                out[r, j] = 0.0


class Int8Linear:
    """A float32 layer ``(weight [K, N], bias)`` with int8 products, as the rounds': ``layer(x, relu)`` of inputs
    ``x`` that are never negative (float32 ``[rows, K]``: the ReLU outputs the heads read)."""

    def __init__(self, layer: tuple[np.ndarray, np.ndarray]):
        q, self.column_scales = quantize_columns(layer[0])
        self.session, self.bias = _session(q), layer[1]

    def __call__(self, x: np.ndarray, relu: bool = False) -> np.ndarray:
        x = np.ascontiguousarray(x, np.float32)
        q = np.empty(x.shape, np.uint8)
        scales = np.empty(len(x), np.float32)
        _quantize_rows(x, x.view(np.int32), q, scales)
        sums = self.session.run(None, {"x": q})[0]
        out = np.empty(sums.shape, np.float32)
        _dequantize(sums, scales, self.column_scales, self.bias, relu, out)
        return out
