"""The position JSON format (docs/rules.md), loading, saving and its errors."""

from __future__ import annotations

import copy
import json

import pytest

from trinity_env.core import GameState, IllegalMoveError, PositionError

from drawn import EXAMPLE, position


def test_the_rules_example_round_trips_exactly():
    state = GameState.from_dict(EXAMPLE)
    assert state.to_dict() == EXAMPLE
    assert json.loads(json.dumps(state.to_dict())) == EXAMPLE
    assert GameState.from_dict(json.loads(json.dumps(EXAMPLE))) == state


def test_play_leaves_the_state_unchanged_and_returns_the_next_one():
    state = GameState.from_dict(EXAMPLE)
    before = copy.deepcopy(state.to_dict())
    after = state.play("3333", 2)
    assert state.to_dict() == before
    data = after.to_dict()
    assert data["to_move"] == 1
    assert data["board"][0][2] == {"card": "3333", "owner": 0}
    assert data["hands"] == [["7A24"], ["9999", "1A1A"]]
    assert "winner" not in data and "scores" not in data


def test_play_accepts_lower_case_a():
    after = GameState.from_dict(EXAMPLE).play("7a24", 0)
    assert after.to_dict()["board"][0][0] == {"card": "7A24", "owner": 0}


def test_a_finished_position_carries_winner_and_scores():
    s = GameState.from_dict(
        position(
            """
            w1111  w1111  w1111  w1111  .
            .      .      .      .      .
            .      .      .      .      .
            """,
            hands=(["2222"], ["3333"]),
        )
    ).play("2222", 4)
    data = s.to_dict()
    assert data["phase"] == "over" and data["winner"] == 0 and data["scores"] == [5, 0]
    assert GameState.from_dict(data).to_dict() == data


def test_an_over_position_loads_with_its_result_and_refuses_moves():
    data = {
        "phase": "over",
        "to_move": 1,
        "board": EXAMPLE["board"],
        "hands": [[], []],
        "max_a_cards": 3,
        "winner": None,
        "scores": [1, 1],
    }
    s = GameState.from_dict(data)
    assert s.is_over and s.winner is None and s.to_dict() == data
    with pytest.raises(IllegalMoveError, match="over"):
        s.play("7A24", 0)


@pytest.mark.parametrize(
    ("card", "tile", "message"),
    [
        ("7A2", 0, "7A2"),
        ("0123", 0, "0123"),
        ("7A24", 1, "occupied"),
        ("7A24", 15, "15"),
        ("7A24", -1, "-1"),
        ("7A24", "3", "'3'"),
        ("7A24", 2.0, "2.0"),
        ("7A24", True, "True"),
        ("9999", 0, "not in player 0's hand"),
        ("1234", 0, "not in player 0's hand"),
    ],
)
def test_every_bad_play_is_a_ValueError_saying_what_is_wrong(card, tile, message):
    state = GameState.from_dict(EXAMPLE)
    with pytest.raises(ValueError) as err:
        state.play(card, tile)
    assert message in str(err.value)
    assert state.to_dict() == EXAMPLE


def _broken(**changes):
    data = copy.deepcopy(EXAMPLE)
    for key, value in changes.items():
        if value is KeyError:
            del data[key]
        else:
            data[key] = value
    return data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("not a dict", "JSON object"),
        (_broken(phase="draft"), "unknown phase"),
        (_broken(phase="setup"), "unknown phase"),
        (_broken(phase=KeyError), "phase"),
        (_broken(board=KeyError), "board"),
        (_broken(hands=KeyError), "hands"),
        (_broken(to_move=KeyError), "to_move"),
        (_broken(to_move=2), "to_move"),
        (_broken(board=EXAMPLE["board"][:2]), "3 lanes"),
        (_broken(board=[[None] * 5, [None] * 6, [None] * 5]), "lane 1"),
        (_broken(board=[[None] * 5, [None] * 5, "xxxxx"]), "lane 2"),
        (_broken(board=[[{"card": "5A3", "owner": 0}] + [None] * 4, [None] * 5, [None] * 5]), "5A3"),
        (_broken(board=[[{"card": "5A32", "owner": 2}] + [None] * 4, [None] * 5, [None] * 5]), "owner"),
        (_broken(board=[[{"card": "5A32"}] + [None] * 4, [None] * 5, [None] * 5]), "lane 0 position 0"),
        (_broken(board=[[None, None, 7, None, None], [None] * 5, [None] * 5]), "position 2"),
        (_broken(hands=[["7A24"]]), "hands"),
        (_broken(hands=[["7A24"], ["B999"]]), "B999"),
        (_broken(hands=[["7A24"], "9999"]), "hands[1]"),
        (_broken(max_a_cards=-1), "max_a_cards"),
        (_broken(winner=0), "winner"),
        (_broken(colour="white"), "colour"),
        (_broken(phase="over", winner=3), "winner"),
        (_broken(phase="over", scores=[1]), "scores"),
    ],
)
def test_malformed_positions_are_refused_with_a_ValueError_that_says_why(data, message):
    with pytest.raises(PositionError) as err:
        GameState.from_dict(data)
    assert isinstance(err.value, ValueError)
    assert message in str(err.value)


def test_positions_need_not_match_real_card_counts():
    data = copy.deepcopy(EXAMPLE)
    data["hands"] = [["AAAA"] * 5, []]
    s = GameState.from_dict(data)
    assert len(s.hand(0)) == 5 and s.to_dict() == data


def test_a_play_position_whose_board_is_already_won_loads_as_over():
    data = position(
        """
        b1111  b1111  b1111  b1111  b1111
        .      .      .      .      .
        .      .      .      .      .
        """,
        hands=(["2222"], ["3333"]),
    )
    s = GameState.from_dict(data)
    assert s.is_over and s.winner == 1 and s.outcome.lane == 0


def test_a_draft_state_has_no_position_format():
    with pytest.raises(PositionError, match="Replay"):
        GameState.new_game().to_dict()


def test_repr_pastes_back_into_python():
    state = GameState.from_dict(EXAMPLE)
    assert eval(repr(state), {"GameState": GameState}) == state
