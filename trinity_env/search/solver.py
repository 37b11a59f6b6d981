"""The exact solver: negamax with alpha-beta, a transposition table and move ordering.

It solves open-hand play-phase positions: both hands are known, so the game is one of
perfect information and every position has a value for the player to move, +1 (win), 0
(draw; only loaded positions can draw) or -1 (loss). It runs on the fast engine's arrays:
one batch row per search depth, each child copied from its parent row and stepped there.
Identical cards in a hand give identical moves, so only one copy of each is searched.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from trinity_env.core import GameState, TrinityError
from trinity_env.fast import kernels
from trinity_env.fast.convert import write_state
from trinity_env.fast.layout import HAND0, IN_HAND, NEIGHBOUR, OVER, PHASE, TO_MOVE, WINNER, Batch

EXACT, LOWER, UPPER = 0, 1, 2
TABLE_BITS = 22
MAX_DEPTH = 17  # rows: the root, up to 15 placements, and a scratch row
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


@njit(cache=True)
def _last_placement(decks, status, sides, owner, marks, info, d):
    """Value of row ``d`` when one empty tile is left: every move ends the game."""
    mover = info[d, TO_MOVE]
    best = -2
    for i in range(16):
        if status[d, mover, i] != IN_HAND:
            continue
        for t in range(15):
            if owner[d, t] == -1:
                kernels.copy_row(status, sides, owner, info, d, d + 1)
                kernels.apply_action(decks, status, sides, owner, marks, info, d + 1, 16 + 15 * i + t)
                w = info[d + 1, WINNER]
                v = 0 if w == -1 else (1 if w == mover else -1)
                if v > best:
                    best = v
                    if best == 1:
                        return 1
                break
    return best


@njit(cache=True)
def _moves(decks, status, sides, owner, info, b, out, scores, history):
    """Placements of the player to move, one per distinct card in hand, with ordering scores.

    Scores: a cheap guess that needs no stepping (completing a lane, then the number of
    direct captures), then the history of cut-offs. ``negamax`` picks moves best-first
    lazily: a cut-off rarely needs them all.
    """
    p = info[b, TO_MOVE]
    o = 1 - p
    lane0 = 0
    lane1 = 0
    lane2 = 0
    for t in range(5):
        lane0 += owner[b, t] == p
        lane1 += owner[b, 5 + t] == p
        lane2 += owner[b, 10 + t] == p
    n = 0
    for i in range(16):
        if status[b, p, i] != IN_HAND:
            continue
        duplicate = False
        for j in range(i):
            if status[b, p, j] == IN_HAND:
                same = True
                for k in range(4):
                    if decks[b, p, i, k] != decks[b, p, j, k]:
                        same = False
                        break
                if same:
                    duplicate = True
                    break
        if duplicate:
            continue
        for t in range(15):
            if owner[b, t] != -1:
                continue
            captures = 0
            in_lane = 0
            for k in range(4):
                nb = NEIGHBOUR[t, k, 0]
                if (
                    nb >= 0
                    and owner[b, nb] == o
                    and kernels.beats(decks[b, p, i, NEIGHBOUR[t, k, 1]], sides[b, nb, NEIGHBOUR[t, k, 2]])
                ):
                    captures += 1
                    if nb // 5 == t // 5:
                        in_lane += 1
            lane = t // 5
            action = 16 + 15 * i + t
            score = captures * 1_000_000 + history[action]
            mine = lane0 if lane == 0 else (lane1 if lane == 1 else lane2)
            if mine + in_lane == 4:
                score += 100_000_000
            out[n] = action
            scores[n] = score
            n += 1
    return n


@njit(cache=True)
def negamax(decks, status, sides, owner, marks, info, d, alpha, beta, table, moves, scores, history, nodes):
    """Value of row ``d`` for its player to move, searched within the window ``(alpha, beta)``.

    ``table`` holds keys and entries (value, bound: EXACT/LOWER/UPPER, best move). The
    table's best move is tried before any other move is even generated: when it cuts
    off, as it mostly does, the node costs one child.
    """
    nodes[0] += 1
    if info[d, PHASE] == OVER:
        w = info[d, WINNER]
        return 0 if w == -1 else (1 if w == info[d, TO_MOVE] else -1)
    empty = 0
    for t in range(15):
        empty += owner[d, t] == -1
    mover = info[d, TO_MOVE]
    if empty == 1 and info[d, HAND0 + mover] > 0:
        return _last_placement(decks, status, sides, owner, marks, info, d)
    keys, entries = table
    key = _key(status, sides, owner, info, d)
    slot = np.int64(key & np.uint64(keys.shape[0] - 1))
    first = -1
    if keys[slot] == key:
        v = entries[slot, 0]
        bound = entries[slot, 1]
        first = entries[slot, 2]
        if bound == EXACT:
            return v
        if bound == LOWER and v > alpha:
            alpha = v
        elif bound == UPPER and v < beta:
            beta = v
        if alpha >= beta:
            return v
    alpha0 = alpha
    best = -2
    best_move = -1
    n = -1  # moves not generated yet
    j = -1 if first >= 0 else 0
    while True:
        if j == -1:
            action = first
        else:
            if n < 0:
                n = _moves(decks, status, sides, owner, info, d, moves[d], scores[d], history)
            if j >= n:
                break
            top = j  # selection: bring the best remaining move to position j
            for k in range(j + 1, n):
                if scores[d, k] > scores[d, top]:
                    top = k
            moves[d, j], moves[d, top] = moves[d, top], moves[d, j]
            scores[d, j], scores[d, top] = scores[d, top], scores[d, j]
            action = moves[d, j]
            if action == first:
                j += 1
                continue
        j += 1
        kernels.copy_row(status, sides, owner, info, d, d + 1)
        kernels.apply_action(decks, status, sides, owner, marks, info, d + 1, action)
        if info[d + 1, PHASE] == OVER:
            w = info[d + 1, WINNER]
            v = 0 if w == -1 else (1 if w == mover else -1)
        elif info[d + 1, TO_MOVE] == mover:  # the opponent passed: same player, same window
            v = negamax(
                decks, status, sides, owner, marks, info, d + 1, alpha, beta, table, moves, scores, history, nodes
            )
        else:
            v = -negamax(
                decks, status, sides, owner, marks, info, d + 1, -beta, -alpha, table, moves, scores, history, nodes
            )
        if v > best:
            best = v
            best_move = action
        if v > alpha:
            alpha = v
        if alpha >= beta:
            history[action] += empty * empty  # a cut-off move: try it early elsewhere too
            break
    keys[slot] = key
    entries[slot, 0] = best
    entries[slot, 1] = UPPER if best <= alpha0 else (LOWER if best >= beta else EXACT)
    entries[slot, 2] = best_move
    return best


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


class Solver:
    """Solves open-hand play-phase positions exactly; the transposition table lives between calls."""

    def __init__(self, table_bits: int = TABLE_BITS):
        size = 1 << table_bits
        self._table = (np.zeros(size, np.uint64), np.zeros((size, 3), np.int16))
        self._rows = Batch.empty(MAX_DEPTH + 1)
        self._moves = np.zeros((MAX_DEPTH + 1, 256), np.int64)
        self._scores = np.zeros((MAX_DEPTH + 1, 256), np.int64)
        self._history = np.zeros(256, np.int64)

    def _search(self, state: GameState, alpha: int, beta: int, nodes: np.ndarray) -> int:
        write_state(self._rows, 0, state)
        self._rows.decks[1:] = self._rows.decks[0]
        return int(negamax(*self._rows, 0, alpha, beta, self._table, self._moves, self._scores, self._history, nodes))

    def value(self, state: GameState) -> int:
        """The value of ``state`` for its player to move."""
        _check(state)
        if state.is_over:
            return 0 if state.winner is None else (1 if state.winner == state.to_move else -1)
        return self._search(state, -1, 1, np.zeros(1, np.int64))

    def best_move(self, state: GameState) -> tuple[int, tuple[str, int]]:
        """The value of ``state`` for its player to move and one move that achieves it."""
        _check(state)
        if state.is_over:
            raise TrinityError("the game is over: there is no move to solve")
        value = self._search(state, -1, 1, np.zeros(1, np.int64))
        keys, entries = self._table
        key = _key(self._rows.status, self._rows.sides, self._rows.owner, self._rows.info, 0)
        slot = int(key & np.uint64(keys.shape[0] - 1))
        action = int(entries[slot, 2]) if keys[slot] == key else -1
        if action < 0:  # the last placement is searched without the table: take the first move that does it
            return value, next(m for m in state.legal_moves() if self._move_value(state, m, value) >= value)
        deck_index, tile = divmod(action - 16, 15)
        return value, (state.decks[state.to_move][deck_index].notation, tile)

    def _move_value(self, state: GameState, move: tuple[str, int], value: int, nodes: np.ndarray | None = None) -> int:
        """The value of ``move`` for the mover if it is at least ``value``; otherwise something lower."""
        nodes = np.zeros(1, np.int64) if nodes is None else nodes
        mover = state.to_move
        child = state.play(*move)
        if child.is_over:
            return 0 if child.winner is None else (1 if child.winner == mover else -1)
        if value == -1:
            return -1  # every move achieves a loss
        if child.to_move == mover:  # the opponent has to pass
            return self._search(child, value - 1, value + 1, nodes)
        # a null window around `value`: is this move as good as the best one?
        return -self._search(child, -value - 1, -value + 1, nodes)

    def solve(self, state: GameState) -> Solution:
        """The value of ``state`` and every move that achieves it."""
        _check(state)
        if state.is_over:
            raise TrinityError("the game is over: there is no move to solve")
        start = time.perf_counter()
        nodes = np.zeros(1, np.int64)
        mover = state.to_move
        value = self._search(state, -1, 1, nodes)
        best = [move for move in state.legal_moves() if self._move_value(state, move, value, nodes) >= value]
        winner = None if value == 0 else (mover if value == 1 else 1 - mover)
        return Solution(winner, value, best, int(nodes[0]), time.perf_counter() - start)


def _check(state: GameState) -> None:
    if state.phase == "draft":
        raise TrinityError("the solver needs a play-phase position (both hands known), not a draft")
