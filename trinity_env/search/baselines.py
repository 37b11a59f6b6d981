"""Kernels of the baseline agents: greedy placement and two-ply lookahead, on batch rows.

Row 0 holds the position (the mover to act), rows 1 and 2 are scratch for a move and a
reply; every row must already hold the same decks.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from trinity_env.fast import kernels
from trinity_env.fast.layout import (
    A_HELD0,
    CAPTURED,
    DECK_SIZE,
    DOMINO,
    MAX_A,
    OVER,
    PHASE,
    PLAY,
    TO_MOVE,
    UNPICKED,
    WINNER,
)

WIN = 1_000_000


@njit(cache=True)
def _evaluate(owner, info, b, player):
    """A static value of row ``b`` for ``player``: the result if over, else card count and lane margin."""
    if info[b, PHASE] == OVER:
        w = info[b, WINNER]
        return 0 if w == -1 else (WIN if w == player else -WIN)
    cards = 0
    for t in range(15):
        if owner[b, t] == player:
            cards += 1
        elif owner[b, t] == 1 - player:
            cards -= 1
    return 16 * cards + kernels.margin(owner, b, player)


@njit(cache=True)
def greedy_keys(decks, status, sides, owner, marks, info, actions, n, keys):
    """Greedy's ranking of ``actions[:n]`` from row 0, written to ``keys[:n, :]`` (compare lexicographically).

    Columns: cards flipped now (captured + domino), the move wins the game, the lane
    margin after the move, the weakness of the card spent (minus its side sum), and minus
    the action id (so the lowest id wins the last tie).
    """
    mover = info[0, TO_MOVE]
    for j in range(n):
        a = actions[j]
        kernels.copy_row(status, sides, owner, info, 0, 1)
        kernels.apply_action(decks, status, sides, owner, marks, info, 1, a)
        flips = 0
        for t in range(15):
            if marks[1, t] == CAPTURED or marks[1, t] == DOMINO:
                flips += 1
        i = (a - 16) // 15
        keys[j, 0] = flips
        keys[j, 1] = info[1, PHASE] == OVER and info[1, WINNER] == mover
        keys[j, 2] = kernels.margin(owner, 1, mover)
        keys[j, 3] = -(decks[0, mover, i, 0] + decks[0, mover, i, 1] + decks[0, mover, i, 2] + decks[0, mover, i, 3])
        keys[j, 4] = -a


@njit(cache=True)
def lookahead_values(decks, status, sides, owner, marks, info, actions, n, values):
    """For each of ``actions[:n]`` from row 0: its value against the opponent's best reply."""
    mover = info[0, TO_MOVE]
    replies = np.empty(256, np.int64)
    for j in range(n):
        kernels.copy_row(status, sides, owner, info, 0, 1)
        kernels.apply_action(decks, status, sides, owner, marks, info, 1, actions[j])
        if info[1, PHASE] == OVER or info[1, TO_MOVE] == mover:
            values[j] = _evaluate(owner, info, 1, mover)
            continue
        count = kernels.legal_actions(decks, status, owner, info, 1, replies)
        worst = WIN + 1
        for r in range(count):
            kernels.copy_row(status, sides, owner, info, 1, 2)
            kernels.apply_action(decks, status, sides, owner, marks, info, 2, replies[r])
            v = _evaluate(owner, info, 2, mover)
            if v < worst:
                worst = v
        values[j] = worst


@njit(cache=True)
def strongest_pick(decks, status, info, b):
    """The baselines' draft rule: the legal deck card with the highest side sum, then the highest
    single side (so A cards first, up to the A limit), then the lowest deck index."""
    p = info[b, TO_MOVE]
    a_allowed = info[b, A_HELD0 + p] < info[b, MAX_A]
    best = -1
    best_key0 = -1
    best_key1 = -1
    for i in range(DECK_SIZE):
        if status[b, p, i] != UNPICKED:
            continue
        if not a_allowed and kernels.is_a_card(decks, b, p, i):
            continue
        total = decks[b, p, i, 0] + decks[b, p, i, 1] + decks[b, p, i, 2] + decks[b, p, i, 3]
        top = max(max(decks[b, p, i, 0], decks[b, p, i, 1]), max(decks[b, p, i, 2], decks[b, p, i, 3]))
        if total > best_key0 or (total == best_key0 and top > best_key1):
            best, best_key0, best_key1 = i, total, top
    return best


@njit(cache=True)
def best_keys(keys, n):
    """The row of ``keys[:n]`` that is largest lexicographically (greedy's choice among ranked moves)."""
    best = 0
    for j in range(1, n):
        for column in range(keys.shape[1]):
            if keys[j, column] != keys[best, column]:
                if keys[j, column] > keys[best, column]:
                    best = j
                break
    return best


@njit(cache=True)
def greedy_action(decks, status, sides, owner, marks, info, legal, n, keys):
    """Greedy's move from row 0 (row 1 is scratch): the strongest pick in the draft, else the
    placement ranked highest by ``greedy_keys`` among the ``n`` legal actions in ``legal``."""
    if info[0, PHASE] != PLAY:
        return strongest_pick(decks, status, info, 0)
    greedy_keys(decks, status, sides, owner, marks, info, legal, n, keys)
    return legal[best_keys(keys, n)]


@njit(cache=True)
def greedy_batch(decks, status, sides, owner, marks, info, games, out):
    """``greedy``'s action in each game of ``games`` (a batch of full-information rows), exactly as
    ``GreedyAgent`` chooses: each game is copied to a two-row scratch batch and ranked there."""
    s_decks = np.zeros((2, 2, DECK_SIZE, 4), np.int8)
    s_status = np.zeros((2, 2, DECK_SIZE), np.int8)
    s_sides = np.zeros((2, 15, 4), np.int8)
    s_owner = np.zeros((2, 15), np.int8)
    s_marks = np.zeros((2, 15), np.int8)
    s_info = np.zeros((2, info.shape[1]), np.int8)
    legal = np.empty(256, np.int64)
    keys = np.empty((256, 5), np.int64)
    for j in range(games.shape[0]):
        b = games[j]
        for row in range(2):
            s_decks[row] = decks[b]
            s_status[row] = status[b]
            s_sides[row] = sides[b]
            s_owner[row] = owner[b]
            s_info[row] = info[b]
        n = kernels.legal_actions(s_decks, s_status, s_owner, s_info, 0, legal)
        out[j] = greedy_action(s_decks, s_status, s_sides, s_owner, s_marks, s_info, legal, n, keys)
