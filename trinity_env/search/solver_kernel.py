"""The exact solver's search kernel: negamax with alpha-beta over the bitboard (``search.bitboard``).

``negamax`` searches one position within a window, with a transposition table that the
search threads share (``table``: checks and packed entries, see ``_store``) and the
per-thread arrays of ``solver_budget._Worker``. ``search.solver`` has the public ``Solver``;
``solver_budget`` runs this kernel in threads under a budget; ``solver_hints`` plants move
hints in its table.

Speed-ups, all exact:

- A move that completes a lane at once (filling its last tile, or flipping the last cards
  of theirs in a full lane) is looked for first, only on the tiles where one could.
- The opponent's threats prune: when the opponent could complete a lane at once were it
  their move, a move that neither takes that tile nor flips a card of every lane the
  threat completes loses, and is not searched. (The mover's other cards only add to what
  the opponent's placement flips: captures and the domino take more when the mover owns
  more, so the threat still completes its lane.)
- A query whose root has 11 empty tiles or more first runs a Monte Carlo search from it
  (``solver_hints``). Its visits order the root's moves (``root_order``), and its most
  visited lines become the table's first moves.
- The table's best move and two killer moves per depth are tried before the moves are
  generated; the rest are ordered by blocking a lane the opponent nearly holds, captures
  and a history of cut-offs; with six empty tiles or more, each move is also played out
  one step: one that lets the opponent complete a lane at once goes last, one that leaves
  the mover lanes to complete goes early.
- The table has buckets of two slots (one keeps the deeper search, the other takes the
  newest) and holds positions with five empty tiles or more: smaller subtrees cost less
  to search again than to look up.
- With two empty tiles or fewer, plain minimax: no table, ordering or threats.

The search is one loop over a stack of frames, not a recursion: numba counts references
to every array a call passes, and with a dozen arrays that cost more than a small node.
A search stops when its node counter passes its limit (``nodes``, which another thread can
lower to stop it), unwinding without storing anything from the nodes it had not finished.

Past the house's ~500 lines on purpose (docs/architecture.md): the search loop and the ``inline="always"`` helpers
it compiles into itself are one hot path, read, measured and changed together (a change to any of them moves the node
counts the tests pin).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from trinity_env.search.bitboard import (
    FULL,
    LANES,
    POPCOUNT,
    REACH,
    ends,
    flips,
    held_lanes,
    holds_a_lane,
    mix,
    place,
    place_action,
    scored,
    take_back,
    take_back_action,
)

EXACT, LOWER, UPPER = 0, 1, 2
TABLE_MIN_EMPTY = 5  # positions with fewer empty tiles skip the transposition table
KILLER_BONUS = 50_000_000  # above any number of captures
BLOCK_BONUS = 20_000_000  # the last empty tile of a lane the opponent nearly holds: below the killers
THREAT_BONUS = 30_000_000  # per lane the move leaves the mover to complete next turn (look-ahead)
LOSES_AT_ONCE = 1_000_000_000  # a move after which the opponent completes a lane: tried last
LOOK_AHEAD_MIN_EMPTY = 6  # nodes with fewer empty tiles are too many to play every move out for ordering
MAX_THREATS = 64  # more of the opponent's threats than this: the prune is skipped (exact either way)
MAX_DEPTH = 17  # the root and up to 15 placements, with room to spare
# the columns of a search's frames: one row per depth, what a node keeps while its children are searched
F_PLAYER, F_ALPHA, F_BETA, F_ALPHA0, F_BEST, F_BEST_MOVE, F_FIRST, F_KILLER0, F_KILLER1 = range(9)
F_COUNT, F_NEXT, F_THREATS, F_EMPTY, F_KEY, F_BUCKET, F_MOVE, F_FLIPPED = range(9, 17)
FRAME_COLUMNS = 17
ENTER, NEXT, RETURN, HANDLE = range(4)  # the steps of ``negamax``'s loop
LOWEST_BIT = np.array([(m & -m).bit_length() - 1 for m in range(1 << 16)], np.int64)  # of tile and hand masks; -1 for 0


@njit(cache=True, inline="always")
def _key(board, p):
    """The table key of the position on ``board`` with player ``p`` to move: the board's
    additive hash of cards on tiles and in hands, mixed with the owners and the mover."""
    own, key = board[0], board[4]
    return mix(key[0] ^ mix(np.uint64(own[0] | (own[1] << 15) | (p << 30)) + np.uint64(0x9E3779B97F4A7C15)))


@njit(cache=True, inline="always")
def _first_copy(hand, copies, p, i):
    """Whether slot ``i`` of player ``p``'s hand is the first of its card there (identical cards
    give identical moves, so only the first copy is searched)."""
    return (hand[p] & copies[p, i]) == 0


@njit(cache=True, inline="always")
def _distinct_slots(hand, copies, p):
    """The slots of player ``p``'s hand that hold the first copy of their card: the only ones searched."""
    slots = 0
    rest = hand[p]
    while rest:
        i = LOWEST_BIT[rest]
        rest &= rest - 1
        if _first_copy(hand, copies, p, i):
            slots |= 1 << i
    return slots


@njit(cache=True, inline="always")
def _next_pair(outer, inner, inner_all):
    """One step of a walk over every pair (a bit of ``outer``, a bit of ``inner_all``, which is not 0), outer-major,
    lowest bits first: the nested loop over cards and tiles of every placement search, written once.

    The walk's state is ``outer`` (the bits left, the lowest being the current one) and ``inner`` (the current
    one's partners left); it starts as ``(outer, inner_all)`` and is done when ``outer`` is 0. Returns the next
    pair's two bit indices and the state after it::

        cards, tiles = slots, empty
        while cards:
            i, t, cards, tiles = _next_pair(cards, tiles, empty)

    The lowest bits by ``trailing_zeros`` (one instruction), not ``LOWEST_BIT`` (a load from a 512 KiB table): the
    walk runs once per placement tried, and the lookups cost the search a few per cent (measured).
    """
    a = trailing_zeros(outer)
    b = trailing_zeros(inner)
    inner &= inner - 1
    if inner == 0:
        outer &= outer - 1
        inner = inner_all
    return a, b, outer, inner


@njit(cache=True, inline="always")
def _may_complete(own, p):
    """The empty tiles where player ``p`` could complete a lane at once: a lane's last empty
    tile, or in a full lane, a tile within reach (two steps) of every card of theirs there."""
    mine = own[p]
    theirs = own[1 - p]
    empty = FULL & ~(mine | theirs)
    tiles = 0
    for lane in range(3):
        e = empty & LANES[lane]
        them = theirs & LANES[lane]
        if e == 0:
            rest = empty
            while rest:
                t = LOWEST_BIT[rest]
                rest &= rest - 1
                if (them & ~REACH[t]) == 0:
                    tiles |= 1 << t
        elif (e & (e - 1)) == 0 and (them & ~REACH[LOWEST_BIT[e]]) == 0:
            tiles |= e
    return tiles


# what ``_lane_completions`` reports; numpy integers, not Python ones, so that numba types them as int64, not as
# three literal types compiling ``_lane_completions`` once each
FIRST_WIN, COUNT_TILES, LIST_THREATS = np.int64(0), np.int64(1), np.int64(2)


@njit(cache=True, inline="always")
def _lane_completions(board, p, want, tiles, lanes, d):
    """Player ``p``'s placements that would complete lanes at once, as ``want`` says:

    - ``FIRST_WIN``: the first one found (an action), or -1;
    - ``COUNT_TILES``: how many empty tiles have one;
    - ``LIST_THREATS``: each one into ``tiles[d, k]`` (its tile) and ``lanes[d, k]`` (the
      mask of lanes, bits 0-2, it completes); how many, or 0 past ``MAX_THREATS`` (then
      every move is searched).

    Only the tiles where ``_may_complete`` holds are tried, each with every distinct card.
    """
    own, hand, card, beaten, wins, copies = board[0], board[1], board[2], board[3], board[5], board[6]
    cards = hand[p]
    candidates = _may_complete(own, p) if cards else 0  # tile-major: each candidate tile with every card
    rest = cards
    n = 0
    while candidates:
        t, i, candidates, rest = _next_pair(candidates, rest, cards)
        if not _first_copy(hand, copies, p, i):
            continue
        after = own[p] | flips(own, card, beaten, wins, p, 16 * p + i, t) | (1 << t)
        completed = held_lanes(after)
        if completed == 0:
            continue
        if want == FIRST_WIN:
            return 16 + 15 * i + t
        if want == COUNT_TILES:
            n += 1
            if rest != cards:  # the tile is counted: on to the next one (unless the walk just moved there)
                candidates &= candidates - 1
                rest = cards
            continue
        if n == MAX_THREATS:
            return 0
        tiles[d, n] = t
        lanes[d, n] = completed
        n += 1
    return -1 if want == FIRST_WIN else n


@njit(cache=True, inline="always")
def _answers(t, flipped, tiles, lanes, d, n):
    """Whether a placement on ``t`` flipping ``flipped`` answers each of ``n`` threats: it takes
    the threat's tile or flips a card in every lane the threat completes."""
    for k in range(n):
        if t == tiles[d, k]:
            continue
        for lane in range(3):
            if (lanes[d, k] >> lane) & 1 and (flipped & LANES[lane]) == 0:
                return False
    return True


@njit(cache=True, inline="always")
def _last_placement(board, p):
    """Value for ``p`` of the last empty tile's placement (every move fills the board)."""
    own, hand, card, beaten, wins, copies = board[0], board[1], board[2], board[3], board[5], board[6]
    t = LOWEST_BIT[FULL & ~(own[0] | own[1])]
    best = -2
    rest = hand[p]
    while rest:  # the cards one by one, not ``_distinct_slots``: a win ends the loop early
        i = LOWEST_BIT[rest]
        rest &= rest - 1
        if not _first_copy(hand, copies, p, i):
            continue
        f = flips(own, card, beaten, wins, p, 16 * p + i, t)
        mine = own[p] | f | (1 << t)
        theirs = own[1 - p] & ~f
        v = 1 if holds_a_lane(mine) else scored(mine, theirs, 0)  # mine as player 0's
        if v > best:
            best = v
            if best == 1:
                return 1
    return best


@njit(cache=True)
def _two_left(board, p, nodes):
    """Value for ``p`` with two empty tiles left: plain minimax over ``p``'s placements and the
    last one, without the table, ordering or threats (each placement counted as a node,
    within the budget: see ``negamax``'s ``nodes``)."""
    own, hand, card, beaten, key, wins, copies, tile_terms, hand_terms = board
    o = 1 - p
    empty = FULL & ~(own[0] | own[1])
    best = -2
    cards, tiles = _distinct_slots(hand, copies, p), empty
    while cards:
        i, t, cards, tiles = _next_pair(cards, tiles, empty)
        nodes[0] += 1
        if nodes[0] > nodes[1]:  # out of budget: the value is meaningless
            nodes[2] = 1
            return 0
        f = place(own, hand, card, beaten, key, wins, tile_terms, hand_terms, p, i, t)
        v = ends(own, hand, p)
        if v == 2:
            v = -_last_placement(board, o) if hand[o] != 0 else _last_placement(board, p)
        take_back(own, hand, card, beaten, key, tile_terms, hand_terms, p, i, t, f)
        if v > best:
            best = v
            if best == 1:
                return 1
    return best


@njit(cache=True, inline="always")
def _pack(value, bound, move, empty):
    """One table entry in one word: value + 1 (2 bits), bound (2), move + 1 (9), empty tiles (4)."""
    return (
        np.uint64(value + 1)
        | (np.uint64(bound) << np.uint64(2))
        | (np.uint64(move + 1) << np.uint64(4))
        | (np.uint64(empty) << np.uint64(13))
    )


@njit(cache=True, inline="always")
def _field(data, shift, bits):
    return np.int64((data >> np.uint64(shift)) & np.uint64((1 << bits) - 1))


@njit(cache=True, inline="always")
def _store(keys, data, bucket, key, value, bound, move, empty):
    """Store a searched node in its bucket: the first slot keeps the deeper search (more
    empty tiles) or the same position, the second slot takes whatever the first refuses.

    A slot holds ``key ^ entry`` beside the entry, so a slot that another search thread
    is writing at the same moment (one word stored, not yet the other) reads as a miss,
    never as a wrong entry (the "lockless" table of Hyatt and Mann).
    """
    old = data[bucket]
    slot = bucket if keys[bucket] ^ old == key or _field(old, 13, 4) <= empty else bucket + 1
    entry = _pack(value, bound, move, empty)
    data[slot] = entry
    keys[slot] = key ^ entry


@njit(cache=True, inline="always")
def _usable(own, hand, copies, p, action, other0, other1):
    """Whether ``action`` (the table's move or a killer) is a move the generator would give
    (its card in hand and the first copy there, its tile empty) and differs from the others."""
    if action < 0 or action == other0 or action == other1:  # noqa: SIM109 (numba: mixed int types)
        return False
    i = (action - 16) // 15
    t = (action - 16) % 15
    if ((hand[p] >> i) & 1) == 0 or ((own[0] | own[1]) >> t) & 1:
        return False
    return _first_copy(hand, copies, p, i)


@njit(cache=True)
def _moves(board, p, moves, scores, history, killers, d, tiles, lanes, threats, root_order):
    """Placements of ``p``, one per distinct card in hand, that answer the opponent's
    ``threats`` (the others lose), with ordering scores: blocking a lane the opponent nearly
    holds, the cards flipped, the killers and the history of cut-offs, and at the root
    ``root_order`` (per action). ``negamax`` picks moves best-first lazily: a cut-off rarely
    needs them all."""
    own, hand, card, beaten, wins, copies = board[0], board[1], board[2], board[3], board[5], board[6]
    theirs = own[1 - p]
    empty = FULL & ~(own[0] | own[1])
    blocking = 0  # the last empty tile of a lane holding three or more cards of theirs
    for lane in range(3):
        e = empty & LANES[lane]
        if e != 0 and (e & (e - 1)) == 0 and POPCOUNT[theirs & LANES[lane]] >= 3:
            blocking |= e
    n = 0
    cards, rest = _distinct_slots(hand, copies, p), empty
    while cards:
        i, t, cards, rest = _next_pair(cards, rest, empty)
        f = flips(own, card, beaten, wins, p, 16 * p + i, t)
        if threats > 0 and not _answers(t, f, tiles, lanes, d, threats):
            continue
        action = 16 + 15 * i + t
        score = POPCOUNT[f] * 1_000_000 + history[action]
        if d == 0:
            score += root_order[action]
        if action == killers[d, 0]:
            score += KILLER_BONUS
        elif action == killers[d, 1]:
            score += KILLER_BONUS // 2
        if (blocking >> t) & 1:
            score += BLOCK_BONUS
        moves[d, n] = action
        scores[d, n] = score
        n += 1
    return n


@njit(cache=True)
def _look_ahead(board, p, moves, scores, d, n, tiles, lanes):
    """Ordering by one step, for nodes high in the tree: each move is played; one that lets
    the opponent complete a lane at once goes last, one that leaves the mover lanes to
    complete next time goes early (the opponent can rarely stop two)."""
    own, hand = board[0], board[1]
    o = 1 - p
    for k in range(n):
        f = place_action(board, p, moves[d, k])
        if ends(own, hand, p) == 2:
            if hand[o] != 0 and _lane_completions(board, o, FIRST_WIN, tiles, lanes, d) >= 0:
                scores[d, k] -= LOSES_AT_ONCE
            else:
                scores[d, k] += THREAT_BONUS * _lane_completions(board, p, COUNT_TILES, tiles, lanes, d)
        take_back_action(board, p, moves[d, k], f)


@njit(cache=True, inline="always")
def _unwind(board, frames, d):
    """Take back every move on the path to depth ``d`` (a search that stopped)."""
    for up in range(d - 1, -1, -1):
        take_back_action(board, frames[up, F_PLAYER], frames[up, F_MOVE], frames[up, F_FLIPPED])


@njit(cache=True, nogil=True)
def negamax(board, p, alpha, beta, table, moves, scores, history, killers, tiles, lanes, frames, nodes, root_order):
    """Value for player ``p`` (to move, holding a card, with an empty tile left) of the
    position on ``board``, searched within the window ``(alpha, beta)``.

    A negamax without recursion: each depth's node keeps its state in a row of ``frames``
    (columns ``F_*``), so descending and returning are index changes, not calls. (Calls
    between numba functions count references to every array they pass, which cost a
    search of small nodes most of its time.)

    ``table`` holds checks and entries (value, bound: EXACT/LOWER/UPPER, best move, empty
    tiles, packed in one word; see ``_store``) in buckets of two slots, and may be shared by
    search threads. The table's best move, then the killers of the node's depth, are tried
    before any other move is even generated: when one cuts off, as it mostly does, the
    node costs one child. ``history`` (per action) and ``killers`` (two actions per depth)
    only order moves, so they never change a value; nor does ``root_order`` (per action, an
    ordering score added at the root). ``tiles`` and ``lanes`` hold each depth's threats of
    the opponent.

    ``nodes`` is the budget, three int64: nodes searched so far, the most allowed (another
    thread stops the search by setting it to -1), and a flag set to 1 when the search
    stopped. A stopped search takes back its moves and returns at once; its value is
    meaningless, and no node that did not finish stores anything in the table.
    """
    own, hand, card, beaten, key, wins, copies, tile_terms, hand_terms = board
    keys, data = table
    d = np.int64(0)  # not the literal 0: a call typed with it first would compile a second specialisation
    frames[0, F_PLAYER] = p
    frames[0, F_ALPHA] = alpha
    frames[0, F_BETA] = beta
    step = ENTER
    v = 0
    while True:
        if step == ENTER:  # a new node at depth d: its value at once, or its moves set up
            nodes[0] += 1
            if nodes[0] > nodes[1]:
                nodes[2] = 1
                _unwind(board, frames, d)
                return 0
            p = frames[d, F_PLAYER]
            o = 1 - p
            alpha = frames[d, F_ALPHA]
            beta = frames[d, F_BETA]
            empty = 15 - POPCOUNT[own[0] | own[1]]
            if empty <= 2:
                v = _last_placement(board, p) if empty == 1 else _two_left(board, p, nodes)
                if nodes[2] != 0:  # out of budget within ``_two_left``
                    _unwind(board, frames, d)
                    return 0
                step = RETURN
                continue
            tabled = empty >= TABLE_MIN_EMPTY  # smaller subtrees cost less to search than to look up
            k = _key(board, p) if tabled else np.uint64(0)
            bucket = np.int64(k & np.uint64(keys.shape[0] - 2))  # two slots: depth-preferred, always-replace
            first = -1
            if tabled:
                entry = data[bucket]
                hit = keys[bucket] ^ entry == k
                if not hit:
                    entry = data[bucket + 1]
                    hit = keys[bucket + 1] ^ entry == k
                if hit:
                    v = _field(entry, 0, 2) - 1
                    bound = _field(entry, 2, 2)
                    first = _field(entry, 4, 9) - 1
                    if bound == EXACT:
                        step = RETURN
                        continue
                    if bound == LOWER and v > alpha:
                        alpha = v
                    elif bound == UPPER and v < beta:
                        beta = v
                    if alpha >= beta:
                        step = RETURN
                        continue
            win = _lane_completions(board, p, FIRST_WIN, tiles, lanes, d)
            if win >= 0:
                if tabled:
                    _store(keys, data, bucket, k, 1, EXACT, win, empty)
                v = 1
                step = RETURN
                continue
            threats = _lane_completions(board, o, LIST_THREATS, tiles, lanes, d) if hand[o] != 0 else 0
            # the table's move and this depth's two killers are tried before the moves are generated
            killer0 = killers[d, 0] if _usable(own, hand, copies, p, killers[d, 0], first, -1) else -1
            killer1 = killers[d, 1] if _usable(own, hand, copies, p, killers[d, 1], first, killer0) else -1
            if first >= 0 and not _usable(own, hand, copies, p, first, -1, -1):
                first = -1
            frames[d, F_ALPHA] = alpha
            frames[d, F_BETA] = beta
            frames[d, F_ALPHA0] = alpha
            frames[d, F_BEST] = -2
            frames[d, F_BEST_MOVE] = -1
            frames[d, F_FIRST] = first
            frames[d, F_KILLER0] = killer0
            frames[d, F_KILLER1] = killer1
            frames[d, F_COUNT] = -1  # moves not generated yet
            frames[d, F_NEXT] = -3
            frames[d, F_THREATS] = threats
            frames[d, F_EMPTY] = empty
            frames[d, F_KEY] = np.int64(k)
            frames[d, F_BUCKET] = bucket
            step = NEXT
        elif step == NEXT:  # the node's next move, played and entered; or the node is done
            p = frames[d, F_PLAYER]
            o = 1 - p
            # the table's move and the killers (those that answer the threats), then the moves
            # generated, best first, without those three
            j = frames[d, F_NEXT]
            n = frames[d, F_COUNT]
            threats = frames[d, F_THREATS]
            action = -1
            while action < 0:
                if j < 0:
                    candidate = frames[d, F_FIRST] if j == -3 else frames[d, F_KILLER0 if j == -2 else F_KILLER1]
                    j += 1
                    if candidate < 0:
                        continue
                    if threats > 0:
                        t = (candidate - 16) % 15
                        f = flips(own, card, beaten, wins, p, 16 * p + (candidate - 16) // 15, t)
                        if not _answers(t, f, tiles, lanes, d, threats):
                            continue
                    action = candidate
                else:
                    if n < 0:
                        n = _moves(board, p, moves, scores, history, killers, d, tiles, lanes, threats, root_order)
                        if frames[d, F_EMPTY] >= LOOK_AHEAD_MIN_EMPTY:
                            _look_ahead(board, p, moves, scores, d, n, tiles, lanes)
                        frames[d, F_COUNT] = n
                    if j >= n:
                        break
                    top = j  # selection: bring the best remaining move to position j
                    for m in range(j + 1, n):
                        if scores[d, m] > scores[d, top]:
                            top = m
                    moves[d, j], moves[d, top] = moves[d, top], moves[d, j]
                    scores[d, j], scores[d, top] = scores[d, top], scores[d, j]
                    candidate = moves[d, j]
                    j += 1
                    if candidate not in (frames[d, F_FIRST], frames[d, F_KILLER0], frames[d, F_KILLER1]):
                        action = candidate
            frames[d, F_NEXT] = j
            if action < 0:  # every move searched, or a threat of the opponent beats every move
                v = frames[d, F_BEST]
                if v == -2:
                    v = -1
                if frames[d, F_EMPTY] >= TABLE_MIN_EMPTY:
                    _store(
                        keys,
                        data,
                        frames[d, F_BUCKET],
                        np.uint64(frames[d, F_KEY]),
                        v,
                        UPPER if v <= frames[d, F_ALPHA0] else EXACT,
                        frames[d, F_BEST_MOVE],
                        frames[d, F_EMPTY],
                    )
                step = RETURN
                continue
            f = place_action(board, p, action)
            v = ends(own, hand, p)
            frames[d, F_MOVE] = action
            frames[d, F_FLIPPED] = f
            if v != 2:  # the game is over
                take_back_action(board, p, action, f)
                step = HANDLE
                continue
            if hand[o] != 0:
                frames[d + 1, F_PLAYER] = o
                frames[d + 1, F_ALPHA] = -frames[d, F_BETA]
                frames[d + 1, F_BETA] = -frames[d, F_ALPHA]
            else:  # the opponent has no card and passes: same player, same window
                frames[d + 1, F_PLAYER] = p
                frames[d + 1, F_ALPHA] = frames[d, F_ALPHA]
                frames[d + 1, F_BETA] = frames[d, F_BETA]
            d += 1
            step = ENTER
        elif step == RETURN:  # node d is worth v to its mover: back to its parent
            if d == 0:
                return v
            d -= 1
            p = frames[d, F_PLAYER]
            if frames[d + 1, F_PLAYER] != p:
                v = -v
            take_back_action(board, p, frames[d, F_MOVE], frames[d, F_FLIPPED])
            step = HANDLE
        else:  # HANDLE: the value v of node d's last move
            action = frames[d, F_MOVE]
            if v > frames[d, F_BEST]:
                frames[d, F_BEST] = v
                frames[d, F_BEST_MOVE] = action
            if v > frames[d, F_ALPHA]:
                frames[d, F_ALPHA] = v
            step = NEXT
            if frames[d, F_ALPHA] >= frames[d, F_BETA]:  # a cut-off
                empty = frames[d, F_EMPTY]
                history[action] += 1 << empty  # a cut-off move: try it early elsewhere too
                if killers[d, 0] != action:
                    killers[d, 1] = killers[d, 0]
                    killers[d, 0] = action
                if empty >= TABLE_MIN_EMPTY:
                    _store(
                        keys,
                        data,
                        frames[d, F_BUCKET],
                        np.uint64(frames[d, F_KEY]),
                        v,
                        EXACT if v == 1 else LOWER,  # nothing is worth more than a win
                        action,
                        empty,
                    )
                step = RETURN


@njit(cache=True)
def root_key(board, p):
    """The table key of the position loaded on ``board`` with ``p`` to move."""
    return _key(board, p)
