"""Whole games through the web API (``trinity serve`` through Starlette's TestClient): playing and watching to
the end, moves and their refusals, the agent thinking off the event loop, the game caches, resigning, reviewing a
game and the recent games."""

from __future__ import annotations

import random
import threading

import pytest

# web_client skips this module without Starlette
from web_client import TestClient, core_state, error, new_game, owner, play_out, small_client

from trinity_env.agents import Agent
from trinity_env.core import Replay
from trinity_env.web import games as web_games
from trinity_env.web import views as web_views
from trinity_env.web.app import create_app
from trinity_env.web.catalogue import AgentChoice
from trinity_env.web.store import GameStore

# ---------------------------------------------------------------------- games


def test_a_whole_game_with_the_draft_against_random(client):
    rng = random.Random(1)
    view = new_game(client, seat=0, first="you", draft="pick", open_hands=True, seed=11)
    assert view["mode"] == "play" and view["human"] == 0 and view["state"]["phase"] == "draft"
    assert [s["kind"] for s in view["seats"]] == ["human", "agent"]
    assert len(view["id"]) == 32 and int(view["id"], 16) >= 0
    seen_flips = []

    def check(view: dict) -> None:
        state = view["state"]
        them = state["players"][1]
        if state["phase"] == "draft":  # the opponent's picks are secret while the game goes on
            assert them["deck"] is None and them["hand"] is None and them["a_cards"] is None
            assert all(s["card"] is None for s in view["history"] if s["player"] == 1 and s["kind"] == "pick")
            if state["last"] and state["last"]["player"] == 1:
                assert state["last"]["card"] is None
        elif not state["outcome"]:  # open hands: both hands show once play starts
            assert them["hand"] is not None
        if state["last"] and state["last"]["kind"] == "place":
            seen_flips.append(state["last"]["captured"] + state["last"]["domino"])
        if not state["outcome"] and state["to_move"] == 0:  # the moves offered are exactly the legal ones
            assert {m["action"] for m in state["legal"]} == set(core_state(client, view).legal_actions())
        else:
            assert state["legal"] == []

    final = play_out(client, view, rng, check)
    outcome = final["state"]["outcome"]
    assert outcome["termination"] in ("lane_control", "full_board")
    assert sum(lane["points"][0] for lane in final["state"]["lanes"]) == outcome["scores"][0]
    assert sum(lane["points"][1] for lane in final["state"]["lanes"]) == outcome["scores"][1]
    assert final["replay_available"] and final["state"]["players"][1]["deck"] is not None  # revealed at the end
    assert all(step["card"] is not None for step in final["history"])

    download = client.get(f"/api/games/{final['id']}/replay")
    assert download.status_code == 200
    assert download.headers["content-disposition"].startswith("attachment; filename=")
    replay = Replay.from_json(download.text)
    states = replay.states()
    assert replay.rules["draft"] == "pick" and len(states) - 1 == final["ply"]
    assert states[-1].outcome.winner == outcome["winner"] and list(states[-1].scores) == outcome["scores"]
    flips = [list(s.last.captured + s.last.domino) for s in states[1:] if s.last.tile is not None]
    assert flips == seen_flips  # captures and domino flips reported as they happened


def test_who_places_first_and_the_seat():
    client = small_client()
    for first, seat, expected in (("you", 0, 0), ("you", 1, 1), ("opponent", 0, 1), ("opponent", 1, 0)):
        view = new_game(client, seat=seat, first=first, draft="dealt")
        assert view["human"] == seat and view["state"]["first_player"] == expected
    seats = {new_game(client, seed=s)["human"] for s in range(20)}
    assert seats == {0, 1}  # seat "random" (the default) takes both


def test_watch_two_agents_to_the_end(client):
    response = client.post("/api/games", json={"mode": "watch", "agents": ["greedy", "mcts:25"], "seed": 5})
    assert response.status_code == 201, response.text
    view = response.json()
    assert view["mode"] == "watch" and view["human"] is None and view["replay_available"]
    assert view["state"]["players"][1]["deck"] is not None  # a spectator sees both drafts
    while not view["state"]["outcome"]:
        assert view["agent_to_move"]
        view = client.post(f"/api/games/{view['id']}/advance", json={"ply": view["ply"]}).json()
    assert len(view["history"]) == view["ply"] and view["ply"] >= 16 + 8
    assert Replay.from_json(client.get(f"/api/games/{view['id']}/replay").text).final_state().is_over
    done = client.post(f"/api/games/{view['id']}/advance", json={"ply": view["ply"]}).json()
    assert done["moved"] is False and done["ply"] == view["ply"]


def test_advance_is_idempotent_for_one_ply_and_a_reload_loses_nothing(client):
    view = new_game(client, seat=1, first="you", draft="pick")  # the draft starts with seat 0: the agent
    first = client.post(f"/api/games/{view['id']}/advance", json={"ply": 0}).json()
    again = client.post(f"/api/games/{view['id']}/advance", json={"ply": 0}).json()
    assert first["moved"] is True and again["moved"] is False and again["ply"] == 1
    reloaded = client.get(f"/api/games/{view['id']}").json()
    assert reloaded["ply"] == 1 and reloaded["state"] == first["state"]


def test_an_agent_thinks_off_the_event_loop(monkeypatch):
    release, started = threading.Event(), threading.Event()

    class Slow(Agent):
        def act(self, observation, state=None):
            started.set()
            release.wait(10)
            return int(observation["action_mask"].nonzero()[0][0])

    real_make = web_games.make
    monkeypatch.setattr(web_games, "make", lambda spec: Slow() if spec == "slow" else real_make(spec))
    store = GameStore({"slow": AgentChoice("slow", "slow", "Slow", "baseline")})
    with TestClient(create_app(store)) as client:
        view = new_game(client, opponent="slow", seat=1, first="you")
        results = []
        worker = threading.Thread(
            target=lambda: results.append(client.post(f"/api/games/{view['id']}/advance", json={"ply": 0}))
        )
        worker.start()
        try:
            assert started.wait(10)
            during = client.get(f"/api/games/{view['id']}").json()  # answered while the agent thinks
            other = client.get("/api/agents")
            busy = client.post(f"/api/games/{view['id']}/move", json={"action": 0, "ply": 0})
        finally:
            release.set()
            worker.join(10)
        assert during["thinking"] is True and during["ply"] == 0 and other.status_code == 200
        assert "thinking" in error(busy, 409)
        assert results[0].status_code == 200 and results[0].json()["ply"] == 1


def test_games_are_kept_in_an_lru_with_a_cap():
    client = small_client(max_games=3)
    ids = [new_game(client)["id"] for _ in range(3)]
    assert client.get(f"/api/games/{ids[0]}").status_code == 200  # used: now the most recent
    fourth = new_game(client)["id"]
    assert client.get(f"/api/games/{ids[1]}").status_code == 404  # the least recently used went
    for kept in (ids[0], ids[2], fourth):
        assert client.get(f"/api/games/{kept}").status_code == 200
    assert len({*ids, fourth}) == 4


def test_finished_games_drop_their_agents(client):
    view = new_game(client, opponent="mcts:25", draft="dealt")
    final = play_out(client, view, random.Random(0))
    game = client.app.app.state.store.game(final["id"], owner(client))
    assert game._agents == [None, None]


def test_only_a_few_games_keep_their_agents_built():
    client = small_client(max_live_agents=1)
    store = client.app.app.state.store
    first, second = (new_game(client, opponent="mcts:25", seat=1, first="opponent", draft="dealt") for _ in range(2))
    client.post(f"/api/games/{first['id']}/advance", json={"ply": 0})
    assert store.game(first["id"], owner(client))._agents[0] is not None
    client.post(f"/api/games/{second['id']}/advance", json={"ply": 0})
    assert (
        store.game(first["id"], owner(client))._agents == [None, None]
        and store.game(second["id"], owner(client))._agents[0] is not None
    )
    final = play_out(client, client.get(f"/api/games/{first['id']}").json(), random.Random(3))  # rebuilt on demand
    assert final["state"]["outcome"] is not None


# ---------------------------------------------------------------------- moves refused


def test_bad_moves_are_refused_with_409_or_422(client):
    view = new_game(client, seat=0, first="you", draft="pick")
    url = f"/api/games/{view['id']}/move"
    legal = {m["action"] for m in view["state"]["legal"]}
    illegal = next(a for a in range(256) if a not in legal)
    assert "not a legal move" in error(client.post(url, json={"action": illegal, "ply": 0}), 422)
    assert "move 0, not 3" in error(client.post(url, json={"action": min(legal), "ply": 3}), 409)
    view = client.post(url, json={"action": min(legal), "ply": 0}).json()
    assert "not your turn" in error(client.post(url, json={"action": 1, "ply": 1}), 409)
    watch = client.post("/api/games", json={"mode": "watch", "agents": ["random", "random"]}).json()
    assert "two agents" in error(client.post(f"/api/games/{watch['id']}/move", json={"action": 0, "ply": 0}), 409)
    done = play_out(client, new_game(client, draft="dealt"), random.Random(4))
    assert "over" in error(client.post(f"/api/games/{done['id']}/move", json={"action": 16, "ply": done["ply"]}), 409)


def test_a_running_game_has_no_replay_yet(client):
    view = new_game(client)
    assert "when the game is over" in error(client.get(f"/api/games/{view['id']}/replay"), 409)


# ---------------------------------------------------------------------- resigning, reviewing, recents


def test_resigning_ends_the_game_for_the_agent_and_it_can_be_reviewed(client):
    view = new_game(client, seat=1, first="you", draft="dealt", open_hands=False, seed=9)
    move = view["state"]["legal"][0]["action"]
    view = client.post(f"/api/games/{view['id']}/move", json={"action": move, "ply": 0}).json()
    view = client.post(f"/api/games/{view['id']}/advance", json={"ply": 1}).json()
    assert "the review is ready when" in error(client.post(f"/api/games/{view['id']}/review", json={}), 409)
    resigned = client.post(f"/api/games/{view['id']}/resign", json={}).json()
    outcome = resigned["state"]["outcome"]
    assert outcome["termination"] == "resignation" and outcome["winner"] == 0 and outcome["resigned"] == 1
    assert outcome["scores"] == list(web_games.lane_scores(core_state(client, view).owners))
    assert resigned["resigned"] == 1 and resigned["state"]["to_move"] is None and resigned["state"]["legal"] == []
    assert resigned["replay_available"] and not resigned["agent_to_move"]
    assert resigned["state"]["players"][0]["hand"] is not None  # hidden hands show once the game is over
    assert "over" in error(client.post(f"/api/games/{view['id']}/move", json={"action": move, "ply": 2}), 409)
    assert "over" in error(client.post(f"/api/games/{view['id']}/resign", json={}), 409)
    assert client.post(f"/api/games/{view['id']}/advance", json={"ply": 2}).json()["moved"] is False
    assert client.get(f"/api/games/{view['id']}").json()["state"]["outcome"] == outcome

    review = client.post(f"/api/games/{view['id']}/review", json={})
    assert review.status_code == 201, review.text
    upload = review.json()
    assert upload["plies"] == 2 and len(upload["frames"]) == 3
    again = client.post(f"/api/games/{view['id']}/review", json={})
    assert again.status_code == 200 and again.json()["id"] == upload["id"]  # the same replay, not a new one
    assert client.get(f"/api/replays/{upload['id']}").json()["frames"] == upload["frames"]


def test_reviewing_a_finished_game_opens_it_as_a_replay(client):
    final = play_out(client, new_game(client, seat=0, first="you", draft="pick", seed=2), random.Random(2))
    review = client.post(f"/api/games/{final['id']}/review", json={})
    assert review.status_code == 201, review.text
    upload = review.json()
    states = Replay.from_json(client.get(f"/api/games/{final['id']}/replay").text).states()
    assert upload["plies"] == final["ply"] == len(states) - 1
    assert upload["frames"][-1]["outcome"] == final["state"]["outcome"]
    assert upload["frames"] == [web_views.state_json(s) for s in states]


def test_resigning_during_the_draft_leaves_nothing_to_replay(client):
    view = new_game(client, seat=0, first="you", draft="pick")
    view = client.post(f"/api/games/{view['id']}/resign", json={}).json()
    assert view["state"]["outcome"]["termination"] == "resignation" and not view["replay_available"]
    assert "resigned during the draft" in error(client.get(f"/api/games/{view['id']}/replay"), 409)
    error(client.post(f"/api/games/{view['id']}/review", json={}), 409)
    watch = client.post("/api/games", json={"mode": "watch", "agents": ["random", "random"]}).json()
    assert "two agents" in error(client.post(f"/api/games/{watch['id']}/resign", json={}), 409)
    assert "still in the draft" in error(client.post(f"/api/games/{watch['id']}/review", json={}), 409)


@pytest.mark.parametrize("route", ["resign", "review"])
@pytest.mark.parametrize(
    ("content", "status", "words"),
    [
        ('{"ply": 0}', 400, "unknown field 'ply'"),
        ("[]", 400, "must be a JSON object, got an array"),
        ("null", 400, "must be a JSON object, got null"),
        ("{", 400, "not valid JSON"),
        ('{"a": 1, "a": 2}', 400, "repeats the field"),
    ],
)
def test_resign_and_review_take_an_empty_object(client, route, content, status, words):
    view = new_game(client, seat=0, first="you", draft="dealt")
    response = client.post(
        f"/api/games/{view['id']}/{route}", content=content, headers={"content-type": "application/json"}
    )
    assert words in error(response, status)
    assert "Content-Type" in error(client.post(f"/api/games/{view['id']}/{route}", content=b"{}"), 415)
    assert client.get(f"/api/games/{view['id']}").json()["state"]["outcome"] is None  # nothing happened


def test_recent_games_lists_this_browsers_games_most_recent_first(client):
    first = new_game(client, seat=0, first="you", draft="dealt", seed=1)
    second = new_game(client, seat=1, first="you", draft="pick", seed=2)
    watch = client.post("/api/games", json={"mode": "watch", "agents": ["random", "greedy"]}).json()
    move = first["state"]["legal"][0]["action"]
    client.post(f"/api/games/{first['id']}/move", json={"action": move, "ply": 0})
    games = client.get("/api/games").json()["games"]
    assert [g["id"] for g in games] == [first["id"], watch["id"], second["id"]]
    top = games[0]
    assert top["mode"] == "play" and top["human"] == 0 and top["ply"] == 1 and top["phase"] == "play"
    assert top["seats"] == [None, "random"] and top["outcome"] is None
    assert top["rules"] == {"draft": "dealt", "open_hands": True} and top["updated"] >= top["created"]
    assert games[1]["mode"] == "watch" and games[1]["seats"] == ["random", "greedy"]
    assert [g["id"] for g in client.get("/api/games").json()["games"]] == [g["id"] for g in games]  # reading is not use
    client.post(f"/api/games/{second['id']}/resign", json={})
    again = client.get("/api/games").json()["games"]
    assert again[0]["id"] == second["id"] and again[0]["phase"] == "over"
    assert again[0]["outcome"]["termination"] == "resignation" and again[0]["outcome"]["winner"] == 0
    assert TestClient(client.app).get("/api/games").json() == {"games": []}  # another browser has none
