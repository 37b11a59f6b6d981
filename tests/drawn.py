"""Boards drawn as text, so a test shows the position it is about.

One line per lane (top to bottom), five tokens per line (position 0 at white's tower on
the left): ``.`` for an empty tile, ``w7A24`` for card 7A24 owned by player 0 (white),
``b7A24`` for one owned by player 1 (black).
"""

from __future__ import annotations

from typing import Any

from trinity_env.core import LANE_TILES, GameState

EXAMPLE = {
    "phase": "play",
    "to_move": 0,
    "board": [
        [None, {"card": "5A32", "owner": 0}, None, None, None],
        [None, None, None, None, None],
        [None, None, None, None, {"card": "1919", "owner": 1}],
    ],
    "hands": [["7A24", "3333"], ["9999", "1A1A"]],
    "max_a_cards": 3,
}
"""The position example of the rules (docs/rules.md, the position format), as a dict."""

_OWNER = {"w": 0, "b": 1}
_MARK = {0: "w", 1: "b"}


def _lines(board: str) -> list[list[str]]:
    rows = [line.split() for line in board.strip().splitlines() if line.strip()]
    assert len(rows) == 3 and all(len(r) == 5 for r in rows), f"a drawn board is 3 lines of 5 tokens:\n{board}"
    return rows


def position(board: str, hands=((), ()), to_move: int = 0, **extra: Any) -> dict[str, Any]:
    """A position dict (docs/rules.md's format) from a drawn board."""
    rows = [
        [None if tok == "." else {"card": tok[1:], "owner": _OWNER[tok[0]]} for tok in row] for row in _lines(board)
    ]
    return {
        "phase": "play",
        "to_move": to_move,
        "board": rows,
        "hands": [list(h) for h in hands],
        "max_a_cards": 3,
    } | extra


def state(board: str, hands=((), ()), to_move: int = 0, **extra: Any) -> GameState:
    return GameState.from_dict(position(board, hands, to_move, **extra))


def draw(state: GameState) -> str:
    """The drawn form of a state's board, for comparing with an expected drawing."""
    return "\n".join(
        " ".join("." if state.cards[t] is None else f"{_MARK[state.owners[t]]}{state.cards[t]}" for t in tiles)
        for tiles in LANE_TILES
    )


def same_board(state: GameState, expected: str) -> bool:
    return draw(state).split() == [tok for row in _lines(expected) for tok in row]
