"""What the web server lets clients make it hold (issue 39): a full game store refuses new games (503) instead of
pushing out another client's game in use; request bodies are capped in size (413, from Content-Length before the
body is read and while it streams), in time and rate (408), and in bytes in flight across requests (503); and a
real uvicorn server under many slow uploads cuts them and stays within a memory bound."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import re
import select
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("starlette")
if importlib.util.find_spec("httpx2") is None and importlib.util.find_spec("httpx") is None:
    pytest.skip("starlette's TestClient needs httpx2 (or httpx): install the dev extra", allow_module_level=True)

import anyio
from starlette.testclient import TestClient
from web_client import asgi_scope, error, response_of

from trinity_env.agents import make
from trinity_env.core import Replay
from trinity_env.evaluation.match import play_game
from trinity_env.spec.config import make_config
from trinity_env.web.app import create_app
from trinity_env.web.caches import OwnedLRU, StoreFull
from trinity_env.web.catalogue import AgentChoice
from trinity_env.web.limits import BodyLimits, Limits
from trinity_env.web.schema import MAX_BODY, MAX_REPLAY_BODY
from trinity_env.web.store import GameStore

SMALL = {"random": AgentChoice("random", "random", "Random", "baseline")}
ROOT = Path(__file__).resolve().parent.parent


def post_game(client: TestClient):
    return client.post("/api/games", json={"opponent": "random", "draft": "dealt"})


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# ---------------------------------------------------------------------- the game store: refuse, never evict


def test_fresh_cookie_clients_cannot_evict_another_clients_game_and_past_the_store_get_503():
    app = create_app(GameStore(dict(SMALL), max_games=10, games_per_client=3))
    alice = TestClient(app)
    kept = post_game(alice).json()["id"]
    anonymous = TestClient(app)
    statuses, refusals = [], []
    for i in range(30):  # a new client each time: a fresh TestClient, or the same one with its cookie dropped
        if i % 2:
            anonymous.cookies.clear()
            response = post_game(anonymous)
        else:
            response = post_game(TestClient(app))
        statuses.append(response.status_code)
        if response.status_code == 503:
            refusals.append(response)
    assert statuses == [201] * 9 + [503] * 21  # the 9 free places, then refused
    message = error(refusals[0], 503)
    assert "the server is full" in message and "retry later" in message and "10 games" in message
    assert int(refusals[0].headers["retry-after"]) >= 1
    assert alice.get(f"/api/games/{kept}").status_code == 200  # never pushed out
    assert post_game(alice).status_code == 503  # under her own cap, but no place is free: refused too
    assert len(app.app.state.store.games) == 10


def test_a_client_at_its_own_cap_loses_only_its_own_oldest_game_even_when_the_store_is_full():
    app = create_app(GameStore(dict(SMALL), max_games=4, games_per_client=2))
    alice, bob = TestClient(app), TestClient(app)
    alices = [post_game(alice).json()["id"] for _ in range(2)]
    bobs = [post_game(bob).json()["id"] for _ in range(2)]
    newest = post_game(alice).json()["id"]  # the store is full; alice is at her own cap: her own oldest goes
    assert alice.get(f"/api/games/{alices[0]}").status_code == 404
    assert all(alice.get(f"/api/games/{i}").status_code == 200 for i in (alices[1], newest))
    assert all(bob.get(f"/api/games/{i}").status_code == 200 for i in bobs)


def test_only_a_game_idle_past_the_stated_time_gives_its_place_to_another_client():
    clock = Clock()
    app = create_app(GameStore(dict(SMALL), max_games=2, games_per_client=2, idle_seconds=600, clock=clock))
    alice, bob, carol, dave = (TestClient(app) for _ in range(4))
    alices, bobs = post_game(alice).json()["id"], post_game(bob).json()["id"]
    clock.now += 599
    assert "retry later (in about 1 s)" in error(post_game(carol), 503)  # both in use: nothing is pushed out
    assert alice.get(f"/api/games/{alices}").status_code == 200  # alice plays on; bob's game sits idle
    clock.now += 1
    carols = post_game(carol).json()["id"]  # bob's game, idle 600 s, gives its place
    assert bob.get(f"/api/games/{bobs}").status_code == 404
    assert "retry later (in about 599 s)" in error(post_game(dave), 503)  # alice's (used 1 s ago) and carol's stay
    assert alice.get(f"/api/games/{alices}").status_code == 200 and carol.get(f"/api/games/{carols}").status_code == 200


def _replay_text() -> str:
    states = []
    play_game((make("greedy"), make("random")), make_config(draft="pick"), 1, states.append)
    return Replay.from_states(states).to_json()


def test_uploaded_replays_are_refused_not_evicted_when_the_store_is_full():
    app = create_app(GameStore(dict(SMALL), max_replays=2, replays_per_client=2))
    alice, text = TestClient(app), _replay_text()
    headers = {"content-type": "application/json"}
    kept = alice.post("/api/replays", content=text, headers=headers).json()["id"]
    assert TestClient(app).post("/api/replays", content=text, headers=headers).status_code == 201
    refused = TestClient(app).post("/api/replays", content=text, headers=headers)
    assert "the server is full: it keeps 2 replays" in error(refused, 503)
    assert alice.get(f"/api/replays/{kept}").status_code == 200


def test_the_owned_lru_changes_nothing_when_it_refuses():
    clock = Clock()
    store = OwnedLRU(2, 2, 10.0, clock=clock)
    store.add("a", "1", "a1")
    store.add("b", "1", "b1")
    with pytest.raises(StoreFull) as refused:
        store.add("c", "1", "c1")
    assert refused.value.retry_after == 10 and len(store) == 2
    assert store.get("a", "1") == "a1" and store.get("b", "1") == "b1" and store.items("c") == []
    assert store.add("a", "1", "again") == [] and len(store) == 2  # the same key again takes no new place
    clock.now += 10
    assert store.add("c", "1", "c1") == ["b1"] and store.items("b") == [] and store.items("a") == ["again"]


# ---------------------------------------------------------------------- request bodies, through the ASGI app alone

SMALL_LIMITS = Limits(body_seconds=1.0, body_grace_seconds=0.2, min_body_rate=2000, bodies_in_flight=20_000)


class Upload:
    """A client as the app's ``receive`` sees it: the body in ``chunks`` (bytes), or a pause (seconds, or until an
    ``anyio.Event`` is set);
    ``then``: what after the last chunk (``"end"``: more_body False; ``"wait"``: nothing ever; ``"disconnect"``)."""

    def __init__(self, chunks, then: str = "end"):
        self.chunks = list(chunks)
        self.then = then
        self.read = 0  # receive() calls answered with body bytes

    async def receive(self) -> dict:
        while self.chunks and isinstance(self.chunks[0], float | anyio.Event):
            pause = self.chunks.pop(0)
            await (anyio.sleep(pause) if isinstance(pause, float) else pause.wait())
        if self.chunks:
            self.read += 1
            chunk = self.chunks.pop(0)
            more = bool(self.chunks) or self.then != "end"
            return {"type": "http.request", "body": chunk, "more_body": more}
        if self.then == "wait":
            await anyio.sleep_forever()
        return {"type": "http.disconnect"}


async def asgi_post(app, path: str, upload: Upload, content_length: int | None) -> tuple[int, dict, dict]:
    headers = [(b"host", b"testserver"), (b"content-type", b"application/json")]
    if content_length is not None:
        headers.append((b"content-length", str(content_length).encode()))
    scope = asgi_scope("POST", path, headers)
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    with anyio.fail_after(20):  # a guard so that a server which never cuts the body fails instead of hanging
        await app(scope, upload.receive, send)
    status, headers, body = response_of(sent)
    return status, {k.decode(): v.decode() for k, v in headers}, json.loads(body)


def small_app(limits: Limits = SMALL_LIMITS):
    return create_app(GameStore(dict(SMALL)), limits=limits)


def test_an_oversized_content_length_is_a_413_before_the_body_is_read():
    for path, cap in (("/api/games", MAX_BODY), ("/api/replays", MAX_REPLAY_BODY)):
        upload = Upload([b"x" * 1000] * 3, then="wait")
        status, headers, body = anyio.run(asgi_post, small_app(), path, upload, cap + 1)
        assert status == 413 and f"over {cap} bytes" in body["error"] and upload.read == 0
        assert headers["connection"] == "close"


def test_a_body_streamed_past_the_cap_without_content_length_is_a_413_as_it_streams():
    limits = Limits(bodies_in_flight=10 * MAX_BODY)
    upload = Upload([b" " * 1024] * 100, then="wait")  # 100 KiB, no Content-Length (chunked)
    status, headers, body = anyio.run(asgi_post, small_app(limits), "/api/games", upload, None)
    assert status == 413 and f"over {MAX_BODY} bytes" in body["error"]
    assert upload.read == MAX_BODY // 1024 + 1  # cut at the first chunk past the cap, the rest never read


def test_a_body_that_trickles_slower_than_the_stated_rate_is_a_408():
    app = small_app()
    upload = Upload([b"{"] + [0.05, b" "] * 400, then="wait")  # 20 B/s, far under 2000 B/s
    status, headers, body = anyio.run(asgi_post, app, "/api/games", upload, 401)
    assert status == 408 and "came slower than 2000 B/s" in body["error"] and headers["connection"] == "close"
    assert upload.read < 100 and app.app.in_flight == 0


def test_a_body_that_takes_longer_than_the_stated_time_is_a_408():
    app = small_app(Limits(body_seconds=0.5, body_grace_seconds=0.2, min_body_rate=100, bodies_in_flight=20_000))
    upload = Upload([b" " * 100, 0.1] * 50 + [b"{}"])  # 1000 B/s, above the rate, but 5 s in all
    status, headers, body = anyio.run(asgi_post, app, "/api/games", upload, None)
    assert status == 408 and "took over 0.5 s" in body["error"] and upload.read < 50


def test_bodies_past_the_bytes_in_flight_budget_get_503_and_the_budget_frees_up():
    app = small_app(Limits(body_seconds=10, body_grace_seconds=5, bodies_in_flight=20_000))
    results = {}

    async def main() -> None:
        go_on = anyio.Event()
        slow = Upload([b"{", go_on, b" " * 14_999, b"}"])  # declares 15,001 bytes and waits half-way
        async with anyio.create_task_group() as group:

            async def first() -> None:
                results["first"] = await asgi_post(app, "/api/replays", slow, 15_001)

            group.start_soon(first)
            await anyio.wait_all_tasks_blocked()
            assert app.app.in_flight == 15_001 and slow.read == 1
            second = Upload([b" " * 6000], then="wait")
            results["second"] = (await asgi_post(app, "/api/replays", second, 6000)), second.read
            chunked = Upload([b" " * 4000, b" " * 4000], then="wait")  # no Content-Length: counted as it comes
            results["chunked"] = (await asgi_post(app, "/api/replays", chunked, None)), chunked.read
            go_on.set()
        results["after"] = await asgi_post(app, "/api/games", Upload([b'{"opponent": "random"}']), None)

    anyio.run(main)
    (status, headers, body), read = results["second"]
    assert status == 503 and "retry later" in body["error"] and read == 0 and headers["retry-after"] == "10"
    (status, _, body), read = results["chunked"]
    assert status == 503 and read == 2
    assert results["first"][0] == 422  # read whole and handed to the app (not a replay: a 422)
    assert results["after"][0] == 201 and app.app.in_flight == 0


def test_a_client_that_goes_away_mid_body_frees_its_bytes():
    app = small_app()
    upload = Upload([b"{", b" "], then="disconnect")
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/api/games",
        "raw_path": b"/api/games",
        "query_string": b"",
        "root_path": "",
        "scheme": "http",
        "http_version": "1.1",
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 8000),
        "headers": [(b"content-length", b"100")],
    }
    anyio.run(app, scope, upload.receive, send)
    assert sent == [] and upload.read == 2 and app.app.in_flight == 0


@pytest.mark.parametrize("bad", [{"body_seconds": 0}, {"max_connections": 0}, {"min_body_rate": -1}])
def test_limits_must_be_positive(bad):
    with pytest.raises(ValueError, match="must be"):
        Limits(**bad)


def test_the_limits_middleware_wraps_the_app_inside_the_host_check():
    app = small_app()
    assert isinstance(app.app, BodyLimits) and app.app.limits == SMALL_LIMITS


# ---------------------------------------------------------------------- a real uvicorn server under slow uploads

SERVER = """
import json, sys
import uvicorn
from trinity_env.web.app import bind, create_app
from trinity_env.web.catalogue import AgentChoice
from trinity_env.web.store import GameStore
from trinity_env.web.limits import Limits, uvicorn_config

limits = Limits(**json.loads(sys.argv[1]))
sock = bind("127.0.0.1", 0)
app = create_app(GameStore({"random": AgentChoice("random", "random", "Random", "baseline")}), limits=limits)
print(sock.getsockname()[1], flush=True)
uvicorn.Server(uvicorn_config(app, limits, log_level="critical", access_log=False, lifespan="off")).run(sockets=[sock])
"""
SERVER_LIMITS = {
    "body_seconds": 2.0,
    "body_grace_seconds": 1.0,
    "bodies_in_flight": 2 * 1024 * 1024,
    "max_connections": 500,
}
"""The real server's limits in these tests: 2 s a body (the default is 20 s), 2 MiB of bodies in flight, and room for
all the connections (the connection cap has a test of its own)."""
UPLOADS = 150
"""Slow uploads at once, each declaring a 1,000,000-byte replay and sending 900,000 bytes of it, then nothing."""
MEMORY_GROWTH_MB = 48
"""How much the server may grow (peak resident set, VmHWM, over its resident set before) under ``UPLOADS``: the
bodies in flight (2 MiB) and the buffers of the connections it has not refused yet. Without the limits it held
every byte sent, 135 MB."""
WAIT_SECONDS = 30
"""How long the client waits for every upload to be answered or closed: far past the 2 s body limit; a server that
never cuts a body leaves them open."""


def vm(pid: int, field: str) -> int:
    """A ``/proc/<pid>/status`` memory field (``VmRSS``, ``VmHWM``) in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for pid {pid}")


def slow_uploads(port: int, count: int, declared: int, partial: int, wait: float) -> list:
    """Open ``count`` connections, each sending a replay upload's headers (``Content-Length: declared``) and
    ``partial`` bytes of its body as fast as the server takes them, then nothing; what each got within ``wait``
    seconds: an HTTP status, ``"closed"`` (closed or reset with no answer), or ``"open"`` (nothing at all)."""
    head = (
        f"POST /api/replays HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {declared}\r\n\r\n"
    ).encode()
    left, outcome = {}, {}
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setblocking(False)
        left[sock] = memoryview(head + b" " * partial)
    deadline = time.monotonic() + wait
    while len(outcome) < count and time.monotonic() < deadline:
        waiting = [sock for sock in left if sock not in outcome]
        readable, writable, _ = select.select(waiting, [s for s in waiting if len(left[s])], [], 0.2)
        for sock in writable:
            try:
                left[sock] = left[sock][sock.send(left[sock][:65536]) :]
            except BlockingIOError:
                pass
            except OSError:  # refused and closed: the answer, if any, is in the socket to read
                left[sock] = left[sock][:0]
        for sock in readable:
            try:
                data = sock.recv(4096)
            except OSError:
                data = b""
            outcome[sock] = int(data[9:12]) if data.startswith(b"HTTP/1.1 ") else "closed"
    for sock in left:
        sock.close()
    return [outcome.get(sock, "open") for sock in left]


@contextlib.contextmanager
def real_server(limits: dict):
    """A uvicorn server in a subprocess with ``limits`` (``Limits`` fields): its pid and port."""
    pytest.importorskip("uvicorn")
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER, json.dumps(limits)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        text=True,
    )
    try:
        port = int(process.stdout.readline() or 0)
        assert port, process.stderr.read()
        for _ in range(100):  # listening already (bound before the print); wait until uvicorn answers
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/engine", timeout=5) as response:
                    assert response.status == 200
                break
            except OSError:
                time.sleep(0.1)
        yield process.pid, port
    finally:
        process.terminate()
        process.communicate(timeout=30)


@pytest.fixture
def server():
    with real_server(SERVER_LIMITS) as running:
        yield running


def test_slow_uploads_to_a_real_server_are_cut_and_its_memory_stays_bounded(server):
    pid, port = server
    before = vm(pid, "VmRSS")
    outcomes = slow_uploads(port, UPLOADS, declared=1_000_000, partial=900_000, wait=WAIT_SECONDS)
    grown = vm(pid, "VmHWM") - before
    assert "open" not in outcomes, outcomes
    assert set(outcomes) <= {408, 503, "closed"}, outcomes
    assert outcomes.count(408) >= 2 and outcomes.count(503) >= UPLOADS // 2  # the budget's 2 cut by time, the rest
    assert grown < MEMORY_GROWTH_MB * 1024 * 1024, f"{grown / 2**20:.0f} MiB"
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/engine", timeout=10) as response:
        assert response.status == 200  # and it still answers


def test_an_oversized_content_length_to_a_real_server_is_a_413_before_any_body(server):
    pid, port = server
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT_SECONDS) as sock:
        sock.sendall(
            f"POST /api/replays HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {MAX_REPLAY_BODY + 1}\r\n\r\n".encode()
        )  # and not a byte of the body
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413 ") and b"connection: close" in answer.lower()
    assert f"over {MAX_REPLAY_BODY} bytes".encode() in answer


def test_past_the_connection_cap_a_real_server_answers_503():
    with real_server(SERVER_LIMITS | {"max_connections": 8}) as (pid, port):
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(8)]
        try:
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/engine", timeout=WAIT_SECONDS)
            assert refused.value.code == 503
        finally:
            for sock in idle:
                sock.close()
        for _ in range(100):  # the idle ones closed: it answers again
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/engine", timeout=WAIT_SECONDS) as response:
                    assert response.status == 200
                break
            except urllib.error.HTTPError as err:
                assert err.code == 503
                time.sleep(0.1)
        else:
            raise AssertionError("the server still refuses with no connection open")


def until_closed(sock: socket.socket, trickle: bytes, wait: float) -> bytes | None:
    """Send ``trickle`` a byte every 0.2 s (or nothing, if empty) until the server closes ``sock``: what it sent
    before closing, or ``None`` if it was still open after ``wait`` seconds."""
    got, deadline = b"", time.monotonic() + wait
    sock.settimeout(0.2)
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(4096)
            if not chunk:
                return got
            got += chunk
        except TimeoutError:
            pass
        except OSError:
            return got
        if trickle:
            try:
                sock.send(trickle[:1])
            except OSError:
                return got
            trickle = trickle[1:] or b"x"
    return None


def whole_response(connection: socket.socket) -> bytes:
    """One whole HTTP response: its head, then as many body bytes as its Content-Length says (the server may send
    the two in separate packets)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(4096)
        assert chunk, f"closed before a whole head: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: *([0-9]+)", head)[1])
    while len(body) < length:
        chunk = connection.recv(4096)
        assert chunk, "closed before the whole body"
        body += chunk
    return head + b"\r\n\r\n" + body


def test_a_connection_that_sends_no_whole_request_head_in_time_is_closed():
    with real_server(SERVER_LIMITS | {"header_seconds": 1.0}) as (pid, port):
        idle, trickling, working = (socket.create_connection(("127.0.0.1", port)) for _ in range(3))
        with idle, trickling, working:
            working.sendall(f"GET /api/engine HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            assert whole_response(working).startswith(b"HTTP/1.1 200 ")  # a whole head in time: answered
            assert until_closed(idle, b"", WAIT_SECONDS) == b""  # nothing sent: closed, unanswered
            head = f"GET /api/engine HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ".encode()
            assert until_closed(trickling, head, WAIT_SECONDS) == b""  # a byte at a time: closed too
            assert until_closed(working, b"", WAIT_SECONDS) == b""  # idle after its answer: closed as well
