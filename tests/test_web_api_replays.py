"""Replays through the web API (``trinity serve`` through Starlette's TestClient): one uploaded, stepped
through and reviewed with the exact solver, and every replay that is not a true record of a game refused."""

from __future__ import annotations

import json

import pytest

# web_client skips this module without Starlette
from web_client import error, finished_replay

from trinity_env.core import Move
from trinity_env.search.solver import Solver
from trinity_env.web import replays as web_replays

# ---------------------------------------------------------------------- replays and their review


@pytest.mark.parametrize(
    "agents, names",
    [
        (["level:2", "human"], ["Level 2 \u2014 ", "Human"]),
        (["greedy", "mcts:400"], ["Greedy", "Search 400"]),
        (["onnx:policy.onnx", "human"], ["onnx:policy.onnx", "Human"]),
        (None, None),
    ],
)
def test_a_replay_names_its_players_as_play_and_watch_do(agents, names):
    """The Replay page said ``level:2`` and ``human`` where Play and Watch say the list's plain names (issue 51)."""
    from starlette.testclient import TestClient

    from trinity_env.core import Replay
    from trinity_env.web.app import create_app
    from trinity_env.web.store import GameStore

    client = TestClient(create_app(GameStore()))  # the default list of agents

    replay = Replay.from_states(finished_replay(seed=2).states(), agents=agents)
    view = client.post("/api/replays", content=replay.to_json(), headers={"content-type": "application/json"}).json()
    assert view["agents"] == agents
    if names is None:
        assert view["names"] is None
    else:
        assert len(view["names"]) == 2 and all(n.startswith(e) for n, e in zip(view["names"], names, strict=True))


def test_upload_a_replay_step_through_it_and_review_it(client):
    replay = finished_replay(seed=2)
    states = replay.states()
    response = client.post("/api/replays", content=replay.to_json(), headers={"content-type": "application/json"})
    assert response.status_code == 201, response.text
    view = response.json()
    assert view["plies"] == len(states) - 1 and len(view["frames"]) == len(states)
    for frame, state in zip(view["frames"], states):
        assert [None if t is None else (t["card"], t["owner"]) for t in frame["board"]] == [
            None if c is None else (c.notation, o) for c, o in zip(state.cards, state.owners)
        ]
    assert view["frames"][-1]["outcome"]["winner"] == states[-1].winner
    assert client.get(f"/api/replays/{view['id']}").json()["frames"] == view["frames"]

    reviewable = [k for k, ok in enumerate(view["reviewable"]) if ok]
    assert reviewable and all(len(states[k].empty_tiles()) <= web_replays.REVIEW_MAX_EMPTY for k in reviewable)
    k = next(k for k in reviewable if len(states[k].empty_tiles()) <= 7)  # a few thousand nodes: quick
    review = client.get(f"/api/replays/{view['id']}/review/{k}").json()
    solution = Solver().solve(states[k])
    assert review["available"], review
    assert review["value"] == solution.value and review["to_move"] == states[k].to_move
    assert sorted(Move(m["card"], m["tile"]) for m in review["best_moves"]) == sorted(solution.best_moves)
    played = states[k + 1].last
    assert review["played"] == {"card": played.card.notation, "tile": played.tile}
    assert review["played_best"] == (Move(played.card, played.tile) in solution.best_moves)
    assert client.get(f"/api/replays/{view['id']}/review/{k}").json() == review  # kept

    early = client.get(f"/api/replays/{view['id']}/review/0").json()
    assert early["available"] is False and early["reason"]
    assert "ply must be 0-" in error(client.get(f"/api/replays/{view['id']}/review/{len(states)}"), 422)
    assert "ply must be a whole number" in error(client.get(f"/api/replays/{view['id']}/review/-1"), 400)
    assert "ply must be a whole number" in error(client.get(f"/api/replays/{view['id']}/review/1e3"), 400)
    assert "no replay" in error(client.get(f"/api/replays/{'f' * 32}/review/1"), 404)


@pytest.mark.parametrize(
    ("document", "status", "words"),
    [
        ([], 400, "a replay is a JSON object"),
        ({"format": "something-else"}, 422, "not a replay"),
        ({"format": "trinity-towers-replay", "version": 9}, 422, "unsupported replay version"),
        ({"format": "trinity-towers-replay", "version": 1, "rules": {"draft": "pick"}}, 422, "missing the 'decks'"),
    ],
)
def test_bad_replays_are_refused(client, document, status, words):
    response = client.post("/api/replays", json=document)
    assert words in error(response, status)


def test_a_replay_with_an_illegal_move_or_a_false_result_is_refused(client):
    data = finished_replay(seed=5).to_dict()
    moved = json.loads(json.dumps(data))
    moved["moves"][1]["tile"] = moved["moves"][0]["tile"]  # onto an occupied tile
    assert "illegal" in error(client.post("/api/replays", json=moved), 422)
    lied = json.loads(json.dumps(data))
    lied["result"]["winner"] = 1 - lied["result"]["winner"]
    assert "claims result" in error(client.post("/api/replays", json=lied), 422)
    strange = json.loads(json.dumps(data))
    strange["moves"][0] = {"player": "0", "card": 7, "tile": "x"}
    assert "not a valid replay" in error(client.post("/api/replays", json=strange), 422)


@pytest.mark.parametrize("value", ["no", 1, 0, None])
def test_a_replay_whose_open_hands_is_not_a_boolean_is_refused(client, value):
    data = finished_replay(seed=3).to_dict()
    data["rules"]["open_hands"] = value
    assert "open_hands" in error(client.post("/api/replays", json=data), 422)
