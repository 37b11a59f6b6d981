"""The position JSON format (docs/rules.md): reading documents that anyone may have written.

A position file is user input: it may come from a puzzle site, a hand edit or a fuzzer.
Loading therefore checks every field strictly (integers are JSON integers, never ``1.0``
or ``true``; a finished position's ``winner`` and ``scores`` must be what its board
says) and turns every failure, including ones the JSON parser raises on hostile text
(deep nesting, 5000-digit numbers, bytes that are not UTF-8), into one ``PositionError``
that names the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trinity_env.core.actions import DECK_SIZE
from trinity_env.core.board import EMPTY, LANES, POSITIONS
from trinity_env.core.cards import Card, parse_cards
from trinity_env.core.checks import describe_value, is_int
from trinity_env.core.decks import DEFAULT_MAX_A_CARDS, check_max_a_cards
from trinity_env.core.errors import CardError, PositionError, TrinityError
from trinity_env.core.files import names, short
from trinity_env.core.rules import (
    FULL_BOARD,
    IN_HAND,
    LANE_CONTROL,
    NO_MOVES,
    OVER,
    PLAY,
    Outcome,
    after_placement,
    controlled_lanes,
    scored,
)

_POSITION_KEYS = {"phase", "to_move", "board", "hands", "max_a_cards", "winner", "scores"}


def position_fields(data: Mapping[str, Any]) -> tuple[Any, ...]:
    """A position's ``GameState`` fields, in the constructor's order (``GameState.from_dict`` builds
    the state from them, so this module needs no ``GameState``); ``PositionError`` names the bad field."""
    if not isinstance(data, Mapping):
        raise PositionError(f"a position is a JSON object (dict), got {type(data).__name__}")
    unknown = set(data) - _POSITION_KEYS
    if unknown:
        raise PositionError(f"unknown position field(s): {names(unknown)}")
    for key in ("phase", "board", "hands"):
        if key not in data:
            raise PositionError(f"position is missing the {key!r} field")
    phase = data["phase"]
    if not isinstance(phase, str) or phase not in (PLAY, OVER):
        raise PositionError(f"unknown phase {describe_value(phase)}: a position's phase is 'play' or 'over'")
    if "to_move" not in data and phase == PLAY:
        raise PositionError("position is missing the 'to_move' field")
    to_move = data.get("to_move", 0)
    if not is_int(to_move) or to_move not in (0, 1):
        raise PositionError(f"to_move must be the integer 0 or 1, got {describe_value(to_move)}")
    to_move = int(to_move)
    max_a_cards = data.get("max_a_cards", DEFAULT_MAX_A_CARDS)
    try:
        check_max_a_cards(max_a_cards)
    except TrinityError as err:
        raise PositionError(str(err)) from None
    cards, owners = _board_from_json(data["board"])
    decks = _hands_from_json(data["hands"])
    status = tuple((IN_HAND,) * len(deck) for deck in decks)

    if phase == OVER:
        outcome = _outcome_from_json(data, owners, status)
        return OVER, to_move, decks, status, cards, owners, max_a_cards, to_move, outcome
    if "winner" in data or "scores" in data:
        raise PositionError("'winner' and 'scores' belong to finished positions (phase 'over'), not to phase 'play'")
    zero_lanes, one_lanes = controlled_lanes(owners, 0), controlled_lanes(owners, 1)
    if zero_lanes and one_lanes:
        raise PositionError(
            f"both players fully control a lane (player 0: lane {zero_lanes[0]}, player 1: lane {one_lanes[0]}); "
            "no game reaches this"
        )
    if zero_lanes or one_lanes:
        controller = 0 if zero_lanes else 1
        lane = (zero_lanes or one_lanes)[0]
        outcome = scored(LANE_CONTROL, owners, lane, controller)
        return OVER, to_move, decks, status, cards, owners, max_a_cards, to_move, outcome
    # Settle as if the other player had just placed: a full board ends the game, and a
    # `to_move` with no card passes.
    phase_now, mover, outcome = after_placement(list(owners), list(status), 1 - to_move)
    return phase_now, mover, decks, status, cards, owners, max_a_cards, mover, outcome


def _board_from_json(board: object) -> tuple[tuple[Card | None, ...], tuple[int, ...]]:
    if not isinstance(board, list | tuple) or len(board) != LANES:
        raise PositionError(f"board must be a list of {LANES} lanes, got {describe_value(board)}")
    cards: list[Card | None] = []
    owners: list[int] = []
    for lane, row in enumerate(board):
        if not isinstance(row, list | tuple) or len(row) != POSITIONS:
            raise PositionError(f"board lane {lane} must be a list of {POSITIONS} tiles, got {describe_value(row)}")
        for pos, cell in enumerate(row):
            where = f"board lane {lane} position {pos}"
            if cell is None:
                cards.append(None)
                owners.append(EMPTY)
                continue
            if not isinstance(cell, Mapping) or set(cell) != {"card", "owner"}:
                raise PositionError(
                    f'{where}: a tile is null or {{"card": ..., "owner": 0 or 1}}, got {describe_value(cell)}'
                )
            try:
                card = Card(cell["card"])
            except CardError as err:
                raise PositionError(f"{where}: {err}") from None
            owner = cell["owner"]
            if not is_int(owner) or owner not in (0, 1):
                raise PositionError(f"{where}: bad owner {describe_value(owner)}: owners are the integers 0 or 1")
            cards.append(card)
            owners.append(int(owner))
    return tuple(cards), tuple(owners)


def _hands_from_json(hands: object) -> tuple[tuple[Card, ...], tuple[Card, ...]]:
    if not isinstance(hands, list | tuple) or len(hands) != 2:
        raise PositionError(f"hands must be a list of 2 lists of cards, got {describe_value(hands)}")
    decks = []
    for player, hand in enumerate(hands):
        if not isinstance(hand, list | tuple):
            raise PositionError(f"hands[{player}] must be a list of cards, got {describe_value(hand)}")
        if len(hand) > DECK_SIZE:
            raise PositionError(f"hands[{player}] has {len(hand)} cards; a hand comes from a {DECK_SIZE}-card deck")
        try:
            decks.append(parse_cards(hand))
        except CardError as err:
            raise PositionError(f"hands[{player}]: {err}") from None
    return decks[0], decks[1]


def _outcome_from_json(data: Mapping[str, Any], owners: tuple[int, ...], status) -> Outcome:
    """The outcome the board shows; ``winner`` and ``scores``, where given, must agree with it."""
    winner = data.get("winner")
    if winner is not None and (not is_int(winner) or winner not in (0, 1)):
        raise PositionError(f"winner must be the integer 0, 1 or null, got {describe_value(winner)}")
    scores = data.get("scores")
    if scores is not None and (
        not isinstance(scores, list | tuple) or len(scores) != 2 or not all(is_int(s) for s in scores)
    ):
        raise PositionError(f"scores must be a list of 2 integers, got {describe_value(scores)}")
    zero_lanes, one_lanes = controlled_lanes(owners, 0), controlled_lanes(owners, 1)
    if zero_lanes and one_lanes:
        raise PositionError("both players fully control a lane; no game reaches this")
    if zero_lanes or one_lanes:
        computed = scored(LANE_CONTROL, owners, (zero_lanes or one_lanes)[0], 0 if zero_lanes else 1)
    elif EMPTY not in owners:
        computed = scored(FULL_BOARD, owners)
    elif any(IN_HAND in slots for slots in status):
        raise PositionError(
            "phase is 'over' but the game is not: no lane is controlled, the board has empty tiles "
            "and a player still holds a card"
        )
    else:
        computed = scored(NO_MOVES, owners)
    if "winner" in data and winner != computed.winner:
        raise PositionError(
            f"winner {winner} does not match the board, which gives {computed.winner} ({computed.termination})"
        )
    if scores is not None and tuple(int(s) for s in scores) != computed.scores:
        raise PositionError(
            f"scores {short(list(scores))} do not match the board, whose lane scores are {list(computed.scores)}"
        )
    return computed
