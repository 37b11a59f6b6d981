"""Placements on bitboards: the fast engine's capture with owners as two 15-bit masks.

The exact solver makes and takes back tens of millions of placements, and the batch
layout (rows of sides and owners, copied per child) costs it about a microsecond each.
Here a board is the owners as one bit mask per player (bit ``t`` for tile ``t``), the card
on each tile as an id into a table of sides, and, per occupied tile, the mask of its
occupied neighbours its card beats (``beaten``): cards never change their sides, only
their owners, so those masks change only when a tile fills or empties. A placement's
captures are then a few mask operations: the neighbours the new card beats that the
opponent owns, and one level of domino from each of them through ``beaten``.

The comparison of two sides and the lane scores of owner masks are the engine's own
(``kernels.beats``, ``kernels.lane_scores_of_masks``); the lane and end-of-game checks here
(``holds_a_lane``, ``held_lanes``, ``scored``, ``ends``) are those rules on owner masks. The differential test
(``tests/test_bitboard.py``) plays random games here and on the core and compares every
placement's flips, owners and hash.

Card ids: ``16 * p + i`` for player ``p``'s deck card ``i``; ``32 + t`` for a card that was
on tile ``t`` when the board was loaded (positions need not come from the decks).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from trinity_env.fast.kernels import beats, lane_scores_of_masks
from trinity_env.fast.layout import IN_HAND, NEIGHBOUR, TILES

CARD_IDS = 2 * 16 + TILES  # deck cards of both players, then the loaded board's cards
NO_CARD = CARD_IDS  # the id of an empty tile, and of the tile past the board: it beats nothing and nothing beats it
OFF_BOARD = TILES  # the neighbour of an edge tile on its open side: a tile that is never anyone's
FULL = (1 << TILES) - 1
LANES = np.array([0x1F, 0x1F << 5, 0x1F << 10], np.int64)
POPCOUNT = np.array([bin(m).count("1") for m in range(1 << TILES)], np.int64)


def _neighbours_by_side() -> np.ndarray:
    """``[t, s]``: the tile that side ``s`` of a card on ``t`` faces (top, right, bottom, left), or ``OFF_BOARD``."""
    table = np.full((TILES, 4), OFF_BOARD, np.int64)
    for t in range(TILES):
        for n, mine, theirs in NEIGHBOUR[t]:
            if n >= 0:
                assert theirs == (mine + 2) % 4  # a side faces the opposite side of its neighbour
                table[t, mine] = n
    return table


FACING = _neighbours_by_side()


def _within_two(t: int) -> int:
    """The mask of tiles a placement on ``t`` can flip: its neighbours and theirs (the domino)."""
    reach = 0
    for n in FACING[t]:
        if n != OFF_BOARD:
            reach |= 1 << n
            for m in FACING[n]:
                if m != OFF_BOARD and m != t:
                    reach |= 1 << m
    return reach


REACH = np.array([_within_two(t) for t in range(TILES)], np.int64)


class Board:
    """One search thread's board, as numpy arrays that the kernels change in place.

    ``own[p]`` (owner masks), ``hand[p]`` (masks of deck slots in hand), ``card[t]`` (an id,
    ``NO_CARD`` for empty; one more entry for ``OFF_BOARD``), ``beaten[t]`` (one more entry,
    always 0), ``key[0]`` (the additive hash of cards on tiles and in hands, see ``load``),
    and the tables that ``load`` fills per position: ``wins[c, c2]`` (the sides ``s`` of card
    ``c`` that beat card ``c2`` facing it, as bits), ``copies[p, i]`` (earlier slots of ``p``'s
    hand holding the same card), and the hash terms ``tile_terms[t, id]`` and ``hand_terms[p, i]``.
    """

    def __init__(self) -> None:
        self.own = np.zeros(2, np.int64)
        self.hand = np.zeros(2, np.int64)
        self.card = np.full(TILES + 1, NO_CARD, np.int64)
        self.beaten = np.zeros(TILES + 1, np.int64)
        self.key = np.zeros(1, np.uint64)
        self.wins = np.zeros((CARD_IDS + 1, CARD_IDS + 1), np.int64)
        self.copies = np.zeros((2, 16), np.int64)
        self.tile_terms = np.zeros((TILES, CARD_IDS), np.uint64)
        self.hand_terms = np.zeros((2, 16), np.uint64)

    @property
    def arrays(self) -> tuple[np.ndarray, ...]:
        return (
            self.own,
            self.hand,
            self.card,
            self.beaten,
            self.key,
            self.wins,
            self.copies,
            self.tile_terms,
            self.hand_terms,
        )


@njit(cache=True, inline="always")
def mix(x):
    """SplitMix64's finaliser: every input bit moves every output bit."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, inline="always")
def _card_word(sides, c):
    """Card ``c``'s four sides in one word (a side is at most 10: four bits each)."""
    return (
        np.uint64(sides[c, 0])
        | (np.uint64(sides[c, 1]) << np.uint64(4))
        | (np.uint64(sides[c, 2]) << np.uint64(8))
        | (np.uint64(sides[c, 3]) << np.uint64(12))
    )


@njit(cache=True)
def load(decks, status, sides_in, owner, b, own, hand, card, beaten, key, wins, copies, tile_terms, hand_terms):
    """Fill a board from game ``b`` of a batch (``layout.Batch``'s arrays).

    The hash ``key[0]`` sums a term per (tile, card sides) and per (player, slot, card
    sides): it depends on what is where, not on card ids or where the position was loaded,
    so positions from different roots or decks share table entries only when they are the
    same position. A sum, not an exclusive or, so two equal terms do not cancel.
    """
    sides = np.zeros((CARD_IDS, 4), np.int64)
    for p in range(2):
        hand[p] = 0
        own[p] = 0
        for i in range(16):
            for k in range(4):
                sides[16 * p + i, k] = decks[b, p, i, k]
            if status[b, p, i] == IN_HAND:
                hand[p] |= 1 << i
    for t in range(TILES):
        for k in range(4):
            sides[32 + t, k] = sides_in[b, t, k]
    for c in range(CARD_IDS + 1):
        for c2 in range(CARD_IDS + 1):
            wins[c, c2] = 0
            if c < CARD_IDS and c2 < CARD_IDS:
                for s in range(4):
                    if beats(sides[c, s], sides[c2, (s + 2) % 4]):
                        wins[c, c2] |= 1 << s
    for p in range(2):
        for i in range(16):
            copies[p, i] = 0
            for j in range(i):
                if _card_word(sides, 16 * p + j) == _card_word(sides, 16 * p + i):
                    copies[p, i] |= 1 << j
            hand_terms[p, i] = mix(
                _card_word(sides, 16 * p + i) | (np.uint64(i) << np.uint64(16)) | (np.uint64(p + 1) << np.uint64(24))
            )
    for t in range(TILES):
        for c in range(CARD_IDS):
            tile_terms[t, c] = mix(_card_word(sides, c) | (np.uint64(t + 1) << np.uint64(32)))
    total = np.uint64(0)
    for t in range(TILES + 1):
        card[t] = NO_CARD
        beaten[t] = 0
    for t in range(TILES):
        if owner[b, t] >= 0:
            card[t] = 32 + t
            own[owner[b, t]] |= 1 << t
            total += tile_terms[t, 32 + t]
    for t in range(TILES):
        if card[t] != NO_CARD:
            beaten[t] = _beats_around(card, wins, card[t], t) & FULL
    for p in range(2):
        for i in range(16):
            if (hand[p] >> i) & 1:
                total += hand_terms[p, i]
    key[0] = total


@njit(cache=True, inline="always")
def _beats_around(card, wins, c, t):
    """The neighbours of tile ``t`` that card ``c`` on ``t`` beats (bit ``OFF_BOARD`` may be set:
    callers mask it off with an owner mask). No branches: an empty or missing neighbour is ``NO_CARD``."""
    n0 = FACING[t, 0]
    n1 = FACING[t, 1]
    n2 = FACING[t, 2]
    n3 = FACING[t, 3]
    return (
        ((wins[c, card[n0]] & 1) << n0)
        | (((wins[c, card[n1]] >> 1) & 1) << n1)
        | (((wins[c, card[n2]] >> 2) & 1) << n2)
        | (((wins[c, card[n3]] >> 3) & 1) << n3)
    )


@njit(cache=True, inline="always")
def _domino(beaten, t, direct):
    """What the cards of ``direct`` (neighbours of ``t``) beat in turn, branch-free."""
    n0 = FACING[t, 0]
    n1 = FACING[t, 1]
    n2 = FACING[t, 2]
    n3 = FACING[t, 3]
    return (
        (beaten[n0] & -((direct >> n0) & 1))
        | (beaten[n1] & -((direct >> n1) & 1))
        | (beaten[n2] & -((direct >> n2) & 1))
        | (beaten[n3] & -((direct >> n3) & 1))
    )


@njit(cache=True, inline="always")
def flips(own, card, beaten, wins, p, c, t):
    """The tiles card ``c`` placed by player ``p`` on empty tile ``t`` would flip, without placing it."""
    theirs = own[1 - p]
    direct = _beats_around(card, wins, c, t) & theirs
    return direct | (_domino(beaten, t, direct) & theirs & ~direct)


@njit(cache=True, inline="always")
def place(own, hand, card, beaten, key, wins, tile_terms, hand_terms, p, i, t):
    """Player ``p`` places deck slot ``i`` on empty tile ``t``: returns the tiles it flipped.

    Direct captures, then one level of domino, as ``kernels.capture`` (flipping together).
    """
    c = 16 * p + i
    mine = _beats_around(card, wins, c, t) & FULL
    for s in range(4):  # the neighbours' cards that beat the new one
        n = FACING[t, s]
        beaten[n] |= ((wins[card[n], c] >> ((s + 2) & 3)) & 1) << t
    beaten[OFF_BOARD] = 0
    theirs = own[1 - p]
    direct = mine & theirs
    flipped = direct | (_domino(beaten, t, direct) & theirs & ~direct)
    card[t] = c
    beaten[t] = mine
    own[1 - p] = theirs & ~flipped
    own[p] |= flipped | (1 << t)
    hand[p] &= ~(1 << i)
    key[0] += tile_terms[t, c] - hand_terms[p, i]
    return flipped


@njit(cache=True, inline="always")
def take_back(own, hand, card, beaten, key, tile_terms, hand_terms, p, i, t, flipped):
    """Undo ``place`` (its return value is ``flipped``)."""
    c = 16 * p + i
    own[p] &= ~(flipped | (1 << t))
    own[1 - p] |= flipped
    card[t] = NO_CARD
    beaten[t] = 0
    clear = ~(1 << t)
    beaten[FACING[t, 0]] &= clear
    beaten[FACING[t, 1]] &= clear
    beaten[FACING[t, 2]] &= clear
    beaten[FACING[t, 3]] &= clear
    hand[p] |= 1 << i
    key[0] -= tile_terms[t, c] - hand_terms[p, i]


@njit(cache=True, inline="always")
def place_action(board, p, action):
    """``place`` on a board's arrays (``Board.arrays``) by action id (``16 + 15 * slot + tile``): the tiles flipped."""
    own, hand, card, beaten, key, wins, copies, tile_terms, hand_terms = board
    return place(own, hand, card, beaten, key, wins, tile_terms, hand_terms, p, (action - 16) // 15, (action - 16) % 15)


@njit(cache=True, inline="always")
def take_back_action(board, p, action, flipped):
    """Undo ``place_action`` (its return value is ``flipped``)."""
    own, hand, card, beaten, key, wins, copies, tile_terms, hand_terms = board
    take_back(own, hand, card, beaten, key, tile_terms, hand_terms, p, (action - 16) // 15, (action - 16) % 15, flipped)


@njit(cache=True, inline="always")
def holds_a_lane(mask):
    """Whether the owner mask ``mask`` holds all five tiles of some lane."""
    return (mask & 0x1F) == 0x1F or (mask & 0x3E0) == 0x3E0 or (mask & 0x7C00) == 0x7C00


@njit(cache=True, inline="always")
def held_lanes(mask):
    """The lanes (bits 0-2) whose five tiles the owner mask ``mask`` all holds."""
    held = 0
    for lane in range(3):
        if (mask & LANES[lane]) == LANES[lane]:
            held |= 1 << lane
    return held


@njit(cache=True, inline="always")
def scored(own0, own1, p):
    """The lane-majority result for player ``p`` of a board where play has ended: +1, 0 or -1."""
    s0, s1 = lane_scores_of_masks(own0, own1)
    mine = s0 if p == 0 else s1
    theirs = s1 if p == 0 else s0
    return 1 if mine > theirs else (-1 if mine < theirs else 0)


@njit(cache=True, inline="always")
def ends(own, hand, p):
    """The game's value for ``p`` after ``p``'s placement, or 2 when it goes on: a completed
    lane wins, a full board or two empty hands are scored."""
    if holds_a_lane(own[p]):
        return 1
    if (own[0] | own[1]) == FULL or (hand[0] == 0 and hand[1] == 0):
        return scored(own[0], own[1], p)
    return 2
