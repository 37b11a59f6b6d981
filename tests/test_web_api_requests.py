"""Every bad request to the web API refused with a clear 4xx (``trinity serve`` through Starlette's
TestClient): strict bodies, agents named only from the list, huge integers, ids outside the id format, and each
browser's games kept apart by a cookie."""

from __future__ import annotations

import json

import pytest

# web_client skips this module without Starlette
from web_client import SMALL, TestClient, error, finished_replay, new_game, owner, small_client

from trinity_env.web import games as web_games
from trinity_env.web import store as web_store
from trinity_env.web.app import create_app
from trinity_env.web.guard import COOKIE
from trinity_env.web.schema import MAX_BODY, MAX_REPLAY_BODY
from trinity_env.web.store import GameStore

# ---------------------------------------------------------------------- bodies


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


# ---------------------------------------------------------------------- numbers


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


# ---------------------------------------------------------------------- ids, owners


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
    text = finished_replay(seed=1).to_json()
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
