"""Every value type of the core survives pickle, copy and deepcopy unchanged.

Multiprocessing, Ray and OpenSpiel move positions between processes, and search code
copies states; ``Card``'s tuple base once made all three fail (``CardError`` on the side
values). ``GameState.last`` is left out of equality, so it is compared on its own.
"""

from __future__ import annotations

import copy
import pickle
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from trinity_env.core import Card, Phase, Replay, Termination, parse_card

from games import random_game


def _round_trips(value):
    return [pickle.loads(pickle.dumps(value, protocol)) for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1)] + [
        copy.copy(value),
        copy.deepcopy(value),
    ]


@given(st.text(alphabet="123456789A", min_size=4, max_size=4))
def test_cards_round_trip(notation):
    card = parse_card(notation)
    for again in _round_trips(card):
        assert again == card and isinstance(again, Card) and str(again) == notation


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_every_state_of_a_random_game_round_trips(seed):
    states = random_game(random.Random(seed))
    for state in states:
        for again in _round_trips(state):
            assert again == state
            assert again.last == state.last
            assert again.outcome == state.outcome
            assert again.legal_actions() == state.legal_actions()
    final = states[-1]
    assert isinstance(pickle.loads(pickle.dumps(final.outcome.termination)), Termination)
    assert pickle.loads(pickle.dumps(final.phase)) is Phase.OVER


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_replays_round_trip(seed):
    replay = Replay.from_states(random_game(random.Random(seed)))
    for again in _round_trips(replay):
        assert again.to_dict() == replay.to_dict()
        assert again.final_state() == replay.final_state()
