"""The observation: one flat int8 vector from the observer's point of view.

Everything is "mine" or "theirs", never "player 0" or "player 1", so one policy can play
both seats. The rules are mirror-symmetric (towers are where lanes end, not whose they
are), so the board is not flipped and action ids mean the same tile for both seats.

What the observer may not see is never encoded (docs/rules.md: the draft, what each player
knows): the opponent's draft picks are secret, and with ``open_hands=False`` which of the opponent's unplayed deck cards
are in its hand is unknown. ``docs/observation.md`` documents every entry.

The layout lives in the spec layer, below the envs and the fast engine: the envs encode
with it, and the fast engine's kernels import its offsets (they must match it bit for bit).
``trinity_env.spec.observation`` re-exports it.
"""

from __future__ import annotations

from operator import getitem

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
_EMPTY_BOARD = bytes(TILE_FEATURES * TILES)
_NO_CARDS = (None,) * TILES
_MINE, _THEIRS = b"\1\0", b"\0\1"
_tile_bytes: dict[Card, tuple[bytes, bytes]] = {}
_deck_rows: dict[int, tuple[object, tuple[_DeckRows, _DeckRows]]] = {}


class _DeckRows:
    """One deck's observation entries, built once: for each card, its bytes under each status
    (0 unpicked, 1 in hand, 2 played) as mine, as theirs with open hands and as theirs hidden,
    so that a step joins looked-up rows in C (``map``) instead of building 32 card entries."""

    __slots__ = ("a_picked", "mine", "pad_mine", "pad_theirs", "theirs_hidden", "theirs_open")

    def __init__(self, deck: tuple[Card, ...]):
        cards = [_card_rows(card) for card in deck]
        self.mine = [rows[0] for rows in cards]
        self.theirs_open = [rows[1] for rows in cards]
        self.theirs_hidden = [rows[2] for rows in cards]
        self.a_picked = [rows[3] for rows in cards]
        self.pad_mine = bytes(OWN_CARD_FEATURES * (DECK_SIZE - len(deck)))
        self.pad_theirs = bytes(THEIR_CARD_FEATURES * (DECK_SIZE - len(deck)))


_STATUSES = (UNPICKED, IN_HAND, PLAYED)
assert _STATUSES == (0, 1, 2)  # a card's rows are indexed by the status itself
_card_row_cache: dict[Card, tuple[tuple[bytes, ...], tuple[bytes, ...], tuple[bytes, ...], tuple[int, ...]]] = {}


def _card_rows(card: Card) -> tuple[tuple[bytes, ...], tuple[bytes, ...], tuple[bytes, ...], tuple[int, ...]]:
    """A card's entries under each status: as mine, as theirs (open, hidden), and whether it counts as an A pick."""
    rows = _card_row_cache.get(card)
    if rows is None:
        if len(_card_row_cache) > 4096:  # custom decks without end: keep memory bounded
            _card_row_cache.clear()
        sides = bytes(card)
        rows = _card_row_cache[card] = (
            tuple(sides + _OWN_STATUS[s] for s in _STATUSES),
            tuple(sides + _THEIR_STATUS_OPEN[s] for s in _STATUSES),
            tuple(sides + _THEIR_STATUS_HIDDEN[s] for s in _STATUSES),
            (0, 1, 1) if card.is_a_card else (0, 0, 0),
        )
    return rows


def _tile(card: Card) -> tuple[bytes, bytes]:
    entry = _tile_bytes.get(card)
    if entry is None:
        sides = bytes(card)
        entry = _tile_bytes[card] = (_MINE + sides, _THEIRS + sides)
    return entry


def _rows(decks: tuple) -> tuple[_DeckRows, _DeckRows]:
    # States of one game share one decks tuple, so its id is a cheap cache key; the entry
    # keeps the tuple alive, so the id cannot be reused while the entry exists.
    entry = _deck_rows.get(id(decks))
    if entry is None or entry[0] is not decks:
        if len(_deck_rows) > 256:
            _deck_rows.clear()
        entry = _deck_rows[id(decks)] = (decks, (_DeckRows(decks[0]), _DeckRows(decks[1])))
    return entry[1]


def encode_observation(state: GameState, seat: int, open_hands: bool) -> np.ndarray:
    """The observation vector of ``seat`` (0 or 1) in ``state``; see ``docs/observation.md``.

    Built as bytes and viewed as int8: several times faster than filling a numpy array
    entry by entry, which matters because the env builds one per step.
    """
    other = 1 - seat
    rows = _rows(state.decks)
    mine, theirs = rows[seat], rows[other]
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
                sum(map(getitem, mine.a_picked, my_status)),
                my_status.count(IN_HAND),
                their_status.count(IN_HAND),
            )
        )
    ]
    if state.cards == _NO_CARDS:  # the whole draft, and an empty board
        parts.append(_EMPTY_BOARD)
    else:
        for owner, card in zip(state.owners, state.cards):
            parts.append(_EMPTY_TILE if card is None else _tile(card)[owner != seat])
    parts += map(getitem, mine.mine, my_status)
    parts.append(mine.pad_mine)
    parts += map(getitem, theirs.theirs_open if open_hands and phase != DRAFT else theirs.theirs_hidden, their_status)
    parts.append(theirs.pad_theirs)
    return np.frombuffer(b"".join(parts), dtype=np.int8).copy()


_NO_TILE = bytes(TILES)
_IS_EMPTY = {EMPTY: 1, 0: 0, 1: 0}
_PICK_PART = bytes(PLACE_OFFSET)


def action_mask(state: GameState, seat: int) -> np.ndarray:
    """The int8 mask of ``seat``'s legal actions: all zeros when it is not that seat's turn."""
    if state.to_move == seat and state.phase == PLAY:
        # each card in hand may go on any empty tile: one 15-byte row per card, joined in C
        empty = bytes(map(_IS_EMPTY.__getitem__, state.owners))
        row = (_NO_TILE, empty, _NO_TILE)  # by status (_STATUSES): unpicked, in hand, played
        mask = bytearray(_PICK_PART + b"".join(map(row.__getitem__, state.status[seat])))
        mask.extend(bytes(NUM_ACTIONS - len(mask)))
    else:
        mask = bytearray(NUM_ACTIONS)
        if state.to_move == seat and state.phase == DRAFT:
            for action in state.legal_actions():
                mask[action] = 1
    return np.frombuffer(mask, dtype=np.int8).copy()


def observation_dict(state: GameState, seat: int, open_hands: bool) -> dict[str, np.ndarray]:
    """What ``seat`` is shown: the AEC env's observation dict (``observation`` and ``action_mask``).

    Every game loop (the env, matches, the arena, endgames, ``trinity play``, the web app)
    hands agents this, so an agent sees the same thing wherever it plays.
    """
    return {"observation": encode_observation(state, seat, open_hands), "action_mask": action_mask(state, seat)}
