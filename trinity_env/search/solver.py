"""The exact solver: negamax with alpha-beta, a transposition table and move ordering.

It solves open-hand play-phase positions: both hands are known, so the game is one of
perfect information and every position has a value for the player to move, +1 (win), 0
(draw; only loaded positions can draw) or -1 (loss). It searches on a bitboard
(``trinity_env.fast.bitboard``): owners as two masks, placements made and taken back in
place. Identical cards in a hand give identical moves, so only one copy of each is searched.

Speed-ups, all exact:

- A move that completes a lane at once (filling its last tile, or flipping the last cards
  of theirs in a full lane) is looked for first, only on the tiles where one could.
- The opponent's threats prune: when the opponent could complete a lane at once were it
  their move, a move that neither takes that tile nor flips a card of every lane the
  threat completes loses, and is not searched. (The mover's other cards only add to what
  the opponent's placement flips: captures and the domino take more when the mover owns
  more, so the threat still completes its lane.)
- A query whose root has 11 empty tiles or more first runs a Monte Carlo search from it
  (30,000 random playouts; ``_Hints``). Its visits order the root's moves, and its most
  visited lines become the table's first moves. Alpha-beta spends most of a large search
  refuting the moves it tries before a winning one, and there no cheap feature tells the
  winning moves apart; the playouts mostly do (docs/agents.md has what it saves).
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

A search can be bounded: ``max_nodes`` (deterministic: the same result on every machine)
and ``max_seconds``; past either, ``SolverBudgetError`` is raised. The kernel runs without
the GIL in a worker thread while the calling thread waits in short steps, so Ctrl-C
(``KeyboardInterrupt``) and the clock are honoured within a fraction of a second: the
waiting thread raises the kernel's stop flag, and the search unwinds without storing
anything from the nodes it had not finished.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from numba import njit

from trinity_env.core import GameState, Phase, TrinityError
from trinity_env.core.board import EMPTY
from trinity_env.core.position import IN_HAND
from trinity_env.fast import bitboard
from trinity_env.fast.bitboard import (
    FULL,
    LANES,
    POPCOUNT,
    REACH,
    Board,
    flips,
    holds_a_lane,
    mix,
    place,
    scored,
    take_back,
)
from trinity_env.fast.convert import write_state
from trinity_env.fast.layout import Batch
from trinity_env.search.mcts import BRANCHING, Tree, run_search, search_rows

EXACT, LOWER, UPPER = 0, 1, 2
TABLE_MIN_EMPTY = 5  # positions with fewer empty tiles skip the transposition table
KILLER_BONUS = 50_000_000  # above any number of captures
BLOCK_BONUS = 20_000_000  # the last empty tile of a lane the opponent nearly holds: below the killers
THREAT_BONUS = 30_000_000  # per lane the move leaves the mover to complete next turn (look-ahead)
LOSES_AT_ONCE = 1_000_000_000  # a move after which the opponent completes a lane: tried last
LOOK_AHEAD_MIN_EMPTY = 6  # nodes with fewer empty tiles are too many to play every move out for ordering
MAX_THREATS = 64  # more of the opponent's threats than this: the prune is skipped (exact either way)
TABLE_BITS = 22
MAX_DEPTH = 17  # the root and up to 15 placements, with room to spare
NO_LIMIT = np.iinfo(np.int64).max
HINT_MIN_EMPTY = 11  # a query's root with this many empty tiles gets its move order from a Monte Carlo search
HINT_SIMULATIONS = 30_000  # that search's simulations (fewer under a small node budget, see ``_hint_simulations``)
HINT_NODES_PER_SIMULATION = 100  # under ``max_nodes``, at most one simulation per this many nodes of the budget
HINT_MIN_SHARE = 0.1  # nodes of its tree with this share of the root's visits give the table a first move
HINT_C = 1.4  # its exploration constant (UCB1)
HINT_ORDER = 100_000_000  # the ordering score of the root's most visited move (above the killers)
PARALLEL_MIN_EMPTY = 9  # smaller positions are searched by one thread: starting another costs more
WAIT_STEP = 0.1  # seconds the calling thread waits between looks at the clock and for Ctrl-C
PROGRESS_EVERY = 1.0  # seconds between calls of a solver's ``progress``
T = TypeVar("T")
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
def _ends(own, hand, p):
    """The game's value for ``p`` after ``p``'s placement, or 2 when it goes on: a completed
    lane wins, a full board or two empty hands are scored."""
    if holds_a_lane(own[p]):
        return 1
    if (own[0] | own[1]) == FULL or (hand[0] == 0 and hand[1] == 0):
        return scored(own[0], own[1], p)
    return 2


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


FIRST_WIN, COUNT_TILES, LIST_THREATS = range(3)  # what ``_lane_completions`` reports


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
    candidates = _may_complete(own, p)
    n = 0
    while candidates:
        t = LOWEST_BIT[candidates]
        candidates &= candidates - 1
        rest = hand[p]
        while rest:
            i = LOWEST_BIT[rest]
            rest &= rest - 1
            if not _first_copy(hand, copies, p, i):
                continue
            after = own[p] | flips(own, card, beaten, wins, p, 16 * p + i, t) | (1 << t)
            completed = 0
            for lane in range(3):
                if (after & LANES[lane]) == LANES[lane]:
                    completed |= 1 << lane
            if completed == 0:
                continue
            if want == FIRST_WIN:
                return 16 + 15 * i + t
            if want == COUNT_TILES:
                n += 1
                break
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
    while rest:
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


@njit(cache=True, inline="always")
def _two_left(board, p, nodes):
    """Value for ``p`` with two empty tiles left: plain minimax over ``p``'s placements and the
    last one, without the table, ordering or threats (each placement counted as a node,
    within the budget: see ``negamax``'s ``nodes``)."""
    own, hand, card, beaten, key, wins, copies, tile_terms, hand_terms = board
    o = 1 - p
    empty = FULL & ~(own[0] | own[1])
    best = -2
    rest = hand[p]
    while rest:
        i = LOWEST_BIT[rest]
        rest &= rest - 1
        if not _first_copy(hand, copies, p, i):
            continue
        tiles = empty
        while tiles:
            t = LOWEST_BIT[tiles]
            tiles &= tiles - 1
            nodes[0] += 1
            if nodes[0] > nodes[1]:  # out of budget: the value is meaningless
                nodes[2] = 1
                return 0
            f = place(own, hand, card, beaten, key, wins, tile_terms, hand_terms, p, i, t)
            v = _ends(own, hand, p)
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


@njit(cache=True, inline="always")
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
    rest_i = hand[p]
    while rest_i:
        i = LOWEST_BIT[rest_i]
        rest_i &= rest_i - 1
        if not _first_copy(hand, copies, p, i):
            continue
        rest_t = empty
        while rest_t:
            t = LOWEST_BIT[rest_t]
            rest_t &= rest_t - 1
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


@njit(cache=True, inline="always")
def _look_ahead(board, p, moves, scores, d, n, tiles, lanes):
    """Ordering by one step, for nodes high in the tree: each move is played; one that lets
    the opponent complete a lane at once goes last, one that leaves the mover lanes to
    complete next time goes early (the opponent can rarely stop two)."""
    own, hand, card, beaten, key, wins, copies, tile_terms, hand_terms = board
    o = 1 - p
    for k in range(n):
        i = (moves[d, k] - 16) // 15
        t = (moves[d, k] - 16) % 15
        f = place(own, hand, card, beaten, key, wins, tile_terms, hand_terms, p, i, t)
        if _ends(own, hand, p) == 2:
            if hand[o] != 0 and _lane_completions(board, o, FIRST_WIN, tiles, lanes, d) >= 0:
                scores[d, k] -= LOSES_AT_ONCE
            else:
                scores[d, k] += THREAT_BONUS * _lane_completions(board, p, COUNT_TILES, tiles, lanes, d)
        take_back(own, hand, card, beaten, key, tile_terms, hand_terms, p, i, t, f)


@njit(cache=True, inline="always")
def _unwind(board, frames, d):
    """Take back every move on the path to depth ``d`` (a search that stopped)."""
    own, hand, card, beaten, key, wins, copies, tile_terms, hand_terms = board
    for up in range(d - 1, -1, -1):
        action = frames[up, F_MOVE]
        take_back(
            own, hand, card, beaten, key, tile_terms, hand_terms, frames[up, F_PLAYER],
            (action - 16) // 15, (action - 16) % 15, frames[up, F_FLIPPED],
        )  # fmt: skip


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
    d = 0
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
            i = (action - 16) // 15
            t = (action - 16) % 15
            f = place(own, hand, card, beaten, key, wins, tile_terms, hand_terms, p, i, t)
            v = _ends(own, hand, p)
            frames[d, F_MOVE] = action
            frames[d, F_FLIPPED] = f
            if v != 2:  # the game is over
                take_back(own, hand, card, beaten, key, tile_terms, hand_terms, p, i, t, f)
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
            action = frames[d, F_MOVE]
            take_back(own, hand, card, beaten, key, tile_terms, hand_terms, p, (action - 16) // 15, (action - 16) % 15,
                      frames[d, F_FLIPPED])  # fmt: skip
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
def plant_hints(board, table, action, player, first_child, children, visits, min_visits):
    """For each node of a Monte Carlo tree (rooted at the position on ``board``) visited at
    least ``min_visits`` times, store its most visited move as the table's move for its
    position, unless the table holds that position already. Returns how many were stored.

    A hint is stored as a lower bound of -1: always true, so it never cuts anything off;
    it only makes that move the first one searched there.
    """
    own, hand, card, beaten, key, wins, copies, tile_terms, hand_terms = board
    keys, data = table
    node_at = np.zeros(MAX_DEPTH + 1, np.int64)
    next_at = np.zeros(MAX_DEPTH + 1, np.int64)
    flipped_at = np.zeros(MAX_DEPTH + 1, np.int64)
    planted = 0
    d = 0
    next_at[0] = first_child[0]
    entered = True
    while d >= 0:
        n = node_at[d]
        if entered:  # node n's position is on the board
            entered = False
            empty = 15 - POPCOUNT[own[0] | own[1]]
            if children[n] > 0 and empty >= TABLE_MIN_EMPTY:
                best = first_child[n]
                for c in range(first_child[n], first_child[n] + children[n]):
                    if visits[c] > visits[best]:
                        best = c
                q = np.int64(player[best])
                i = (np.int64(action[best]) - 16) // 15
                i = LOWEST_BIT[hand[q] & (copies[q, i] | (1 << i))]  # the card's first copy in hand
                k = _key(board, q)
                bucket = np.int64(k & np.uint64(keys.shape[0] - 2))
                if keys[bucket] ^ data[bucket] != k and keys[bucket + 1] ^ data[bucket + 1] != k:
                    _store(keys, data, bucket, k, -1, LOWER, 16 + 15 * i + (np.int64(action[best]) - 16) % 15, empty)
                    planted += 1
        c = next_at[d]
        if children[n] > 0 and c < first_child[n] + children[n] and d < MAX_DEPTH:
            next_at[d] = c + 1
            if visits[c] >= min_visits and children[c] > 0:
                q = np.int64(player[c])
                flipped_at[d] = place(
                    own, hand, card, beaten, key, wins, tile_terms, hand_terms, q,
                    (np.int64(action[c]) - 16) // 15, (np.int64(action[c]) - 16) % 15,
                )  # fmt: skip
                d += 1
                node_at[d] = c
                next_at[d] = first_child[c]
                entered = True
        else:  # node n is done: back to its parent
            if d > 0:
                q = np.int64(player[n])
                take_back(
                    own, hand, card, beaten, key, tile_terms, hand_terms, q,
                    (np.int64(action[n]) - 16) // 15, (np.int64(action[n]) - 16) % 15, flipped_at[d - 1],
                )  # fmt: skip
            d -= 1
    return planted


@njit(cache=True)
def root_key(board, p):
    """The table key of the position loaded on ``board`` with ``p`` to move."""
    return _key(board, p)


class SolverBudgetError(TrinityError):
    """A search that ran out of its budget (``max_nodes`` or ``max_seconds``) before it finished.

    ``nodes`` and ``seconds`` are what the call spent; ``max_nodes`` and ``max_seconds`` its budget.
    """

    def __init__(self, nodes: int, seconds: float, max_nodes: int | None = None, max_seconds: float | None = None):
        self.nodes = nodes
        self.seconds = seconds
        self.max_nodes = max_nodes
        self.max_seconds = max_seconds
        shown = f"{seconds:.1f}" if seconds >= 0.1 else f"{seconds:.3f}"
        super().__init__(f"not solved within the budget ({nodes:,} nodes, {shown} s)")

    def __reduce__(self):
        return type(self), (self.nodes, self.seconds, self.max_nodes, self.max_seconds)


@dataclass(frozen=True)
class Solution:
    """A solved position: ``value`` for the player to move (+1 win, 0 draw, -1 loss), the
    ``winner`` under perfect play (``None`` for a draw), and ``best_moves``, every distinct
    ``(card, tile)`` that achieves the value (every legal move when the mover loses anyway)."""

    winner: int | None
    value: int
    best_moves: list[tuple[str, int]]
    nodes: int
    seconds: float

    def to_json(self) -> dict:
        """The ``trinity solve`` output."""
        return {"winner": self.winner, "best_moves": [{"card": c, "tile": t} for c, t in self.best_moves]}


class _Worker:
    """What one search thread owns: its board, move lists, ordering and the threats per depth."""

    def __init__(self, seed: int = 0):
        self.rows = Batch.empty(1)  # the position as the fast engine's row, loaded onto the board
        self.board = Board()
        self.moves = np.zeros((MAX_DEPTH + 1, 256), np.int64)
        self.scores = np.zeros((MAX_DEPTH + 1, 256), np.int64)
        # a helper thread starts with a different history, so it orders equal-capture moves
        # differently and reaches other parts of the tree first (as in "lazy SMP" chess engines)
        self.history = np.random.default_rng(seed).integers(0, 500_000, 256) if seed else np.zeros(256, np.int64)
        self.killers = np.full((MAX_DEPTH + 1, 2), -1, np.int64)
        self.tiles = np.zeros((MAX_DEPTH + 1, MAX_THREATS), np.int64)
        self.lanes = np.zeros((MAX_DEPTH + 1, MAX_THREATS), np.int64)
        self.frames = np.zeros((MAX_DEPTH + 1, FRAME_COLUMNS), np.int64)
        self.root_order = np.zeros(256, np.int64)

    def load(self, state: GameState) -> None:
        write_state(self.rows, 0, state)
        bitboard.load(self.rows.decks, self.rows.status, self.rows.sides, self.rows.owner, 0, *self.board.arrays)


class _Budget:
    """One call's budget: a node counter per search thread (see ``negamax``) and the deadline.

    A node budget is counted by one thread (the solver searches alone under it), so it gives
    the same outcome on every machine.
    """

    def __init__(
        self,
        max_nodes: int | None,
        max_seconds: float | None,
        threads: int = 1,
        progress: Callable[[int, float], None] | None = None,
    ):
        if max_nodes is not None and (
            isinstance(max_nodes, bool | np.bool_) or not isinstance(max_nodes, int | np.integer) or max_nodes <= 0
        ):
            raise TrinityError(f"max_nodes must be a positive int or None, got {max_nodes!r}")
        if max_seconds is not None and (
            isinstance(max_seconds, bool | np.bool_)
            or not isinstance(max_seconds, int | float | np.integer | np.floating)
            or not math.isfinite(max_seconds)
            or max_seconds <= 0
        ):
            raise TrinityError(f"max_seconds must be a finite number of seconds > 0 or None, got {max_seconds!r}")
        self.max_nodes = None if max_nodes is None else int(max_nodes)
        self.max_seconds = None if max_seconds is None else float(max_seconds)
        self.start = time.perf_counter()
        self.deadline = None if max_seconds is None else self.start + self.max_seconds
        self.limit = NO_LIMIT if max_nodes is None else min(int(max_nodes), NO_LIMIT)
        self.threads = 1 if max_nodes is not None else threads
        self.nodes = [np.array([0, self.limit, 0], np.int64) for _ in range(self.threads)]
        self.cancelled = False
        self.progress = progress

    @property
    def searched(self) -> int:
        """Nodes searched: a stopped search counted the node it refused."""
        return int(sum(n[0] - n[2] for n in self.nodes))

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start

    def stop(self) -> None:
        """Stop the running searches (from another thread) and every later one of this call."""
        self.cancelled = True
        for nodes in self.nodes:
            nodes[1] = -1

    def _failed(self) -> SolverBudgetError:
        return SolverBudgetError(self.searched, self.seconds, self.max_nodes, self.max_seconds)

    def search(
        self, workers: list[_Worker], table, state: GameState, alpha: int, beta: int, order: np.ndarray | None
    ) -> int:
        """The value of ``state`` in the window, by ``negamax`` in each worker's thread at once;
        the first to finish gives it and stops the others. ``SolverBudgetError`` past the budget.
        ``order``: ordering scores of the root's moves (per action), or ``None``."""
        if self.cancelled:
            raise self._failed()
        count = min(self.threads, len(workers)) if state.owners.count(EMPTY) >= PARALLEL_MIN_EMPTY else 1
        for worker in workers[:count]:
            worker.load(state)
            worker.root_order[:] = 0 if order is None else order
        for nodes in self.nodes[:count]:
            nodes[1], nodes[2] = self.limit, 0
        if self.cancelled:  # stop() came while the limits were being reset: honour it
            raise self._failed()

        def one(k: int) -> int | None:
            w, nodes = workers[k], self.nodes[k]
            value = negamax(
                w.board.arrays, state.to_move, alpha, beta, table, w.moves, w.scores, w.history, w.killers,
                w.tiles, w.lanes, w.frames, nodes, w.root_order,
            )  # fmt: skip
            if nodes[2] != 0:
                return None
            for other in self.nodes[:count]:  # the others stop: their answer would be the same
                if other is not nodes:
                    other[1] = -1
            return int(value)

        if count == 1:
            value = one(0)
        else:
            found: list[int | None] = [None] * count
            helpers = [threading.Thread(target=lambda k=k: found.__setitem__(k, one(k))) for k in range(1, count)]
            for helper in helpers:
                helper.start()
            found[0] = one(0)
            for helper in helpers:
                helper.join()
            value = next((v for v in found if v is not None), None)
        if value is None:
            raise self._failed()
        return value

    def run(self, work: Callable[[], T]) -> T:
        """``work()`` in a worker thread while this one waits in short steps: when the
        deadline passes, or on Ctrl-C (``KeyboardInterrupt``, re-raised once the worker has
        stopped), it stops the search. The kernel releases the GIL, so waiting costs it nothing."""
        outcome: list = []
        finished = threading.Event()

        def target() -> None:
            try:
                outcome.append((True, work()))
            except BaseException as exc:  # handed to the waiting thread
                outcome.append((False, exc))
            finally:
                finished.set()

        worker = threading.Thread(target=target, name="trinity-solver", daemon=True)
        reported = time.perf_counter()
        try:
            worker.start()
            while not finished.is_set():
                if self.progress is not None and time.perf_counter() - reported >= PROGRESS_EVERY:
                    reported = time.perf_counter()
                    self.progress(self.searched, self.seconds)
                step = WAIT_STEP
                if self.deadline is not None:
                    left = self.deadline - time.perf_counter()
                    if left <= 0:
                        self.stop()
                        break
                    step = min(step, left)
                finished.wait(step)
            finished.wait()
        except BaseException:  # KeyboardInterrupt: stop the search, let it unwind, re-raise
            self.stop()
            if worker.ident is not None:  # started
                finished.wait()
                worker.join()
            raise
        worker.join()
        ok, result = outcome[0]
        if not ok:
            raise result
        return result


class Solver:
    """Solves open-hand play-phase positions exactly; the transposition table lives between calls.

    ``threads``: search threads sharing the table (``trinity solve`` uses two). They search
    the same position with different move orders and the first to finish answers. Values,
    and ``solve``'s set of best moves, are exact and the same with any number of threads;
    which winning move ``best_move`` names may differ between runs with more than one, so
    the default is one thread: the same answer on every run. Under a ``max_nodes`` budget,
    and on positions with fewer than ``PARALLEL_MIN_EMPTY`` empty tiles, the solver
    searches with one thread.

    ``table_bits``: the table has ``2**table_bits`` slots of 16 bytes (22: 64 MiB).
    ``nodes``: the nodes the last query searched, finished or not.
    ``progress``: called about once a second during a search with the nodes searched and
    the seconds spent so far in this call (for a progress line on long solves).
    ``hint_simulations``: the Monte Carlo search that orders the root's moves of a query
    with ``HINT_MIN_EMPTY`` empty tiles or more (see ``_Hints``): its simulations at 12 or
    more empty tiles (a third at 11; under ``max_nodes``, at most one per
    ``HINT_NODES_PER_SIMULATION`` nodes); 0 turns it off. It changes how fast, never what.

    Every query takes an optional budget for the whole call: ``max_nodes`` (a positive int;
    the same outcome on any machine) and ``max_seconds`` (finite, > 0). A call that runs out
    raises ``SolverBudgetError``; Ctrl-C raises ``KeyboardInterrupt`` within a fraction of a
    second. Either way the table keeps only what was fully searched, so later calls stay exact.
    """

    def __init__(
        self,
        table_bits: int = TABLE_BITS,
        threads: int = 1,
        progress: Callable[[int, float], None] | None = None,
        hint_simulations: int = HINT_SIMULATIONS,
    ):
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise TrinityError(f"threads must be a positive int, got {threads!r}")
        if isinstance(table_bits, bool) or not isinstance(table_bits, int) or not 2 <= table_bits <= 32:
            raise TrinityError(f"table_bits must be an int from 2 to 32, got {table_bits!r}")
        if progress is not None and not callable(progress):
            raise TrinityError(f"progress must be a function of (nodes, seconds) or None, got {progress!r}")
        if isinstance(hint_simulations, bool) or not isinstance(hint_simulations, int) or hint_simulations < 0:
            raise TrinityError(f"hint_simulations must be an int >= 0, got {hint_simulations!r}")
        self.hint_simulations = hint_simulations
        self.progress = progress
        self.nodes = 0  # searched by the last query
        size = 1 << table_bits
        self._table = (np.zeros(size, np.uint64), np.zeros(size, np.uint64))
        self.threads = threads
        self._workers = [_Worker(seed=k) for k in range(threads)]

    def _search(self, state: GameState, alpha: int, beta: int, budget: _Budget, order: np.ndarray | None = None) -> int:
        return budget.search(self._workers, self._table, state, alpha, beta, order)

    def _run(self, budget: _Budget, work: Callable[[], T]) -> T:
        try:
            return budget.run(work)
        finally:
            self.nodes = budget.searched

    def _budget(self, max_nodes: int | None, max_seconds: float | None) -> _Budget:
        return _Budget(max_nodes, max_seconds, self.threads, self.progress)

    def _hints(self, state: GameState, budget: _Budget) -> _Hints | None:
        """A Monte Carlo search of a query's root, for move order (``_Hints``), where the root
        is large enough for it to pay; its most visited lines become the table's first moves."""
        simulations = _hint_simulations(state, self.hint_simulations, budget.max_nodes)
        if simulations == 0:
            return None
        hints = _Hints(state, simulations)
        worker = self._workers[0]
        worker.load(state)
        tree = hints.tree
        min_visits = max(1, int(HINT_MIN_SHARE * tree.visits[0]))
        plant_hints(
            worker.board.arrays, self._table, tree.action, tree.player, tree.first_child, tree.children,
            tree.visits, min_visits,
        )  # fmt: skip
        return hints

    def value(self, state: GameState, *, max_nodes: int | None = None, max_seconds: float | None = None) -> int:
        """The value of ``state`` for its player to move (the result itself when the game is over)."""
        budget = self._budget(max_nodes, max_seconds)
        _check(state, over_ok=True)
        if state.is_over:
            return 0 if state.winner is None else (1 if state.winner == state.to_move else -1)
        hints = self._hints(state, budget)
        order = None if hints is None else hints.order(0, state)
        return self._run(budget, lambda: self._search(state, -1, 1, budget, order))

    def best_move(
        self, state: GameState, *, max_nodes: int | None = None, max_seconds: float | None = None
    ) -> tuple[int, tuple[str, int]]:
        """The value of ``state`` for its player to move and one move that achieves it."""
        budget = self._budget(max_nodes, max_seconds)
        _check(state)
        hints = self._hints(state, budget)
        return self._run(budget, lambda: self._best_move(state, budget, hints))

    def _best_move(self, state: GameState, budget: _Budget, hints: _Hints | None) -> tuple[int, tuple[str, int]]:
        value = self._search(state, -1, 1, budget, None if hints is None else hints.order(0, state))
        keys, data = self._table
        key = root_key(self._workers[0].board.arrays, state.to_move)  # the board is back at the root
        bucket = int(key & np.uint64(keys.shape[0] - 2))
        action = -1
        for slot in (bucket, bucket + 1):
            entry = data[slot]
            if keys[slot] ^ entry == key:
                action = int(_field(entry, 4, 9)) - 1
                break
        if action < 0:  # searched without the table (few empty tiles): take the first move that does it
            return value, next(m for m in state.legal_moves() if self._move_value(state, m, value, budget) >= value)
        deck_index, tile = divmod(action - 16, 15)
        return value, (state.decks[state.to_move][deck_index].notation, tile)

    def _move_value(
        self, state: GameState, move: tuple[str, int], value: int, budget: _Budget, hints: _Hints | None = None
    ) -> int:
        """The value of ``move`` for the mover if it is at least ``value``; otherwise something lower."""
        mover = state.to_move
        child = state.play(*move)
        if child.is_over:
            return 0 if child.winner is None else (1 if child.winner == mover else -1)
        if value == -1:
            return -1  # every move achieves a loss
        order = None if hints is None else hints.order(hints.child(0, state, move), child)
        if child.to_move == mover:  # the opponent has to pass
            return self._search(child, value - 1, value + 1, budget, order)
        # a null window around `value`: is this move as good as the best one?
        return -self._search(child, -value - 1, -value + 1, budget, order)

    def solve(self, state: GameState, *, max_nodes: int | None = None, max_seconds: float | None = None) -> Solution:
        """The value of ``state`` and every move that achieves it; the budget covers both."""
        budget = self._budget(max_nodes, max_seconds)
        _check(state)
        hints = self._hints(state, budget)
        return self._run(budget, lambda: self._solve(state, budget, hints))

    def _solve(self, state: GameState, budget: _Budget, hints: _Hints | None) -> Solution:
        mover = state.to_move
        value = self._search(state, -1, 1, budget, None if hints is None else hints.order(0, state))
        best = [move for move in state.legal_moves() if self._move_value(state, move, value, budget, hints) >= value]
        winner = None if value == 0 else (mover if value == 1 else 1 - mover)
        return Solution(winner, value, best, budget.searched, budget.seconds)


def _hint_simulations(state: GameState, most: int, max_nodes: int | None) -> int:
    """How many simulations the Monte Carlo search for move hints runs from ``state``: none
    below ``HINT_MIN_EMPTY`` empty tiles, a third of ``most`` at exactly that many (there
    the search costs less and gains less), else ``most``; under a node budget, at most one
    per ``HINT_NODES_PER_SIMULATION`` nodes of it; none when that comes to under 1000."""
    empty = state.owners.count(EMPTY)
    if empty < HINT_MIN_EMPTY:
        return 0
    simulations = most // 3 if empty == HINT_MIN_EMPTY else most
    if max_nodes is not None:
        simulations = min(simulations, max_nodes // HINT_NODES_PER_SIMULATION)
    return simulations if simulations >= 1000 else 0


class _Hints:
    """A Monte Carlo search (UCT with random playouts, ``search.mcts``) of a query's root.

    Alpha-beta spends most of a large search refuting the moves it tries before a winning
    one, and at 11 or 12 empty tiles no cheap feature tells the winning moves apart (most
    flip nothing and threaten nothing). A few tens of thousands of random playouts do: on
    the benchmark's positions the most visited move is mostly a winning one. Its visits
    order the root's moves and its best-visited lines give the table first moves; neither
    changes a value. The seed is fixed, so the order, and a node-budgeted search, are the
    same on every run.
    """

    def __init__(self, state: GameState, simulations: int):
        position = Batch.empty(1)
        write_state(position, 0, state)
        rows = search_rows(position)
        self.tree = Tree(simulations * BRANCHING + 512)
        self.tree.clear(1 - state.to_move)  # the root's "player" is whoever moved into it
        rng = np.random.default_rng(0).integers(1, 2**63, 2, dtype=np.uint64)
        run_search(rows, 0, simulations, HINT_C, 0.0, rng, self.tree)

    def _children(self, node: int) -> range:
        first = int(self.tree.first_child[node])
        return range(first, first + int(self.tree.children[node])) if node >= 0 and first >= 0 else range(0)

    def child(self, node: int, state: GameState, move: tuple[str, int]) -> int:
        """The most visited child of ``node`` (at ``state``) that plays ``move``, or -1."""
        deck = state.decks[state.to_move]
        found, visits = -1, -1
        for k in self._children(node):
            i, t = divmod(int(self.tree.action[k]) - 16, 15)
            if (deck[i].notation, t) == move and self.tree.visits[k] > visits:
                found, visits = k, int(self.tree.visits[k])
        return found

    def order(self, node: int, state: GameState) -> np.ndarray | None:
        """Ordering scores per action for ``state`` (node ``node``'s position): its children's
        visits, the most visited scaled to ``HINT_ORDER``, each counted on the first copy in
        hand of its card (the one the search plays); ``None`` for a node never expanded."""
        children = self._children(node)
        if not children:
            return None
        p = state.to_move
        deck = state.decks[p]
        first_copy: dict[str, int] = {}
        for i, status in enumerate(state.status[p]):
            if status == IN_HAND:
                first_copy.setdefault(deck[i].notation, i)
        visits = np.zeros(256, np.int64)
        for k in children:
            i, t = divmod(int(self.tree.action[k]) - 16, 15)
            visits[16 + 15 * first_copy[deck[i].notation] + t] += int(self.tree.visits[k])
        return visits * HINT_ORDER // max(1, int(visits.max()))


def _check(state: GameState, over_ok: bool = False) -> None:
    if not isinstance(state, GameState):
        raise TrinityError(f"the solver needs a GameState, got {type(state).__name__}")
    if state.phase == Phase.DRAFT:
        raise TrinityError("the solver needs a play-phase position (both hands known), not a draft")
    if state.is_over:
        if not over_ok:
            raise TrinityError("the game is over: there is no move to solve")
    elif not state.legal_actions():
        raise TrinityError("the player to move has no legal move: there is nothing to solve")
