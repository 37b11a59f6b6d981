"""One test (or a few) per clause of the rules, each with the board drawn in the test.

Section numbers follow the project's rules specification (RULES.md, written up for users
in docs/rules.md). Drawn boards: one line per lane, ``.`` empty, ``w``
player 0's card, ``b`` player 1's card (see ``tests/drawn.py``).
"""

from __future__ import annotations

import random

import pytest

from trinity_env.core import (
    NEIGHBOURS,
    Card,
    CardError,
    DeckError,
    GameState,
    IllegalMoveError,
    lane_scores,
    random_hand,
    standard_deck,
    tile_coords,
    tile_index,
    validate_deck,
)

from drawn import draw, position, same_board, state

# --------------------------------------------------------------------------- §1 Components


def test_1_board_is_3_lanes_of_5_tiles_indexed_5l_plus_p():
    assert [tile_index(lane, p) for lane in range(3) for p in range(5)] == list(range(15))
    assert tile_coords(7) == (1, 2)
    assert tile_coords(14) == (2, 4)


def test_1_adjacency_is_orthogonal_across_lanes_and_never_wraps():
    assert sorted(n for n, _, _ in NEIGHBOURS[7]) == [2, 6, 8, 12]
    assert sorted(n for n, _, _ in NEIGHBOURS[0]) == [1, 5]
    assert 5 not in [n for n, _, _ in NEIGHBOURS[4]]
    assert 4 not in [n for n, _, _ in NEIGHBOURS[5]]
    # a strong card on tile 5 does nothing to tile 4, which is not its neighbour
    s = state(
        """
        .  .  .  .  b1111
        .  .  .  .  .
        .  .  .  .  .
        """,
        hands=(["AAAA"], ["1111"]),
    ).play("AAAA", 5)
    assert s.last.captured == ()
    assert s.owners[4] == 1


@pytest.mark.parametrize(
    ("placed", "captured_tile"),
    [("5333", 2), ("3533", 8), ("3353", 12), ("3335", 6)],
    ids=["top-faces-lane-above", "right-faces-black-tower", "bottom-faces-lane-below", "left-faces-white-tower"],
)
def test_1_each_side_faces_its_own_direction(placed, captured_tile):
    # each neighbour shows a 4 towards tile 7 and 9 everywhere else
    s = state(
        """
        .  .      b9949  .      .
        .  b9499  .      b9994  .
        .  .      b4999  .      .
        """,
        hands=([placed], ["1111"]),
    ).play(placed, 7)
    assert s.last.captured == (captured_tile,)
    assert [t for t in (2, 6, 8, 12) if s.owners[t] == 0] == [captured_tile]


def test_1_A_ranks_above_9_and_a_9_does_not_beat_an_A():
    board = """
        .  .  b9999  .  .
        .  .  .      .  .
        .  .  .      .  .
        """
    assert state(board, hands=(["A111"], [])).play("A111", 7).owners[2] == 0
    board_a = board.replace("b9999", "b11A1")
    assert state(board_a, hands=(["9111"], [])).play("9111", 7).owners[2] == 1


@pytest.mark.parametrize("good", ["7A24", "7a24", "AAAA", "1111", "a9a9"])
def test_1_card_notation_reads_top_right_bottom_left(good):
    card = Card(good)
    assert str(card) == good.upper()
    assert Card(str(card)) == card
    assert repr(card) == f"Card({good.upper()!r})"


def test_1_card_sides_in_order():
    assert tuple(Card("7A24")) == (7, 10, 2, 4)


@pytest.mark.parametrize("bad", ["0123", "10", "7A2", "7A245", "B123", "", "12 4", "1.23"])
def test_1_bad_card_notation_is_an_error_naming_the_string(bad):
    with pytest.raises(CardError) as err:
        Card(bad)
    assert repr(bad) in str(err.value)
    assert isinstance(err.value, ValueError)


def test_1_an_A_card_has_at_least_one_A_side():
    assert Card("1A11").is_a_card and Card("AAAA").is_a_card
    assert not Card("9999").is_a_card


def test_1_standard_deck_meets_its_rules():
    deck = standard_deck()
    assert len(deck) == 16
    assert len(set(deck)) == 16
    assert sum(card.is_a_card for card in deck) == 5
    for i, a in enumerate(deck):
        for j, b in enumerate(deck):
            if i != j:
                assert not all(x >= y for x, y in zip(a, b)), f"{a} is at least as strong as {b} everywhere"


def test_1_deck_needs_16_cards_and_a_legal_hand():
    with pytest.raises(DeckError, match="16 cards"):
        validate_deck(["1111"] * 15)
    # 10 A cards + 6 plain ones: with at most 1 A card held, no 8-card hand exists
    deck = ["A111"] * 10 + ["2222"] * 6
    with pytest.raises(DeckError, match="no legal hand"):
        validate_deck(deck, max_a_cards=1)
    assert len(validate_deck(deck, max_a_cards=2)) == 16


def test_1_hand_is_8_cards_with_at_most_max_a_cards_A_cards():
    deck = standard_deck()
    a_slots = [i for i, c in enumerate(deck) if c.is_a_card]
    plain = [i for i, c in enumerate(deck) if not c.is_a_card]
    with pytest.raises(ValueError, match="A cards"):
        GameState.new_game(hands=[a_slots[:4] + plain[:4], plain[:8]])
    with pytest.raises(ValueError, match="8 different"):
        GameState.new_game(hands=[plain[:7], plain[:8]])
    s = GameState.new_game(hands=[a_slots[:4] + plain[:4], plain[:8]], max_a_cards=4)
    assert [len(h) for h in s.hands] == [8, 8]


# --------------------------------------------------------------------------- §2 Phases


def test_2_draft_alternates_from_player_0_until_each_holds_8():
    s = GameState.new_game(first_player=1)
    movers = []
    while s.phase == "draft":
        movers.append(s.to_move)
        s = s.apply(s.legal_actions()[0])
    assert movers == [0, 1] * 8
    assert [len(h) for h in s.hands] == [8, 8]
    assert s.phase == "play" and s.to_move == 1  # first_player places first


def test_2_a_pick_names_an_unpicked_card_of_the_pickers_own_deck():
    s = GameState.new_game().apply(5)
    assert s.status[0][5] == 1 and s.status[1][5] == 0
    s = s.apply(5)  # player 1 may pick its own copy of the same card
    with pytest.raises(IllegalMoveError, match="already picked"):
        s.apply(5)
    assert 5 not in s.legal_actions()


def test_2_a_pick_beyond_max_a_cards_is_masked_and_refused():
    s = GameState.new_game()
    deck = s.decks[0]
    a_slots = [i for i, c in enumerate(deck) if c.is_a_card]
    for i in a_slots[:3]:
        s = s.apply(i)  # player 0 takes an A card
        s = s.apply(s.legal_actions()[-1])  # player 1 takes something
    assert s.a_cards_held(0) == 3
    assert not any(deck[a].is_a_card for a in s.legal_actions())
    with pytest.raises(IllegalMoveError, match="max_a_cards"):
        s.apply(a_slots[3])


def test_2_a_dealt_hand_is_legal_and_from_the_seeded_rng():
    deck = standard_deck()
    hands = {random_hand(deck, 3, seed) for seed in range(200)}
    assert len(hands) > 150  # many different hands
    for hand in hands:
        assert len(set(hand)) == 8 and sum(deck[i].is_a_card for i in hand) <= 3
    assert random_hand(deck, 3, 42) == random_hand(deck, 3, 42)
    assert all(sum(deck[i].is_a_card for i in random_hand(deck, 0, s)) == 0 for s in range(20))


def test_2_fixed_hands_skip_the_draft():
    s = GameState.new_game(hands=[range(5, 13), range(8, 16)], first_player=1)
    assert s.phase == "play" and s.to_move == 1
    assert s.hand(0) == standard_deck()[5:13]


def test_2_players_alternate_and_the_placed_card_belongs_to_its_player():
    s = state(
        """
        .  .  .  .  .
        .  .  .  .  .
        .  .  .  .  .
        """,
        hands=(["1111", "2222"], ["3333", "4444"]),
        to_move=1,
    )
    s = s.play("3333", 14)
    assert s.owners[14] == 1 and s.to_move == 0
    s = s.play("1111", 0)
    assert s.owners[0] == 0 and s.to_move == 1


def test_2_a_card_goes_on_an_empty_tile_only():
    s = state(
        """
        w1111  .  .  .  .
        .      .  .  .  .
        .      .  .  .  .
        """,
        hands=(["2222"], ["3333"]),
    )
    with pytest.raises(IllegalMoveError, match="occupied"):
        s.play("2222", 0)
    assert len(s.legal_actions()) == 14


def test_2_placing_is_mandatory_while_a_legal_placement_exists():
    s = GameState.new_game(hands=[range(5, 13), range(8, 16)])
    rng = random.Random(3)
    while not s.is_over:
        assert s.legal_actions(), "a player with cards and an empty tile must have a move"
        s = s.apply(rng.choice(s.legal_actions()))


# --------------------------------------------------------------------------- §3 Capture


def test_3_higher_side_captures_equal_and_lower_do_not():
    board = """
        .  b1141  .  .  .
        .  .      .  .  .
        .  .      .  .  .
        """
    assert state(board, hands=(["5111"], [])).play("5111", 6).owners[1] == 0  # 5 > 4
    assert state(board, hands=(["4111"], [])).play("4111", 6).owners[1] == 1  # 4 = 4
    assert state(board, hands=(["3111"], [])).play("3111", 6).owners[1] == 1  # 3 < 4


def test_3_A_exception_A_captures_A():
    s = state(
        """
        .  b11A1  .  .  .
        .  .      .  .  .
        .  .      .  .  .
        """,
        hands=(["A111"], []),
    ).play("A111", 6)
    assert s.owners[1] == 0 and s.last.captured == (1,)


def test_3_the_movers_own_cards_are_never_captured():
    s = state(
        """
        .  w1111  .  .  .
        .  .      .  .  .
        .  .      .  .  .
        """,
        hands=(["9999"], []),
    ).play("9999", 6)
    assert s.owners[1] == 0 and s.last.captured == ()


def test_3_multi_capture_flips_every_beaten_neighbour_together():
    s = state(
        """
        .  .      b1141  .      .
        .  b1411  .      b1114  .
        .  .      b4111  .      .
        """,
        hands=(["5535"], []),
    ).play("5535", 7)
    # left side 5 > 4, top 5 > 4, bottom 3 < 4 (kept), right 5 > 4
    assert s.last.captured == (2, 6, 8)
    assert same_board(
        s,
        """
        .  .      w1141  .      .
        .  w1411  w5535  w1114  .
        .  .      b4111  .      .
        """,
    )


def test_3_domino_flips_one_level_and_stops():
    s = state(
        """
        .  b1914  b1213  b1111  .
        .  .      .      .      .
        .  .      .      .      .
        """,
        hands=(["1511"], []),
    ).play("1511", 0)
    # 1511 captures 1914 (5 > 4); 1914's right 9 beats 1213's left 3 (domino);
    # 1213's right 2 would beat 1111's left 1, but the domino stops after one level
    assert s.last.captured == (1,) and s.last.domino == (2,)
    assert same_board(
        s,
        """
        w1511  w1914  w1213  b1111  .
        .      .      .      .      .
        .      .      .      .      .
        """,
    )


def test_3_domino_compares_the_captured_cards_side_facing_each_neighbour():
    s = state(
        """
        .  b9194  b1213  .  .
        .  b5111  .      .  .
        .  .      .      .  .
        """,
        hands=(["1511"], []),
    ).play("1511", 0)
    # captured 9194 shows right 1 to 1213 (left 3: kept) and bottom 9 to 5111 (top 5: flipped)
    assert s.last.captured == (1,) and s.last.domino == (6,)
    assert s.owners[2] == 1 and s.owners[6] == 0


def test_3_domino_uses_the_A_exception_too():
    s = state(
        """
        .  b1A14  b111A  .  .
        .  .      .      .  .
        .  .      .      .  .
        """,
        hands=(["1511"], []),
    ).play("1511", 0)
    assert s.last.domino == (2,)


def test_3_domino_flips_together_and_a_card_flips_once():
    # 1551 on tile 0 captures tile 1 (5 > 1) and tile 5 (5 > 4); both then beat tile 6
    s = state(
        """
        .      b1951  .  .  .
        b4911  b2121  .  .  .
        .      .      .  .  .
        """,
        hands=(["1551"], []),
    ).play("1551", 0)
    assert s.last.captured == (1, 5)
    assert s.last.domino == (6,)
    assert same_board(
        s,
        """
        w1551  w1951  .  .  .
        w4911  w2121  .  .  .
        .      .      .  .  .
        """,
    )


def test_3_domino_only_flips_cards_the_opponent_still_owns():
    # the captured card's strong sides face the mover's own cards and the placed card: nothing more flips
    s = state(
        """
        .  b1914  w1111  .  .
        .  w1111  .      .  .
        .  .      .      .  .
        """,
        hands=(["1511"], []),
    ).play("1511", 0)
    assert s.last.captured == (1,) and s.last.domino == ()
    assert [s.owners[t] for t in (0, 1, 2, 6)] == [0, 0, 0, 0]


# --------------------------------------------------------------------------- §4 End of the game


def test_4_1_completing_a_lane_wins_at_once_whatever_the_scores():
    s = state(
        """
        w1111  w1111  w1111  w1111  .
        b1111  b1111  b1111  .      .
        b1111  b1111  b1111  .      .
        """,
        hands=(["1111", "1111"], ["1111"]),
    ).play("1111", 4)
    assert s.is_over and s.winner == 0
    assert s.outcome.termination == "lane_control" and s.outcome.lane == 0
    # scores of the board as it stands: player 1 leads lanes 1 and 2 by 3-0
    assert s.scores == (5, 6)
    assert s.to_dict()["winner"] == 0 and s.to_dict()["scores"] == [5, 6]
    with pytest.raises(IllegalMoveError, match="over"):
        s.play("1111", 3)


def test_4_1_a_capture_can_complete_a_lane():
    s = state(
        """
        w1111  w1111  b1111  w1111  w1111
        .      .      .      .      .
        .      .      .      .      .
        """,
        hands=(["5111"], ["1111"]),
    ).play("5111", 7)
    assert s.last.captured == (2,)
    assert s.winner == 0 and s.outcome.lane == 0


def test_4_2_full_board_is_scored_lane_by_lane():
    s = state(
        """
        w1111  w1111  w1111  b1111  b1111
        b1111  b1111  b1111  w1111  w1111
        w1111  w1111  b1111  b1111  .
        """,
        hands=(["1111"], []),
    ).play("1111", 14)
    assert s.is_over and s.outcome.termination == "full_board"
    assert s.scores == (6, 3) and s.winner == 0


def test_4_2_lane_majority_scores_4_1_and_3_2_lanes():
    s = state(
        """
        w1111  w1111  w1111  w1111  b1111
        b1111  b1111  b1111  w1111  w1111
        b1111  w1111  b1111  b1111  b1111
        """,
        hands=((), ()),
    )
    assert lane_scores(s.owners) == (4, 3 + 4)
    assert s.winner == 1 and s.outcome.termination == "full_board"


def test_4_3_a_player_with_no_card_passes():
    s = state(
        """
        w1111  w1111  b1111  b1111  .
        b1111  w1111  b1111  w1111  .
        w1111  b1111  w1111  b1111  .
        """,
        hands=(["1111"], ["1111", "1111"]),
        to_move=0,
    )
    s = s.play("1111", 4)
    assert s.to_move == 1
    s = s.play("1111", 9)
    assert s.to_move == 1  # player 0 has nothing left and passes
    s = s.play("1111", 14)
    assert s.is_over and s.outcome.termination == "full_board"


def test_4_3_neither_player_can_place_ends_and_equal_totals_draw():
    s = state(
        """
        w1111  w1111  w1111  b1111  .
        b1111  b1111  b1111  w1111  .
        .      .      .      .      .
        """,
        hands=(["1111"], []),
    )
    s = s.play("1111", 10)
    assert s.is_over and s.outcome.termination == "no_moves"
    # lane 0: 3-1 for 0; lane 1: 1-3 for 1; lane 2: 1-0 for 0
    assert s.scores == (4, 3) and s.winner == 0
    draw_state = state(
        """
        w1111  w1111  w1111  b1111  .
        b1111  b1111  b1111  w1111  .
        b1111  .      .      .      .
        """,
        hands=(["1111"], []),
    ).play("1111", 11)
    # lane 2 is 1-1: it scores for nobody, and 3-3 is a draw
    assert draw_state.scores == (3, 3) and draw_state.winner is None
    assert draw_state.to_dict()["winner"] is None


def test_4_3_a_loaded_mover_without_cards_passes_at_once():
    s = state(
        """
        .  .  .  .  .
        .  .  .  .  .
        .  .  .  .  .
        """,
        hands=([], ["1111"]),
        to_move=0,
    )
    assert s.to_move == 1 and not s.is_over
    assert GameState.from_dict(position("\n".join([". . . . ."] * 3), hands=([], []))).outcome.termination == "no_moves"


def test_4_first_mover_places_8_the_second_7_and_its_last_card_stays_in_hand():
    for first in (0, 1):
        s = GameState.new_game(hands=[range(5, 13), range(5, 13)], first_player=first)
        # cards that never capture keep the game going to the full board
        placements = [0, 0]
        rng = random.Random(first)
        while not s.is_over:
            placements[s.to_move] += 1
            s = s.apply(rng.choice(s.legal_actions()))
        if s.outcome.termination == "full_board":
            assert placements[first] == 8 and placements[1 - first] == 7
            assert len(s.hand(1 - first)) == 1 and len(s.hand(first)) == 0


def test_4_board_full_has_no_draw_on_a_real_board():
    s = state(
        """
        w1111  w1111  w1111  b1111  b1111
        w1111  w1111  b1111  b1111  b1111
        b1111  b1111  w1111  w1111  .
        """,
        hands=(["1111"], []),
    ).play("1111", 14)
    assert draw(s).count("w") == 8 and s.winner == 0 and s.scores == (6, 3)
