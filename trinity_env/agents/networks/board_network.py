"""A policy-value network that sees the board: tiles with their neighbours' facing sides, hands as sets, lanes.

Why: the flat MLP (``trinity_env.agents.networks.network``) must learn from 339 numbers which of a tile's sides
faces which neighbour, separately for each of the 15 tiles and 16 deck slots. Here the game's
structure is built in:

- **Tiles.** Each tile is described by its own six entries and, for each side (top, right, bottom,
  left), its neighbour's owner and the neighbour's side facing back (``core.board.NEIGHBOURS``), then
  embedded by one layer shared by all tiles, plus a learned embedding of where the tile is. ``layers``
  rounds of message passing over the grid (a residual ReLU of the tile and the sum of its neighbours)
  let a tile see further than its neighbours.
- **Cards.** Every card of a deck is embedded by one shared layer from its sides and status; a hand
  is the sum of its cards' embeddings (a set: the order of the deck means nothing).
- **Lanes.** Each lane's tiles are averaged; the trunk (two ReLU layers of width ``hidden``) reads
  the scalars, the three lanes and the two decks, and gives the value (through tanh, in [-1, 1]).
- **Actions.** A draft pick's logit is a function of its card and the trunk; a placement's logit is
  bilinear: the card's query against the tile's key (the tile's embedding plus the trunk's), one
  batched matrix product for all 240 placements. (A ReLU over every card-tile pair was tried first:
  its [B, 16, 15, hidden] temporaries made the network several times slower than the MLP on a CPU.)
  With ``tactics`` each placement's logit also
  gets the learned function of its tactical features that ``MLPNetwork`` has
  (``trinity_env.agents.networks.tactics``), under the same parameter names (``placement.0``, ``placement.2``).

``board_numpy_evaluator`` runs the same network in plain numpy (float32) for the search's batches,
computing only the legal actions' logits (``trinity_env.agents.networks.board_fast.FastBoardEvaluator``); the search
layer never sees torch.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import torch
from torch import nn

from trinity_env.agents.networks.board_fast import FastBoardEvaluator
from trinity_env.agents.networks.tactics import FEATURES, tactical_features
from trinity_env.agents.view import observation_blocks
from trinity_env.core.board import LANES, NEIGHBOURS, POSITIONS, TILES
from trinity_env.spec.observation import (
    OBSERVATION_HIGH,
    OWN_CARD_FEATURES,
    SCALARS,
    THEIR_CARD_FEATURES,
    TILE_FEATURES,
)

__all__ = ["BoardNetwork", "board_numpy_evaluator"]

SIDES = 4
TILE_INPUTS = TILE_FEATURES + SIDES * 4  # per side: the neighbour is mine, theirs, its side facing back, exists


def _geometry() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per tile and side: the neighbour's index (``TILES``, a zero row, where there is none), the column of its
    side facing back, whether it exists; and the grid's adjacency matrix."""
    tile = np.full((TILES, SIDES), TILES, np.int64)
    column = np.full((TILES, SIDES), 2, np.int64)  # any side column of the zero row
    exists = np.zeros((TILES, SIDES), np.float32)
    adjacency = np.zeros((TILES, TILES), np.float32)
    for t, neighbours in enumerate(NEIGHBOURS):
        for n, side, back in neighbours:
            tile[t, side], column[t, side], exists[t, side] = n, 2 + back, 1.0
            adjacency[t, n] = 1.0
    return tile, column, exists, adjacency


NEIGHBOUR_TILE, NEIGHBOUR_COLUMN, NEIGHBOUR_EXISTS, ADJACENCY = _geometry()


class BoardNetwork(nn.Module):
    """AlphaZero's network on the board's structure (see the module): int8 observations [B, 339] and masks [B, 256]
    to masked logits and a value in [-1, 1]. ``hidden``: the width of every embedding; ``layers``: the rounds of
    message passing over the grid. The parameters are created in one fixed order: a seeded torch builds the same
    weights every time."""

    architecture: ClassVar[str] = "board"

    def __init__(self, hidden: int = 64, layers: int = 2, tactics: bool = True):
        super().__init__()
        self.hidden, self.layers, self.tactics = hidden, layers, tactics
        self.scale = hidden**-0.5
        h = hidden
        self.tile = nn.Linear(TILE_INPUTS, h)
        self.where = nn.Parameter(torch.randn(TILES, h) * 0.1)
        self.rounds = nn.ModuleList(nn.Linear(2 * h, h) for _ in range(layers))
        self.own_card = nn.Linear(OWN_CARD_FEATURES, h)
        self.their_card = nn.Linear(THEIR_CARD_FEATURES, h)
        self.trunk = nn.Sequential(nn.Linear(SCALARS + (LANES + 2) * h, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.value = nn.Linear(h, 1)
        self.draft_card = nn.Linear(h, h)
        self.draft_trunk = nn.Linear(h, h)
        self.draft_out = nn.Linear(h, 1)
        self.place_card = nn.Linear(h, h)
        self.place_tile = nn.Linear(h, h)
        self.place_trunk = nn.Linear(h, h)
        if tactics:
            self.placement = nn.Sequential(nn.Linear(FEATURES, 8), nn.ReLU(), nn.Linear(8, 1))
        for name, table in (
            ("neighbour_tile", NEIGHBOUR_TILE),
            ("neighbour_column", NEIGHBOUR_COLUMN),
            ("neighbour_exists", NEIGHBOUR_EXISTS),
            ("adjacency", ADJACENCY),
        ):
            self.register_buffer(name, torch.from_numpy(table), persistent=False)

    def forward(
        self, observations: torch.Tensor, masks: torch.Tensor, tactical: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits (illegal actions at -1e9) and values, as ``MLPNetwork.forward``."""
        tiles, cards, trunk = self.encode(observations)
        logits = self.logits(observations, masks, tactical, tiles, cards, trunk)
        return logits, torch.tanh(self.value(trunk).squeeze(-1))

    def encode(self, observations: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The tiles after the rounds of message passing ``[B, 15, hidden]``, the mover's cards ``[B, 16, hidden]``
        (zero where absent) and the trunk ``[B, hidden]``: what the heads read."""
        x = observations.float() / OBSERVATION_HIGH
        batch = x.shape[0]
        scalars = x[:, :SCALARS]
        tiles, own, theirs = observation_blocks(x)
        padded = torch.cat([tiles, tiles.new_zeros(batch, 1, TILE_FEATURES)], dim=1)
        around = [
            padded[:, self.neighbour_tile, 0],
            padded[:, self.neighbour_tile, 1],
            padded[:, self.neighbour_tile, self.neighbour_column],
            self.neighbour_exists.expand(batch, TILES, SIDES),
        ]
        h = torch.relu(self.tile(torch.cat([tiles, *around], dim=2)) + self.where)
        for layer in self.rounds:
            h = h + torch.relu(layer(torch.cat([h, self.adjacency @ h], dim=2)))
        present_own = (own[:, :, :SIDES].sum(-1, keepdim=True) > 0).float()
        present_theirs = (theirs[:, :, :SIDES].sum(-1, keepdim=True) > 0).float()
        cards = torch.relu(self.own_card(own)) * present_own
        their_cards = torch.relu(self.their_card(theirs)) * present_theirs
        lanes = h.reshape(batch, LANES, POSITIONS, -1).mean(2).flatten(1)
        g = self.trunk(torch.cat([scalars, lanes, cards.sum(1), their_cards.sum(1)], dim=1))
        return h, cards, g

    def logits(
        self,
        observations: torch.Tensor,
        masks: torch.Tensor,
        tactical: torch.Tensor | None,
        h: torch.Tensor,
        cards: torch.Tensor,
        g: torch.Tensor,
    ) -> torch.Tensor:
        """The masked logits from ``encode``'s tiles, cards and trunk."""
        draft = self.draft_out(torch.relu(self.draft_card(cards) + self.draft_trunk(g)[:, None])).squeeze(-1)
        keys = self.place_tile(h) + self.place_trunk(g)[:, None]  # [B, 15 tiles, hidden]
        place = self.place_card(cards) @ keys.transpose(1, 2) * self.scale  # [B, 16 cards, 15 tiles]
        if self.tactics:
            if tactical is None:
                tactical = tactical_features(observations)
            place = place + self.placement(tactical).squeeze(-1)
        logits = torch.cat([draft, place.flatten(1)], dim=1)
        return logits.masked_fill(~masks.bool(), -1e9)


def board_numpy_evaluator(network: BoardNetwork, precision: str = "float32") -> FastBoardEvaluator:
    """The same evaluation as the network's forward pass in numpy and numba (float32 by default, or another of
    ``precision.PRECISIONS``), doing only what the search reads (``trinity_env.agents.networks.board_fast``): no torch
    overhead per operation, no work on illegal actions."""
    weights = {key: tensor.detach().numpy() for key, tensor in network.state_dict().items()}
    return FastBoardEvaluator(weights, network.layers, network.tactics, precision)
