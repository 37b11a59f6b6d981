"""The replay format: a whole game in one JSON document."""

from __future__ import annotations

import json
import random

import pytest

from trinity_env.core import GameState, PositionError, Replay

from drawn import position


def _play(state: GameState, seed: int) -> list[GameState]:
    rng = random.Random(seed)
    states = [state]
    while not states[-1].is_over:
        states.append(states[-1].apply(rng.choice(states[-1].legal_actions())))
    return states


def test_a_drafted_game_replays_pick_by_pick(tmp_path):
    states = _play(GameState.new_game(first_player=1), seed=1)
    replay = Replay.from_states(states)
    data = replay.to_dict()
    assert data["rules"]["draft"] == "pick" and data["rules"]["first_player"] == 1
    assert [len(p) for p in data["picks"]] == [8, 8]
    assert len(data["moves"]) == sum(1 for s in states if s.last and s.last.tile is not None)
    path = tmp_path / "game.json"
    replay.save(path)
    loaded = Replay.load(path)
    assert loaded.states() == states
    assert [s.last for s in loaded.states()[1:]] == [s.last for s in states[1:]]


def test_dealt_hands_and_puzzle_positions_replay_too():
    dealt = _play(GameState.new_game(hands=[range(5, 13), range(3, 11)]), seed=2)
    assert Replay.from_dict(json.loads(Replay.from_states(dealt).to_json())).states() == dealt
    puzzle = GameState.from_dict(
        position(
            """
            w1111  .  .  .  .
            .      .  .  .  .
            .      .  .  .  b5555
            """,
            hands=(["2222", "3333"], ["4444", "6666"]),
        )
    )
    states = _play(puzzle, seed=3)
    replay = Replay.from_states(states)
    assert replay.to_dict()["rules"]["draft"] == "position"
    assert Replay.from_json(replay.to_json()).states() == states


def test_a_replay_that_does_not_reproduce_its_game_is_refused():
    states = _play(GameState.new_game(), seed=4)
    data = Replay.from_states(states).to_dict()
    tampered = json.loads(json.dumps(data))
    tampered["result"]["winner"] = 1 - tampered["result"]["winner"]
    with pytest.raises(PositionError, match="claims result"):
        Replay.from_dict(tampered).states()
    illegal = json.loads(json.dumps(data))
    illegal["moves"][1]["tile"] = illegal["moves"][0]["tile"]
    with pytest.raises(PositionError, match="move 1"):
        Replay.from_dict(illegal).states()
    wrong_player = json.loads(json.dumps(data))
    wrong_player["moves"][0]["player"] = 1 - wrong_player["moves"][0]["player"]
    with pytest.raises(PositionError, match="move 0 is by player"):
        Replay.from_dict(wrong_player).states()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"format": "chess"}', "not a replay"),
        ('{"format": "trinity-towers-replay", "version": 9}', "version"),
        ('{"format": "trinity-towers-replay", "version": 1, "rules": {"draft": "auction"}}', "rules.draft"),
        ('{"format": "trinity-towers-replay", "version": 1, "rules": {"draft": "pick"}}', "decks"),
    ],
)
def test_malformed_replays_say_what_is_wrong(text, message):
    with pytest.raises(PositionError, match=message):
        Replay.from_json(text)


def test_a_missing_replay_file_is_named(tmp_path):
    with pytest.raises(PositionError, match=r"nope\.json"):
        Replay.load(tmp_path / "nope.json")
