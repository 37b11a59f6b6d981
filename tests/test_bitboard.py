"""The solver's bitboard against the core: every placement's flips, owners, hash and undo."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np

from trinity_env.core import GameState
from trinity_env.fast import kernels
from trinity_env.fast.convert import write_state
from trinity_env.fast.layout import Batch
from trinity_env.search import bitboard

from drawn import state as drawn_state
from games import random_start


def _loaded(state: GameState) -> bitboard.Board:
    rows, board = Batch.empty(1), bitboard.Board()
    write_state(rows, 0, state)
    bitboard.load(rows.decks, rows.status, rows.sides, rows.owner, 0, *board.arrays)
    return board


def _owner_masks(state: GameState) -> list[int]:
    return [sum(1 << t for t, owner in enumerate(state.owners) if owner == p) for p in (0, 1)]


def _snapshot(board: bitboard.Board) -> list[np.ndarray]:
    return [array.copy() for array in (board.own, board.hand, board.card, board.beaten, board.key)]


def test_placements_on_the_bitboard_agree_with_the_core_and_take_back_exactly():
    """Random games (any deck, either draft mode): at every position, every legal placement is
    made on the bitboard and compared with the core's child; then taken back."""
    rng = random.Random(3)
    seen: Counter = Counter()
    while seen["placements"] < 20_000:
        state = random_start(rng)
        while not state.is_over:
            if state.phase != "play":
                state = state.apply(rng.choice(state.legal_actions()))
                continue
            board = _loaded(state)
            before = _snapshot(board)
            p = state.to_move
            for action in state.legal_actions():
                i, t = divmod(action - 16, 15)
                child = state.apply(action)
                predicted = bitboard.flips(board.own, board.card, board.beaten, board.wins, p, 16 * p + i, t)
                flipped = bitboard.place(
                    board.own,
                    board.hand,
                    board.card,
                    board.beaten,
                    board.key,
                    board.wins,
                    board.tile_terms,
                    board.hand_terms,
                    p,
                    i,
                    t,
                )
                assert flipped == predicted == sum(1 << n for n in child.last.captured + child.last.domino)
                assert board.own.tolist() == _owner_masks(child)
                fresh = _loaded(child)  # the same position loaded from scratch: same hash, same capture masks
                assert board.key[0] == fresh.key[0]
                assert board.beaten[:15].tolist() == fresh.beaten[:15].tolist()
                assert bitboard.holds_a_lane(board.own[p]) == (
                    child.outcome is not None and child.outcome.termination == "lane_control"
                )
                if child.is_over and child.outcome.termination == "full_board":
                    assert kernels.lane_scores_of_masks(board.own[0], board.own[1]) == tuple(child.outcome.scores)
                bitboard.take_back(
                    board.own,
                    board.hand,
                    board.card,
                    board.beaten,
                    board.key,
                    board.tile_terms,
                    board.hand_terms,
                    p,
                    i,
                    t,
                    flipped,
                )
                assert all((a == b).all() for a, b in zip(_snapshot(board), before, strict=True))
                seen["placements"] += 1
                seen["dominoes"] += bool(child.last.domino)
                seen[child.outcome.termination if child.is_over else "on"] += 1
            state = state.apply(rng.choice(state.legal_actions()))
    assert seen["dominoes"] > 500 and seen["lane_control"] > 50 and seen["full_board"] > 5


def test_the_hash_tells_apart_what_matters_and_only_that():
    """Same cards in the same places: same key, whatever the root; another hand: another key;
    another owner: the same board key (the solver mixes the owners in with the mover)."""
    a = drawn_state(
        """
        w1111  b2222  .  .  .
        .      .      .  .  .
        .      .      .  .  .
        """,
        hands=(["3333", "4444"], ["5555"]),
    )
    data = a.to_dict()
    other_hand = {**data, "hands": [["3333", "4444"], ["6666"]]}
    other_owner = {
        **data,
        "board": [[data["board"][0][0], {"card": "2222", "owner": 0}, *data["board"][0][2:]], *data["board"][1:]],
    }
    key = _loaded(a).key[0]
    assert _loaded(GameState.from_dict(data)).key[0] == key
    assert _loaded(GameState.from_dict(other_hand)).key[0] != key
    assert _loaded(GameState.from_dict(other_owner)).key[0] == key
    assert _loaded(GameState.from_dict(other_owner)).own.tolist() != _loaded(a).own.tolist()
