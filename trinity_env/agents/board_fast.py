"""The board network's forward pass for the search, in float32 numpy, doing only the work the search reads.

``BoardNetwork`` (``trinity_env.agents.board_network``) gives 256 logits and a value per position; the search
reads the logits of the legal actions only. ``FastBoardEvaluator`` computes the same numbers as the network's
forward pass (to float rounding: the sums are taken in another order) and skips the rest:

- **Layout.** Tiles are kept tile-major, ``[TILES, B, hidden]``: every layer over tiles is one matrix product
  over all ``TILES x B`` rows (not ``B`` small ones), the message of a round is ONE product of the grid's
  adjacency matrix with ``[TILES, B * hidden]``, and the lanes' means are sums over a reshape. A round's
  ``Linear(2h, h)`` over ``[h, adjacency @ h]`` is ``h @ W1 + adjacency @ (h @ W2)``: no concatenation.
- **Tile inputs.** Each tile's inputs are columns of the observation (its own six, and per side the
  neighbour's owner and facing side), gathered by one precomputed index; where there is no neighbour the
  index points at a zero column, and the constant "the neighbour exists" inputs are folded into a per-tile bias
  (with the learned embedding of where the tile is).
- **Heads.** A draft pick's logit is computed only where the pick is legal; a placement's only for legal
  placements: the card's query only for cards in hand, the tile's key only for empty tiles, then one dot product
  per legal placement (and the tactical head on those rows only). Illegal actions are ``-1e9``, as the network's.
- **Empty boards.** A position with an empty board (every draft position, and the first placement) has the
  same tile embeddings whatever the hands: they are computed once, when the evaluator is built.

Nothing here imports torch: the weights come in as numpy arrays (``BoardNetwork.state_dict``'s names).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numba import njit

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
ADJACENCY = np.zeros((TILES, TILES), np.float32)
for _t, _neighbours in enumerate(NEIGHBOURS):
    for _n, _side, _back in _neighbours:
        ADJACENCY[_t, _n] = 1.0


@njit(cache=True)
def _tile_inputs(observations, rows, high, out):
    """Tile-major inputs ``out[t, r]`` (float32 ``[TILES, rows, TILE_COLUMNS' width]``) of the positions ``rows``."""
    for r in range(rows.size):
        b = rows[r]
        for t in range(TILE_COLUMNS.shape[0]):
            for k in range(TILE_COLUMNS.shape[1]):
                column = TILE_COLUMNS[t, k]
                out[t, r, k] = observations[b, column] * high if column != ZERO else 0.0


@njit(cache=True)
def _embed_cards(observations, offset, width, weight, bias, high, embeddings, total):
    """Each present card's embedding ``relu(x @ weight + bias)`` (``embeddings[b, i]``, zero for a card that is not
    there) and their sum per position (``total[b]``), for the deck of ``width`` features a card at ``offset``."""
    hidden = weight.shape[1]
    for b in range(observations.shape[0]):
        total[b, :] = 0.0
        for i in range(DECK_SIZE):
            base = offset + width * i
            present = False
            for k in range(SIDES):
                present |= observations[b, base + k] != 0
            if not present:
                embeddings[b, i, :] = 0.0
                continue
            row = embeddings[b, i]
            row[:] = bias
            for k in range(width):
                value = observations[b, base + k]
                if value != 0:
                    scaled = value * high
                    for j in range(hidden):
                        row[j] += scaled * weight[k, j]
            for j in range(hidden):
                if row[j] < 0:
                    row[j] = 0.0
                total[b, j] += row[j]


@njit(cache=True)
def _legal_rows(masks, card_slot, tile_slot, card_rows, tile_rows, draft_rows):
    """Number the (position, card) and (position, tile) pairs that a legal placement uses and the legal draft picks:
    ``card_slot[b, i]`` / ``tile_slot[b, t]`` index ``card_rows`` (``b * DECK_SIZE + i``) / ``tile_rows``
    (tile-major: ``t * B + b``); the counts of each."""
    batch = masks.shape[0]
    cards = tiles = drafts = 0
    for b in range(batch):
        for i in range(DECK_SIZE):
            if masks[b, i]:
                draft_rows[drafts] = b * DECK_SIZE + i
                drafts += 1
        tile_slot[b, :] = -1
        for i in range(DECK_SIZE):
            card_slot[b, i] = -1
            for t in range(TILES):
                if masks[b, DECK_SIZE + TILES * i + t]:
                    if card_slot[b, i] < 0:
                        card_slot[b, i] = cards
                        card_rows[cards] = b * DECK_SIZE + i
                        cards += 1
                    if tile_slot[b, t] < 0:
                        tile_slot[b, t] = tiles
                        tile_rows[tiles] = t * batch + b
                        tiles += 1
    return cards, tiles, drafts


@njit(cache=True, fastmath=True)
def _legal_logits(
    masks, card_slot, tile_slot, queries, keys, draft, draft_out, draft_bias, tactics, features, first, second, logits
):
    """Every legal action's logit into ``logits`` (the rest ``-1e9``): a draft pick's from its hidden layer
    ``draft`` (in ``_legal_rows``' order), a placement's as its card's query against its tile's key, plus the
    tactical head on its features when ``tactics``."""
    hidden = queries.shape[1]
    drafts = 0
    small = first[0].shape[1]
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
            for t in range(TILES):
                action = DECK_SIZE + TILES * i + t
                if not masks[b, action]:
                    continue
                k = tile_slot[b, t]
                total = np.float32(0.0)
                for j in range(hidden):
                    total += queries[q, j] * keys[k, j]
                if tactics:
                    layer[:] = first[1]
                    for f in range(features.shape[3]):
                        for j in range(small):
                            layer[j] += features[b, i, t, f] * first[0][f, j]
                    total += second[1][0]
                    for j in range(small):
                        if layer[j] > 0:
                            total += layer[j] * second[0][j, 0]
                logits[b, action] = total


class FastBoardEvaluator:
    """``evaluate(observations int8 [B, 339], masks int8 [B, 256]) -> (logits float32 [B, 256], values [B])`` of a
    board network given by its weights (``state_dict`` names, as numpy arrays), ``layers`` rounds of message
    passing and whether it has the tactical head: the search's evaluation callback (see the module). Batches are
    evaluated ``CHUNK`` positions at a time."""

    def __init__(self, weights: Mapping[str, np.ndarray], layers: int, tactics: bool):
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
        self.tile_bias = (tile_b + w["where"] + TILE_EXISTS @ tile_w[inputs:])[:, None, :].astype(np.float32)
        self.rounds = []
        for k in range(layers):
            weight, bias = linear(f"rounds.{k}")
            self.rounds.append((np.ascontiguousarray(weight[:hidden]), np.ascontiguousarray(weight[hidden:]), bias))
        self.own_card, self.their_card = linear("own_card"), linear("their_card")
        self.trunk_first, self.trunk_second = linear("trunk.0"), linear("trunk.2")
        # a lane's input is the mean of its tiles: the 1 / POSITIONS goes into the weights, the lane is a sum
        self.trunk_first[0][SCALARS : SCALARS + LANES * hidden] /= POSITIONS
        value_w, value_b = linear("value")
        # the trunk's output feeds three layers: one product gives the draft's and the placement's terms and the value
        draft_trunk, place_trunk = linear("draft_trunk"), linear("place_trunk")
        self.heads = (
            np.ascontiguousarray(np.concatenate([draft_trunk[0], place_trunk[0], value_w], axis=1)),
            np.concatenate([draft_trunk[1], place_trunk[1], value_b]),
        )
        self.draft_card = linear("draft_card")
        draft_out_w, draft_out_b = linear("draft_out")
        self.draft_out, self.draft_bias = draft_out_w[:, 0].copy(), np.float32(draft_out_b[0])
        scale = np.float32(hidden**-0.5)
        card_w, card_b = linear("place_card")
        self.place_card = (card_w * scale, card_b * scale)  # the bilinear product's scale, folded in
        self.place_tile = linear("place_tile")
        if tactics:
            self.first, self.second = linear("placement.0"), linear("placement.2")
        else:  # placeholders of the kernel's types, never read
            self.first = (np.zeros((1, 1), np.float32), np.zeros(1, np.float32))
            self.second = (np.zeros((1, 1), np.float32), np.zeros(1, np.float32))
        self.no_features = np.zeros((1, 1, 1, 1), np.float32)
        # the tile embeddings of an empty board: every input zero but the constant ones
        self.empty_tiles = self._rounds(np.maximum(np.broadcast_to(self.tile_bias, (TILES, 1, hidden)), 0))

    def _rounds(self, h: np.ndarray) -> np.ndarray:
        """The message-passing rounds over tile-major embeddings ``[TILES, B, hidden]`` (float32)."""
        tiles, batch, hidden = h.shape
        h = np.ascontiguousarray(h)
        for own, around, bias in self.rounds:
            flat = h.reshape(tiles * batch, hidden)
            message = (flat @ around).reshape(tiles, batch * hidden)
            out = (ADJACENCY @ message).reshape(tiles * batch, hidden)
            out += flat @ own
            out += bias
            np.maximum(out, 0, out=out)
            h = h + out.reshape(tiles, batch, hidden)
        return h

    def tiles(self, observations: np.ndarray) -> np.ndarray:
        """Tile-major embeddings ``[TILES, B, hidden]`` after the rounds."""
        batch = len(observations)
        occupied = observations[:, BOARD_OFFSET:OWN_DECK_OFFSET].any(axis=1)
        if not occupied.any():
            return np.repeat(self.empty_tiles, batch, axis=1)
        rows = np.arange(batch) if occupied.all() else np.flatnonzero(occupied)
        inputs = np.empty((TILES, rows.size, TILE_COLUMNS.shape[1]), np.float32)
        _tile_inputs(observations, rows, self.high, inputs)
        first = (inputs.reshape(TILES * rows.size, -1) @ self.tile_w).reshape(TILES, rows.size, self.hidden)
        first += self.tile_bias
        np.maximum(first, 0, out=first)
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

    def _evaluate(self, observations: np.ndarray, masks: np.ndarray, logits: np.ndarray, values: np.ndarray) -> None:
        batch, hidden = len(observations), self.hidden
        h = self.tiles(observations)
        cards = np.empty((batch, DECK_SIZE, hidden), np.float32)
        trunk = np.empty((batch, SCALARS + (LANES + 2) * hidden), np.float32)
        np.multiply(observations[:, :SCALARS], self.high, out=trunk[:, :SCALARS])
        lanes = trunk[:, SCALARS : SCALARS + LANES * hidden].reshape(batch, LANES, hidden)
        lanes[:] = h.reshape(LANES, POSITIONS, batch, hidden).sum(axis=1).transpose(1, 0, 2)
        own_sum = trunk[:, SCALARS + LANES * hidden : SCALARS + (LANES + 1) * hidden]
        their_sum = trunk[:, SCALARS + (LANES + 1) * hidden :]
        _embed_cards(observations, OWN_DECK_OFFSET, OWN_CARD_FEATURES, *self.own_card, self.high, cards, own_sum)
        their_cards = np.empty((batch, DECK_SIZE, hidden), np.float32)
        _embed_cards(
            observations, THEIR_DECK_OFFSET, THEIR_CARD_FEATURES, *self.their_card, self.high, their_cards, their_sum
        )
        g = trunk @ self.trunk_first[0]
        g += self.trunk_first[1]
        np.maximum(g, 0, out=g)
        g = g @ self.trunk_second[0]
        g += self.trunk_second[1]
        np.maximum(g, 0, out=g)
        heads = g @ self.heads[0]
        heads += self.heads[1]  # [B, the draft's hidden | the placement's hidden | value]
        np.tanh(heads[:, 2 * hidden], out=values)
        card_slot = np.empty((batch, DECK_SIZE), np.int64)
        tile_slot = np.empty((batch, TILES), np.int64)
        card_rows = np.empty(batch * DECK_SIZE, np.int64)
        tile_rows = np.empty(batch * TILES, np.int64)
        draft_rows = np.empty(batch * DECK_SIZE, np.int64)
        n_cards, n_tiles, n_drafts = _legal_rows(masks, card_slot, tile_slot, card_rows, tile_rows, draft_rows)
        flat_cards = cards.reshape(batch * DECK_SIZE, hidden)
        draft_rows = draft_rows[:n_drafts]
        draft = flat_cards[draft_rows] @ self.draft_card[0]
        draft += self.draft_card[1]
        draft += heads[draft_rows // DECK_SIZE, :hidden]
        queries = flat_cards[card_rows[:n_cards]] @ self.place_card[0]
        queries += self.place_card[1]
        tile_rows = tile_rows[:n_tiles]
        keys = h.reshape(TILES * batch, hidden)[tile_rows] @ self.place_tile[0]
        keys += self.place_tile[1]
        keys += heads[tile_rows % batch, hidden : 2 * hidden]
        features = tactical_batch(observations) if self.tactics and n_cards else self.no_features
        _legal_logits(
            masks,
            card_slot,
            tile_slot,
            queries,
            keys,
            draft,
            self.draft_out,
            self.draft_bias,
            self.tactics and n_cards > 0,
            features,
            self.first,
            self.second,
            logits,
        )
