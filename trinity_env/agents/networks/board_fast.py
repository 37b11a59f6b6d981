"""The board network's forward pass for the search, in numpy and numba, doing only the work the search reads.

``BoardNetwork`` (``trinity_env.agents.networks.board_network``) gives 256 logits and a value per position; the search
reads the logits of the legal actions only. ``FastBoardEvaluator`` computes the same numbers as the network's
forward pass (in float32 to float rounding: the sums are taken in another order) and skips the rest:

- **Layout.** Tiles are kept tile-major, ``[TILES, B, hidden]``: every layer over tiles is one matrix product
  over all ``TILES x B`` rows (not ``B`` small ones). A round's ``Linear(2h, h)`` over ``[h, adjacency @ h]`` is
  ``h @ own + adjacency @ (h @ around)``: ONE product ``h @ [own | around]``, then one compiled pass adds each
  tile's neighbours' halves, the bias, the ReLU and the residual (``_round``), no temporaries.
- **Tile inputs.** Each tile's inputs are columns of the observation (its own six, and per side the
  neighbour's owner and facing side), gathered by one precomputed index; where there is no neighbour the
  index points at a zero column, and the constant "the neighbour exists" inputs are folded into a per-tile bias
  (with the learned embedding of where the tile is).
- **Heads.** A draft pick's logit is computed only where the pick is legal; a placement's only for legal
  placements. The bilinear product ``(card query) . (tile key)`` is taken in the other order: the tile's key layer
  is folded into the card's query layer (``M = W_card W_tile^T``), so there is one product per card in hand and one
  per position, none per tile, then one dot product per legal placement with the tile's embedding (and the
  tactical head on those rows only). Illegal actions are ``-1e9``, as the network's.
- **Empty boards.** A position with an empty board (every draft position, and the first placement) has the
  same tile embeddings whatever the hands: they are computed once, when the evaluator is built.
- **Precision** (``PRECISIONS``). ``float32``: numpy's BLAS, the forward pass's figures to float rounding.
  ``int8`` (``board_int8``): the rounds' products (most of the work) take 8-bit inputs with a
  scale per row and per weight column and sum in int32 (onnxruntime's ``MatMulInteger``: VNNI's four multiply-adds
  per byte lane), about four times float32's products per second (measured), within ``INT8_LOGIT_TOLERANCE`` /
  ``INT8_VALUE_TOLERANCE`` of the forward pass; every other layer stays float32. ``bfloat16``: the rounds'
  products take bfloat16 inputs and give bfloat16 results (torch's oneDNN), about twice float32's, within
  ``BFLOAT16_LOGIT_TOLERANCE`` / ``BFLOAT16_VALUE_TOLERANCE``; once numba's OpenMP threads have run in the process
  (the search on two threads), each torch product waits on them, about 10x slower (measured), unless the process
  started with ``OMP_WAIT_POLICY=PASSIVE`` or numba's ``workqueue`` threading layer. The precisions' tolerances and
  which one this processor multiplies fastest are ``trinity_env.agents.networks.precision``'s.

The float32 and int8 paths import no torch: the weights come in as numpy arrays (``BoardNetwork.state_dict``'s
names).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numba import njit

from trinity_env.agents.networks.precision import PRECISIONS
from trinity_env.core.actions import DECK_SIZE
from trinity_env.core.board import LANES, NEIGHBOURS, POSITIONS, TILES
from trinity_env.fast.tactics import tactical_batch
from trinity_env.spec.observation import (
    BOARD_OFFSET,
    OBSERVATION_HIGH,
    OBSERVATION_SIZE,
    OWN_CARD_FEATURES,
    OWN_DECK_OFFSET,
    SCALARS,
    THEIR_CARD_FEATURES,
    THEIR_DECK_OFFSET,
    TILE_FEATURES,
)

__all__ = ["FastBoardEvaluator"]

SIDES = 4
PLACEMENTS = DECK_SIZE * TILES
ZERO = OBSERVATION_SIZE
"""A tile input's column where there is no neighbour: the input is zero."""
CHUNK = 64
"""Positions evaluated at once: a chunk's tile embeddings stay in the core's cache (measured: 256 at once is slower)."""


def _tile_columns() -> tuple[np.ndarray, np.ndarray]:
    """Per tile, the observation columns of its inputs in ``BoardNetwork``'s order without the last block (its
    own six; per side the neighbour's owner "mine", "theirs", its side facing back), ``ZERO`` where there is no
    neighbour; and per tile and side whether the neighbour exists (the last block)."""
    columns = np.full((TILES, TILE_FEATURES + 3 * SIDES), ZERO, np.int64)
    exists = np.zeros((TILES, SIDES), np.float32)
    for t, neighbours in enumerate(NEIGHBOURS):
        columns[t, :TILE_FEATURES] = BOARD_OFFSET + TILE_FEATURES * t + np.arange(TILE_FEATURES)
        for n, side, back in neighbours:
            base = BOARD_OFFSET + TILE_FEATURES * n
            columns[t, TILE_FEATURES + side] = base
            columns[t, TILE_FEATURES + SIDES + side] = base + 1
            columns[t, TILE_FEATURES + 2 * SIDES + side] = base + 2 + back
            exists[t, side] = 1.0
    return columns, exists


TILE_COLUMNS, TILE_EXISTS = _tile_columns()
NEIGHBOUR_TILES = np.full((TILES, SIDES), -1, np.int64)
"""Per tile, its neighbours' indices (-1 past the last): the grid's adjacency as ``_round`` reads it."""
for _t, _neighbours in enumerate(NEIGHBOURS):
    NEIGHBOUR_TILES[_t, : len(_neighbours)] = [n for n, _side, _back in _neighbours]


def _float32_product(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    return x @ weight


def _bfloat16(weight: np.ndarray):
    """A weight matrix as a bfloat16 torch tensor (torch imported here, on the bfloat16 path only)."""
    import torch

    return torch.from_numpy(np.ascontiguousarray(weight)).to(torch.bfloat16)


def _bfloat16_product(x: np.ndarray, weight) -> np.ndarray:
    """``x @ weight`` with ``x`` rounded to bfloat16, ``weight`` a bfloat16 tensor: float32 out (oneDNN sums in
    float32; the result is rounded to bfloat16 on the way out, so the relative error is about 2^-8 per entry)."""
    import torch

    return torch.mm(torch.from_numpy(x).to(torch.bfloat16), weight).float().numpy()


@njit(cache=True, fastmath=True)
def _tile_layer(observations, rows, high, weight, bias, out):
    """The tile layer ``out[t, r] = relu(inputs @ weight + bias[t])`` (float32 ``[TILES, rows, hidden]``, ``bias``
    ``[TILES, hidden]``) of the positions ``rows``, each tile's inputs read from the observation (``TILE_COLUMNS``),
    the zero ones skipped; summed in ``out`` itself (through a temporary row: 1.7x slower, measured)."""
    hidden = weight.shape[1]
    for t in range(TILE_COLUMNS.shape[0]):
        for r in range(rows.size):
            b = rows[r]
            for j in range(hidden):
                out[t, r, j] = bias[t, j]
            for k in range(TILE_COLUMNS.shape[1]):
                column = TILE_COLUMNS[t, k]
                if column == ZERO or observations[b, column] == 0:
                    continue
                scaled = np.float32(observations[b, column]) * high
                for j in range(hidden):
                    out[t, r, j] += scaled * weight[k, j]
            for j in range(hidden):
                if out[t, r, j] < 0:
                    out[t, r, j] = 0.0


@njit(cache=True)
def _round(h, products, bias):
    """One message-passing round in place: ``h[t] += relu(products[t, :, :H] + bias + sum of products[n, :, H:]
    over t's neighbours n)``, where ``products`` is ``h @ [own | around]`` (``[TILES, B, 2H]``)."""
    hidden = h.shape[2]
    total = np.empty(hidden, np.float32)
    for t in range(h.shape[0]):
        for b in range(h.shape[1]):
            for j in range(hidden):
                total[j] = products[t, b, j] + bias[j]
            for s in range(NEIGHBOUR_TILES.shape[1]):
                n = NEIGHBOUR_TILES[t, s]
                if n >= 0:
                    for j in range(hidden):
                        total[j] += products[n, b, hidden + j]
            for j in range(hidden):
                if total[j] > 0:
                    h[t, b, j] += total[j]


@njit(cache=True, fastmath=True)
def _embed_cards(observations, offset, width, weight, bias, high, embeddings, total):
    """Each present card's embedding ``relu(x @ weight + bias)`` (into ``embeddings[b, i]``, zero for a card that is
    not there) and their sum per position (``total[b]``), for the deck of ``width`` features a card at ``offset``;
    summed in ``embeddings`` itself, as ``_tile_layer``."""
    hidden = weight.shape[1]
    for b in range(observations.shape[0]):
        for j in range(hidden):
            total[b, j] = 0.0
        for i in range(DECK_SIZE):
            base = offset + width * i
            present = False
            for k in range(SIDES):
                present |= observations[b, base + k] != 0
            if not present:
                for j in range(hidden):
                    embeddings[b, i, j] = 0.0
                continue
            for j in range(hidden):
                embeddings[b, i, j] = bias[j]
            for k in range(width):
                value = observations[b, base + k]
                if value != 0:
                    scaled = np.float32(value) * high
                    for j in range(hidden):
                        embeddings[b, i, j] += scaled * weight[k, j]
            for j in range(hidden):
                if embeddings[b, i, j] < 0:
                    embeddings[b, i, j] = 0.0
                total[b, j] += embeddings[b, i, j]


@njit(cache=True)
def _legal_rows(masks, card_slot, card_rows, draft_rows):
    """Number the (position, card) pairs that a legal placement uses and the legal draft picks: ``card_slot[b, i]``
    indexes ``card_rows`` (``b * DECK_SIZE + i``), -1 where card ``i`` has no legal placement; the counts of each."""
    cards = drafts = 0
    for b in range(masks.shape[0]):
        for i in range(DECK_SIZE):
            if masks[b, i]:
                draft_rows[drafts] = b * DECK_SIZE + i
                drafts += 1
        for i in range(DECK_SIZE):
            card_slot[b, i] = -1
            for t in range(TILES):
                if masks[b, DECK_SIZE + TILES * i + t]:
                    card_slot[b, i] = cards
                    card_rows[cards] = b * DECK_SIZE + i
                    cards += 1
                    break
    return cards, drafts


@njit(cache=True, fastmath=True)
def _legal_logits(
    masks,
    card_slot,
    queries,
    cards,
    aims,
    offsets,
    h,
    draft,
    draft_out,
    draft_bias,
    tactics,
    features,
    first_w,
    first_b,
    second_w,
    second_b,
    logits,
):
    """Every legal action's logit into ``logits`` (the rest ``-1e9``): a draft pick's from its hidden layer
    ``draft`` (in ``_legal_rows``' order); a placement's as its card's query (``queries``, already through the tile's
    key layer) against the tile's embedding ``h[t, b]``, plus the card against the position's aim (``cards[b, i]``
    dot ``aims[b]``, plus ``offsets[b]``): the bilinear head's product taken in another order; plus the tactical
    head on its features when ``tactics`` (its layers as separate arrays, the zero features skipped: 2.5x faster
    than through tuples, measured)."""
    hidden = queries.shape[1]
    drafts = 0
    small = first_b.size
    layer = np.empty(small, np.float32)
    for b in range(masks.shape[0]):
        logits[b, :] = -1e9
        for i in range(DECK_SIZE):
            if masks[b, i]:
                total = draft_bias
                for j in range(hidden):
                    if draft[drafts, j] > 0:
                        total += draft[drafts, j] * draft_out[j]
                logits[b, i] = total
                drafts += 1
        for i in range(DECK_SIZE):
            q = card_slot[b, i]
            if q < 0:
                continue
            card = offsets[b]
            for j in range(hidden):
                card += cards[b, i, j] * aims[b, j]
            for t in range(TILES):
                action = DECK_SIZE + TILES * i + t
                if not masks[b, action]:
                    continue
                total = card
                for j in range(hidden):
                    total += queries[q, j] * h[t, b, j]
                if tactics:
                    for j in range(small):
                        layer[j] = first_b[j]
                    for f in range(features.shape[3]):
                        value = features[b, i, t, f]
                        if value != 0:
                            for j in range(small):
                                layer[j] += value * first_w[f, j]
                    total += second_b
                    for j in range(small):
                        if layer[j] > 0:
                            total += layer[j] * second_w[j]
                logits[b, action] = total


class FastBoardEvaluator:
    """``evaluate(observations int8 [B, 339], masks int8 [B, 256]) -> (logits float32 [B, 256], values [B])`` of a
    board network given by its weights (``state_dict`` names, as numpy arrays), ``layers`` rounds of message
    passing and whether it has the tactical head: the search's evaluation callback (see the module). Batches are
    evaluated ``CHUNK`` positions at a time. ``precision`` (``PRECISIONS``): the rounds' products' inputs, float32
    (numpy's BLAS), bfloat16 (torch's oneDNN; float32 sums, ``BFLOAT16_LOGIT_TOLERANCE``) or int8 (onnxruntime;
    int32 sums, ``INT8_LOGIT_TOLERANCE``)."""

    def __init__(self, weights: Mapping[str, np.ndarray], layers: int, tactics: bool, precision: str = "float32"):
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
        self.precision = precision
        w = {key: np.asarray(value, np.float32) for key, value in weights.items()}

        def linear(name: str) -> tuple[np.ndarray, np.ndarray]:
            return np.ascontiguousarray(w[f"{name}.weight"].T), w[f"{name}.bias"].copy()

        self.tactics = tactics
        self.high = np.float32(1 / OBSERVATION_HIGH)
        tile_w, tile_b = linear("tile")
        hidden = self.hidden = tile_w.shape[1]
        inputs = TILE_COLUMNS.shape[1]
        self.tile_w = np.ascontiguousarray(tile_w[:inputs])
        # the bias of each tile: the layer's, where it is, and the constant "neighbour exists" inputs
        self.tile_bias = (tile_b + w["where"] + TILE_EXISTS @ tile_w[inputs:]).astype(np.float32)
        # a round's Linear(2h, h) over [h, adjacency @ h] is h @ own + adjacency @ (h @ around): one product
        # h @ [own | around], the neighbours' sum in ``_round``
        rounds = [linear(f"rounds.{k}") for k in range(layers)]
        self.rounds = [(np.concatenate([weight[:hidden], weight[hidden:]], axis=1), bias) for weight, bias in rounds]
        self.own_card, self.their_card = linear("own_card"), linear("their_card")
        trunk_first, self.trunk_second = linear("trunk.0"), linear("trunk.2")
        # a lane's input is the mean of its tiles: the 1 / POSITIONS goes into the weights, the lane is a sum
        trunk_first[0][SCALARS : SCALARS + LANES * hidden] /= POSITIONS
        self.trunk_first = trunk_first
        value_w, value_b = linear("value")
        draft_trunk, place_trunk = linear("draft_trunk"), linear("place_trunk")
        tile_key_w, tile_key_b = linear("place_tile")
        self.draft_card = linear("draft_card")
        draft_out_w, draft_out_b = linear("draft_out")
        self.draft_out, self.draft_bias = draft_out_w[:, 0].copy(), np.float32(draft_out_b[0])
        # the placement's logit is s (e W_c + b_c) . (h W_t + aim), aim = b_t + the trunk's term, s = hidden^-1/2:
        # (e M + m) . h + e . (s W_c aim) + s b_c . aim with M = s W_c W_t^T, m = s b_c W_t^T; one product per card
        # in hand and one per position instead of one per card and one per empty tile
        scale = hidden**-0.5
        card_w, card_b = (np.asarray(a, np.float64) for a in linear("place_card"))
        key_w = np.asarray(tile_key_w, np.float64)
        self.place_card = ((scale * card_w @ key_w.T).astype(np.float32), (scale * card_b @ key_w.T).astype(np.float32))
        # the trunk's output feeds three layers; the placement's term (aim, the tile key's bias in it) only through
        # s W_c aim and s b_c . aim, linear in it: folded in, one product gives the draft's term, s W_c aim, the value
        # and s b_c . aim
        aim_w, aim_b = np.asarray(place_trunk[0], np.float64), np.asarray(place_trunk[1] + tile_key_b, np.float64)
        fold = np.concatenate([scale * card_w.T, scale * card_b[:, None]], axis=1)  # [hidden, hidden + 1]
        self.heads = (
            np.ascontiguousarray(np.concatenate([draft_trunk[0], aim_w @ fold, value_w], axis=1), np.float32),
            np.concatenate([draft_trunk[1], aim_b @ fold, value_b]).astype(np.float32),
        )  # [B, the draft's hidden | s W_c aim | s b_c . aim | value]
        if tactics:
            second_w, second_b = linear("placement.2")
            self.tactical_head = (*linear("placement.0"), second_w[:, 0].copy(), np.float32(second_b[0]))
        else:  # placeholders of the kernel's types, never read
            self.tactical_head = (np.zeros((1, 1), np.float32), *np.zeros((2, 1), np.float32), np.float32(0))
        self.no_features = np.zeros((1, 1, 1, 1), np.float32)
        self.round_product = _float32_product
        # the tile embeddings of an empty board, every input zero but the constant ones: in float32 either way
        self.empty_tiles = self._rounds(np.maximum(self.tile_bias[:, None, :], 0))
        if precision == "bfloat16":  # the rounds' products: the rest are too small to gain (measured)
            self.round_product = _bfloat16_product
            self.rounds = [(_bfloat16(weight), bias) for weight, bias in self.rounds]
        if precision == "int8":  # the rounds' products and the placement's card layer (3x faster, measured); the
            # trunk's layers and heads stay float32: in int8 the search chose float32's move in 91-95% of positions
            # instead of 98% (measured), the trunk's first layer's inputs of several scales lost most
            from trinity_env.agents.networks.board_int8 import Int8Linear, Int8Rounds

            self._rounds = Int8Rounds(self.rounds, NEIGHBOUR_TILES)
            self.place_card = Int8Linear(self.place_card)

    def _rounds(self, h: np.ndarray) -> np.ndarray:
        """The message-passing rounds over tile-major embeddings ``[TILES, B, hidden]`` (float32), in place."""
        tiles, batch, hidden = h.shape
        h = np.ascontiguousarray(h)
        for weight, bias in self.rounds:
            products = self.round_product(h.reshape(tiles * batch, hidden), weight)
            _round(h, products.reshape(tiles, batch, 2 * hidden), bias)
        return h

    def tiles(self, observations: np.ndarray) -> np.ndarray:
        """Tile-major embeddings ``[TILES, B, hidden]`` after the rounds."""
        batch = len(observations)
        occupied = observations[:, BOARD_OFFSET:OWN_DECK_OFFSET].any(axis=1)
        if not occupied.any():
            return np.repeat(self.empty_tiles, batch, axis=1)
        rows = np.arange(batch) if occupied.all() else np.flatnonzero(occupied)
        first = np.empty((TILES, rows.size, self.hidden), np.float32)
        _tile_layer(observations, rows, self.high, self.tile_w, self.tile_bias, first)
        if rows.size == batch:
            return self._rounds(first)
        h = np.empty((TILES, batch, self.hidden), np.float32)
        h[:, ~occupied] = self.empty_tiles
        h[:, rows] = self._rounds(first)
        return h

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        observations = np.ascontiguousarray(observations, np.int8)
        masks = np.ascontiguousarray(masks, np.int8)
        batch = len(observations)
        logits = np.empty((batch, DECK_SIZE + PLACEMENTS), np.float32)
        values = np.empty(batch, np.float32)
        for start in range(0, batch, CHUNK):
            end = min(start + CHUNK, batch)
            self._evaluate(observations[start:end], masks[start:end], logits[start:end], values[start:end])
        return logits, values

    def _layer(self, x: np.ndarray, layer, relu: bool = False) -> np.ndarray:
        if not isinstance(layer, tuple):  # an int8 layer (``board_int8.Int8Linear``)
            return layer(x, relu)
        out = x @ layer[0]
        out += layer[1]
        return np.maximum(out, 0, out=out) if relu else out

    def _evaluate(self, observations: np.ndarray, masks: np.ndarray, logits: np.ndarray, values: np.ndarray) -> None:
        batch, hidden = len(observations), self.hidden
        h = self.tiles(observations)
        cards = np.empty((batch, DECK_SIZE, hidden), np.float32)
        trunk = np.empty((batch, SCALARS + (LANES + 2) * hidden), np.float32)
        np.multiply(observations[:, :SCALARS], self.high, out=trunk[:, :SCALARS])
        lanes = trunk[:, SCALARS : SCALARS + LANES * hidden].reshape(batch, LANES, hidden)
        lanes[:] = h.reshape(LANES, POSITIONS, batch, hidden).sum(axis=1).transpose(1, 0, 2)
        sums = np.empty((2, batch, hidden), np.float32)  # contiguous: a slice of ``trunk`` is 2x slower (measured)
        _embed_cards(observations, OWN_DECK_OFFSET, OWN_CARD_FEATURES, *self.own_card, self.high, cards, sums[0])
        theirs = np.empty_like(cards)  # the opponent's cards: their sum only
        _embed_cards(observations, THEIR_DECK_OFFSET, THEIR_CARD_FEATURES, *self.their_card, self.high, theirs, sums[1])
        trunk[:, SCALARS + LANES * hidden :].reshape(batch, 2, hidden)[:] = sums.transpose(1, 0, 2)
        g = self._layer(self._layer(trunk, self.trunk_first, relu=True), self.trunk_second, relu=True)
        heads = self._layer(g, self.heads)  # [B, the draft's hidden | s W_c aim | s b_c . aim | value]
        np.tanh(heads[:, 2 * hidden + 1], out=values)
        card_slot = np.empty((batch, DECK_SIZE), np.int64)
        card_rows = np.empty(batch * DECK_SIZE, np.int64)
        draft_rows = np.empty(batch * DECK_SIZE, np.int64)
        n_cards, n_drafts = _legal_rows(masks, card_slot, card_rows, draft_rows)
        flat_cards = cards.reshape(batch * DECK_SIZE, hidden)
        draft_rows = draft_rows[:n_drafts]
        draft = self._layer(np.ascontiguousarray(flat_cards[draft_rows]), self.draft_card)
        draft += heads[draft_rows // DECK_SIZE, :hidden]
        queries = self._layer(np.ascontiguousarray(flat_cards[card_rows[:n_cards]]), self.place_card)
        aims, offsets = np.ascontiguousarray(heads[:, hidden : 2 * hidden]), np.ascontiguousarray(heads[:, 2 * hidden])
        features = tactical_batch(observations, masks) if self.tactics and n_cards else self.no_features
        _legal_logits(
            masks,
            card_slot,
            queries,
            cards,
            aims,
            offsets,
            h,
            draft,
            self.draft_out,
            self.draft_bias,
            self.tactics and n_cards > 0,
            features,
            *self.tactical_head,
            logits,
        )
