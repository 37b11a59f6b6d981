"""Integers are integers: no input path coerces a float, a bool or a string into a move.

Each case here reproduced a bug: ``raw_env.step(3.7)`` played action 3, ``FastGames.step``
left a game unmoved for ``-1`` or ``NaN``, ``"owner": 1.0`` loaded and was written back as
``1.0``, a finished position's made-up scores were shown as real, a UTF-8 BOM was "not
valid JSON", and hostile JSON escaped as a RecursionError or a bare ValueError.
"""

from __future__ import annotations

import copy
from collections import Counter

import numpy as np
import pytest

import trinity_env
from trinity_env.core import (
    RANDOM_DECK_A_CARDS,
    RANDOM_DECK_SIDE_SUM,
    GameState,
    IllegalMoveError,
    PositionError,
    decode_action,
    validate_deck,
)
from trinity_env.core.files import parse_json, read_json
from trinity_env.envs.single_agent import TrinityTowersEnv
from trinity_env.fast.decks import random_deck_batch
from trinity_env.fast.games import FastGames

from drawn import EXAMPLE

NOT_INTEGERS = [3.7, 3.0, "3", True, np.True_, np.float64(3.0), None, [3]]


@pytest.mark.parametrize("action", NOT_INTEGERS, ids=repr)
def test_the_core_refuses_actions_that_are_not_integers(action):
    with pytest.raises(IllegalMoveError, match="integer"):
        decode_action(action)
    state = GameState.new_game()
    with pytest.raises(IllegalMoveError):
        state.apply(action)


def test_numpy_integers_are_integers():
    state = GameState.new_game()
    assert state.apply(np.int64(3)) == state.apply(3) == state.apply(np.array(3))


@pytest.mark.parametrize("action", [3.7, "3", True, np.True_], ids=repr)
def test_raw_env_refuses_non_integer_actions_and_moves_nothing(action):
    env = trinity_env.raw_env()
    env.reset(seed=0)
    before = env.game_state
    with pytest.raises(IllegalMoveError, match="integer"):
        env.step(action)
    assert env.game_state is before


@pytest.mark.parametrize("action", [True, 3.7, "3"], ids=repr)
def test_wrapped_env_names_a_non_integer_action(action):
    env = trinity_env.env()
    env.reset(seed=0)
    with pytest.raises(IllegalMoveError, match="integer"):
        env.step(action)


def test_stepping_after_every_agent_left_says_to_reset():
    env = trinity_env.raw_env()
    env.reset(seed=1)
    for _agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else int(np.flatnonzero(observation["action_mask"])[0]))
    assert not env.agents
    with pytest.raises(IllegalMoveError, match="reset"):
        env.step(0)


def test_single_agent_env_refuses_non_integer_actions():
    env = TrinityTowersEnv(opponent="random")
    env.reset(seed=0)
    with pytest.raises(IllegalMoveError, match="integer"):
        env.step(3.7)
    legal = int(np.flatnonzero(env.action_masks())[0])
    env.step(np.int64(legal))  # SB3 passes numpy integers


@pytest.mark.parametrize(
    "actions",
    [[-1, 0], [np.nan, 0], [np.inf, 0], [3.0, 3.0], [999, 0], [True, False]],
    ids=["minus-one", "nan", "inf", "float", "999", "bool"],
)
def test_fast_games_refuse_bad_actions_and_move_nothing(actions):
    games = FastGames(2, seed=0)
    before = [games.state(b) for b in range(2)]
    with pytest.raises((IllegalMoveError, ValueError)):
        games.step(np.array(actions))
    assert [games.state(b) for b in range(2)] == before


@pytest.mark.parametrize("rows", [[-1], [2], [0, 0], [0.0]], ids=["minus-one", "past-the-end", "repeated", "float"])
def test_fast_games_refuse_bad_game_indices(rows):
    games = FastGames(2, seed=0)
    before = [games.state(b) for b in range(2)]
    actions = games.random_actions(np.zeros(len(rows), np.int64))
    with pytest.raises(ValueError, match="games"):
        games.step(actions, games=np.array(rows))
    assert [games.state(b) for b in range(2)] == before


def _with(**changes):
    data = copy.deepcopy(EXAMPLE)
    data.update(changes)
    return data


def _board_with_owner(owner):
    data = copy.deepcopy(EXAMPLE)
    data["board"][0][1]["owner"] = owner
    return data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_with(to_move=1.0), "to_move"),
        (_with(to_move=True), "to_move"),
        (_with(to_move="0"), "to_move"),
        (_board_with_owner(1.0), "owner"),
        (_board_with_owner(True), "owner"),
        (_with(max_a_cards=3.0), "max_a_cards"),
        (_with(to_move=10**5000), "to_move"),
    ],
    ids=["to_move-float", "to_move-bool", "to_move-str", "owner-float", "owner-bool", "max_a-float", "huge-int"],
)
def test_positions_refuse_integers_that_are_not(data, message):
    with pytest.raises(PositionError, match=message):
        GameState.from_dict(data)


FINISHED = {
    "phase": "over",
    "to_move": 1,
    "board": [
        [{"card": "1111", "owner": 0}] * 5,
        [{"card": "1111", "owner": 1}] * 3 + [None] * 2,
        [None] * 5,
    ],
    "hands": [[], ["2222"]],
    "max_a_cards": 3,
}


def test_a_finished_position_loads_with_the_result_its_board_shows():
    state = GameState.from_dict(FINISHED | {"winner": 0, "scores": [5, 3]})
    assert state.winner == 0 and state.scores == (5, 3)
    assert state.to_dict()["scores"] == [5, 3]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"scores": [100, 200]}, "do not match"),
        ({"winner": 1}, "does not match"),
        ({"winner": 0.0}, "winner"),
        ({"scores": [5.0, 3]}, "scores"),
    ],
)
def test_a_finished_position_cannot_claim_another_result(extra, message):
    with pytest.raises(PositionError, match=message):
        GameState.from_dict(FINISHED | extra)


def test_over_is_refused_for_a_game_that_goes_on():
    with pytest.raises(PositionError, match="not"):
        GameState.from_dict(_with(phase="over"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"\xff\xfe{}", "UTF-8"),
        ("[" * 100_000 + "]" * 100_000, "nested"),
        ('{"to_move": ' + "9" * 5000 + "}", "too long"),
        ('{"to_move": NaN}', "NaN"),
        ("{", "valid JSON"),
    ],
    ids=["not-utf8", "deep", "5000-digits", "nan", "truncated"],
)
def test_hostile_json_is_one_position_error(text, message):
    with pytest.raises(PositionError, match=message):
        parse_json(text, error=PositionError)


def test_a_byte_order_mark_is_accepted(tmp_path):
    import json

    path = tmp_path / "position.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(EXAMPLE).encode())
    assert GameState.from_dict(read_json(path)).to_dict() == EXAMPLE


def test_random_decks_from_the_fast_dealer_follow_the_deck_rule():
    decks = random_deck_batch(np.random.default_rng(0), 2000)
    assert decks.shape == (2000, 16, 4) and decks.dtype == np.int8
    assert (decks.sum(-1) == RANDOM_DECK_SIDE_SUM).all()
    assert ((decks == 10).any(-1).sum(-1) == RANDOM_DECK_A_CARDS).all()
    for deck in decks[:200]:
        cards = ["".join("A" if v == 10 else str(v) for v in card) for card in deck]
        assert len(set(cards)) == 16
        validate_deck(cards)
    # every card of the pools is dealt, at roughly its share, in every deck slot
    slot = Counter(tuple(card) for card in decks[:, 0])
    assert len(slot) > 300


def test_fast_games_deal_a_fresh_random_deck_to_each_seat():
    games = FastGames(64, seed=3, config="random_decks")
    decks = games.batch.decks
    assert (decks.sum(-1) == RANDOM_DECK_SIDE_SUM).all()
    assert len({decks[b, p].tobytes() for b in range(64) for p in range(2)}) == 128
    again = FastGames(64, seed=3, config="random_decks")
    assert np.array_equal(again.batch.decks, decks)
