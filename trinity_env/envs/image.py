"""An image of the board as an RGB array, drawn with Pillow: no window, no pygame.

White's towers stand at the left end of each lane, black's at the right. Each card is a
tile in its owner's colour with its four side values at its edges; the last move is
outlined: gold for the card just placed, red for direct captures, orange for the domino.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from trinity_env.core import LANES, POSITIONS, GameState
from trinity_env.core.render import status_line

TILE = 96
STATUS_SIZE = 14  # the header's font size: the longest status line fits the width
TOWER = 40
MARGIN = 12
HEADER = 36
FOOTER = 40
WIDTH = 2 * (MARGIN + TOWER) + POSITIONS * TILE
HEIGHT = HEADER + LANES * TILE + FOOTER + MARGIN

BACKGROUND = (46, 52, 64)
EMPTY_TILE = (76, 86, 106)
GRID = (106, 116, 136)
CARD = {0: (236, 239, 244), 1: (30, 34, 42)}
INK = {0: (30, 34, 42), 1: (236, 239, 244)}
TOWER_COLOUR = {0: (216, 222, 233), 1: (20, 22, 28)}
PLACED, CAPTURED, DOMINO = (235, 203, 139), (191, 97, 106), (208, 135, 112)
TEXT = (229, 233, 240)
_VALUE = {10: "A"} | {v: str(v) for v in range(1, 10)}


@cache
def _font(size: int) -> ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _centred(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, size: int, fill) -> None:
    draw.text(xy, text, font=_font(size), fill=fill, anchor="mm")


def render_rgb(state: GameState) -> np.ndarray:
    """The board of ``state`` as a ``(height, width, 3)`` uint8 array."""
    image = Image.new("RGB", (WIDTH, HEIGHT), BACKGROUND)
    draw = ImageDraw.Draw(image)
    outline: dict[int, tuple[int, int, int]] = {}
    if state.last is not None and state.last.tile is not None:
        outline[state.last.tile] = PLACED
        outline.update({t: CAPTURED for t in state.last.captured})
        outline.update({t: DOMINO for t in state.last.domino})

    _centred(draw, (WIDTH / 2, HEADER / 2), status_line(state), STATUS_SIZE, TEXT)
    left = MARGIN + TOWER
    for lane in range(LANES):
        top = HEADER + lane * TILE
        # towers at both ends of the lane
        draw.rectangle([MARGIN, top + 10, MARGIN + TOWER - 6, top + TILE - 10], fill=TOWER_COLOUR[0])
        draw.rectangle(
            [WIDTH - MARGIN - TOWER + 6, top + 10, WIDTH - MARGIN, top + TILE - 10], fill=TOWER_COLOUR[1], outline=GRID
        )
        for pos in range(POSITIONS):
            t = lane * POSITIONS + pos
            x0, y0 = left + pos * TILE, top
            box = [x0 + 3, y0 + 3, x0 + TILE - 4, y0 + TILE - 4]
            card = state.cards[t]
            if card is None:
                draw.rectangle(box, fill=EMPTY_TILE)
                _centred(draw, (x0 + TILE / 2, y0 + TILE / 2), str(t), 14, GRID)
                continue
            owner = state.owners[t]
            draw.rounded_rectangle(
                box, radius=8, fill=CARD[owner], outline=outline.get(t), width=5 if t in outline else 0
            )
            ink = INK[owner]
            cx, cy = x0 + TILE / 2, y0 + TILE / 2
            offset = TILE / 2 - 18
            values = [_VALUE[v] for v in card]
            _centred(draw, (cx, cy - offset), values[0], 20, ink)
            _centred(draw, (cx + offset, cy), values[1], 20, ink)
            _centred(draw, (cx, cy + offset), values[2], 20, ink)
            _centred(draw, (cx - offset, cy), values[3], 20, ink)
    hands = "   ".join(f"{'w' if p == 0 else 'b'}: {' '.join(str(c) for c in state.hand(p)) or '-'}" for p in (0, 1))
    _centred(draw, (WIDTH / 2, HEADER + LANES * TILE + FOOTER / 2 + 2), hands, 14, TEXT)
    return np.asarray(image, dtype=np.uint8).copy()
