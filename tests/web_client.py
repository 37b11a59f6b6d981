"""What the web API's tests share: a small app behind Starlette's TestClient, a new game, a game played out, a
refusal's one-line message, a finished replay, and one request straight through the ASGI app.

Importing it skips the importing test module without Starlette or its TestClient's httpx2 (or httpx)."""

from __future__ import annotations

import importlib.util
import random

import pytest

pytest.importorskip("starlette")
if importlib.util.find_spec("httpx2") is None and importlib.util.find_spec("httpx") is None:
    pytest.skip("starlette's TestClient needs httpx2 (or httpx): install the dev extra", allow_module_level=True)

from starlette.testclient import TestClient

from trinity_env.core import GameState, Replay
from trinity_env.web.app import create_app
from trinity_env.web.catalogue import AgentChoice
from trinity_env.web.guard import COOKIE
from trinity_env.web.store import GameStore

SMALL = {
    "random": AgentChoice("random", "random", "Random", "baseline"),
    "greedy": AgentChoice("greedy", "greedy", "Greedy", "baseline"),
    "mcts:25": AgentChoice("mcts:25", "mcts:25", "MCTS 25", "search"),
}


def small_client(**store_options) -> TestClient:
    """A client of an app that offers the three agents of ``SMALL``; ``store_options`` go to its ``GameStore``."""
    return TestClient(create_app(GameStore(dict(SMALL), **store_options)))


def new_game(client: TestClient, **fields) -> dict:
    body = {"opponent": "random", "seed": 7} | fields
    response = client.post("/api/games", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def owner(client: TestClient) -> str:
    """The client token the server gave this TestClient (its cookie jar keeps it, as a browser does)."""
    return client.cookies[COOKIE]


def core_state(client: TestClient, view: dict) -> GameState:
    """The rules core's state of ``view``'s game, as the server holds it."""
    return client.app.app.state.store.game(view["id"], owner(client)).state


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
    """The refusal's message, after checking it is ``status`` with a JSON body of one line and no traceback."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json")
    message = response.json()["error"]
    assert isinstance(message, str) and message and "\n" not in message and "Traceback" not in message
    return message


def finished_replay(seed: int = 0, draft: str = "pick") -> Replay:
    """A whole game of ``greedy`` against ``random``, recorded."""
    from trinity_env.agents import make
    from trinity_env.evaluation.match import play_game
    from trinity_env.spec.config import make_config

    states = []
    play_game((make("greedy"), make("random")), make_config(draft=draft), seed, states.append)
    return Replay.from_states(states)


def asgi_scope(method: str, path: str, headers: list[tuple[bytes, bytes]]) -> dict:
    """The ASGI scope of one HTTP request from 127.0.0.1 to a server on port 8000, headers exactly as given."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


def response_of(sent: list[dict]) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """The status, headers and whole body of the ASGI messages an app sent."""
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], start["headers"], body
