"""The exact solver: negamax with alpha-beta, a transposition table and move ordering.

It solves open-hand play-phase positions: both hands are known, so the game is one of
perfect information and every position has a value for the player to move, +1 (win), 0
(draw; only loaded positions can draw) or -1 (loss). It runs on the fast engine's arrays:
one batch row per search depth, each child copied from its parent row and stepped there.
Identical cards in a hand give identical moves, so only one copy of each is searched.

Speed-ups, all exact: a move that completes a lane at once (filling its last tile, or
flipping the last cards of theirs in a full lane) is looked for before anything else is generated,
without stepping; the table's best move and two killer moves per depth are tried before
the moves are generated; the rest are ordered by completing a lane, blocking a lane the
opponent nearly holds, direct captures and a history of cut-offs; with six empty tiles or
more, each move is also played out one step: one that lets the opponent complete a lane at
once goes last, one that leaves the mover lanes to complete goes early. The table has buckets of
two slots (one keeps the deeper search, the other takes the newest) and holds positions
with five empty tiles or more: smaller subtrees cost less to search again than to look up.
With two empty tiles or fewer, plain minimax, worked out without stepping: the flips of a
placement on a scratch copy of the owners, and the last one scored from there.

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
from trinity_env.fast import kernels
from trinity_env.fast.convert import write_state
from trinity_env.fast.layout import HAND0, IN_HAND, OVER, PHASE, TO_MOVE, WINNER, Batch

EXACT, LOWER, UPPER = 0, 1, 2
TABLE_MIN_EMPTY = 5  # positions with fewer empty tiles skip the transposition table
KILLER_BONUS = 50_000_000  # below completing a lane, above any number of captures
BLOCK_BONUS = 20_000_000  # the last empty tile of a lane the opponent nearly holds: below the killers
THREAT_BONUS = 30_000_000  # per lane the move leaves the mover to complete next turn (``_look_ahead``)
LOSES_AT_ONCE = 1_000_000_000  # a move after which the opponent completes a lane: tried last
LOOK_AHEAD_MIN_EMPTY = 6  # nodes with fewer empty tiles are too many to play every move out for ordering
TABLE_BITS = 22
MAX_DEPTH = 17  # rows: the root, up to 15 placements, and a scratch row
NO_LIMIT = np.iinfo(np.int64).max
PARALLEL_MIN_EMPTY = 9  # smaller positions are searched by one thread: starting another costs more
WAIT_STEP = 0.1  # seconds the calling thread waits between looks at the clock and for Ctrl-C
PROGRESS_EVERY = 1.0  # seconds between calls of a solver's ``progress``
T = TypeVar("T")
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@njit(cache=True, inline="always")
def _mix(h, word):
    h = (h ^ word) * _FNV_PRIME
    return h ^ (h >> np.uint64(29))


@njit(cache=True)
def _key(status, sides, owner, info, b):
    """A 64-bit hash of what decides the rest of the game: board, hands, player to move.

    Each tile (owner and four sides) and each player's slot statuses are packed into one
    word first, so hashing takes 17 multiplies rather than one per byte.
    """
    h = _FNV_OFFSET
    for t in range(15):
        word = np.uint64(owner[b, t] + 2)
        for k in range(4):
            word = (word << np.uint64(8)) | np.uint64(sides[b, t, k])
        h = _mix(h, word)
    for p in range(2):
        word = np.uint64(0)
        for i in range(16):
            word = (word << np.uint64(2)) | np.uint64(status[b, p, i])
        h = _mix(h, word)
    return _mix(h, np.uint64(info[b, TO_MOVE] + 7))


@njit(cache=True, inline="always")
def _repeats_a_card(decks, status, b, p, i):
    """Whether player ``p``'s card ``i`` in row ``b`` equals a card earlier in its hand: identical
    cards give identical moves, so only the first copy is searched."""
    for j in range(i):
        if status[b, p, j] == IN_HAND:
            same = True
            for k in range(4):
                if decks[b, p, i, k] != decks[b, p, j, k]:
                    same = False
                    break
            if same:
                return True
    return False


@njit(cache=True, inline="always")
def _result(info, b, player):
    """The finished game of row ``b`` for ``player``: +1 won, 0 drawn, -1 lost."""
    w = info[b, WINNER]
    return 0 if w == -1 else (1 if w == player else -1)


@njit(cache=True)
def _last_placement(decks, status, sides, owner, info, d, own):
    """Value of row ``d`` when one empty tile is left: every move fills the board and ends the game.

    Worked out on ``own`` without stepping (``_last_placement_wins``).
    """
    t = 0
    while owner[d, t] != -1:
        t += 1
    return 1 if _last_placement_wins(decks, status, sides, owner, d, d, info[d, TO_MOVE], t, own, 0) else -1


@njit(cache=True, inline="always")
def _last_placement_wins(decks, status, sides, base, r, d, p, t, own, k):
    """Whether player ``p`` wins by placing on ``t``, the last empty tile of the owners ``base[r]``
    (row ``d``'s cards and sides): a completed lane wins, else the engine's lane scores decide
    (a full board has no draw: every lane has a majority). Worked out on ``own[k]`` (owners)
    and ``own[k + 1]`` (marks), without stepping."""
    for i in range(16):
        if status[d, p, i] != IN_HAND or _repeats_a_card(decks, status, d, p, i):
            continue
        for n in range(15):
            own[k, n] = base[r, n]
            own[k + 1, n] = 0
        own[k, t] = p
        kernels.capture(decks, sides, d, p, i, t, own[k], own[k + 1])
        if kernels.controlled_lane(own, k, p) >= 0 or kernels.margin(own, k, p) > 0:
            return True
    return False


@njit(cache=True)
def _two_left(decks, status, sides, owner, marks, info, d, own):
    """Value of row ``d`` when two empty tiles are left: plain minimax, no table, no ordering.

    When both players hold a card (the opponent then fills the board), worked out on ``own``
    without stepping: the mover's placement and its flips on ``own[0]``, the opponent's last
    one on ``own[2]``, the placed card's sides written into the row for that look and put back.
    """
    mover = info[d, TO_MOVE]
    opponent = 1 - mover
    if info[d, HAND0 + opponent] == 0:
        return _two_left_stepped(decks, status, sides, owner, marks, info, d, own)
    first = -1
    second = -1
    for t in range(15):
        if owner[d, t] == -1:
            if first < 0:
                first = t
            else:
                second = t
    for i in range(16):
        if status[d, mover, i] != IN_HAND or _repeats_a_card(decks, status, d, mover, i):
            continue
        for turn in range(2):
            t = first if turn == 0 else second
            last = second if turn == 0 else first
            if _completes_a_lane(decks, sides, owner, d, mover, i, t, own):
                return 1
            s0 = sides[d, t, 0]
            s1 = sides[d, t, 1]
            s2 = sides[d, t, 2]
            s3 = sides[d, t, 3]
            for k in range(4):
                sides[d, t, k] = decks[d, mover, i, k]
            answered = _last_placement_wins(decks, status, sides, own, 0, d, opponent, last, own, 2)
            sides[d, t, 0] = s0
            sides[d, t, 1] = s1
            sides[d, t, 2] = s2
            sides[d, t, 3] = s3
            if not answered:
                return 1
    return -1


@njit(cache=True)
def _two_left_stepped(decks, status, sides, owner, marks, info, d, own):
    """``_two_left`` by stepping rows, for when the opponent holds no card (the mover places twice)."""
    mover = info[d, TO_MOVE]
    best = -2
    for i in range(16):
        if status[d, mover, i] != IN_HAND:
            continue
        if _repeats_a_card(decks, status, d, mover, i):
            continue
        for t in range(15):
            if owner[d, t] != -1:
                continue
            kernels.copy_row(status, sides, owner, info, d, d + 1)
            kernels.apply_action(decks, status, sides, owner, marks, info, d + 1, 16 + 15 * i + t)
            if info[d + 1, PHASE] == OVER:
                v = _result(info, d + 1, mover)
            elif info[d + 1, TO_MOVE] == mover:  # the opponent passes
                v = _last_placement(decks, status, sides, owner, info, d + 1, own)
            else:
                v = -_last_placement(decks, status, sides, owner, info, d + 1, own)
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
def _usable(decks, status, owner, d, mover, action, other0, other1):
    """Whether ``action`` (a killer) is a move ``_moves`` would generate in row ``d`` (its card in
    hand and the first copy of that card there, its tile empty) and differs from the other two."""
    if action < 0 or action == other0 or action == other1:  # noqa: SIM109 (numba: mixed int types)
        return False
    i = (action - 16) // 15
    t = (action - 16) % 15
    if status[d, mover, i] != IN_HAND or owner[d, t] != -1:
        return False
    return not _repeats_a_card(decks, status, d, mover, i)


@njit(cache=True, inline="always")
def _completes_a_lane(decks, sides, owner, d, p, i, t, own):
    """Whether player ``p``'s card ``i`` on empty tile ``t`` of row ``d`` leaves some lane all ``p``'s.

    The placement's flips are worked out by the engine's ``capture`` on ``own`` (two scratch
    rows: owners, then marks), a copy of the row's owners: nothing is copied or stepped.
    """
    for n in range(15):
        own[0, n] = owner[d, n]
        own[1, n] = 0
    own[0, t] = p
    kernels.capture(decks, sides, d, p, i, t, own[0], own[1])
    return kernels.controlled_lane(own, 0, p) >= 0


@njit(cache=True, inline="always")
def _may_complete(owner, d, p, t):
    """Whether player ``p`` placing on empty tile ``t`` of row ``d`` could complete some lane.

    A lane is completed by filling its last empty tile or by flipping the last cards of
    theirs in a full lane, and a placement flips only cards within two steps of it (a
    direct capture, then the domino): a lane qualifies when its only empty tile is ``t``
    (or it has none) and every card of theirs in it is within reach.
    """
    lane = t // 5
    q = t - 5 * lane
    for other in range(3):
        empty = 0
        out_of_reach = 0
        for r in range(5):
            w = owner[d, 5 * other + r]
            if w == -1:
                empty += 1
            elif w != p and abs(other - lane) + abs(r - q) > 2:
                out_of_reach += 1
        if out_of_reach == 0 and empty == (1 if other == lane else 0):
            return True
    return False


@njit(cache=True)
def _win_now(decks, status, sides, owner, info, d, own):
    """A move of row ``d``'s player to move that completes a lane at once (and so wins), or -1."""
    return _lane_completions(decks, status, sides, owner, d, info[d, TO_MOVE], own, True)


@njit(cache=True)
def _threats(decks, status, sides, owner, d, p, own):
    """How many empty tiles of row ``d`` would let player ``p`` complete a lane at once, were
    it ``p``'s move: a player with two such tiles usually cannot be stopped."""
    return _lane_completions(decks, status, sides, owner, d, p, own, False)


@njit(cache=True, inline="always")
def _lane_completions(decks, status, sides, owner, d, p, own, first):
    """Player ``p``'s placements in row ``d`` that complete a lane at once: with ``first``, the
    first one found (an action) or -1; else how many empty tiles have one.

    Complete, without stepping: only the empty tiles where ``_may_complete`` holds are
    tried, each with every distinct card in hand.
    """
    found = 0
    for t in range(15):
        if owner[d, t] != -1 or not _may_complete(owner, d, p, t):
            continue
        for i in range(16):
            if status[d, p, i] != IN_HAND or _repeats_a_card(decks, status, d, p, i):
                continue
            if _completes_a_lane(decks, sides, owner, d, p, i, t, own):
                if first:
                    return 16 + 15 * i + t
                found += 1
                break
    return -1 if first else found


@njit(cache=True)
def _look_ahead(decks, status, sides, owner, marks, info, d, moves, scores, n, own):
    """Ordering by one step, for nodes high in the tree: each move is played into row
    ``d + 1``; one that lets the opponent complete a lane at once goes last, one that leaves
    the mover lanes to complete next time goes early (the opponent can rarely stop two)."""
    mover = info[d, TO_MOVE]
    for k in range(n):
        kernels.copy_row(status, sides, owner, info, d, d + 1)
        kernels.apply_action(decks, status, sides, owner, marks, info, d + 1, moves[k])
        if info[d + 1, PHASE] == OVER:
            continue
        if info[d + 1, TO_MOVE] != mover and _win_now(decks, status, sides, owner, info, d + 1, own) >= 0:
            scores[k] -= LOSES_AT_ONCE
        else:
            scores[k] += THREAT_BONUS * _threats(decks, status, sides, owner, d + 1, mover, own)


@njit(cache=True, inline="always")
def _nearly_theirs(owner, b, p, lane):
    """Whether ``lane`` of row ``b`` has one empty tile and at least three cards not ``p``'s."""
    empty = 0
    theirs = 0
    for t in range(5 * lane, 5 * lane + 5):
        if owner[b, t] == -1:
            empty += 1
        elif owner[b, t] != p:
            theirs += 1
    return empty == 1 and theirs >= 3


@njit(cache=True)
def _moves(decks, status, sides, owner, info, b, out, scores, history, killers):
    """Placements of the player to move, one per distinct card in hand, with ordering scores.

    Scores: a cheap guess that needs no stepping (completing a lane, then the number of
    direct captures), then the history of cut-offs. ``negamax`` picks moves best-first
    lazily: a cut-off rarely needs them all.
    """
    p = info[b, TO_MOVE]
    lane0 = 0
    lane1 = 0
    lane2 = 0
    for t in range(5):
        lane0 += owner[b, t] == p
        lane1 += owner[b, 5 + t] == p
        lane2 += owner[b, 10 + t] == p
    # lanes of three tiles or more of theirs with one empty tile: placing there blocks a lane they may complete
    blocks0 = _nearly_theirs(owner, b, p, 0)
    blocks1 = _nearly_theirs(owner, b, p, 1)
    blocks2 = _nearly_theirs(owner, b, p, 2)
    n = 0
    for i in range(16):
        if status[b, p, i] != IN_HAND:
            continue
        if _repeats_a_card(decks, status, b, p, i):
            continue
        for t in range(15):
            if owner[b, t] != -1:
                continue
            captures, in_lane = kernels.direct_captures(decks, sides, owner, b, p, i, t)
            lane = t // 5
            action = 16 + 15 * i + t
            score = captures * 1_000_000 + history[action]
            if action == killers[b, 0]:
                score += KILLER_BONUS
            elif action == killers[b, 1]:
                score += KILLER_BONUS // 2
            mine = lane0 if lane == 0 else (lane1 if lane == 1 else lane2)
            if mine + in_lane == 4:
                score += 100_000_000
            if (blocks0 if lane == 0 else (blocks1 if lane == 1 else blocks2)) and in_lane == 0:
                score += BLOCK_BONUS
            out[n] = action
            scores[n] = score
            n += 1
    return n


@njit(cache=True, nogil=True)
def negamax(
    decks, status, sides, owner, marks, info, d, alpha, beta, table, moves, scores, history, killers, own, nodes
):
    """Value of row ``d`` for its player to move, searched within the window ``(alpha, beta)``.

    ``table`` holds checks and entries (value, bound: EXACT/LOWER/UPPER, best move, empty
    tiles, packed in one word; see ``_store``) in buckets of two slots, and may be shared by
    search threads. The table's best move, then the killers of row ``d``,
    are tried before any other move is even generated: when one cuts off, as it mostly
    does, the node costs one child. ``history`` (per action) and ``killers``
    (two actions per row) only order moves, so they never change a value.

    ``nodes`` is the budget, three int64: nodes searched so far, the most allowed (another
    thread stops the search by setting it to -1), and a flag set to 1 when the search
    stopped. A stopped search unwinds at once and its value is meaningless: no node that
    did not finish stores anything in the table.
    """
    nodes[0] += 1
    if nodes[0] > nodes[1]:
        nodes[2] = 1
        return 0
    if info[d, PHASE] == OVER:
        return _result(info, d, info[d, TO_MOVE])
    empty = 0
    for t in range(15):
        empty += owner[d, t] == -1
    mover = info[d, TO_MOVE]
    if empty == 1 and info[d, HAND0 + mover] > 0:
        return _last_placement(decks, status, sides, owner, info, d, own)
    if empty == 2 and info[d, HAND0 + mover] > 0:
        return _two_left(decks, status, sides, owner, marks, info, d, own)
    keys, data = table
    tabled = empty >= TABLE_MIN_EMPTY  # smaller subtrees cost less to search than to look up
    key = _key(status, sides, owner, info, d) if tabled else np.uint64(0)
    bucket = np.int64(key & np.uint64(keys.shape[0] - 2))  # two slots: depth-preferred, always-replace
    first = -1
    if tabled:
        entry = data[bucket]
        hit = keys[bucket] ^ entry == key
        if not hit:
            entry = data[bucket + 1]
            hit = keys[bucket + 1] ^ entry == key
        if hit:
            v = _field(entry, 0, 2) - 1
            bound = _field(entry, 2, 2)
            first = _field(entry, 4, 9) - 1
            if bound == EXACT:
                return v
            if bound == LOWER and v > alpha:
                alpha = v
            elif bound == UPPER and v < beta:
                beta = v
            if alpha >= beta:
                return v
    win = _win_now(decks, status, sides, owner, info, d, own)
    if win >= 0:
        if tabled:
            _store(keys, data, bucket, key, 1, EXACT, win, empty)
        return 1
    alpha0 = alpha
    best = -2
    best_move = -1
    # the table's move and this depth's two killers are tried before the moves are generated
    killer0 = killers[d, 0] if _usable(decks, status, owner, d, mover, killers[d, 0], first, -1) else -1
    killer1 = killers[d, 1] if _usable(decks, status, owner, d, mover, killers[d, 1], first, killer0) else -1
    n = -1  # moves not generated yet
    j = -3
    while True:
        if j < 0:
            action = first if j == -3 else (killer0 if j == -2 else killer1)
            j += 1
            if action < 0:
                continue
        else:
            if n < 0:
                n = _moves(decks, status, sides, owner, info, d, moves[d], scores[d], history, killers)
                if empty >= LOOK_AHEAD_MIN_EMPTY:
                    _look_ahead(decks, status, sides, owner, marks, info, d, moves[d], scores[d], n, own)
            if j >= n:
                break
            top = j  # selection: bring the best remaining move to position j
            for k in range(j + 1, n):
                if scores[d, k] > scores[d, top]:
                    top = k
            moves[d, j], moves[d, top] = moves[d, top], moves[d, j]
            scores[d, j], scores[d, top] = scores[d, top], scores[d, j]
            action = moves[d, j]
            j += 1
            if action == first or action == killer0 or action == killer1:  # noqa: SIM109
                continue
        kernels.copy_row(status, sides, owner, info, d, d + 1)
        kernels.apply_action(decks, status, sides, owner, marks, info, d + 1, action)
        if info[d + 1, PHASE] == OVER:
            v = _result(info, d + 1, mover)
        elif info[d + 1, TO_MOVE] == mover:  # the opponent passed: same player, same window
            v = negamax(
                decks,
                status,
                sides,
                owner,
                marks,
                info,
                d + 1,
                alpha,
                beta,
                table,
                moves,
                scores,
                history,
                killers,
                own,
                nodes,
            )
        else:
            v = -negamax(
                decks,
                status,
                sides,
                owner,
                marks,
                info,
                d + 1,
                -beta,
                -alpha,
                table,
                moves,
                scores,
                history,
                killers,
                own,
                nodes,
            )
        if nodes[2] != 0:  # stopped: this node's search is unfinished, store nothing
            return 0
        if v > best:
            best = v
            best_move = action
        if v > alpha:
            alpha = v
        if alpha >= beta:
            history[action] += 1 << empty  # a cut-off move: try it early elsewhere too
            if killers[d, 0] != action:
                killers[d, 1] = killers[d, 0]
                killers[d, 0] = action
            break
    if tabled:
        _store(
            keys,
            data,
            bucket,
            key,
            best,
            UPPER if best <= alpha0 else (LOWER if best >= beta else EXACT),
            best_move,
            empty,
        )
    return best


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
    """What one search thread owns: the rows of its search path, move lists and ordering."""

    def __init__(self, seed: int = 0):
        self.rows = Batch.empty(MAX_DEPTH + 1)
        self.moves = np.zeros((MAX_DEPTH + 1, 256), np.int64)
        self.scores = np.zeros((MAX_DEPTH + 1, 256), np.int64)
        # a helper thread starts with a different history, so it orders equal-capture moves
        # differently and reaches other parts of the tree first (as in "lazy SMP" chess engines)
        self.history = np.random.default_rng(seed).integers(0, 500_000, 256) if seed else np.zeros(256, np.int64)
        self.killers = np.full((MAX_DEPTH + 1, 2), -1, np.int64)
        self.own = np.zeros((4, 15), np.int8)  # scratch owners and marks (two pairs) for looking ahead


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

    def search(self, workers: list[_Worker], table, state: GameState, alpha: int, beta: int) -> int:
        """The value of ``state`` in the window, by ``negamax`` in each worker's thread at once;
        the first to finish gives it and stops the others. ``SolverBudgetError`` past the budget."""
        if self.cancelled:
            raise self._failed()
        count = min(self.threads, len(workers)) if state.owners.count(EMPTY) >= PARALLEL_MIN_EMPTY else 1
        for worker in workers[:count]:
            write_state(worker.rows, 0, state)
            worker.rows.decks[1:] = worker.rows.decks[0]
        for nodes in self.nodes[:count]:
            nodes[1], nodes[2] = self.limit, 0
        if self.cancelled:  # stop() came while the limits were being reset: honour it
            raise self._failed()

        def one(k: int) -> int | None:
            w, nodes = workers[k], self.nodes[k]
            value = negamax(
                *w.rows, 0, alpha, beta, table, w.moves, w.scores, w.history, w.killers, w.own, nodes
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

    Every query takes an optional budget for the whole call: ``max_nodes`` (a positive int;
    the same outcome on any machine) and ``max_seconds`` (finite, > 0). A call that runs out
    raises ``SolverBudgetError``; Ctrl-C raises ``KeyboardInterrupt`` within a fraction of a
    second. Either way the table keeps only what was fully searched, so later calls stay exact.
    """

    def __init__(
        self, table_bits: int = TABLE_BITS, threads: int = 1, progress: Callable[[int, float], None] | None = None
    ):
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise TrinityError(f"threads must be a positive int, got {threads!r}")
        if isinstance(table_bits, bool) or not isinstance(table_bits, int) or not 2 <= table_bits <= 32:
            raise TrinityError(f"table_bits must be an int from 2 to 32, got {table_bits!r}")
        if progress is not None and not callable(progress):
            raise TrinityError(f"progress must be a function of (nodes, seconds) or None, got {progress!r}")
        self.progress = progress
        self.nodes = 0  # searched by the last query
        size = 1 << table_bits
        self._table = (np.zeros(size, np.uint64), np.zeros(size, np.uint64))
        self.threads = threads
        self._workers = [_Worker(seed=k) for k in range(threads)]

    def _search(self, state: GameState, alpha: int, beta: int, budget: _Budget) -> int:
        return budget.search(self._workers, self._table, state, alpha, beta)

    def _run(self, budget: _Budget, work: Callable[[], T]) -> T:
        try:
            return budget.run(work)
        finally:
            self.nodes = budget.searched

    def _budget(self, max_nodes: int | None, max_seconds: float | None) -> _Budget:
        return _Budget(max_nodes, max_seconds, self.threads, self.progress)

    def value(self, state: GameState, *, max_nodes: int | None = None, max_seconds: float | None = None) -> int:
        """The value of ``state`` for its player to move (the result itself when the game is over)."""
        budget = self._budget(max_nodes, max_seconds)
        _check(state, over_ok=True)
        if state.is_over:
            return 0 if state.winner is None else (1 if state.winner == state.to_move else -1)
        return self._run(budget, lambda: self._search(state, -1, 1, budget))

    def best_move(
        self, state: GameState, *, max_nodes: int | None = None, max_seconds: float | None = None
    ) -> tuple[int, tuple[str, int]]:
        """The value of ``state`` for its player to move and one move that achieves it."""
        budget = self._budget(max_nodes, max_seconds)
        _check(state)
        return self._run(budget, lambda: self._best_move(state, budget))

    def _best_move(self, state: GameState, budget: _Budget) -> tuple[int, tuple[str, int]]:
        value = self._search(state, -1, 1, budget)
        rows = self._workers[0].rows  # row 0 still holds the position the search started from
        keys, data = self._table
        key = _key(rows.status, rows.sides, rows.owner, rows.info, 0)
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

    def _move_value(self, state: GameState, move: tuple[str, int], value: int, budget: _Budget) -> int:
        """The value of ``move`` for the mover if it is at least ``value``; otherwise something lower."""
        mover = state.to_move
        child = state.play(*move)
        if child.is_over:
            return 0 if child.winner is None else (1 if child.winner == mover else -1)
        if value == -1:
            return -1  # every move achieves a loss
        if child.to_move == mover:  # the opponent has to pass
            return self._search(child, value - 1, value + 1, budget)
        # a null window around `value`: is this move as good as the best one?
        return -self._search(child, -value - 1, -value + 1, budget)

    def solve(self, state: GameState, *, max_nodes: int | None = None, max_seconds: float | None = None) -> Solution:
        """The value of ``state`` and every move that achieves it; the budget covers both."""
        budget = self._budget(max_nodes, max_seconds)
        _check(state)
        return self._run(budget, lambda: self._solve(state, budget))

    def _solve(self, state: GameState, budget: _Budget) -> Solution:
        mover = state.to_move
        value = self._search(state, -1, 1, budget)
        best = [move for move in state.legal_moves() if self._move_value(state, move, value, budget) >= value]
        winner = None if value == 0 else (mover if value == 1 else 1 - mover)
        return Solution(winner, value, best, budget.searched, budget.seconds)


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
