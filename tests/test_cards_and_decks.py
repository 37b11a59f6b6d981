"""Cards, decks and the action layout."""

from __future__ import annotations

import random

import pytest

from trinity_env.core import (
    NUM_ACTIONS,
    Card,
    CardError,
    DeckError,
    IllegalMoveError,
    decode_action,
    dominated_pairs,
    load_deck,
    parse_cards,
    pick_action,
    place_action,
    random_deck,
    random_hand,
    standard_deck,
    validate_deck,
)


def test_from_sides_and_notation_agree():
    assert Card.from_sides(7, 10, 2, 4) == Card("7A24")
    with pytest.raises(CardError, match="top"):
        Card.from_sides(0, 1, 1, 1)
    with pytest.raises(CardError, match="4-character"):
        Card(7124)


def test_parse_cards_names_the_position_of_a_bad_card():
    with pytest.raises(CardError, match="card 2: bad card '12345'"):
        parse_cards(["1111", "2222", "12345"])
    with pytest.raises(CardError, match="list of cards"):
        parse_cards("1111")


def test_dominance_is_all_four_sides_at_least_as_strong():
    assert Card("5555").dominates(Card("5455"))
    assert not Card("5555").dominates(Card("6111"))
    assert dominated_pairs([Card("5555"), Card("5455")]) == [(Card("5555"), Card("5455"))]


def test_decks_load_by_name_or_path_and_errors_name_file_and_field(tmp_path):
    assert load_deck("standard") == standard_deck()
    path = tmp_path / "mine.yaml"
    path.write_text("cards: [" + ", ".join(f'"{c}"' for c in standard_deck()) + "]\n")
    assert load_deck(path) == standard_deck()
    assert load_deck(str(path)) == standard_deck()
    with pytest.raises(DeckError, match=r"no deck named 'nope'.*standard"):
        load_deck("nope")
    bad = tmp_path / "bad.yaml"
    bad.write_text("cards: ['1111', 'X111']\n")
    with pytest.raises(DeckError, match=r"bad\.yaml, field 'cards'.*X111"):
        load_deck(bad)
    extra = tmp_path / "extra.yaml"
    extra.write_text("cards: []\ncolour: red\n")
    with pytest.raises(DeckError, match="colour"):
        load_deck(extra)
    broken = tmp_path / "broken.yaml"
    broken.write_text("cards: [\n")
    with pytest.raises(DeckError, match="not valid YAML"):
        load_deck(broken)


def test_validate_deck_checks_max_a_cards():
    with pytest.raises(DeckError, match="max_a_cards"):
        validate_deck(standard_deck(), max_a_cards=9)


@pytest.mark.parametrize("seed", range(20))
def test_random_decks_meet_the_standard_decks_rules(seed):
    deck = random_deck(seed)
    assert len(deck) == 16 and len(set(deck)) == 16
    assert sum(c.is_a_card for c in deck) == 5
    assert dominated_pairs(deck) == []
    assert validate_deck(deck) == deck


def test_random_decks_are_seeded():
    assert random_deck(3) == random_deck(3) == random_deck(random.Random(3))
    assert random_deck(3) != random_deck(4)
    assert sum(c.is_a_card for c in random_deck(1, a_cards=9)) == 9
    with pytest.raises(DeckError):
        random_deck(1, side_sum=4)


def test_random_hands_follow_the_a_limit_and_are_uniform_over_legal_hands():
    # deck: 2 A cards, 8 plain ones... plus 6 more plain: count how often each A-count appears
    deck = validate_deck(["A111", "1A11"] + [f"{d}{d}{d}{d}" for d in "23456789"] + ["1112"] * 6)
    rng = random.Random(0)
    counts = [0, 0, 0]
    for _ in range(3000):
        hand = random_hand(deck, 2, rng)
        counts[sum(deck[i].is_a_card for i in hand)] += 1
    # legal hands with k A cards: C(2,k) * C(14, 8-k) = 3003, 2*3432, 3003 → shares .23, .53, .23
    assert 0.19 < counts[0] / 3000 < 0.27 and 0.48 < counts[1] / 3000 < 0.58


def test_action_layout():
    assert NUM_ACTIONS == 256
    assert pick_action(15) == 15
    assert place_action(0, 0) == 16 and place_action(15, 14) == 255
    assert decode_action(16 + 15 * 3 + 7) == ("place", 3, 7)
    assert decode_action(4) == ("pick", 4, None)
    for bad in (-1, 256, "7", 1.5):
        with pytest.raises(IllegalMoveError):
            decode_action(bad)
    with pytest.raises(IllegalMoveError):
        place_action(16, 0)
