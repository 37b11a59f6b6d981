"""The rules of docs/rules.md as numba kernels over a ``Batch`` (see ``layout.py``).

One game is a row of each array; kernels take the arrays and a game index, so the same
code steps one game, a batch in lockstep, or runs whole random playouts for search and
benchmarks without leaving compiled code. The pure-Python core is the reference: the
differential tests replay core games here and compare every state.

Each rule that differs between the draft and play comes as two small inlined parts (``pick``
and ``place``, ``is_legal_pick`` and ``is_legal_placement``, ``legal_picks`` and
``legal_placements``, ``random_pick`` and ``random_placement``), with a dispatcher for
single calls (``apply_action``, ``is_legal``, ``legal_actions``). Loops over many games or
moves dispatch on the phase themselves and call the parts: in numba, a compiled function
that holds both phases' code runs several times slower even on moves that never take the
other branch, and so does a batch loop that calls ``is_legal`` or ``legal_actions`` inlined
(``python -m benchmarks.fast``, (c) and (e), measures the loops).

Past the house's ~500 lines on purpose (docs/architecture.md): this is one engine, every rule restated once for the
batch layout, each rule's draft and play parts beside their dispatcher, and the differential tests hold it to the core
as one; split by rule, a rule's parts and the loops that call them would sit in different files.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from trinity_env.core.board import POSITIONS
from trinity_env.fast.layout import (
    A_HELD0,
    ABSENT,
    CAPTURED,
    DECK_SIZE0,
    DOMINO,
    DRAFT,
    FIRST_PLAYER,
    FULL_BOARD,
    HAND0,
    HAND_SIZE,
    IN_HAND,
    LANE,
    LANE_CONTROL,
    MAX_A,
    NEIGHBOUR,
    NO_MOVES,
    OVER,
    PHASE,
    PLACE_OFFSET,
    PLACED,
    PLAY,
    PLAYED,
    SCORE0,
    TERMINATION,
    TILES,
    TO_MOVE,
    UNPICKED,
    WINNER,
    A,
)
from trinity_env.spec.observation import BOARD_OFFSET as _BOARD
from trinity_env.spec.observation import OWN_CARD_FEATURES, THEIR_CARD_FEATURES, TILE_FEATURES
from trinity_env.spec.observation import OWN_DECK_OFFSET as _OWN
from trinity_env.spec.observation import THEIR_DECK_OFFSET as _THEIRS

LANE_BITS = (1 << POSITIONS) - 1  # one lane's tiles in an owner mask, shifted down to bit 0
LANE_COUNT = np.array([bin(m).count("1") for m in range(1 << POSITIONS)], np.int64)  # cards in a lane's mask


@njit(cache=True, inline="always")
def beats(side, facing):
    return side > facing or (side == facing and side == A)


@njit(cache=True, inline="always")
def is_a_card(decks, b, p, i):
    return decks[b, p, i, 0] == A or decks[b, p, i, 1] == A or decks[b, p, i, 2] == A or decks[b, p, i, 3] == A


@njit(cache=True, inline="always")
def direct_captures(decks, sides, owner, b, p, i, t):
    """``(captures, in_lane)``: how many opponent cards player ``p``'s deck card ``i`` would capture
    directly on empty tile ``t`` of game ``b``, and how many of those share ``t``'s lane.

    The capture test of ``apply_action``, for move ordering and rollouts that rank moves
    without stepping them.
    """
    o = 1 - p
    captures = 0
    in_lane = 0
    for k in range(4):
        n = NEIGHBOUR[t, k, 0]
        if n >= 0 and owner[b, n] == o and beats(decks[b, p, i, NEIGHBOUR[t, k, 1]], sides[b, n, NEIGHBOUR[t, k, 2]]):
            captures += 1
            if n // POSITIONS == t // POSITIONS:
                in_lane += 1
    return captures, in_lane


@njit(cache=True, inline="always")
def is_legal_placement(status, owner, info, b, action):
    """Whether placement ``action`` (16-255) is legal in game ``b``, in play: its card in hand, its tile empty."""
    p = np.int64(info[b, TO_MOVE])
    i = (action - PLACE_OFFSET) // TILES
    t = (action - PLACE_OFFSET) % TILES
    return status[b, p, i] == IN_HAND and owner[b, t] == -1


@njit(cache=True, inline="always")
def is_legal_pick(decks, status, info, b, action):
    """Whether pick ``action`` (0-15) is legal in game ``b``, in the draft: unpicked, within the A limit."""
    p = np.int64(info[b, TO_MOVE])
    if status[b, p, action] != UNPICKED:
        return False
    return info[b, A_HELD0 + p] < info[b, MAX_A] or not is_a_card(decks, b, p, action)


@njit(cache=True)
def is_legal(decks, status, owner, info, b, action):
    """Whether ``action`` is legal for the player to move in game ``b``."""
    phase = info[b, PHASE]
    if action < 0 or action >= 256 or phase == OVER:
        return False
    if action < PLACE_OFFSET:
        return phase == DRAFT and is_legal_pick(decks, status, info, b, action)
    return phase == PLAY and is_legal_placement(status, owner, info, b, action)


@njit(cache=True, inline="always")
def legal_picks(decks, status, info, b, out):
    """Game ``b``'s legal picks, in the draft, ascending into ``out``; how many."""
    p = np.int64(info[b, TO_MOVE])
    a_allowed = info[b, A_HELD0 + p] < info[b, MAX_A]
    count = 0
    for i in range(16):
        if status[b, p, i] == UNPICKED and (a_allowed or not is_a_card(decks, b, p, i)):
            out[count] = i
            count += 1
    return count


@njit(cache=True, inline="always")
def legal_placements(status, owner, info, b, out):
    """Game ``b``'s legal placements, in play, ascending into ``out``; how many.

    Branch-free: each tile's id is written, and kept only if the tile is empty (the next write
    overwrites it otherwise), so ``out`` needs one entry more than the count (256 always do).
    Masks build from this list, and an unpredictable branch per tile slowed them markedly.
    """
    p = np.int64(info[b, TO_MOVE])
    count = 0
    for i in range(16):
        if status[b, p, i] == IN_HAND:
            base = PLACE_OFFSET + TILES * i
            for t in range(TILES):
                out[count] = base + t
                count += np.int64(owner[b, t] == -1)
    return count


@njit(cache=True)
def legal_actions(decks, status, owner, info, b, out):
    """Write game ``b``'s legal action ids, ascending, into ``out``; return how many."""
    phase = info[b, PHASE]
    if phase == DRAFT:
        return legal_picks(decks, status, info, b, out)
    if phase == PLAY:
        return legal_placements(status, owner, info, b, out)
    return 0


@njit(cache=True)
def legal_mask(decks, status, owner, info, b, out, buffer):
    """Write game ``b``'s legal-action mask (256 entries, 0/1) into ``out``; return the count.

    ``buffer`` (256 int64) is scratch for the action ids.
    """
    out[:] = 0
    count = legal_actions(decks, status, owner, info, b, buffer)
    for j in range(count):
        out[buffer[j]] = 1
    return count


@njit(cache=True, inline="always")
def lane_points(c0, c1):
    """One lane's points ``(player 0, player 1)`` from how many of its cards each owns: the
    majority scores its count, the other nothing; equal counts score for nobody."""
    if c0 > c1:
        return c0, 0
    if c1 > c0:
        return 0, c1
    return 0, 0


@njit(cache=True, inline="always")
def owner_masks(owner, b):
    """Game ``b``'s owners as two tile masks ``(player 0's, player 1's)``: bit ``t`` for tile ``t``."""
    own0 = 0
    own1 = 0
    for t in range(TILES):
        o = owner[b, t]
        if o == 0:
            own0 |= 1 << t
        elif o == 1:
            own1 |= 1 << t
    return own0, own1


@njit(cache=True, inline="always")
def lane_scores_of_masks(own0, own1):
    """Lane-majority scores ``(player 0, player 1)`` of the owner masks ``own0`` and ``own1`` (bit ``t`` for tile
    ``t``): the fast engine's rule, and the exact solver's on its bitboard (``search.bitboard.scored``)."""
    s0 = 0
    s1 = 0
    for lane in range(3):
        shift = POSITIONS * lane
        p0, p1 = lane_points(LANE_COUNT[(own0 >> shift) & LANE_BITS], LANE_COUNT[(own1 >> shift) & LANE_BITS])
        s0 += p0
        s1 += p1
    return s0, s1


@njit(cache=True, inline="always")
def lane_scores(owner, b):
    """Lane-majority scores ``(player 0, player 1)`` of game ``b``'s board (the core's ``lane_scores``)."""
    own0, own1 = owner_masks(owner, b)
    return lane_scores_of_masks(own0, own1)


@njit(cache=True, inline="always")
def margin(owner, b, player):
    """``player``'s lane-majority score minus the opponent's on game ``b``'s board (the margin reward's measure)."""
    s0, s1 = lane_scores(owner, b)
    return s0 - s1 if player == 0 else s1 - s0


@njit(cache=True)
def margins_batch(owner, out):
    """Player 0's margin in every game of the batch."""
    for b in range(owner.shape[0]):
        out[b] = margin(owner, b, 0)


@njit(cache=True)
def score(owner, info, b):
    """Lane-majority scores of game ``b``'s board into ``info``; returns the higher-scoring player or -1."""
    s0, s1 = lane_scores(owner, b)
    info[b, SCORE0] = s0
    info[b, SCORE0 + 1] = s1
    if s0 > s1:
        return 0
    if s1 > s0:
        return 1
    return -1


@njit(cache=True, inline="always")
def controlled_lane(owner, b, p):
    """The first lane whose five tiles all hold player ``p``'s cards in game ``b`` (a lane-control win), or -1."""
    for lane in range(3):
        mine = True
        for pos in range(5):
            if owner[b, 5 * lane + pos] != p:
                mine = False
                break
        if mine:
            return lane
    return -1


@njit(cache=True, inline="always")
def capture(decks, sides, b, p, i, t, own, marks):
    """Player ``p``'s card ``i`` just placed on tile ``t`` of game ``b``: flip what it takes in ``own``.

    ``own`` is a row of owners (the game's own, or a scratch copy to look ahead without
    stepping) with ``own[t]`` already ``p``; ``marks`` (zeroed by the caller) gets ``CAPTURED``
    and ``DOMINO``. Direct captures, then the domino: each captured card against the
    opponent's cards it touches, one level. Flipping as we go equals flipping together:
    whether a card is taken depends only on the capturing card and the card itself, and a
    card already flipped is no longer the opponent's, so it is never taken twice.
    """
    o = 1 - p
    for k in range(4):
        n = NEIGHBOUR[t, k, 0]
        if n >= 0 and own[n] == o and beats(decks[b, p, i, NEIGHBOUR[t, k, 1]], sides[b, n, NEIGHBOUR[t, k, 2]]):
            marks[n] = CAPTURED
            own[n] = p
    for k in range(4):
        c = NEIGHBOUR[t, k, 0]
        if c < 0 or marks[c] != CAPTURED:
            continue
        for j in range(4):
            n = NEIGHBOUR[c, j, 0]
            if n >= 0 and own[n] == o and beats(sides[b, c, NEIGHBOUR[c, j, 1]], sides[b, n, NEIGHBOUR[c, j, 2]]):
                marks[n] = DOMINO
                own[n] = p


@njit(cache=True, inline="always")
def pick(decks, status, marks, info, b, i):
    """The player to move in game ``b`` drafts their deck card ``i`` (legal: not checked)."""
    for n in range(TILES):
        marks[b, n] = 0  # no placement to mark
    p = np.int64(info[b, TO_MOVE])
    status[b, p, i] = IN_HAND
    info[b, HAND0 + p] += 1
    if is_a_card(decks, b, p, i):
        info[b, A_HELD0 + p] += 1
    if info[b, HAND0] >= HAND_SIZE and info[b, HAND0 + 1] >= HAND_SIZE:
        info[b, PHASE] = PLAY
        info[b, TO_MOVE] = info[b, FIRST_PLAYER]
    else:
        info[b, TO_MOVE] = 1 - p


@njit(cache=True, inline="always")
def place(decks, status, sides, owner, marks, info, b, i, t):
    """The player to move in game ``b`` places their card ``i`` on tile ``t`` (legal: not checked).

    Loops over placements (playouts, rollouts, ``step_batch``) call this directly rather than
    ``apply_action``: see the module docstring.
    """
    p = np.int64(info[b, TO_MOVE])
    o = 1 - p
    for n in range(TILES):
        marks[b, n] = 0
    for k in range(4):
        sides[b, t, k] = decks[b, p, i, k]
    owner[b, t] = p
    marks[b, t] = PLACED
    status[b, p, i] = PLAYED
    info[b, HAND0 + p] -= 1
    capture(decks, sides, b, p, i, t, owner[b], marks[b])
    full = True
    for n in range(TILES):
        if owner[b, n] == -1:
            full = False
            break
    # the end of the game
    lane = controlled_lane(owner, b, p)
    if lane >= 0:
        score(owner, info, b)
        info[b, PHASE] = OVER
        info[b, TERMINATION] = LANE_CONTROL
        info[b, LANE] = lane
        info[b, WINNER] = p
        info[b, TO_MOVE] = o
        return
    if full:
        info[b, WINNER] = score(owner, info, b)
        info[b, PHASE] = OVER
        info[b, TERMINATION] = FULL_BOARD
        info[b, TO_MOVE] = o
    elif info[b, HAND0 + o] > 0:
        info[b, TO_MOVE] = o
    elif info[b, HAND0 + p] > 0:
        info[b, TO_MOVE] = p  # the opponent has no card and passes
    else:
        info[b, WINNER] = score(owner, info, b)
        info[b, PHASE] = OVER
        info[b, TERMINATION] = NO_MOVES
        info[b, TO_MOVE] = o


@njit(cache=True)
def apply_action(decks, status, sides, owner, marks, info, b, action):
    """Apply a legal ``action`` of the player to move in game ``b`` (no legality check)."""
    if action < PLACE_OFFSET:
        pick(decks, status, marks, info, b, action)
    else:
        i, t = divmod(action - PLACE_OFFSET, TILES)
        place(decks, status, sides, owner, marks, info, b, i, t)


@njit(cache=True)
def check_batch(decks, status, owner, info, actions, illegal):
    """``illegal[b] = 1`` where ``actions[b]`` is not legal in game ``b`` (negative actions: skipped)."""
    for b in range(info.shape[0]):
        a = actions[b]
        phase = info[b, PHASE]
        if phase == PLAY and PLACE_OFFSET <= a < 256:
            illegal[b] = not is_legal_placement(status, owner, info, b, a)
        elif phase == DRAFT and 0 <= a < PLACE_OFFSET:
            illegal[b] = not is_legal_pick(decks, status, info, b, a)
        else:
            illegal[b] = a >= 0


@njit(cache=True, inline="always")
def copy_row(status, sides, owner, info, src, dst):
    """Copy game ``src`` into row ``dst``: all a move can change (search rows share their decks).

    Plain loops rather than slice assignments: searches call this once per node, and the
    loops compile to a few vector moves where slices build array views each time.
    """
    for p in range(2):
        for i in range(status.shape[2]):
            status[dst, p, i] = status[src, p, i]
    for t in range(TILES):
        owner[dst, t] = owner[src, t]
        for k in range(4):
            sides[dst, t, k] = sides[src, t, k]
    for c in range(info.shape[1]):
        info[dst, c] = info[src, c]


@njit(cache=True)
def step_batch(decks, status, sides, owner, marks, info, actions, illegal):
    """Apply ``actions[b]`` in every game not over (negative: skip); ``illegal[b]`` marks refused actions."""
    for b in range(info.shape[0]):
        illegal[b] = 0
        a = actions[b]
        phase = info[b, PHASE]
        if phase == OVER or a < 0:
            continue
        if phase == PLAY and PLACE_OFFSET <= a < 256 and is_legal_placement(status, owner, info, b, a):
            i, t = divmod(a - PLACE_OFFSET, TILES)
            place(decks, status, sides, owner, marks, info, b, i, t)
        elif phase == DRAFT and a < PLACE_OFFSET and is_legal_pick(decks, status, info, b, a):
            pick(decks, status, marks, info, b, a)
        else:
            illegal[b] = 1


_SHIFT_A = np.uint64(12)
_SHIFT_B = np.uint64(25)
_SHIFT_C = np.uint64(27)
_SHIFT_32 = np.uint64(32)
_MULTIPLIER = np.uint64(0x2545F4914F6CDD1D)


@njit(cache=True, inline="always")
def random_below(rng, b, n):
    """A random integer in ``[0, n)`` from game ``b``'s own xorshift64* stream ``rng[b]``.

    One stream per game keeps batched and threaded playouts reproducible whatever the
    thread count, and is several times cheaper than numba's shared Mersenne Twister. The
    top 32 bits are scaled to ``[0, n)`` by a multiply and a shift instead of a division
    (bias below n / 2**32).
    """
    x = rng[b]
    x ^= x >> _SHIFT_A
    x ^= x << _SHIFT_B
    x ^= x >> _SHIFT_C
    rng[b] = x
    return np.int64((((x * _MULTIPLIER) >> _SHIFT_32) * np.uint64(n)) >> _SHIFT_32)


@njit(cache=True, inline="always")
def random_placement(status, owner, info, b, rng, buffer):
    """``(card, tile)``: a uniformly random placement of the player to move in game ``b``, in play.

    The legal placements are every card in hand times every empty tile, so a uniform card
    and a uniform tile give a uniform action without listing them all.
    """
    p = np.int64(info[b, TO_MOVE])
    # branch-free lists: empty tiles in buffer[0:empty], hand slots in buffer[16:16 + held]
    empty = 0
    for t in range(TILES):
        buffer[empty] = t
        empty += np.int64(owner[b, t] == -1)
    held = 0
    for i in range(16):
        buffer[16 + held] = i
        held += np.int64(status[b, p, i] == IN_HAND)
    card = buffer[16 + random_below(rng, b, held)]
    tile = buffer[random_below(rng, b, empty)]
    return card, tile


@njit(cache=True, inline="always")
def random_pick(decks, status, info, b, rng, buffer):
    """A uniformly random legal pick of the player to move in game ``b``, in the draft."""
    return buffer[random_below(rng, b, legal_picks(decks, status, info, b, buffer))]


@njit(cache=True)
def _random_playout(decks, status, sides, owner, marks, info, b, rng, buffer):
    while info[b, PHASE] == DRAFT:
        pick(decks, status, marks, info, b, random_pick(decks, status, info, b, rng, buffer))
    placements = 0
    while info[b, PHASE] != OVER:
        card, tile = random_placement(status, owner, info, b, rng, buffer)
        place(decks, status, sides, owner, marks, info, b, card, tile)
        placements += 1
    return placements


@njit(cache=True)
def random_playouts(decks, status, sides, owner, marks, info, rng):
    """Play every game of the batch to the end with uniformly random legal actions; total placements."""
    buffer = np.empty(256, np.int64)
    total = 0
    for b in range(info.shape[0]):
        total += _random_playout(decks, status, sides, owner, marks, info, b, rng, buffer)
    return total


@njit(cache=True, parallel=True)
def random_playouts_parallel(decks, status, sides, owner, marks, info, rng):
    """``random_playouts`` spread over numba's threads (``numba.set_num_threads``)."""
    n = info.shape[0]
    counts = np.zeros(n, np.int64)
    for b in prange(n):
        buffer = np.empty(256, np.int64)
        counts[b] = _random_playout(decks, status, sides, owner, marks, info, b, rng, buffer)
    return counts.sum()


@njit(cache=True)
def masks_batch(decks, status, owner, info, out):
    """Legal-action masks of the player to move in every game (all zeros once over)."""
    buffer = np.empty(256, np.int64)
    for b in range(info.shape[0]):
        for a in range(out.shape[1]):
            out[b, a] = 0
        phase = info[b, PHASE]
        if phase == PLAY:
            count = legal_placements(status, owner, info, b, buffer)
        elif phase == DRAFT:
            count = legal_picks(decks, status, info, b, buffer)
        else:
            count = 0
        for j in range(count):
            out[b, buffer[j]] = 1


# observation layout (must match trinity_env.spec.observation, bit for bit)


@njit(cache=True)
def observe(decks, status, sides, owner, info, b, seat, open_hands, out):
    """Write game ``b``'s observation for ``seat`` into ``out`` (339 int8), as the AEC env encodes it."""
    out[:] = 0
    other = 1 - seat
    phase = info[b, PHASE]
    out[0] = phase == DRAFT
    out[1] = phase == PLAY
    out[2] = phase == OVER
    out[3] = phase != OVER and info[b, TO_MOVE] == seat
    out[4] = info[b, FIRST_PLAYER] == seat
    out[5] = info[b, MAX_A]
    out[6] = info[b, A_HELD0 + seat]
    out[7] = info[b, HAND0 + seat]
    out[8] = info[b, HAND0 + other]
    for t in range(TILES):
        o = owner[b, t]
        if o == -1:
            continue
        base = _BOARD + TILE_FEATURES * t
        if o == seat:
            out[base] = 1
        else:
            out[base + 1] = 1
        for k in range(4):
            out[base + 2 + k] = sides[b, t, k]
    visible = open_hands and phase != DRAFT
    for who in (seat, other):  # each card's sides, then its status: the seat's own, or what it sees of theirs
        for i in range(16):
            s = status[b, who, i]
            if s == ABSENT:
                continue
            base = _OWN + OWN_CARD_FEATURES * i if who == seat else _THEIRS + THEIR_CARD_FEATURES * i
            for k in range(4):
                out[base + k] = decks[b, who, i, k]
            if who == seat:
                out[base + 4 + s] = 1
            elif s == PLAYED:
                out[base + 4] = 1
            elif not visible:
                out[base + 7] = 1
            elif s == IN_HAND:
                out[base + 5] = 1
            else:
                out[base + 6] = 1


@njit(cache=True)
def observe_batch(decks, status, sides, owner, info, seats, open_hands, out):
    """Observations of ``seats[b]`` in every game b."""
    for b in range(info.shape[0]):
        observe(decks, status, sides, owner, info, b, seats[b], open_hands, out[b])


@njit(cache=True)
def _choose(n, k):
    result = 1
    for j in range(k):
        result = result * (n - j) // (j + 1)
    return result


@njit(cache=True)
def deal_random_hand(decks, status, info, b, p, rng):
    """Give player ``p`` of game ``b`` a hand drawn uniformly from all legal hands of its deck."""
    a_slots = np.empty(16, np.int64)
    plain_slots = np.empty(16, np.int64)
    n_a = 0
    n_plain = 0
    for i in range(16):
        if status[b, p, i] == ABSENT:
            continue
        if is_a_card(decks, b, p, i):
            a_slots[n_a] = i
            n_a += 1
        else:
            plain_slots[n_plain] = i
            n_plain += 1
    # how many A cards: weighted by the number of legal hands with that many
    top = min(info[b, MAX_A], n_a, HAND_SIZE)
    total = 0
    for k in range(top + 1):
        total += _choose(n_a, k) * _choose(n_plain, HAND_SIZE - k)
    r = random_below(rng, b, total)
    k = 0
    while True:
        weight = _choose(n_a, k) * _choose(n_plain, HAND_SIZE - k)
        if r < weight:
            break
        r -= weight
        k += 1
    # k A cards and 8 - k plain ones, each set uniform (partial Fisher-Yates)
    for j in range(k):
        swap = j + random_below(rng, b, n_a - j)
        a_slots[j], a_slots[swap] = a_slots[swap], a_slots[j]
        status[b, p, a_slots[j]] = IN_HAND
    for j in range(HAND_SIZE - k):
        swap = j + random_below(rng, b, n_plain - j)
        plain_slots[j], plain_slots[swap] = plain_slots[swap], plain_slots[j]
        status[b, p, plain_slots[j]] = IN_HAND
    info[b, HAND0 + p] = HAND_SIZE
    info[b, A_HELD0 + p] = k


@njit(cache=True)
def reset_games(decks, status, sides, owner, marks, info, games, new_decks, first_player, max_a, deal, fixed, rng):
    """Start new games in rows ``games``: decks ``new_decks[j]``, ``first_player`` (-1: random),
    and ``deal``: 0 the draft, 1 random legal hands, 2 the hands marked in ``fixed[p, i]``."""
    for j in range(games.shape[0]):
        b = games[j]
        for p in range(2):
            for i in range(16):
                empty = True
                for k in range(4):
                    decks[b, p, i, k] = new_decks[j, p, i, k]
                    if new_decks[j, p, i, k] != 0:
                        empty = False
                status[b, p, i] = ABSENT if empty else UNPICKED
        for t in range(TILES):
            owner[b, t] = -1
            marks[b, t] = 0
            for k in range(4):
                sides[b, t, k] = 0
        for c in range(info.shape[1]):
            info[b, c] = 0
        info[b, MAX_A] = max_a
        info[b, WINNER] = -1
        info[b, LANE] = -1
        info[b, DECK_SIZE0] = 16
        info[b, DECK_SIZE0 + 1] = 16
        info[b, FIRST_PLAYER] = random_below(rng, b, 2) if first_player < 0 else first_player
        if deal == 0:
            info[b, PHASE] = DRAFT
            info[b, TO_MOVE] = 0
            continue
        for p in range(2):
            if deal == 1:
                deal_random_hand(decks, status, info, b, p, rng)
            else:
                for i in range(16):
                    if fixed[p, i]:
                        status[b, p, i] = IN_HAND
                        info[b, HAND0 + p] += 1
                        if is_a_card(decks, b, p, i):
                            info[b, A_HELD0 + p] += 1
        info[b, PHASE] = PLAY
        info[b, TO_MOVE] = info[b, FIRST_PLAYER]


@njit(cache=True)
def random_actions(decks, status, owner, info, games, rng, out):
    """A uniformly random legal action for each game in ``games`` (a random opponent, in batch)."""
    buffer = np.empty(256, np.int64)
    for j in range(games.shape[0]):
        b = games[j]
        if info[b, PHASE] == DRAFT:
            out[j] = random_pick(decks, status, info, b, rng, buffer)
        else:
            card, tile = random_placement(status, owner, info, b, rng, buffer)
            out[j] = PLACE_OFFSET + TILES * card + tile
