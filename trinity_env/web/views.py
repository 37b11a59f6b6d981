"""What a browser may see of a position, as JSON: states, lanes, moves, outcomes, and previews of placements.

- ``state_json``: a position as a seat sees it (``None``: a spectator, who sees everything): the opponent's draft
  picks, and its hand with hidden hands, stay hidden until the game is over; ``transition_json``, ``lanes_json``,
  ``legal_json`` and ``outcome_json`` show its parts, ``flip_reasons`` why each card of a placement flipped.
- ``seen_by``: the hidden-information filter, a position holding only what a seat may see.
- ``placement_previews``: what each legal placement would do (captures, domino flips, lanes, the
  end of the game), computed by the rules core on what the player may see, so that the page never
  needs a second copy of the rules.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from trinity_env.core import LANE_TILES, NEIGHBOURS, TILES, GameState, Outcome
from trinity_env.core.rules import beats
from trinity_env.core.state import DRAFT, IN_HAND, PLAY, PLAYED, UNPICKED

STATUS = {0: "unpicked", 1: "hand", 2: "played"}
TERMINATION_TEXT = {
    "lane_control": "lane control",
    "full_board": "full board",
    "no_moves": "no moves left",
    "resignation": "resignation",
}


def lanes_json(state: GameState) -> list[dict[str, Any]]:
    """Each lane's card counts and the points they score (a majority scores its count)."""
    lanes = []
    for lane, tiles in enumerate(LANE_TILES):
        counts = [sum(1 for t in tiles if state.owners[t] == p) for p in (0, 1)]
        points = [counts[0] if counts[0] > counts[1] else 0, counts[1] if counts[1] > counts[0] else 0]
        lanes.append({"lane": lane, "counts": counts, "points": points})
    return lanes


def transition_json(state: GameState, hidden: bool = False) -> dict[str, Any] | None:
    """What the action leading to ``state`` did; a pick's card is ``None`` when ``hidden``."""
    step = state.last
    if step is None:
        return None
    if step.tile is None:
        return {"player": step.player, "kind": "pick", "card": None if hidden else step.card.notation}
    return {
        "player": step.player,
        "kind": "place",
        "card": step.card.notation,
        "deck_index": step.deck_index,
        "tile": step.tile,
        "captured": list(step.captured),
        "domino": list(step.domino),
        "why": flip_reasons(state),
    }


SIDE_NAMES = ("top", "right", "bottom", "left")


def flip_reasons(state: GameState) -> list[dict[str, Any]]:
    """Why each card the last placement flipped did flip, so that the page can say it without a copy of the rules:
    ``tile`` flipped, ``by`` the card that beat it (the placed card for a capture, a captured card for the domino),
    ``side`` and ``value`` that card's side facing it, ``against`` the flipped card's value facing back."""
    step = state.last
    reasons: list[dict[str, Any]] = []
    for flipped, attackers in ((step.captured, (step.tile,)), (step.domino, step.captured)):
        for tile in flipped:
            for by in attackers:
                faces = [(mine, theirs) for n, mine, theirs in NEIGHBOURS[by] if n == tile]
                if faces and beats(state.cards[by][faces[0][0]], state.cards[tile][faces[0][1]]):
                    mine, theirs = faces[0]
                    reasons.append(
                        {
                            "tile": tile,
                            "by": by,
                            "side": SIDE_NAMES[mine],
                            "value": state.cards[by].notation[mine],
                            "against": state.cards[tile].notation[theirs],
                        }
                    )
                    break
    return reasons


def state_json(state: GameState, viewer: int | None = None, open_hands: bool = True) -> dict[str, Any]:
    """``state`` as the seat ``viewer`` sees it (``None``: a spectator, who sees everything).

    A seat does not see the opponent's picks during the draft, nor its hand when hands are
    hidden; once the game is over everything shows.
    """
    reveal = viewer is None or state.is_over
    players = []
    for p in (0, 1):
        sees = reveal or p == viewer or (open_hands and state.phase != DRAFT)
        status = state.status[p]
        entry: dict[str, Any] = {
            "seat": p,
            "picked": sum(1 for s in status if s != UNPICKED),
            "hand_size": sum(1 for s in status if s == IN_HAND),
            "a_cards": state.a_cards_held(p) if sees else None,
            "deck": None,
            "hand": None,
        }
        if sees:
            deck = state.decks[p]
            entry["deck"] = [{"index": i, "card": deck[i].notation, "status": STATUS[s]} for i, s in enumerate(status)]
            entry["hand"] = [{"index": i, "card": deck[i].notation} for i in state.hand_indices(p)]
        players.append(entry)
    data: dict[str, Any] = {
        "phase": state.phase.value,
        "to_move": None if state.is_over else state.to_move,
        "first_player": state.first_player,
        "max_a_cards": state.max_a_cards,
        "board": [
            None if state.cards[t] is None else {"card": state.cards[t].notation, "owner": state.owners[t]}
            for t in range(TILES)
        ],
        "players": players,
        "lanes": lanes_json(state),
        "last": _last_json(state, viewer, reveal),
        "outcome": None,
        "legal": [],
    }
    if state.outcome is not None:
        data["outcome"] = outcome_json(state.outcome)
    if viewer is not None and not state.is_over and state.to_move == viewer:
        data["legal"] = legal_json(state)
    return data


def outcome_json(outcome: Outcome) -> dict[str, Any]:
    """How a game ended, as the pages show it (``termination_text`` in words)."""
    return {
        "winner": outcome.winner,
        "scores": list(outcome.scores),
        "termination": outcome.termination.value,
        "termination_text": TERMINATION_TEXT.get(outcome.termination.value, outcome.termination.value),
        "lane": outcome.lane,
    }


def _last_json(state: GameState, viewer: int | None, reveal: bool) -> dict[str, Any] | None:
    step = state.last
    hidden = step is not None and not reveal and step.player != viewer
    return transition_json(state, hidden)


def legal_json(state: GameState) -> list[dict[str, Any]]:
    """The legal actions of the player to move: ``{action, index, card}`` and ``tile`` for a placement."""
    deck = state.decks[state.to_move]
    moves = []
    for action in state.legal_actions():
        if state.phase == DRAFT:
            moves.append({"action": action, "index": action, "card": deck[action].notation, "tile": None})
        else:
            index, tile = divmod(action - 16, TILES)
            moves.append({"action": action, "index": index, "card": deck[index].notation, "tile": tile})
    return moves


# ---------------------------------------------------------------------- previews


def seen_by(state: GameState, viewer: int, open_hands: bool) -> GameState:
    """``state`` holding only what ``viewer`` may see, for computing what the viewer's moves would do.

    With hidden hands in the play phase the opponent's hand is replaced by a stand-in of the same size
    (its first unplayed deck cards): which of its unplayed cards the opponent really holds is not in the
    result, so nothing computed from it (a preview) can tell. The hand's size is public (the page shows
    the card backs), and only it matters to the rules after a placement (whether the opponent can still
    place). With open hands, or in the draft (no placements), ``state`` itself.
    """
    if open_hands or state.phase != PLAY:
        return state
    other = 1 - viewer
    left = sum(1 for s in state.status[other] if s == IN_HAND)
    stand_in = []
    for slot in state.status[other]:
        if slot == PLAYED:
            stand_in.append(PLAYED)
        elif left:
            stand_in.append(IN_HAND)
            left -= 1
        else:
            stand_in.append(UNPICKED)
    status = list(state.status)
    status[other] = tuple(stand_in)
    return dataclasses.replace(state, status=tuple(status))


def placement_previews(state: GameState, viewer: int, open_hands: bool) -> list[dict[str, Any]]:
    """What each legal placement of ``viewer`` (the player to move) would do, by the rules core itself.

    Each entry: the action, deck ``index``, ``card`` and ``tile``; the tiles it would ``capture`` and those
    the ``domino`` would flip (as ``Transition`` reports them); the ``lanes`` after it (cards and points of
    each lane); and the ``outcome`` if it ends the game (a lane completed, the board full), else ``None``.
    Computed on ``seen_by(state, ...)``: a preview uses only what the viewer may see.
    """
    if state.phase != PLAY or state.is_over or state.to_move != viewer:
        return []
    seen = seen_by(state, viewer, open_hands)
    deck = seen.decks[viewer]
    previews = []
    for action in seen.legal_actions():
        after = seen.apply(action)
        step = after.last
        previews.append(
            {
                "action": action,
                "index": step.deck_index,
                "card": deck[step.deck_index].notation,
                "tile": step.tile,
                "captured": list(step.captured),
                "domino": list(step.domino),
                "lanes": lanes_json(after),
                "outcome": None if after.outcome is None else outcome_json(after.outcome),
            }
        )
    return previews
