"""Per-action tactical features computed from the observation, for the policy network.

The plain MLP must learn from raw side values that a card captures a neighbour when its
facing side is higher; measured on a trained policy, it missed an immediate win in 29% of
its games against random and allowed the opponent one in 20%. These features hand it, for
every placement (card ``i`` on tile ``t``), what a player reads off the board at a glance:
how many cards it captures directly, roughly how many the domino adds, whether it completes
the mover's lane, whether it fills the lane the opponent holds four tiles of, and the
two players' counts in that lane. They are a deterministic function of the observation
(nothing hidden is read), exact for direct captures; the domino count ignores overlaps.
"""

from __future__ import annotations

import torch

from trinity_env.core.board import LANE_TILES, NEIGHBOURS, TILES
from trinity_env.core.cards import A
from trinity_env.envs.observation import BOARD_OFFSET, OWN_CARD_FEATURES, OWN_DECK_OFFSET, TILE_FEATURES

FEATURES = 6
DECK = 16


def _neighbour_table() -> tuple[torch.Tensor, ...]:
    tile = torch.zeros((TILES, 4), dtype=torch.long)
    own_side = torch.zeros((TILES, 4), dtype=torch.long)
    their_side = torch.zeros((TILES, 4), dtype=torch.long)
    valid = torch.zeros((TILES, 4))
    same_lane = torch.zeros((TILES, 4))
    for t, neighbours in enumerate(NEIGHBOURS):
        for k, (n, side, back) in enumerate(neighbours):
            tile[t, k], own_side[t, k], their_side[t, k], valid[t, k] = n, side, back, 1.0
            same_lane[t, k] = float(n // 5 == t // 5)
    return tile, own_side, their_side, valid, same_lane


_TILE, _SIDE, _BACK, _VALID, _SAME_LANE = _neighbour_table()
_LANE = torch.tensor([t // 5 for t in range(TILES)])
_LANE_MATRIX = torch.zeros((TILES, 3))
for _lane, _tiles in enumerate(LANE_TILES):
    _LANE_MATRIX[list(_tiles), _lane] = 1.0


def _beats(mine: torch.Tensor, theirs: torch.Tensor) -> torch.Tensor:
    return (mine > theirs) | ((mine == A) & (theirs == A))


def tactical_features(observations: torch.Tensor) -> torch.Tensor:
    """``[B, 16, 15, FEATURES]`` for raw observations ``[B, 339]`` (the observer's view)."""
    obs = observations.float()
    batch = obs.shape[0]
    board = obs[:, BOARD_OFFSET : BOARD_OFFSET + TILES * TILE_FEATURES].view(batch, TILES, TILE_FEATURES)
    mine, theirs, sides = board[..., 0], board[..., 1], board[..., 2:6]
    cards = obs[:, OWN_DECK_OFFSET : OWN_DECK_OFFSET + DECK * OWN_CARD_FEATURES].view(batch, DECK, OWN_CARD_FEATURES)
    card_sides = cards[..., :4]  # [B, 16, 4]
    # direct captures: card i on tile t against neighbour slot k
    facing = card_sides[:, :, _SIDE]  # [B, 16, 15, 4]
    back = sides[:, _TILE, _BACK]  # [B, 15, 4]
    opponent = theirs[:, _TILE] * _VALID  # [B, 15, 4]
    captured = _beats(facing, back[:, None]).float() * opponent[:, None]  # [B, 16, 15, 4]
    direct = captured.sum(-1)
    # domino: what each opponent card would take from its own opponent neighbours once flipped
    from_card = sides[:, torch.arange(TILES)[:, None], _SIDE]  # [B, 15, 4]: each card's side towards each slot
    chain = (_beats(from_card, back).float() * opponent).sum(-1)  # [B, 15]
    domino = (captured * chain[:, _TILE][:, None]).sum(-1)
    # lanes
    own_lane = mine @ _LANE_MATRIX  # [B, 3]
    their_lane = theirs @ _LANE_MATRIX
    own_here = own_lane[:, _LANE]  # [B, 15]
    their_here = their_lane[:, _LANE]
    in_lane = (captured * _SAME_LANE).sum(-1)  # captures inside the placed card's lane
    completes = ((own_here[:, None] + 1 + in_lane) >= 5).float()
    blocks = (their_here == 4).float()[:, None].expand(-1, DECK, -1)
    return torch.stack(
        [direct, domino, completes, blocks, own_here[:, None].expand(-1, DECK, -1) / 5,
         their_here[:, None].expand(-1, DECK, -1) / 5],
        dim=-1,
    )  # fmt: skip
