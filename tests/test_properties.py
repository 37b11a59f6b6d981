"""Invariants of the rules, stated once and checked on many random games (hypothesis)."""

from __future__ import annotations

import itertools
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from trinity_env.core import LANE_TILES, NUM_ACTIONS, GameState, IllegalMoveError

from games import random_game

games = st.randoms(use_true_random=False).map(random_game)


def _on_table(state: GameState) -> Counter:
    """Every card of the play phase: on the board or in a hand."""
    cards = Counter(c for c in state.cards if c is not None)
    for player in (0, 1):
        cards.update(state.hand(player))
    return cards


@settings(max_examples=150, deadline=None)
@given(games)
def test_cards_are_conserved(states):
    play = [s for s in states if s.phase != "draft"]
    assert play, "every game reaches the play phase"
    expected = _on_table(play[0])
    assert sum(expected.values()) == 16
    for state in play:
        assert _on_table(state) == expected


@settings(max_examples=150, deadline=None)
@given(games)
def test_only_the_mover_gains_cards(states):
    for before, after in itertools.pairwise(states):
        step = after.last
        if step.tile is None:
            assert after.owners == before.owners
            continue
        mover = step.player
        assert mover == before.to_move
        changed = {t for t in range(15) if after.owners[t] != before.owners[t]}
        assert changed == {step.tile, *step.captured, *step.domino}
        assert all(before.owners[t] == 1 - mover and after.owners[t] == mover for t in step.flipped)
        assert after.owners.count(1 - mover) == before.owners.count(1 - mover) - len(step.flipped)
        assert after.owners.count(mover) == before.owners.count(mover) + 1 + len(step.flipped)


@settings(max_examples=150, deadline=None)
@given(games)
def test_a_game_ends_within_15_placements_after_at_most_16_picks(states):
    picks = sum(1 for s in states[1:] if s.last.tile is None)
    placements = sum(1 for s in states[1:] if s.last.tile is not None)
    assert picks in (0, 16)
    assert placements <= 15
    assert states[-1].is_over and states[-1].outcome.termination in ("lane_control", "full_board")


@settings(max_examples=150, deadline=None)
@given(games)
def test_players_alternate_and_only_the_mover_completes_a_lane(states):
    for before, after in itertools.pairwise(states):
        if before.phase == "play" and not after.is_over:
            assert after.to_move == 1 - before.to_move
        for tiles in LANE_TILES:
            assert not all(after.owners[t] == 1 - after.last.player for t in tiles)


@settings(max_examples=200, deadline=None)
@given(games)
def test_the_full_board_winner_holds_two_or_three_lanes(states):
    end = states[-1]
    if end.outcome.termination == "full_board":
        lanes_won = sum(1 for tiles in LANE_TILES if sum(end.owners[t] == end.winner for t in tiles) >= 3)
        assert end.winner in (0, 1) and lanes_won in (2, 3)
        assert sorted(end.scores)[1] > sorted(end.scores)[0]
    else:
        lane = LANE_TILES[end.outcome.lane]
        assert all(end.owners[t] == end.winner for t in lane)


@settings(max_examples=100, deadline=None)
@given(games)
def test_from_dict_of_to_dict_is_the_identity(states):
    for state in states:
        if state.phase == "draft":
            continue
        data = state.to_dict()
        loaded = GameState.from_dict(data)
        assert loaded.to_dict() == data
        assert loaded.legal_moves() == state.legal_moves()
        assert loaded.outcome == state.outcome


@settings(max_examples=100, deadline=None)
@given(games)
def test_the_mask_matches_the_legal_actions(states):
    for state in states:
        mask = state.action_mask()
        legal = set(state.legal_actions())
        assert len(mask) == NUM_ACTIONS
        assert {a for a in range(NUM_ACTIONS) if mask[a]} == legal
        for action in range(0, NUM_ACTIONS, 7):
            if action in legal:
                state.apply(action)
            else:
                try:
                    state.apply(action)
                except IllegalMoveError:
                    pass
                else:
                    raise AssertionError(f"illegal action {action} was accepted in\n{state}")


board_cells = st.one_of(
    st.none(),
    st.fixed_dictionaries({"card": st.text("123456789A", min_size=4, max_size=4), "owner": st.integers(0, 1)}),
)


@st.composite
def positions(draw):
    board = [[draw(board_cells) for _ in range(5)] for _ in range(3)]
    hands = [draw(st.lists(st.text("123456789A", min_size=4, max_size=4), max_size=8)) for _ in range(2)]
    return {
        "phase": "play",
        "to_move": draw(st.integers(0, 1)),
        "board": board,
        "hands": hands,
        "max_a_cards": draw(st.integers(0, 8)),
    }


@settings(max_examples=300, deadline=None)
@given(positions())
def test_any_settled_position_round_trips(data):
    state = GameState.from_dict(data)
    if state.phase == "play" and state.to_move == data["to_move"]:
        assert state.to_dict() == data
    else:
        # the board already ended the game, or the mover had no card and passed
        again = GameState.from_dict(state.to_dict())
        assert again.to_dict() == state.to_dict()
