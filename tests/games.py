"""Random games for property tests and fuzzing: any deck, any A limit, either first mover."""

from __future__ import annotations

import random

from trinity_env.core import GameState, random_deck, random_hand, standard_deck


def random_start(rng: random.Random) -> GameState:
    """A new game with random decks (or the standard one), A limit, first mover and draft mode."""
    max_a_cards = rng.choice([0, 1, 2, 3, 3, 3, 4, 8])
    if rng.random() < 0.5:
        decks = [standard_deck()] * 2
        if max_a_cards == 0:
            max_a_cards = 1
    else:
        decks = [random_deck(rng, a_cards=rng.randint(0, 8), side_sum=rng.randint(14, 26)) for _ in range(2)]
    first = rng.randint(0, 1)
    if rng.random() < 0.5:
        return GameState.new_game(decks, max_a_cards=max_a_cards, first_player=first)
    hands = [random_hand(deck, max_a_cards, rng) for deck in decks]
    return GameState.new_game(decks, max_a_cards=max_a_cards, first_player=first, hands=hands)


def random_game(rng: random.Random) -> list[GameState]:
    """Every state of one game played with uniformly random legal actions."""
    state = random_start(rng)
    states = [state]
    while not state.is_over:
        state = state.apply(rng.choice(state.legal_actions()))
        states.append(state)
    return states


def random_positions(count: int, seed: int, most_moves: int, **config) -> list[GameState]:
    """``count`` positions not over, each a new game of ``config`` (``make_config``'s fields) after up to
    ``most_moves - 1`` uniformly random legal actions; seeded by ``seed`` alone."""
    from trinity_env.spec.config import make_config

    env = make_config(config)
    rng = random.Random(seed)
    states: list[GameState] = []
    while len(states) < count:
        state = env.new_game(rng)
        for _ in range(rng.randrange(0, most_moves)):
            if state.is_over:
                break
            state = state.apply(rng.choice(state.legal_actions()))
        if not state.is_over:
            states.append(state)
    return states
