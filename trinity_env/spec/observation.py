"""The observation: one flat int8 vector from the observer's point of view.

Everything is "mine" or "theirs", never "player 0" or "player 1", so one policy can play
both seats. The rules are mirror-symmetric (towers are where lanes end, not whose they
are), so the board is not flipped and action ids mean the same tile for both seats.

What the observer may not see is never encoded (docs/rules.md: the draft, what each player
knows): the opponent's draft picks are secret, and with ``open_hands=False`` which of the opponent's unplayed deck cards
are in its hand is unknown. ``docs/observation.md`` documents every entry.

The layout lives in the spec layer, below the envs and the fast engine: the envs encode
with it, and the fast engine's kernels import its offsets (they must match it bit for bit).
``trinity_env.envs.observation`` re-exports it.
"""

from __future__ import annotations

import numpy as np

from trinity_env.core import DECK_SIZE, NUM_ACTIONS, PLACE_OFFSET, TILES, Card, GameState
from trinity_env.core.board import EMPTY
from trinity_env.core.state import DRAFT, IN_HAND, OVER, PLAY, PLAYED, UNPICKED

# Section sizes and offsets, in order.
SCALARS = 9
TILE_FEATURES = 6  # mine, theirs, top, right, bottom, left
OWN_CARD_FEATURES = 7  # top, right, bottom, left, unpicked, in hand, played
THEIR_CARD_FEATURES = 8  # top, right, bottom, left, played, in hand, not picked, unknown

BOARD_OFFSET = SCALARS
OWN_DECK_OFFSET = BOARD_OFFSET + TILES * TILE_FEATURES
THEIR_DECK_OFFSET = OWN_DECK_OFFSET + DECK_SIZE * OWN_CARD_FEATURES
OBSERVATION_SIZE = THEIR_DECK_OFFSET + DECK_SIZE * THEIR_CARD_FEATURES
OBSERVATION_HIGH = 10  # the largest entry: an A side (max_a_cards and counts are at most 8)

SCALAR_NAMES = (
    "phase_draft",
    "phase_play",
    "phase_over",
    "my_turn",
    "i_place_first",
    "max_a_cards",
    "my_a_cards",
    "my_hand_size",
    "their_hand_size",
)


_OWN_STATUS = {UNPICKED: b"\1\0\0", IN_HAND: b"\0\1\0", PLAYED: b"\0\0\1"}
_THEIR_STATUS_OPEN = {PLAYED: b"\1\0\0\0", IN_HAND: b"\0\1\0\0", UNPICKED: b"\0\0\1\0"}
_THEIR_STATUS_HIDDEN = {PLAYED: b"\1\0\0\0", IN_HAND: b"\0\0\0\1", UNPICKED: b"\0\0\0\1"}
_EMPTY_TILE = bytes(TILE_FEATURES)
_MINE, _THEIRS = b"\1\0", b"\0\1"
_card_bytes: dict[Card, bytes] = {}
_deck_bytes: dict[int, tuple[object, list[bytes], list[bytes]]] = {}


def _sides(card: Card) -> bytes:
    sides = _card_bytes.get(card)
    if sides is None:
        sides = _card_bytes[card] = bytes(card)
    return sides


def _decks(decks: tuple) -> tuple[list[bytes], list[bytes]]:
    # States of one game share one decks tuple, so its id is a cheap cache key; the entry
    # keeps the tuple alive, so the id cannot be reused while the entry exists.
    entry = _deck_bytes.get(id(decks))
    if entry is None or entry[0] is not decks:
        if len(_deck_bytes) > 256:
            _deck_bytes.clear()
        entry = _deck_bytes[id(decks)] = (decks, [_sides(c) for c in decks[0]], [_sides(c) for c in decks[1]])
    return entry[1], entry[2]


def encode_observation(state: GameState, seat: int, open_hands: bool) -> np.ndarray:
    """The observation vector of ``seat`` (0 or 1) in ``state``; see ``docs/observation.md``.

    Built as bytes and viewed as int8: several times faster than filling a numpy array
    entry by entry, which matters because the env builds one per step.
    """
    other = 1 - seat
    my_status, their_status = state.status[seat], state.status[other]
    phase = state.phase
    parts = [
        bytes(
            (
                phase == DRAFT,
                phase == PLAY,
                phase == OVER,
                phase != OVER and state.to_move == seat,
                state.first_player == seat,
                state.max_a_cards,
                state.a_cards_held(seat),
                my_status.count(IN_HAND),
                their_status.count(IN_HAND),
            )
        )
    ]
    for owner, card in zip(state.owners, state.cards):
        parts.append(_EMPTY_TILE if card is None else (_MINE if owner == seat else _THEIRS) + _sides(card))
    deck0, deck1 = _decks(state.decks)
    mine, theirs = (deck0, deck1) if seat == 0 else (deck1, deck0)
    parts += [sides + _OWN_STATUS[s] for sides, s in zip(mine, my_status)]
    parts.append(bytes(OWN_CARD_FEATURES * (DECK_SIZE - len(mine))))
    table = _THEIR_STATUS_OPEN if open_hands and phase != DRAFT else _THEIR_STATUS_HIDDEN
    parts += [sides + table[s] for sides, s in zip(theirs, their_status)]
    parts.append(bytes(THEIR_CARD_FEATURES * (DECK_SIZE - len(theirs))))
    return np.frombuffer(b"".join(parts), dtype=np.int8).copy()


def action_mask(state: GameState, seat: int) -> np.ndarray:
    """The int8 mask of ``seat``'s legal actions: all zeros when it is not that seat's turn."""
    mask = bytearray(NUM_ACTIONS)
    if state.to_move != seat:
        pass
    elif state.phase == PLAY:
        # each card in hand may go on any empty tile: one 15-byte row per card
        empty = bytes([owner == EMPTY for owner in state.owners])
        for i, status in enumerate(state.status[seat]):
            if status == IN_HAND:
                start = PLACE_OFFSET + TILES * i
                mask[start : start + TILES] = empty
    elif state.phase == DRAFT:
        for action in state.legal_actions():
            mask[action] = 1
    return np.frombuffer(mask, dtype=np.int8).copy()


def observation_dict(state: GameState, seat: int, open_hands: bool) -> dict[str, np.ndarray]:
    """What ``seat`` is shown: the AEC env's observation dict (``observation`` and ``action_mask``).

    Every game loop (the env, matches, the arena, endgames, ``trinity play``, the web app)
    hands agents this, so an agent sees the same thing wherever it plays.
    """
    return {"observation": encode_observation(state, seat, open_hands), "action_mask": action_mask(state, seat)}
