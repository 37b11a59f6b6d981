"""The web app's JSON API (``trinity serve``) through Starlette's TestClient: whole games, what a
seat may see, replays and their review, and every bad request refused with a clear 4xx."""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import json
import random
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("starlette")
if importlib.util.find_spec("httpx2") is None and importlib.util.find_spec("httpx") is None:
    pytest.skip("starlette's TestClient needs httpx2 (or httpx): install the dev extra", allow_module_level=True)

from starlette.testclient import TestClient

from trinity_env.agents import Agent, shipped
from trinity_env.cli import main
from trinity_env.core import GameState, Replay
from trinity_env.search.solver import Solver
from trinity_env.web import catalogue as web_catalogue
from trinity_env.web import games as web_games
from trinity_env.web import replays as web_replays
from trinity_env.web import store as web_store
from trinity_env.web import views as web_views
from trinity_env.web.app import STATIC, create_app
from trinity_env.web.catalogue import LADDER, AgentChoice, catalog
from trinity_env.web.guard import COOKIE
from trinity_env.web.schema import MAX_BODY, MAX_REPLAY_BODY
from trinity_env.web.store import GameStore
from trinity_env.web.warmup import EngineWarmup, families_to_warm

SMALL = {
    "random": AgentChoice("random", "random", "Random", "baseline"),
    "greedy": AgentChoice("greedy", "greedy", "Greedy", "baseline"),
    "mcts:25": AgentChoice("mcts:25", "mcts:25", "MCTS 25", "search"),
}


def small_client(**store_options) -> TestClient:
    return TestClient(create_app(GameStore(dict(SMALL), **store_options)))


@pytest.fixture
def client() -> TestClient:
    return small_client()


def new_game(client: TestClient, **fields) -> dict:
    body = {"opponent": "random", "seed": 7} | fields
    response = client.post("/api/games", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def owner(client: TestClient) -> str:
    """The client token the server gave this TestClient (its cookie jar keeps it, as a browser does)."""
    return client.cookies[COOKIE]


def play_out(client: TestClient, view: dict, rng: random.Random, check=None) -> dict:
    """Play ``view``'s game to the end: the person's moves at random among the legal ones offered."""
    for _ in range(100):
        if check is not None:
            check(view)
        if view["state"]["outcome"]:
            return view
        if view["agent_to_move"]:
            response = client.post(f"/api/games/{view['id']}/advance", json={"ply": view["ply"]})
            assert response.status_code == 200, response.text
            assert response.json()["moved"] is True
        else:
            move = rng.choice(view["state"]["legal"])
            response = client.post(f"/api/games/{view['id']}/move", json={"action": move["action"], "ply": view["ply"]})
            assert response.status_code == 200, response.text
        view = response.json()
    raise AssertionError("the game did not end")


def error(response, status: int) -> str:
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json")
    message = response.json()["error"]
    assert isinstance(message, str) and message and "\n" not in message and "Traceback" not in message
    return message


# ---------------------------------------------------------------------- the agents on offer


def test_agents_lists_the_ladder_the_baselines_mcts_and_the_shipped_agents():
    choices = catalog()
    data = TestClient(create_app(GameStore(choices))).get("/api/agents").json()
    names = [a["name"] for a in data["agents"]]
    assert [n for n in names if n.startswith("level:")] == [f"level:{k}" for k in range(1, 9)]
    assert {a["name"]: a["spec"] for a in data["ladder"]} == {f"level:{k}": s for k, s in LADDER.items()}
    assert {"random", "greedy", "lookahead", "mcts:25", "mcts:100", "mcts:400", "mcts:1600"} <= set(names)
    if importlib.util.find_spec("torch") is not None:
        assert set(shipped()) <= set(names)  # ppo-standard, and az-standard once it ships
    assert data["default"] in names
    for agent in data["agents"]:  # names and specs are short words, never paths
        assert "/" not in agent["spec"] and "\\" not in agent["spec"] and not agent["spec"].endswith(".pt")
        assert agent["group"] in ("ladder", "baseline", "search", "trained")


def test_every_ladder_level_builds_and_plays_a_move():
    client = TestClient(create_app(GameStore({c.name: c for c in catalog().values() if c.group == "ladder"})))
    for level in range(1, 9):
        view = new_game(client, opponent=f"level:{level}", seat=1, first="opponent", draft="dealt")
        moved = client.post(f"/api/games/{view['id']}/advance", json={"ply": 0}).json()
        assert moved["moved"] is True and moved["ply"] == 1 and moved["state"]["last"]["kind"] == "place"


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
            assert {m["action"] for m in state["legal"]} == set(_core_state(client, view).legal_actions())
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


def _core_state(client: TestClient, view: dict) -> GameState:
    return client.app.app.state.store.game(view["id"], owner(client)).state


def test_hidden_hands_stay_hidden_until_the_end_and_dealt_hands_skip_the_draft(client):
    view = new_game(client, seat=1, first="you", draft="dealt", open_hands=False, seed=3)
    assert view["state"]["phase"] == "play" and view["state"]["to_move"] == 1 and view["rules"]["open_hands"] is False
    assert view["state"]["players"][0]["hand"] is None and view["state"]["players"][0]["hand_size"] == 8
    assert len(view["state"]["players"][1]["hand"]) == 8

    def check(view: dict) -> None:
        if not view["state"]["outcome"]:
            assert view["state"]["players"][0]["hand"] is None

    final = play_out(client, view, random.Random(2), check)
    assert final["state"]["players"][0]["hand"] is not None
    replay = Replay.from_json(client.get(f"/api/games/{final['id']}/replay").text)
    assert replay.rules["draft"] == "dealt" and replay.rules["open_hands"] is False


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
            begun = time.perf_counter()
            during = client.get(f"/api/games/{view['id']}").json()  # answered while the agent thinks
            other = client.get("/api/agents")
            busy = client.post(f"/api/games/{view['id']}/move", json={"action": 0, "ply": 0})
            assert time.perf_counter() - begun < 5
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


# ---------------------------------------------------------------------- bad requests


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


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"action": True, "ply": 0}, "action must be an integer 0-255, got a boolean"),
        ({"action": 1.0, "ply": 0}, "got a number with a fraction"),
        ({"action": "1", "ply": 0}, "got a string"),
        ({"action": None, "ply": 0}, "got null"),
        ({"action": -1, "ply": 0}, "got -1"),
        ({"action": 256, "ply": 0}, "got 256"),
        ({"action": 10**40, "ply": 0}, "action must be an integer 0-255"),
        ({"action": 1}, "missing field 'ply'"),
        ({"action": 1, "ply": 0, "extra": 1}, "unknown field 'extra'"),
        ({"action": 1, "ply": -2}, "ply must be an integer"),
        ([1, 0], "must be a JSON object, got an array"),
        ("move", "must be a JSON object, got a string"),
    ],
)
def test_move_bodies_are_checked_strictly(client, body, words):
    view = new_game(client)
    assert words in error(client.post(f"/api/games/{view['id']}/move", json=body), 400)


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"opponent": "nobody"}, "no agent named 'nobody'"),
        ({"opponent": "runs/quick/best.pt"}, "no agent named"),
        ({"opponent": "/etc/passwd"}, "no agent named"),
        ({"opponent": "mcts:999999"}, "no agent named"),
        ({"opponent": "ppo-standard"}, "no agent named"),  # not in this server's list
    ],
)
def test_agents_are_named_only_from_the_list(client, body, words, monkeypatch):
    built = []
    real_make = web_games.make
    monkeypatch.setattr(web_games, "make", lambda spec: built.append(spec) or real_make(spec))
    assert words in error(client.post("/api/games", json=body), 422)
    assert built == []  # nothing was built, no file was read


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({}, "missing field 'opponent'"),
        ({"opponent": 3}, "opponent must be an agent name"),
        ({"opponent": "random", "seat": 2}, 'seat must be one of 0, 1, "random", got 2'),
        ({"opponent": "random", "seat": True}, "got true"),
        ({"opponent": "random", "seat": "0"}, 'got "0"'),
        ({"opponent": "random", "first": "me"}, "first must be one of"),
        ({"opponent": "random", "draft": "fixed"}, "draft must be one of"),
        ({"opponent": "random", "open_hands": 1}, "open_hands must be one of true, false, got 1"),
        ({"opponent": "random", "seed": -1}, "seed must be an integer"),
        ({"opponent": "random", "seed": 2**31}, "seed must be an integer"),
        ({"opponent": "random", "agents": ["random", "random"]}, "unknown field 'agents'"),
        ({"opponent": "random", "first_player": 0}, "unknown field 'first_player'"),
        ({"mode": "watch", "agents": ["random"]}, "agents must be an array of two"),
        ({"mode": "watch", "agents": "random"}, "agents must be an array of two"),
        ({"mode": "watch", "agents": ["random", 1]}, "agents[1] must be an agent name"),
        ({"mode": "watch", "agents": ["random", "random"], "seat": 0}, "unknown field 'seat'"),
        ({"mode": "watch", "agents": ["random", "random"], "first_player": "you"}, "first_player must be one of"),
        ({"mode": "replay"}, "mode must be one of"),
        (None, "must be a JSON object, got null"),
    ],
)
def test_new_game_bodies_are_checked_strictly(client, body, words):
    response = client.post("/api/games", content=json.dumps(body), headers={"content-type": "application/json"})
    assert words in error(response, 400)


def test_bodies_that_are_not_small_utf8_json_objects(client):
    def post(content, content_type="application/json", url="/api/games"):
        return client.post(url, content=content, headers={"content-type": content_type})

    assert "Content-Type: application/json" in error(post(b'{"opponent": "random"}', "text/plain"), 415)
    assert "Content-Type" in error(post(b"opponent=random", "application/x-www-form-urlencoded"), 415)
    assert "not valid JSON" in error(post(b'{"opponent": '), 400)
    assert "not valid JSON" in error(post(b""), 400)
    assert "NaN is not a JSON number" in error(post(b'{"opponent": "random", "seed": NaN}'), 400)
    assert "repeats the field 'opponent'" in error(post(b'{"opponent": "random", "opponent": "greedy"}'), 400)
    assert "not UTF-8" in error(post(b'{"opponent": "\xff"}'), 400)
    assert "nested too deeply" in error(post(b"[" * 100_000 + b"]" * 100_000, url="/api/replays"), 400)
    assert f"over {MAX_BODY} bytes" in error(post(b'{"opponent": "' + b"x" * MAX_BODY + b'"}'), 413)
    assert f"over {MAX_REPLAY_BODY} bytes" in error(post(b" " * (MAX_REPLAY_BODY + 1), url="/api/replays"), 413)
    assert post(b'\xef\xbb\xbf{"opponent": "random"}').status_code == 201  # a BOM is fine


def test_unknown_games_routes_and_methods(client):
    assert "no game" in error(client.get("/api/games/" + "0" * 32), 404)
    assert "no game" in error(client.get("/api/games/not-an-id"), 404)
    error(client.post("/api/games/..%2F..%2Fetc/move", json={"action": 0, "ply": 0}), 404)
    error(client.get("/api/nothing"), 404)
    error(client.put("/api/games"), 405)
    error(client.delete("/api/agents"), 405)
    assert client.get("/nothing").status_code == 404
    assert client.get("/static/../games.py").status_code == 404


def test_a_running_game_has_no_replay_yet(client):
    view = new_game(client)
    assert "when the game is over" in error(client.get(f"/api/games/{view['id']}/replay"), 409)


# ---------------------------------------------------------------------- replays and their review


def _finished_replay(seed: int = 0, draft: str = "pick") -> Replay:
    from trinity_env.agents import make
    from trinity_env.evaluation.match import play_game
    from trinity_env.spec.config import make_config

    states = []
    config = make_config(draft=draft)
    play_game((make("greedy"), make("random")), config, seed, states.append)
    return Replay.from_states(states)


def test_upload_a_replay_step_through_it_and_review_it(client):
    replay = _finished_replay(seed=2)
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
    assert sorted((m["card"], m["tile"]) for m in review["best_moves"]) == sorted(solution.best_moves)
    played = states[k + 1].last
    assert review["played"] == {"card": played.card.notation, "tile": played.tile}
    assert review["played_best"] == ((played.card.notation, played.tile) in solution.best_moves)
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
    data = _finished_replay(seed=5).to_dict()
    moved = json.loads(json.dumps(data))
    moved["moves"][1]["tile"] = moved["moves"][0]["tile"]  # onto an occupied tile
    assert "illegal" in error(client.post("/api/replays", json=moved), 422)
    lied = json.loads(json.dumps(data))
    lied["result"]["winner"] = 1 - lied["result"]["winner"]
    assert "claims result" in error(client.post("/api/replays", json=lied), 422)
    strange = json.loads(json.dumps(data))
    strange["moves"][0] = {"player": "0", "card": 7, "tile": "x"}
    assert "not a valid replay" in error(client.post("/api/replays", json=strange), 422)


# ---------------------------------------------------------------------- pages, headers, hosts


def test_pages_and_static_files_are_served_with_security_headers(client):
    for path in ("/", "/play", "/watch", "/replay"):
        page = client.get(path)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "/static/app.js" in page.text
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assert page.headers["x-content-type-options"] == "nosniff"
    assert client.get("/static/app.js").status_code == 200
    assert client.get("/static/style.css").status_code == 200
    assert client.get("/api/agents").headers["cache-control"] == "no-store"


def test_the_pages_load_nothing_from_elsewhere():
    for path in STATIC.iterdir():
        text = path.read_text(encoding="utf-8")
        for scheme in ("http://", "https://", "//cdn", "@import"):
            assert scheme not in text.replace('xmlns="http://www.w3.org/2000/svg"', ""), (path.name, scheme)


def test_a_server_on_loopback_accepts_only_its_own_host_names():
    client = TestClient(create_app(GameStore(dict(SMALL)), allowed_hosts=["localhost", "127.0.0.1", "::1"]))
    for host in ("127.0.0.1:8000", "localhost:8000", "localhost", "[::1]:8000"):
        assert client.get("/api/agents", headers={"host": host}).status_code == 200, host
    for host in ("evil.example:8000", "evil.example", "127.0.0.1.evil.example"):
        assert client.get("/api/agents", headers={"host": host}).status_code == 400, host


# ---------------------------------------------------------------------- trinity serve


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["serve", "--port", "0"], "expected a whole number 1-65535, got '0'"),
        (["serve", "--port", "80.5"], "expected a whole number 1-65535"),
        (["serve", "--port", "65536"], "expected a whole number 1-65535"),
        (["serve", "--max-games", "0"], "expected a whole number >= 1"),
        (["serve", "--host", "192.0.2.1"], "cannot listen on 192.0.2.1:8000: "),  # an address not on this machine
    ],
)
def test_serve_refuses_bad_options_in_one_line(argv, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and err.startswith("trinity serve: ")


def test_serve_refuses_a_port_in_use(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"trinity serve: cannot listen on 127.0.0.1:{port}: " in err and err.count("\n") == 1


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_trinity_serve_answers_on_loopback_and_stops_on_ctrl_c():
    pytest.importorskip("uvicorn")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "trinity_env.cli", "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/agents", timeout=5) as response:
                    assert response.status == 200 and json.load(response)["agents"]
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, server.stderr.read()
                time.sleep(0.3)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/play", timeout=5) as response:
            assert b"Trinity Towers" in response.read()
        while True:  # the engine compiles in the background and says when it is done
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/engine", timeout=5) as response:
                engine = json.load(response)
            if engine["ready"]:
                break
            assert time.monotonic() < deadline + 120, engine
            time.sleep(0.3)
        assert engine["started"] and {f["name"] for f in engine["families"]} >= {"MCTS", "baselines", "exact solver"}
        assert all(f["state"] == "ready" for f in engine["families"]), engine
    finally:
        server.send_signal(2)  # Ctrl-C
        out, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    assert f"http://127.0.0.1:{port}/" in out
    assert "Traceback" not in err


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


# ---------------------------------------------------------------------- hardening: numbers, hosts, ids, owners


def raw_get(app, path: str, headers: list[tuple[bytes, bytes]]) -> tuple[int, dict[bytes, bytes], bytes]:
    """One GET straight through the ASGI app, headers exactly as given (duplicates, none at all)."""
    import anyio

    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    anyio.run(app, scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), body


HUGE = "9" * 5000  # past Python's int-digit limit (4300): int() raises ValueError


@pytest.mark.parametrize(
    ("url", "content"),
    [
        ("/api/games", '{"opponent": "random", "seed": ' + HUGE + "}"),
        ("/api/games", '{"opponent": "random", "seed": -' + HUGE + "}"),
        ("/api/games", '{"opponent": "random", "seed": 1' + "0" * 200 + "}"),  # under Python's limit, still absurd
        ("/api/replays", '{"format": "trinity-towers-replay", "version": 1, "moves": [{"tile": ' + HUGE + "}]}"),
        ("move", '{"action": ' + HUGE + ', "ply": 0}'),
    ],
)
def test_a_huge_integer_in_a_body_is_a_400_not_a_server_error(client, url, content):
    if url == "move":
        url = f"/api/games/{new_game(client)['id']}/move"
    response = client.post(url, content=content, headers={"content-type": "application/json"})
    assert "digits is too long" in error(response, 400)


def test_a_content_length_of_5000_digits_is_refused_not_a_server_error(client):
    headers = {"content-type": "application/json", "content-length": HUGE}
    response = client.post("/api/games", content=b"{}", headers=headers)
    assert f"over {MAX_BODY} bytes" in error(response, 413)


LOOPBACK = ["localhost", "127.0.0.1", "::1"]


@pytest.mark.parametrize(
    "host",
    [
        "localhost:8000@evil.com",  # userinfo: the name after '@' is the real one
        "[::1]:8000@evil.com",
        "[::1]evil.com",
        "localhost:8000 evil.com",
        " localhost:8000",
        "localhost:8000/evil",
        "localhost:80:80",
        "localhost:",
        "localhost:abc",
        "localhost:123456",
        "[::1",
        "[evil.com]:8000",
        "::1",  # an IPv6 literal must be bracketed
        "",
        "evil.example:8000",
        "127.0.0.1.evil.example",
        "localhost:9999",  # the right name, another port: not this server
        "[::1]:9999",
    ],
)
def test_a_host_header_that_is_not_exactly_an_allowed_host_and_port_is_a_400(host):
    app = create_app(GameStore(dict(SMALL)), allowed_hosts=LOOPBACK, port=8000)
    assert TestClient(app).get("/api/agents", headers={"host": host}).status_code == 400, host


@pytest.mark.parametrize(
    "host", ["localhost", "localhost:8000", "LocalHost:8000", "127.0.0.1:8000", "[::1]:8000", "[::1]", "[0:0::1]:8000"]
)
def test_the_allowed_hosts_with_the_servers_port_or_none_are_accepted(host):
    app = create_app(GameStore(dict(SMALL)), allowed_hosts=LOOPBACK, port=8000)
    assert TestClient(app).get("/api/agents", headers={"host": host}).status_code == 200, host


def test_a_missing_or_repeated_host_header_is_a_400():
    app = create_app(GameStore(dict(SMALL)), allowed_hosts=LOOPBACK, port=8000)
    assert raw_get(app, "/api/agents", [(b"host", b"localhost:8000")])[0] == 200
    assert raw_get(app, "/api/agents", [])[0] == 400
    assert raw_get(app, "/api/agents", [(b"host", b"localhost:8000"), (b"host", b"evil.com")])[0] == 400


def test_a_malformed_host_is_a_400_even_where_any_host_is_allowed():
    client = TestClient(create_app(GameStore(dict(SMALL))))  # as on a public address: any name, any port
    assert client.get("/api/agents", headers={"host": "some.name:8080"}).status_code == 200
    for host in ("some.name:8080@evil.com", "a b", "x:1:2"):
        assert client.get("/api/agents", headers={"host": host}).status_code == 400, host


@pytest.mark.parametrize("kind", ["games", "replays"])
@pytest.mark.parametrize("bad", ["a" * 60_000, "0" * 33, "0" * 31 + "G", '"><img src=x onerror=alert(1)>', "A" * 32])
def test_an_id_outside_the_id_format_is_a_404_that_does_not_echo_it(client, kind, bad):
    message = error(client.get(f"/api/{kind}/{bad}"), 404)
    assert bad not in message and len(message) < 200
    if kind == "games":
        message = error(client.post(f"/api/games/{bad}/move", json={"action": 0, "ply": 0}), 404)
    else:
        message = error(client.get(f"/api/replays/{bad}/review/0"), 404)
    assert bad not in message and len(message) < 200


def test_an_unknown_id_of_the_right_format_is_not_echoed_either(client):
    for kind in ("games", "replays"):
        assert "0123abcd" * 4 not in error(client.get(f"/api/{kind}/{'0123abcd' * 4}"), 404)


def test_the_api_gives_a_client_an_httponly_strict_cookie_once():
    client = small_client()
    page = client.get("/play")  # not on a page: a cross-site link to it does not send the cookie and would replace it
    assert page.status_code == 200 and "set-cookie" not in page.headers
    first = client.get("/api/agents")
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=") and "Path=/" in cookie
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert len(owner(client)) >= 43  # secrets.token_urlsafe(32)
    assert "set-cookie" not in client.get("/api/agents").headers  # it has one now
    for forged in ("forged", "!" * 43, "a" * 44):  # not the shape of a token of ours: replaced
        other = TestClient(client.app)
        other.cookies.set(COOKIE, forged)
        issued = other.get("/api/agents").headers["set-cookie"].split(";")[0]
        assert issued.startswith(f"{COOKIE}=") and issued != f"{COOKIE}={forged}", forged


def _upload(client: TestClient) -> dict:
    text = _finished_replay(seed=1).to_json()
    response = client.post("/api/replays", content=text, headers={"content-type": "application/json"})
    assert response.status_code == 201, response.text
    return response.json()


def test_another_clients_game_or_replay_is_a_404_like_an_unknown_one():
    app = create_app(GameStore(dict(SMALL)))
    alice, bob = TestClient(app), TestClient(app)
    game, upload = new_game(alice, seat=0, first="you", draft="dealt"), _upload(alice)
    move = game["state"]["legal"][0]["action"]
    unknown = error(bob.get(f"/api/games/{'0' * 32}"), 404)
    assert error(bob.get(f"/api/games/{game['id']}"), 404) == unknown
    error(bob.post(f"/api/games/{game['id']}/move", json={"action": move, "ply": 0}), 404)
    error(bob.post(f"/api/games/{game['id']}/advance", json={"ply": 0}), 404)
    error(bob.get(f"/api/games/{game['id']}/replay"), 404)
    error(bob.get(f"/api/games/{game['id']}/previews/0"), 404)
    error(bob.get(f"/api/games/{game['id']}/positions/0"), 404)
    error(bob.post(f"/api/games/{game['id']}/resign", json={}), 404)
    error(bob.post(f"/api/games/{game['id']}/review", json={}), 404)
    assert bob.get("/api/games").json() == {"games": []}
    assert error(bob.get(f"/api/replays/{upload['id']}"), 404) == error(bob.get(f"/api/replays/{'0' * 32}"), 404)
    error(bob.get(f"/api/replays/{upload['id']}/review/0"), 404)
    assert alice.get(f"/api/games/{game['id']}").json()["ply"] == 0  # nothing bob did touched it
    assert alice.post(f"/api/games/{game['id']}/move", json={"action": move, "ply": 0}).status_code == 200
    assert alice.get(f"/api/replays/{upload['id']}").status_code == 200


def test_a_burst_of_games_from_one_client_never_evicts_another_clients_game():
    app = create_app(GameStore(dict(SMALL)))  # the default caps
    alice, bob = TestClient(app), TestClient(app)
    kept = new_game(bob)["id"]
    burst = [new_game(alice, draft="dealt")["id"] for _ in range(web_store.DEFAULT_MAX_GAMES + 50)]
    assert bob.get(f"/api/games/{kept}").status_code == 200
    per_client = web_store.DEFAULT_GAMES_PER_CLIENT
    assert all(alice.get(f"/api/games/{i}").status_code == 200 for i in burst[-per_client:])
    assert alice.get(f"/api/games/{burst[-per_client - 1]}").status_code == 404  # alice's own oldest went


def test_past_the_global_cap_a_new_client_is_refused_and_no_client_loses_its_games():
    app = create_app(GameStore(dict(SMALL), max_games=4, games_per_client=2))
    alice, bob, carol = TestClient(app), TestClient(app), TestClient(app)
    alices = [new_game(alice)["id"] for _ in range(2)]
    bobs = [new_game(bob)["id"] for _ in range(2)]
    assert alice.get(f"/api/games/{alices[0]}").status_code == 200  # alice is busy: bob is the least recent
    assert "the server is full" in error(carol.post("/api/games", json={"opponent": "random"}), 503)
    assert all(bob.get(f"/api/games/{i}").status_code == 200 for i in bobs)  # in use (made just now): kept
    assert all(alice.get(f"/api/games/{i}").status_code == 200 for i in alices)


@pytest.mark.parametrize("value", ["no", 1, 0, None])
def test_a_replay_whose_open_hands_is_not_a_boolean_is_refused(client, value):
    data = _finished_replay(seed=3).to_dict()
    data["rules"]["open_hands"] = value
    assert "open_hands" in error(client.post("/api/replays", json=data), 422)


# ---------------------------------------------------------------------- the ladder's strength, from the arena's output

ROOT = Path(__file__).resolve().parents[1]


def test_the_shipped_ladder_file_is_the_arena_output_kept_in_docs():
    assert web_catalogue.LADDER_FILE.read_bytes() == (ROOT / "docs" / "web" / "ladder.json").read_bytes()


def test_each_level_is_named_in_plain_words_with_its_elo_from_the_arena_output():
    arena = json.loads((ROOT / "docs" / "web" / "ladder.json").read_text(encoding="utf-8"))
    elo = dict(zip(arena["agents"], arena["elo"]))
    data = TestClient(create_app(GameStore(catalog()))).get("/api/agents").json()
    assert [a["name"] for a in data["ladder"]] == [f"level:{k}" for k in range(1, 9)]
    shown = []
    for level, agent in enumerate(data["ladder"], start=1):
        rating = round(elo[LADDER[level]])
        assert agent["elo"] == rating
        sign = "+" if rating > 0 else "\u2212" if rating < 0 else ""
        assert agent["label"] == f"Level {level} \u2014 {web_catalogue.LEVEL_WORDS[level]} (Elo {sign}{abs(rating)})"
        assert agent["short"] == f"Level {level} \u2014 {web_catalogue.LEVEL_WORDS[level]}"
        assert LADDER[level] not in agent["label"]  # plain words, not the spec
        shown.append(rating)
    assert shown == sorted(shown)  # the levels climb
    assert all(a["elo"] is None for a in data["agents"] if a["group"] != "ladder")


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"agents": ["random"]}', "not the arena's JSON output"),
        ('{"agents": ["random", "greedy"], "elo": [1.0]}', "not the arena's JSON output"),
        ("[1, 2]", "not the arena's JSON output"),
        ('{"agents": ["random"], "elo": ["high"]}', "has no finite Elo"),
        ('{"agents": ["random"], "elo": [NaN]}', "has no finite Elo"),
        ('{"agents": [3], "elo": [1.0]}', "has no finite Elo"),
    ],
)
def test_a_ladder_file_that_is_not_arena_output_is_refused(tmp_path, content, words):
    path = tmp_path / "ladder.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=words):
        web_catalogue.ladder_elo(path)


def test_a_ladder_file_without_a_levels_agent_is_refused(monkeypatch, tmp_path):
    path = tmp_path / "ladder.json"
    path.write_text('{"agents": ["random", "mcts:2"], "elo": [-10.0, 10.0]}', encoding="utf-8")
    monkeypatch.setattr(web_catalogue, "LADDER_FILE", path)
    monkeypatch.setattr(web_catalogue.ladder_elo, "__defaults__", (path,))
    with pytest.raises(ValueError, match="rates no agent 'mcts:25'"):
        catalog()


# ---------------------------------------------------------------------- previews of each placement


def _previews(client: TestClient, view: dict) -> dict:
    response = client.get(f"/api/games/{view['id']}/previews/{view['ply']}")
    assert response.status_code == 200, response.text
    return response.json()


def test_previews_are_what_each_move_does_on_many_random_positions():
    """Every legal placement's preview against the rules core, then the move played: what it captured and
    flipped is what its preview said, on positions of drafted and dealt games, open and hidden hands."""
    client = small_client()
    rng = random.Random(5)
    positions = flips = endings = 0
    for seed in range(16):
        view = new_game(
            client,
            seed=seed,
            seat=seed % 2,
            draft=("pick", "dealt")[seed % 2 == 0 and seed % 4 == 0],
            open_hands=seed % 3 != 0,
            opponent=("random", "greedy")[seed % 2],
        )
        while not view["state"]["outcome"]:
            if view["agent_to_move"]:
                view = client.post(f"/api/games/{view['id']}/advance", json={"ply": view["ply"]}).json()
                continue
            if view["state"]["phase"] == "draft":
                move = rng.choice(view["state"]["legal"])
                view = client.post(f"/api/games/{view['id']}/move", json={"action": move["action"], "ply": view["ply"]})
                view = view.json()
                continue
            data = _previews(client, view)
            state = _core_state(client, view)
            assert data["ply"] == view["ply"] and data["to_move"] == view["human"]
            by_action = {p["action"]: p for p in data["previews"]}
            assert set(by_action) == {m["action"] for m in view["state"]["legal"]} == set(state.legal_actions())
            for action, preview in by_action.items():
                after = state.apply(action)
                assert (preview["tile"], preview["captured"], preview["domino"]) == (
                    after.last.tile,
                    list(after.last.captured),
                    list(after.last.domino),
                )
                assert preview["card"] == after.last.card.notation and preview["index"] == after.last.deck_index
                assert preview["lanes"] == web_views.lanes_json(after)
                if after.outcome is None:
                    assert preview["outcome"] is None
                else:
                    endings += 1
                    assert preview["outcome"]["winner"] == after.outcome.winner
                    assert preview["outcome"]["termination"] == after.outcome.termination.value
                    assert preview["outcome"]["lane"] == after.outcome.lane
                    assert preview["outcome"]["scores"] == list(after.outcome.scores)
            positions += 1
            chosen = by_action[rng.choice(sorted(by_action))]
            view = client.post(f"/api/games/{view['id']}/move", json={"action": chosen["action"], "ply": view["ply"]})
            view = view.json()
            last = view["state"]["last"]
            assert (last["tile"], last["captured"], last["domino"]) == (
                chosen["tile"],
                chosen["captured"],
                chosen["domino"],
            )
            flips += bool(last["captured"])
    assert positions >= 100 and flips >= 20 and endings >= 10


def test_a_preview_never_depends_on_the_opponents_hidden_hand():
    """With hidden hands, the previews of a position are the same whichever of its unplayed deck cards the
    opponent really holds: they are computed on what the player sees (``seen_by``), not the server's state."""
    client = small_client()
    checked = 0
    for seed in range(6):
        view = new_game(client, seed=seed, seat=0, first="you", draft="dealt", open_hands=False)
        rng = random.Random(seed)
        while not view["state"]["outcome"]:
            if view["agent_to_move"]:
                view = client.post(f"/api/games/{view['id']}/advance", json={"ply": view["ply"]}).json()
                continue
            state = _core_state(client, view)
            served = _previews(client, view)["previews"]
            other = 1 - view["human"]
            unplayed = [i for i, s in enumerate(state.status[other]) if s != 2]
            held = sum(1 for s in state.status[other] if s == 1)
            for trial in range(3):  # other hands of the same size from the cards the opponent has not played
                hand = set(random.Random(trial).sample(unplayed, held))
                status = list(state.status)
                status[other] = tuple(2 if s == 2 else 1 if i in hand else 0 for i, s in enumerate(state.status[other]))
                swapped = dataclasses.replace(state, status=tuple(status))
                assert web_views.placement_previews(swapped, view["human"], False) == served
            seen = web_views.seen_by(state, view["human"], False)
            assert sum(1 for s in seen.status[other] if s == 1) == held  # the size is public, and kept
            assert seen.status[view["human"]] == state.status[view["human"]]
            checked += 1
            move = rng.choice(view["state"]["legal"])
            view = client.post(f"/api/games/{view['id']}/move", json={"action": move["action"], "ply": view["ply"]})
            view = view.json()
    assert checked >= 30


def test_previews_are_only_for_the_player_to_move_in_the_play_phase(client):
    drafting = new_game(client, seat=0, first="you", draft="pick")
    assert "draft" in error(client.get(f"/api/games/{drafting['id']}/previews/0"), 409)
    waiting = new_game(client, seat=1, first="opponent", draft="dealt")
    assert "not your turn" in error(client.get(f"/api/games/{waiting['id']}/previews/0"), 409)
    mine = new_game(client, seat=0, first="you", draft="dealt")
    assert "at move 0, not 3" in error(client.get(f"/api/games/{mine['id']}/previews/3"), 409)
    assert len(client.get(f"/api/games/{mine['id']}/previews/0").json()["previews"]) == len(mine["state"]["legal"])
    watch = client.post("/api/games", json={"mode": "watch", "agents": ["random", "random"], "draft": "dealt"}).json()
    assert "two agents" in error(client.get(f"/api/games/{watch['id']}/previews/0"), 409)
    done = play_out(client, new_game(client, draft="dealt"), random.Random(1))
    assert "over" in error(client.get(f"/api/games/{done['id']}/previews/{done['ply']}"), 409)


@pytest.mark.parametrize("ply", ["-1", "1e3", "abc", "99999", "0x1", "%20", "1.0", "\u0661"])
@pytest.mark.parametrize("route", ["previews", "positions"])
def test_a_ply_in_the_path_must_be_a_short_whole_number(client, ply, route):
    view = new_game(client, seat=0, first="you", draft="dealt")
    assert "ply must be a whole number" in error(client.get(f"/api/games/{view['id']}/{route}/{ply}"), 400)


# ---------------------------------------------------------------------- looking back, resigning, reviewing, recents


def test_looking_back_shows_each_earlier_position_as_the_seat_saw_it():
    client = small_client()
    view = new_game(client, seat=0, first="you", draft="pick", open_hands=False, seed=4)
    rng = random.Random(4)
    while view["ply"] < 22:  # the draft (16 picks) and a few placements
        if view["agent_to_move"]:
            view = client.post(f"/api/games/{view['id']}/advance", json={"ply": view["ply"]}).json()
        else:
            move = rng.choice(view["state"]["legal"])
            view = client.post(f"/api/games/{view['id']}/move", json={"action": move["action"], "ply": view["ply"]})
            view = view.json()
    states = client.app.app.state.store.game(view["id"], owner(client)).states
    for ply in range(view["ply"] + 1):
        shown = client.get(f"/api/games/{view['id']}/positions/{ply}").json()
        assert shown["ply"] == ply and shown["state"]["legal"] == []
        assert shown["state"] == {**web_views.state_json(states[ply], 0, False), "legal": []}
        them = shown["state"]["players"][1]
        assert them["hand"] is None and (them["deck"] is None or states[ply].phase != "draft")
    assert "ply must be 0-" in error(client.get(f"/api/games/{view['id']}/positions/{view['ply'] + 1}"), 422)
    final = play_out(client, view, rng)
    start = client.get(f"/api/games/{final['id']}/positions/1").json()["state"]
    assert start["players"][1]["deck"] is not None  # the game is over: looking back shows everything now


def test_resigning_ends_the_game_for_the_agent_and_it_can_be_reviewed(client):
    view = new_game(client, seat=1, first="you", draft="dealt", open_hands=False, seed=9)
    move = view["state"]["legal"][0]["action"]
    view = client.post(f"/api/games/{view['id']}/move", json={"action": move, "ply": 0}).json()
    view = client.post(f"/api/games/{view['id']}/advance", json={"ply": 1}).json()
    assert "the review is ready when" in error(client.post(f"/api/games/{view['id']}/review", json={}), 409)
    resigned = client.post(f"/api/games/{view['id']}/resign", json={}).json()
    outcome = resigned["state"]["outcome"]
    assert outcome["termination"] == "resignation" and outcome["winner"] == 0 and outcome["resigned"] == 1
    assert outcome["scores"] == list(web_games.lane_scores(_core_state(client, view).owners))
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


# ---------------------------------------------------------------------- the engine, prepared in the background


def test_the_engine_endpoint_says_when_the_background_compile_is_done():
    release = threading.Event()
    ran = []

    def run(name: str) -> None:
        ran.append(name)
        if name == "MCTS":
            release.wait(10)
        if name == "exact solver":
            raise RuntimeError("no\ncompiler")

    warmup = EngineWarmup(["baselines", "MCTS", "exact solver"], run=run)
    client = TestClient(create_app(GameStore(dict(SMALL)), warmup=warmup))
    before = client.get("/api/engine").json()
    assert before["ready"] is False and before["started"] is False and before["done"] == 0
    warmup.start()
    deadline = time.monotonic() + 10
    while client.get("/api/engine").json()["preparing"] != "MCTS":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    during = client.get("/api/engine").json()
    assert during["ready"] is False and during["done"] == 1
    assert [f["state"] for f in during["families"]] == ["ready", "preparing", "waiting"]
    assert client.get("/api/agents").status_code == 200  # the server answers meanwhile
    release.set()
    assert warmup.wait(10)
    after = client.get("/api/engine").json()
    assert after["ready"] is True and after["done"] == 3 and after["preparing"] is None
    assert [f["state"] for f in after["families"]] == ["ready", "ready", "failed"]
    assert after["families"][2]["error"] == "RuntimeError: no compiler"  # one line
    assert ran == ["baselines", "MCTS", "exact solver"]
    warmup.start()  # once only
    assert ran == ["baselines", "MCTS", "exact solver"]


def test_an_app_without_a_warmup_prepares_nothing_and_says_ready(client):
    engine = client.get("/api/engine").json()
    assert engine == {"ready": True, "started": False, "preparing": None, "done": 0, "families": []}


def test_the_families_to_warm_put_the_default_opponents_first_and_the_solver_last():
    specs = [choice.spec for choice in catalog().values()]
    families = families_to_warm(specs, ["mcts:25"])
    assert families[0] == "MCTS" and families[-1] == "exact solver"
    assert "baselines" in families and len(families) == len(set(families))
    assert families_to_warm(["random"]) == ["exact solver"]
    with pytest.raises(ValueError, match="unknown kernel family 'turbo'"):
        EngineWarmup(["turbo"])


def test_a_real_warmup_compiles_the_families_it_names():
    warmup = EngineWarmup(["baselines"], out=io.StringIO()).start()
    assert warmup.wait(300)
    family = warmup.view()["families"][0]
    assert family["state"] == "ready" and family["seconds"] >= 0
