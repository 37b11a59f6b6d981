"""The Starlette app behind ``trinity serve``: the pages, the JSON API and its checks.

Every request body is read whole first by ``limits.BodyLimits`` (a size cap per route, a time and
rate limit, a budget of bytes in flight across requests), then must be JSON (``Content-Type:
application/json``) checked against a fixed schema: unknown fields, wrong types (``true`` is not an
int, ``1.0`` is not an int) and values out of range are refused with a 4xx status and ``{"error": "<one line>"}``.
Agents are named only from ``catalog()``; agent moves and the solver run in worker threads
(``anyio.to_thread``) so the server keeps answering while they think.

Each browser gets a random client token in an HttpOnly, SameSite=Strict cookie on its first API
request; games and uploaded replays belong to the token that made them (``GameStore`` finds them
only for it), so one client can neither read another's games nor push them out of memory with its
own: a full store refuses new games with 503 rather than drop one in use. With ``allowed_hosts`` (a
server on loopback) the ``Host`` header must be exactly one of those names, with the server's port
or none, which defeats DNS rebinding.

Besides moves, the API answers what the page needs to teach the game and keep it: what each legal
placement would do (``previews``, from the rules core, on what the player may see), earlier
positions to look back at, resigning, a finished game turned into a replay to review, the browser's
recent games, and whether the engine ``serve`` compiles in the background is ready. See docs/web.md.
"""

from __future__ import annotations

import ipaddress
import json
import random
import re
import secrets
import socket
import sys
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.requests import Request, cookie_parser
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from trinity_env.core import NUM_ACTIONS
from trinity_env.core.errors import ArgumentError, TrinityError
from trinity_env.core.files import MAX_DIGITS
from trinity_env.web.catalogue import AgentChoice
from trinity_env.web.errors import ApiError
from trinity_env.web.games import SEED_LIMIT
from trinity_env.web.limits import BodyLimits, Limits, uvicorn_config
from trinity_env.web.store import DEFAULT_MAX_GAMES, DEFAULT_MAX_REPLAYS, GameStore
from trinity_env.web.warmup import EngineWarmup, families_to_warm

STATIC = Path(str(resources.files("trinity_env.web") / "static"))
PAGES = ("play", "watch", "replay")
MAX_BODY = 16 * 1024
"""Bytes of a request body (a move, a new game: under 1 KB); 413 past it, from ``Content-Length`` before the body is
read and again as it streams (``BodyLimits``)."""
MAX_REPLAY_BODY = 1024 * 1024
"""Bytes of an uploaded replay, ``POST /api/replays`` (a whole game is about 3 KB; room for indented, annotated
ones)."""
MAX_PLY = 1000
THINKERS = 2
"""Agent moves computed at once (the rest wait their turn): the machine's cores, not more."""
LOOPBACK_NAMES = ("localhost",)
COOKIE = "trinity_client"
"""The cookie holding the client token that owns a browser's games and replays."""
COOKIE_MAX_AGE = 30 * 24 * 3600
"""Seconds the browser keeps the token (a game resumes after the browser restarts; the server may not)."""
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{43}")
"""A client token: ``secrets.token_urlsafe(32)``. Any other cookie value is ignored and a new token issued."""
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
HOST_PATTERN = re.compile(
    rf"(?:(?P<name>{_LABEL}(?:\.{_LABEL})*)|\[(?P<ip6>[0-9a-f:.]+)\])(?::(?P<port>[0-9]{{1,5}}))?"
)
"""A Host header: a DNS name or IPv4 address, or a bracketed IPv6 literal, then an optional port. Nothing else
(userinfo ``@``, a path, spaces, a second colon) passes: a lenient split could read ``localhost:80@evil.com``
as ``localhost``."""
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}


# ---------------------------------------------------------------------- reading requests


def _reject_constant(name: str) -> Any:
    raise ApiError(400, f"the body is not valid JSON: {name} is not a JSON number")


def _bounded_int(text: str) -> int:
    """``parse_int`` for ``json.loads``: no field needs a long integer, and one past Python's digit limit
    (4300) would make ``int`` raise ``ValueError`` deep in the parser, a 500 instead of a 400."""
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise ApiError(400, f"the body is not valid JSON for this API: an integer of {digits} digits is too long")
    return int(text)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise ApiError(400, f"the body repeats the field {key!r}")
        data[key] = value
    return data


async def _body(request: Request, limit: int = MAX_BODY) -> Any:
    """The request's JSON body; 415, 413 or 400 with one line if it is not small UTF-8 JSON."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise ApiError(415, "send the body as JSON, with Content-Type: application/json")
    declared = request.headers.get("content-length")
    if declared is not None and not (declared.isascii() and declared.isdigit()):
        raise ApiError(400, f"bad Content-Length {declared[:20]!r}")
    if declared is not None and (len(declared) > 12 or int(declared) > limit):  # int() of 5000 digits raises
        raise ApiError(413, f"the body is over {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise ApiError(413, f"the body is over {limit} bytes")
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ApiError(400, f"the body is not UTF-8 (byte {err.start})") from None
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_reject_constant, parse_int=_bounded_int)
    except json.JSONDecodeError as err:
        raise ApiError(400, f"the body is not valid JSON: {err.msg} (line {err.lineno}, column {err.colno})") from None
    except RecursionError:
        raise ApiError(400, "the body is nested too deeply") from None
    except ValueError as err:  # any other number the parser cannot convert: the client's fault, not a 500
        raise ApiError(400, f"the body is not valid JSON: {' '.join(str(err).split())[:200]}") from None


def _fields(body: Any, required: Sequence[str], optional: Sequence[str] = ()) -> dict[str, Any]:
    """``body`` as an object with exactly these fields (the optional ones may be missing)."""
    if not isinstance(body, dict):
        raise ApiError(400, f"the body must be a JSON object, got {_json_type(body)}")
    unknown = sorted(set(body) - set(required) - set(optional))
    if unknown:
        known = ", ".join(list(required) + list(optional))
        raise ApiError(400, f"unknown field {unknown[0]!r}; the fields are: {known}")
    missing = [name for name in required if name not in body]
    if missing:
        raise ApiError(400, f"missing field {missing[0]!r}")
    return body


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number with a fraction or exponent"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _int(body: dict[str, Any], name: str, low: int, high: int) -> int:
    """A whole JSON number in [low, high]: ``true``, ``1.0`` and ``"1"`` are refused."""
    value = body[name]
    if type(value) is not int:
        raise ApiError(400, f"{name} must be an integer {low}-{high}, got {_json_type(value)}")
    if not low <= value <= high:
        raise ApiError(400, f"{name} must be an integer {low}-{high}, got {value}")
    return value


def _choice(body: dict[str, Any], name: str, options: Sequence[Any], default: Any) -> Any:
    """One of ``options``, compared with its JSON type (``true`` is not ``1``)."""
    if name not in body:
        return default
    value = body[name]
    for option in options:
        if type(value) is type(option) and value == option:
            return value
    shown = ", ".join(json.dumps(option) for option in options)
    short = isinstance(value, str | int | float | bool) and len(str(value)) < 40
    got = json.dumps(value) if short else _json_type(value)
    raise ApiError(400, f"{name} must be one of {shown}, got {got}")


def _agent_name(store: GameStore, value: Any, name: str) -> AgentChoice:
    if not isinstance(value, str):
        raise ApiError(400, f"{name} must be an agent name (a string from GET /api/agents), got {_json_type(value)}")
    return store.agent(value)


def _seed(body: dict[str, Any]) -> int | None:
    return _int(body, "seed", 0, SEED_LIMIT - 1) if "seed" in body else None


def _path_ply(text: str) -> int:
    """A ply in a path (``/review/12``): plain ASCII digits, at most 4 of them; a 400 otherwise (``-1``, ``1e3``)."""
    if not (text.isascii() and text.isdigit() and len(text) <= 4):
        raise ApiError(400, f"ply must be a whole number, got {text[:20]!r}")
    return int(text)


# ---------------------------------------------------------------------- the app


class _Guard:
    """The checks every request passes before the app: the Host header, the client token, security headers.

    - Host: a malformed ``Host`` (see ``HOST_PATTERN``), a missing one where ``allowed_hosts`` is set,
      or two of them, is a 400. With ``allowed_hosts`` the name must be one of them and the port
      ``port`` (when known) or none: this keeps a page on another site from reaching a server bound
      to 127.0.0.1 through a DNS name it controls (DNS rebinding).
    - Client token: ``scope["trinity.client"]`` is the token from the request's cookie, or a new one.
      A new one is sent back (``Set-Cookie``) only on API responses to requests that are not
      cross-site: a link from another site to a page does not carry the SameSite=Strict cookie, and
      a token issued then would replace the browser's own and orphan its games. The page's first
      API call (same-origin, so it carries the cookie if there is one) gets it instead.
    - Security headers on every response, and ``Cache-Control: no-store`` on the API's.
    """

    def __init__(self, app: Callable, allowed_hosts: Sequence[str] | None, port: int | None = None):
        self.app = app
        self.allowed = None if allowed_hosts is None else {_normal_host(h) for h in allowed_hosts}
        self.port = port

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = scope["headers"]
        if not self._host_ok([value for key, value in headers if key == b"host"]):
            await PlainTextResponse("Invalid host header", status_code=400)(scope, receive, send)
            return
        api = scope["path"].startswith("/api/")
        client = _client_token([value for key, value in headers if key == b"cookie"])
        cross_site = any(key == b"sec-fetch-site" and value == b"cross-site" for key, value in headers)
        issue = client is None and api and not cross_site
        scope["trinity.client"] = client or secrets.token_urlsafe(32)

        async def send_guarded(message) -> None:
            if message["type"] == "http.response.start":
                out = MutableHeaders(scope=message)
                for key, value in SECURITY_HEADERS.items():
                    out.setdefault(key, value)
                if api:
                    out["cache-control"] = "no-store"
                if issue:
                    token = scope["trinity.client"]
                    cookie = f"{COOKIE}={token}; Path=/; Max-Age={COOKIE_MAX_AGE}; HttpOnly; SameSite=Strict"
                    out.append("set-cookie", cookie)
            await send(message)

        await self.app(scope, receive, send_guarded)

    def _host_ok(self, values: list[bytes]) -> bool:
        """Whether the request's ``Host`` headers (all of them) name this server."""
        if len(values) > 1:
            return False
        if not values:  # HTTP/1.0 may omit it; a server that checks names needs one
            return self.allowed is None
        parsed = _parse_host(values[0].decode("latin-1"))
        if parsed is None:
            return False
        if self.allowed is None:
            return True
        name, port = parsed
        return name in self.allowed and (port is None or self.port is None or port == self.port)


def _parse_host(value: str) -> tuple[str, int | None] | None:
    """``(name, port)`` of a Host header, the name lowercased (an IPv6 address compressed); ``None`` unless
    the whole value is exactly ``host`` or ``host:port`` (port 1-65535)."""
    if not value.isascii() or len(value) > 300:  # lowercasing non-ASCII could make ASCII letters
        return None
    match = HOST_PATTERN.fullmatch(value.lower())
    if match is None:
        return None
    port = None if match["port"] is None else int(match["port"])
    if port is not None and not 1 <= port <= 65535:
        return None
    if match["ip6"] is None:
        return (match["name"], port) if len(match["name"]) <= 253 else None
    try:
        return ipaddress.IPv6Address(match["ip6"]).compressed, port
    except ValueError:
        return None


def _normal_host(name: str) -> str:
    """An allowed host name as ``_parse_host`` reports it (``[::1]`` and ``0:0::1`` are ``::1``)."""
    name = name.strip().lower().removeprefix("[").removesuffix("]")
    try:
        return ipaddress.IPv6Address(name).compressed
    except ValueError:
        return name


def _client_token(values: list[bytes]) -> str | None:
    """The client token of the request's cookies, if one is there and well-formed."""
    cookies = cookie_parser("; ".join(value.decode("latin-1") for value in values))  # never raises
    token = cookies.get(COOKIE)
    return token if token is not None and TOKEN_PATTERN.fullmatch(token) else None


def create_app(
    store: GameStore | None = None,
    *,
    allowed_hosts: Sequence[str] | None = None,
    port: int | None = None,
    max_games: int = DEFAULT_MAX_GAMES,
    max_replays: int = DEFAULT_MAX_REPLAYS,
    warmup: EngineWarmup | None = None,
    limits: Limits | None = None,
) -> Callable:
    """The ASGI app. ``store`` defaults to a new ``GameStore`` with the default ``catalog()``;
    ``allowed_hosts``: the Host names accepted (``None``: any well-formed Host); ``port``: the port the
    server listens on, the only one a Host with a port may name when ``allowed_hosts`` is set;
    ``warmup``: the engine's background compile that ``GET /api/engine`` reports (``serve`` starts one;
    without it the app compiles nothing ahead and reports the engine ready); ``limits``: the request body limits
    (``trinity_env.web.limits``: size, time, bytes in flight; the defaults unless given)."""
    store = store or GameStore(max_games=max_games, max_replays=max_replays)
    warmup = warmup or EngineWarmup([])
    limiters: dict[str, anyio.CapacityLimiter] = {}

    def limiter(name: str, tokens: int) -> anyio.CapacityLimiter:
        if name not in limiters:  # made inside the event loop, on first use
            limiters[name] = anyio.CapacityLimiter(tokens)
        return limiters[name]

    async def page(request: Request) -> Response:  # one page; its script shows Play, Watch or Replay by the path
        return FileResponse(STATIC / "index.html", media_type="text/html")

    async def agents(request: Request) -> Response:
        choices = list(store.agents.values())
        ladder = [c.to_json() for c in choices if c.group == "ladder"]
        default = "level:3" if "level:3" in store.agents else next(iter(store.agents))
        return JSONResponse({"agents": [c.to_json() for c in choices], "ladder": ladder, "default": default})

    def owner(request: Request) -> str:
        """The client token ``_Guard`` found or made: games and replays are stored and found under it."""
        return request.scope["trinity.client"]

    async def new_game(request: Request) -> Response:
        body = await _body(request)
        if not isinstance(body, dict):
            raise ApiError(400, f"the body must be a JSON object, got {_json_type(body)}")
        mode = _choice(body, "mode", ["play", "watch"], "play")
        common = ["mode", "draft", "open_hands", "seed"]
        if mode == "play":
            _fields(body, ["opponent"], [*common, "seat", "first"])
            opponent = _agent_name(store, body["opponent"], "opponent")
        else:
            _fields(body, ["agents"], [*common, "first_player"])
            names = body["agents"]
            if not isinstance(names, list) or len(names) != 2:
                raise ApiError(400, "agents must be an array of two agent names (seat 0, seat 1)")
            seats = [_agent_name(store, name, f"agents[{i}]") for i, name in enumerate(names)]
        draft = _choice(body, "draft", ["pick", "dealt"], "pick")
        open_hands = _choice(body, "open_hands", [True, False], True)
        seed = _seed(body)
        seed = secrets.randbelow(SEED_LIMIT) if seed is None else seed
        if mode == "play":
            seat = _choice(body, "seat", [0, 1, "random"], "random")
            first = _choice(body, "first", ["you", "opponent", "random"], "random")
            chance = random.Random(seed ^ 0x5EA7)
            seat = chance.randint(0, 1) if seat == "random" else seat
            first_player = {"you": seat, "opponent": 1 - seat, "random": "random"}[first]
            seats = [opponent, opponent]
            seats[seat] = None
        else:
            first_player = _choice(body, "first_player", [0, 1, "random"], "random")
        game = store.new_game(
            seats, draft=draft, open_hands=open_hands, first_player=first_player, seed=seed, owner=owner(request)
        )
        return JSONResponse(game.view(), status_code=201)

    async def engine(request: Request) -> Response:
        return JSONResponse(warmup.view())

    async def list_games(request: Request) -> Response:
        return JSONResponse({"games": [game.summary() for game in store.games_of(owner(request))]})

    async def get_game(request: Request) -> Response:
        return JSONResponse(store.game(request.path_params["game_id"], owner(request)).view())

    async def previews(request: Request) -> Response:
        game = store.game(request.path_params["game_id"], owner(request))
        return JSONResponse(game.previews(_path_ply(request.path_params["ply"])))

    async def position(request: Request) -> Response:
        game = store.game(request.path_params["game_id"], owner(request))
        return JSONResponse(game.position(_path_ply(request.path_params["ply"])))

    async def resign(request: Request) -> Response:
        game = store.game(request.path_params["game_id"], owner(request))
        _fields(await _body(request), [])
        game.resign()
        return JSONResponse(game.view())

    async def review_game(request: Request) -> Response:
        game = store.game(request.path_params["game_id"], owner(request))
        _fields(await _body(request), [])
        if game.state.phase == "draft":
            raise ApiError(409, "the game is still in the draft: there is no placement to review")
        if not game.replayable:
            raise ApiError(409, "the review is ready when the game is over (it shows the hidden cards)")
        upload, new = await anyio.to_thread.run_sync(store.review_game, game, owner(request))
        return JSONResponse(upload.view(), status_code=201 if new else 200)

    async def move(request: Request) -> Response:
        game = store.game(request.path_params["game_id"], owner(request))
        body = _fields(await _body(request), ["action", "ply"])
        action = _int(body, "action", 0, NUM_ACTIONS - 1)
        ply = _int(body, "ply", 0, MAX_PLY)
        game.play(action, ply)
        return JSONResponse(game.view())

    async def advance(request: Request) -> Response:
        game = store.game(request.path_params["game_id"], owner(request))
        body = _fields(await _body(request), ["ply"])
        ply = _int(body, "ply", 0, MAX_PLY)
        moved = await anyio.to_thread.run_sync(game.advance, ply, limiter=limiter("think", THINKERS))
        return JSONResponse(game.view() | {"moved": moved})

    async def game_replay(request: Request) -> Response:
        game = store.game(request.path_params["game_id"], owner(request))
        text = game.replay().to_json(indent=1) + "\n"
        name = f"trinity-{game.id[:8]}.json"
        return Response(
            text, media_type="application/json", headers={"content-disposition": f'attachment; filename="{name}"'}
        )

    async def upload_replay(request: Request) -> Response:
        document = await _body(request, MAX_REPLAY_BODY)
        if not isinstance(document, dict):
            raise ApiError(400, f"a replay is a JSON object, got {_json_type(document)}")
        upload = await anyio.to_thread.run_sync(store.add_replay, document, owner(request))
        return JSONResponse(upload.view(), status_code=201)

    async def get_replay(request: Request) -> Response:
        return JSONResponse(store.replay(request.path_params["replay_id"], owner(request)).view())

    async def review(request: Request) -> Response:
        upload = store.replay(request.path_params["replay_id"], owner(request))
        ply = _path_ply(request.path_params["ply"])
        result = await anyio.to_thread.run_sync(store.review, upload, ply, limiter=limiter("solve", 1))
        return JSONResponse(result)

    async def api_error(request: Request, exc: ApiError) -> Response:
        return JSONResponse({"error": exc.message}, status_code=exc.status, headers=exc.headers)

    async def http_error(request: Request, exc: HTTPException) -> Response:
        if request.url.path.startswith("/api/") or exc.status_code == 405:
            return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=exc.headers)
        return PlainTextResponse(f"{exc.status_code} {exc.detail}", status_code=exc.status_code, headers=exc.headers)

    async def server_error(request: Request, exc: Exception) -> Response:
        message = str(exc) if isinstance(exc, TrinityError) else type(exc).__name__
        return JSONResponse({"error": f"internal error: {message}"}, status_code=500)

    routes = [
        Route("/", page),
        *(Route(f"/{name}", page) for name in PAGES),
        Route("/api/agents", agents),
        Route("/api/engine", engine),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games", list_games, methods=["GET"]),
        Route("/api/games/{game_id}", get_game),
        Route("/api/games/{game_id}/move", move, methods=["POST"]),
        Route("/api/games/{game_id}/advance", advance, methods=["POST"]),
        Route("/api/games/{game_id}/resign", resign, methods=["POST"]),
        Route("/api/games/{game_id}/previews/{ply}", previews),
        Route("/api/games/{game_id}/positions/{ply}", position),
        Route("/api/games/{game_id}/review", review_game, methods=["POST"]),
        Route("/api/games/{game_id}/replay", game_replay),
        Route("/api/replays", upload_replay, methods=["POST"]),
        Route("/api/replays/{replay_id}", get_replay),
        Route("/api/replays/{replay_id}/review/{ply}", review),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={ApiError: api_error, HTTPException: http_error, Exception: server_error},
    )
    app.state.store = store
    app.state.warmup = warmup
    return _Guard(BodyLimits(app, _body_cap, limits), allowed_hosts, port)


def _body_cap(scope: dict[str, Any]) -> int:
    """The most bytes a request's body may have: ``MAX_REPLAY_BODY`` for an upload, ``MAX_BODY`` otherwise."""
    return MAX_REPLAY_BODY if scope["path"] == "/api/replays" else MAX_BODY


# ---------------------------------------------------------------------- serving


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; ``ArgumentError`` in one line if that cannot be had."""
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as err:
        raise ArgumentError(f"cannot listen on {host}:{port}: unknown host ({err})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as err:
        sock.close()
        raise ArgumentError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    sock.set_inheritable(True)
    return sock


def serve(
    host: str = "127.0.0.1", port: int = 8000, *, max_games: int = DEFAULT_MAX_GAMES, limits: Limits | None = None
) -> None:
    """Serve the app with uvicorn until Ctrl-C (or SIGTERM), then return. Binds ``host:port`` first, so a
    port in use is an ``ArgumentError`` before anything starts; a host other than loopback gets a warning.
    The engine compiles in the background meanwhile (``EngineWarmup``; a second on a warm cache). ``limits``: the
    request limits (bodies, connections, keep-alive; ``trinity_env.web.limits``)."""
    try:
        import uvicorn
    except ImportError as err:
        raise TrinityError(f"the web app needs uvicorn: pip install 'trinity-towers[web]' ({err})") from None

    sock = bind(host, port)
    loopback = is_loopback(host)
    allowed = ["localhost", "127.0.0.1", "::1", host.strip("[]").lower()] if loopback else None
    store = GameStore(max_games=max_games)
    default = store.agents.get("level:3")
    families = families_to_warm([c.spec for c in store.agents.values()], [default.spec] if default else [])
    warmup = EngineWarmup(families, out=sys.stderr)
    app = create_app(store, allowed_hosts=allowed, port=port, warmup=warmup, limits=limits)
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    print(f"Trinity Towers on http://{shown}:{port}/ (Ctrl-C stops)", flush=True)
    warmup.start()  # compiles the engine while the server already answers: the page says so until it is done
    if not loopback:
        print(
            f"warning: listening on {host}: anyone who can reach this machine on port {port} can use the server",
            file=sys.stderr,
            flush=True,
        )
    config = uvicorn_config(app, limits, log_level="warning", access_log=False, lifespan="off")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn shuts down on Ctrl-C, then raises it again: stopping is the normal end
        pass
    finally:
        sock.close()
    print("stopped", flush=True)
