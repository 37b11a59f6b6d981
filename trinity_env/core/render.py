"""A text picture of a position that a person can read at a glance.

Each tile is drawn as the card itself, its four side values where they face, and the
owner in the middle (``w`` player 0 / white, ``b`` player 1 / black). White's towers stand
at the left end of each lane, black's at the right. The last move is marked in the tile's
corner: ``+`` the card just placed, ``*`` captured by it, ``~`` flipped by the domino.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trinity_env.core.board import LANE_TILES, POSITIONS
from trinity_env.core.rules import Phase, Termination

if TYPE_CHECKING:  # ``GameState.__str__`` calls this module: importing it back would be a cycle
    from trinity_env.core.state import GameState

OWNER_MARK = {0: "w", 1: "b"}
PLAYER_NAME = {0: "player 0 (w)", 1: "player 1 (b)"}
_VALUE = {10: "A"} | {v: str(v) for v in range(1, 10)}


def render_text(state: GameState) -> str:
    marks: dict[int, str] = {}
    last = state.last
    if last is not None and last.tile is not None:
        marks[last.tile] = "+"
        marks.update({t: "*" for t in last.captured})
        marks.update({t: "~" for t in last.domino})
    rule = "    " + "+-------" * POSITIONS + "+"
    lines = ["      " + "       ".join(f"{p}" for p in range(POSITIONS)), rule]
    for lane, tiles in enumerate(LANE_TILES):
        top, middle, bottom = [], [], []
        for t in tiles:
            card = state.cards[t]
            if card is None:
                top.append("       ")
                middle.append("   .   ")
                bottom.append("       ")
                continue
            sides = [_VALUE[v] for v in card]
            top.append(f"   {sides[0]}   ")
            middle.append(f" {sides[3]} {OWNER_MARK[state.owners[t]]} {sides[1]} ")
            bottom.append(f"   {sides[2]}  {marks.get(t, ' ')}")
        lines.append("    |" + "|".join(top) + "|")
        lines.append(f" {lane} W" + "|".join(middle) + "B")
        lines.append("    |" + "|".join(bottom) + "|")
        lines.append(rule)
    for player in (0, 1):
        hand = " ".join(str(c) for c in state.hand(player)) or "-"
        lines.append(f"{PLAYER_NAME[player]} hand: {hand}")
    lines.append(status_line(state))
    return "\n".join(lines)


def status_line(state: GameState) -> str:
    """One line saying where the game stands: whose pick or move it is, or who won, how, and the lane scores
    (the last line of ``render_text``, and the header of ``envs.image.render_rgb``)."""
    if state.phase == Phase.DRAFT:
        return f"draft: {PLAYER_NAME[state.to_move]} to pick (max {state.max_a_cards} A cards)"
    if state.outcome is None:
        return f"{PLAYER_NAME[state.to_move]} to move"
    outcome = state.outcome
    scores = f"lane scores {outcome.scores[0]}-{outcome.scores[1]}"
    if outcome.winner is None:
        return f"game over: draw, {scores}"
    how = {
        Termination.LANE_CONTROL: f"by controlling lane {outcome.lane}",
        Termination.FULL_BOARD: "on the full board",
        Termination.NO_MOVES: "when neither player could place",
    }[outcome.termination]
    return f"game over: {PLAYER_NAME[outcome.winner]} wins {how}, {scores}"
