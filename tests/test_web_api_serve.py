"""The web app's pages, headers and hosts, and ``trinity serve`` itself: security headers, nothing loaded from
elsewhere, the ``Host`` header exactly one of the server's names and port, bad options refused in one line, and a
real server on loopback that stops on Ctrl-C."""

from __future__ import annotations

import json
import socket
import time
import urllib.request

import pytest
from web_client import SMALL, TestClient, asgi_scope, response_of  # skips without Starlette
from web_serve import start_serve, stop_serve

from trinity_env.cli import main
from trinity_env.web.app import STATIC, create_app
from trinity_env.web.store import GameStore

# ---------------------------------------------------------------------- pages, headers


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


# ---------------------------------------------------------------------- hosts


def test_a_server_on_loopback_accepts_only_its_own_host_names():
    client = TestClient(create_app(GameStore(dict(SMALL)), allowed_hosts=["localhost", "127.0.0.1", "::1"]))
    for host in ("127.0.0.1:8000", "localhost:8000", "localhost", "[::1]:8000"):
        assert client.get("/api/agents", headers={"host": host}).status_code == 200, host
    for host in ("evil.example:8000", "evil.example", "127.0.0.1.evil.example"):
        assert client.get("/api/agents", headers={"host": host}).status_code == 400, host


def raw_get(app, path: str, headers: list[tuple[bytes, bytes]]) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """One GET straight through the ASGI app, headers exactly as given (duplicates, none at all)."""
    import anyio

    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    anyio.run(app, asgi_scope("GET", path, headers), receive, send)
    return response_of(sent)


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


# ---------------------------------------------------------------------- trinity serve


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["serve", "--port", "0"], "expected a whole number 1-65535, got '0'"),
        (["serve", "--port", "80.5"], "expected a whole number 1-65535"),
        (["serve", "--port", "65536"], "expected a whole number 1-65535"),
        (["serve", "--max-games", "0"], "expected a whole number 1-10000"),
        (["serve", "--max-games", "10001"], "expected a whole number 1-10000"),  # the limits table's MAX_SERVER_GAMES
        (["serve", "--host", "192.0.2.1"], "cannot listen on 192.0.2.1:8000: "),  # an address not on this machine
    ],
)
def test_serve_refuses_bad_options_in_one_line(argv, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and err.startswith("trinity serve: ")


def test_max_games_is_bounded_and_its_help_says_what_the_server_does():
    """``--max-games`` takes at most the limits table's ``MAX_SERVER_GAMES`` (refused while parsing, before anything
    is bound), ``GameStore`` too; and its help tells what the store really does, from the store's own figures."""
    from trinity_env.arguments import UsageError
    from trinity_env.cli import build_parser
    from trinity_env.core.errors import TrinityError
    from trinity_env.core.limits import MAX_SERVER_GAMES
    from trinity_env.web import store

    parser = build_parser()
    with pytest.raises(UsageError, match="expected a whole number 1-10000"):
        parser.parse_args(["serve", "--max-games", str(MAX_SERVER_GAMES + 1)])
    assert parser.parse_args(["serve", "--max-games", str(MAX_SERVER_GAMES)]).max_games == MAX_SERVER_GAMES
    with pytest.raises(TrinityError, match="max_games must be a whole number from 1 to 10,000"):
        GameStore(dict(SMALL), max_games=MAX_SERVER_GAMES + 1)
    serve = next(
        a for a in parser._subparsers._group_actions[0].choices["serve"]._actions if "--max-games" in a.option_strings
    )
    text = " ".join(serve.help.split())
    assert serve.default == store.DEFAULT_MAX_GAMES and f"({store.DEFAULT_MAX_GAMES}; at most 10,000)" in text
    assert f"each browser keeps at most {store.DEFAULT_GAMES_PER_CLIENT} (past that its own least recently used" in text
    assert f"one nobody has used for {store.DEFAULT_IDLE_SECONDS // 60} minutes, or is refused (503" in text
    assert "loses its oldest game" not in text and "least recently used browser" not in text


def test_serve_refuses_a_port_in_use(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"trinity serve: cannot listen on 127.0.0.1:{port}: " in err and err.count("\n") == 1


def test_trinity_serve_answers_on_loopback_and_stops_on_ctrl_c():
    pytest.importorskip("uvicorn")
    server, base = start_serve()
    try:
        with urllib.request.urlopen(f"{base}/api/agents", timeout=5) as response:
            assert response.status == 200 and json.load(response)["agents"]
        with urllib.request.urlopen(f"{base}/play", timeout=5) as response:
            assert b"Trinity Towers" in response.read()
        deadline = time.monotonic() + 180
        while True:  # the engine compiles in the background and says when it is done
            with urllib.request.urlopen(f"{base}/api/engine", timeout=5) as response:
                engine = json.load(response)
            if engine["ready"]:
                break
            assert time.monotonic() < deadline, engine
            time.sleep(0.3)
        assert engine["started"] and {f["name"] for f in engine["families"]} >= {"MCTS", "baselines", "exact solver"}
        assert all(f["state"] == "ready" for f in engine["families"]), engine
    finally:
        out, err = stop_serve(server)
    assert server.returncode == 0, err
    assert f"{base}/" in out
    assert "Traceback" not in err
