"""Board geometry: 3 lanes x 5 tiles, tile ``t = 5*lane + position``.

Position 0 touches player 0's (white) tower, position 4 player 1's (black). Adjacency is
orthogonal on one grid, so cards in neighbouring lanes touch; there is no wrap-around.
The neighbour table is computed once so the rules engine never recomputes geometry.
"""

from __future__ import annotations

from trinity_env.core.cards import BOTTOM, LEFT, RIGHT, TOP

LANES = 3
POSITIONS = 5
TILES = LANES * POSITIONS
EMPTY = -1
"""Owner value of an empty tile."""


def tile_index(lane: int, position: int) -> int:
    return POSITIONS * lane + position


def tile_coords(tile: int) -> tuple[int, int]:
    """``(lane, position)`` of a tile."""
    return divmod(tile, POSITIONS)


def _neighbours(tile: int) -> tuple[tuple[int, int, int], ...]:
    lane, pos = tile_coords(tile)
    found = []
    # (neighbour tile, side of this card facing it, side of the neighbour facing back)
    if lane > 0:
        found.append((tile_index(lane - 1, pos), TOP, BOTTOM))
    if pos < POSITIONS - 1:
        found.append((tile_index(lane, pos + 1), RIGHT, LEFT))
    if lane < LANES - 1:
        found.append((tile_index(lane + 1, pos), BOTTOM, TOP))
    if pos > 0:
        found.append((tile_index(lane, pos - 1), LEFT, RIGHT))
    return tuple(found)


NEIGHBOURS: tuple[tuple[tuple[int, int, int], ...], ...] = tuple(_neighbours(t) for t in range(TILES))
"""``NEIGHBOURS[t]``: ``(n, side of t facing n, side of n facing t)`` for each neighbour n."""

LANE_TILES: tuple[tuple[int, ...], ...] = tuple(
    tuple(tile_index(lane, p) for p in range(POSITIONS)) for lane in range(LANES)
)
