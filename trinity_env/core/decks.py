"""Decks: validation, the shipped deck files, random decks and random legal hands.

A deck is 16 cards. It is valid only if a legal hand (8 cards, at most ``max_a_cards``
A cards) can be drawn from it; that is the one property the draft relies on, because
with it every sequence of legal picks can always be completed (see ``docs/rules.md``).
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from collections.abc import Sequence
from pathlib import Path

from trinity_env.core.cards import A, Card, parse_cards
from trinity_env.core.errors import DeckError
from trinity_env.core.files import load_yaml, names, short
from trinity_env.core.shipped import resolve

DECK_SIZE = 16
HAND_SIZE = 8
DEFAULT_MAX_A_CARDS = 3
RANDOM_DECK_A_CARDS = 5
"""A cards in a random deck (the standard deck's count)."""
RANDOM_DECK_SIDE_SUM = 20
"""Side sum of every card of a random deck (A counting 10)."""

Deck = tuple[Card, ...]


def check_max_a_cards(max_a_cards: object) -> int:
    """``max_a_cards`` if it is an integer 0-8: a bool, a float or a string is refused, never coerced."""
    if isinstance(max_a_cards, bool) or not isinstance(max_a_cards, int) or not 0 <= max_a_cards <= HAND_SIZE:
        raise DeckError(f"max_a_cards must be an integer 0-{HAND_SIZE}, got {short(max_a_cards)}")
    return max_a_cards


def has_legal_hand(deck: Sequence[Card], max_a_cards: int) -> bool:
    a_cards = sum(card.is_a_card for card in deck)
    return len(deck) - a_cards + min(a_cards, max_a_cards) >= HAND_SIZE


def validate_deck(cards: Sequence[str | Card], max_a_cards: int = DEFAULT_MAX_A_CARDS) -> Deck:
    """Parse and check a deck; raise ``DeckError`` saying which rule it breaks."""
    check_max_a_cards(max_a_cards)
    try:
        deck = parse_cards(cards)
    except (TypeError, ValueError) as err:
        raise DeckError(f"bad deck: {err}") from None
    if len(deck) != DECK_SIZE:
        raise DeckError(f"a deck has exactly {DECK_SIZE} cards, this one has {len(deck)}")
    if not has_legal_hand(deck, max_a_cards):
        a_cards = sum(card.is_a_card for card in deck)
        raise DeckError(
            f"no legal hand can be drawn: the deck has {DECK_SIZE - a_cards} cards without an A "
            f"and at most {max_a_cards} A cards may be held, fewer than the {HAND_SIZE} a hand needs"
        )
    return deck


def dominated_pairs(deck: Sequence[Card]) -> list[tuple[Card, Card]]:
    """Pairs ``(strong, weak)`` of different deck slots where ``strong`` is at least as strong on all sides."""
    return [(a, b) for (i, a), (j, b) in itertools.permutations(enumerate(deck), 2) if a.dominates(b)]


def load_deck(name_or_path: str | Path, max_a_cards: int = DEFAULT_MAX_A_CARDS) -> Deck:
    """Load a deck by name (a file in ``configs/decks/``) or from a YAML path.

    A bare name always means the shipped deck, whatever the working directory holds; a file is
    named by a path (``./mine``, ``decks/mine.yaml``, ``mine.yaml``): see ``trinity_env.core.shipped``.
    The file holds ``cards:``, a list of 16 card strings (``name`` and ``description`` are
    optional). Errors name the file and the field.
    """
    path = resolve(name_or_path, "decks", DeckError)
    data = load_yaml(path, "deck file", DeckError)
    if not isinstance(data, dict) or "cards" not in data:
        raise DeckError(f"deck file {path}: expected a mapping with a 'cards' list")
    unknown = set(data) - {"name", "description", "cards"}
    if unknown:
        raise DeckError(f"deck file {path}: unknown field(s) {names(unknown)}")
    for field in ("name", "description"):
        if field in data and not isinstance(data[field], str):
            raise DeckError(f"deck file {path}: field {field!r} must be a string, got {short(data[field])}")
    if not isinstance(data["cards"], list):
        raise DeckError(f"deck file {path}: field 'cards' must be a list of card strings, got {short(data['cards'])}")
    try:
        return validate_deck(data["cards"], max_a_cards)
    except DeckError as err:
        raise DeckError(f"deck file {path}, field 'cards': {err}") from None


@functools.cache
def standard_deck() -> Deck:
    """The deck both players use by default (``configs/decks/standard.yaml``), read once."""
    return load_deck("standard")


def _as_rng(seed: int | random.Random | None) -> random.Random:
    return seed if isinstance(seed, random.Random) else random.Random(seed)


def random_deck(
    seed: int | random.Random | None = None, *, a_cards: int = RANDOM_DECK_A_CARDS, side_sum: int = RANDOM_DECK_SIDE_SUM
) -> Deck:
    """A seeded random deck of 16 different cards, ``a_cards`` of them A cards.

    Every card has the same side sum (A counting 10), which makes the deck meet the
    standard deck's rule for free: with equal sums no card can be at least as strong as a
    different one on all four sides.
    """
    if not 0 <= a_cards <= DECK_SIZE:
        raise DeckError(f"a_cards must be 0-{DECK_SIZE}, got {a_cards}")
    rng = _as_rng(seed)
    with_a, without_a = cards_with_side_sum(side_sum)
    if len(with_a) < a_cards or len(without_a) < DECK_SIZE - a_cards:
        raise DeckError(f"side_sum {side_sum} has too few different cards for this deck")
    chosen = rng.sample(with_a, a_cards) + rng.sample(without_a, DECK_SIZE - a_cards)
    rng.shuffle(chosen)
    return tuple(Card.from_sides(*c) for c in chosen)


@functools.cache
def cards_with_side_sum(side_sum: int) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    """Every card (as side tuples) whose sides add up to ``side_sum``: those with an A, those without.

    A random deck draws from these two pools; the fast engine deals from the same pools.
    """
    pool = [c for c in itertools.product(range(1, A + 1), repeat=4) if sum(c) == side_sum]
    return [c for c in pool if A in c], [c for c in pool if A not in c]


def legal_a_counts(a_slots: int, plain_slots: int, size: int, a_budget: int) -> tuple[list[int], list[int]]:
    """The possible numbers of A cards in a uniformly random legal hand, and how many hands have each.

    A hand of ``size`` cards from ``a_slots`` A cards and ``plain_slots`` others, holding at
    most ``a_budget`` A cards: drawing the count ``k`` with these weights, then ``k`` A cards
    and ``size - k`` others uniformly, draws every legal hand with the same chance. Dealt
    hands (here and in the fast engine) and a search's guess at a hidden hand use this rule.
    """
    counts = list(range(0, max(-1, min(a_budget, a_slots, size)) + 1))
    weights = [math.comb(a_slots, k) * math.comb(plain_slots, size - k) for k in counts]
    return counts, weights


def random_hand(deck: Sequence[Card], max_a_cards: int, seed: int | random.Random | None = None) -> tuple[int, ...]:
    """Deck indices of a hand drawn uniformly from all legal hands of ``deck``, sorted."""
    rng = _as_rng(seed)
    a_slots = [i for i, card in enumerate(deck) if card.is_a_card]
    plain_slots = [i for i, card in enumerate(deck) if not card.is_a_card]
    counts, weights = legal_a_counts(len(a_slots), len(plain_slots), HAND_SIZE, max_a_cards)
    if not any(weights):
        raise DeckError("no legal hand can be drawn from this deck")
    k = rng.choices(counts, weights=weights)[0]
    return tuple(sorted(rng.sample(a_slots, k) + rng.sample(plain_slots, HAND_SIZE - k)))
