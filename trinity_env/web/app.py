"""The Starlette app behind ``trinity serve``: the pages, the JSON API's routes and its error answers.

Every request passes ``guard.Guard`` first (the ``Host`` header, the client token, the security headers), then
its body is read whole by ``limits.BodyLimits`` (a size cap per route, a time and rate limit, a budget of bytes in
flight across requests), then must be JSON (``Content-Type: application/json``) checked against a fixed schema
(``schema``): unknown fields, wrong types (``true`` is not an int, ``1.0`` is not an int) and values out of range
are refused with a 4xx status and ``{"error": "<one line>"}``. Agents are named only from ``catalog()``; agent
moves and the solver run in worker threads (``anyio.to_thread``) so the server keeps answering while they think.

Games and uploaded replays belong to the client token that made them (``GameStore`` finds them only for it), so
one client can neither read another's games nor push them out of memory with its own: a full store refuses new
games with 503 rather than drop one in use.

Besides moves, the API answers what the page needs to teach the game and keep it: what each legal
placement would do (``previews``, from the rules core, on what the player may see), earlier
positions to look back at, resigning, a finished game turned into a replay to review, the browser's
recent games, and whether the engine ``serve`` compiles in the background is ready. ``serve`` binds the socket
first (``bind``), then runs the app with uvicorn. See docs/web.md.
"""

from __future__ import annotations

import ipaddress
import random
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
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from trinity_env.core import NUM_ACTIONS
from trinity_env.core.errors import ArgumentError, TrinityError
from trinity_env.web.catalogue import DEFAULT_OPPONENT, catalog
from trinity_env.web.errors import ApiError
from trinity_env.web.games import SEED_LIMIT
from trinity_env.web.guard import Guard
from trinity_env.web.limits import BodyLimits, Limits, uvicorn_config
from trinity_env.web.schema import (
    MAX_BODY,
    MAX_REPLAY_BODY,
    agent_field,
    checked_fields,
    choice_field,
    json_type,
    path_ply,
    range_field,
    read_body,
    seed_field,
)
from trinity_env.web.store import DEFAULT_MAX_GAMES, DEFAULT_MAX_REPLAYS, GameStore
from trinity_env.web.warmup import EngineWarmup, families_to_warm

STATIC = Path(str(resources.files("trinity_env.web") / "static"))
PAGES = ("play", "watch", "replay")
MAX_PLY = 1000
THINKERS = 2
"""Agent moves computed at once (the rest wait their turn): the machine's cores, not more."""
LOOPBACK_NAMES = ("localhost",)


# ---------------------------------------------------------------------- the app


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
        default = DEFAULT_OPPONENT if DEFAULT_OPPONENT in store.agents else next(iter(store.agents))
        return JSONResponse({"agents": [c.to_json() for c in choices], "ladder": ladder, "default": default})

    def owner(request: Request) -> str:
        """The client token ``Guard`` found or made: games and replays are stored and found under it."""
        return request.scope["trinity.client"]

    async def new_game(request: Request) -> Response:
        body = await read_body(request)
        if not isinstance(body, dict):
            raise ApiError(400, f"the body must be a JSON object, got {json_type(body)}")
        mode = choice_field(body, "mode", ["play", "watch"], "play")
        common = ["mode", "draft", "open_hands", "seed"]
        if mode == "play":
            checked_fields(body, ["opponent"], [*common, "seat", "first"])
            opponent = agent_field(store, body["opponent"], "opponent")
        else:
            checked_fields(body, ["agents"], [*common, "first_player"])
            names = body["agents"]
            if not isinstance(names, list) or len(names) != 2:
                raise ApiError(400, "agents must be an array of two agent names (seat 0, seat 1)")
            seats = [agent_field(store, name, f"agents[{i}]") for i, name in enumerate(names)]
        draft = choice_field(body, "draft", ["pick", "dealt"], "pick")
        open_hands = choice_field(body, "open_hands", [True, False], True)
        seed = seed_field(body)
        seed = secrets.randbelow(SEED_LIMIT) if seed is None else seed
        if mode == "play":
            seat = choice_field(body, "seat", [0, 1, "random"], "random")
            first = choice_field(body, "first", ["you", "opponent", "random"], "random")
            chance = random.Random(seed ^ 0x5EA7)
            seat = chance.randint(0, 1) if seat == "random" else seat
            first_player = {"you": seat, "opponent": 1 - seat, "random": "random"}[first]
            seats = [opponent, opponent]
            seats[seat] = None
        else:
            first_player = choice_field(body, "first_player", [0, 1, "random"], "random")
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
        return JSONResponse(game.previews(path_ply(request.path_params["ply"])))

    async def position(request: Request) -> Response:
        game = store.game(request.path_params["game_id"], owner(request))
        return JSONResponse(game.position(path_ply(request.path_params["ply"])))

    async def resign(request: Request) -> Response:
        game = store.game(request.path_params["game_id"], owner(request))
        checked_fields(await read_body(request), [])
        game.resign()
        return JSONResponse(game.view())

    async def review_game(request: Request) -> Response:
        game = store.game(request.path_params["game_id"], owner(request))
        checked_fields(await read_body(request), [])
        if game.state.phase == "draft":
            raise ApiError(409, "the game is still in the draft: there is no placement to review")
        if not game.replayable:
            raise ApiError(409, "the review is ready when the game is over (it shows the hidden cards)")
        upload, new = await anyio.to_thread.run_sync(store.review_game, game, owner(request))
        return JSONResponse(upload.view(), status_code=201 if new else 200)

    async def move(request: Request) -> Response:
        game = store.game(request.path_params["game_id"], owner(request))
        body = checked_fields(await read_body(request), ["action", "ply"])
        action = range_field(body, "action", 0, NUM_ACTIONS - 1)
        ply = range_field(body, "ply", 0, MAX_PLY)
        game.play(action, ply)
        return JSONResponse(game.view())

    async def advance(request: Request) -> Response:
        game = store.game(request.path_params["game_id"], owner(request))
        body = checked_fields(await read_body(request), ["ply"])
        ply = range_field(body, "ply", 0, MAX_PLY)
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
        document = await read_body(request, MAX_REPLAY_BODY)
        if not isinstance(document, dict):
            raise ApiError(400, f"a replay is a JSON object, got {json_type(document)}")
        upload = await anyio.to_thread.run_sync(store.add_replay, document, owner(request))
        return JSONResponse(upload.view(), status_code=201)

    async def get_replay(request: Request) -> Response:
        return JSONResponse(store.replay(request.path_params["replay_id"], owner(request)).view())

    async def review(request: Request) -> Response:
        upload = store.replay(request.path_params["replay_id"], owner(request))
        ply = path_ply(request.path_params["ply"])
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
    return Guard(BodyLimits(app, _body_cap, limits), allowed_hosts, port)


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
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    max_games: int = DEFAULT_MAX_GAMES,
    limits: Limits | None = None,
    agents: Sequence[object] = (),
) -> None:
    """Serve the app with uvicorn until Ctrl-C (or SIGTERM), then return. ``agents``: policies the operator adds to
    the list of agents (``catalogue.added``: specs, ``AgentSpec`` values, agents, policy functions), each built once
    first. Binds ``host:port`` next, so a bad policy or a port in use is an ``ArgumentError`` before anything starts;
    a host other than loopback gets a warning.
    The engine compiles in the background meanwhile (``EngineWarmup``; a second on a warm cache). ``limits``: the
    request limits (bodies, connections, keep-alive; ``trinity_env.web.limits``)."""
    try:
        import uvicorn
    except ImportError as err:
        raise TrinityError(f"the web app needs uvicorn: pip install 'trinity-towers[web]' ({err})") from None

    store = GameStore(catalog(agents), max_games=max_games)
    sock = bind(host, port)
    loopback = is_loopback(host)
    allowed = ["localhost", "127.0.0.1", "::1", host.strip("[]").lower()] if loopback else None
    default = store.agents.get(DEFAULT_OPPONENT)
    who = [c.player or c.spec for c in store.agents.values()]
    families = families_to_warm(who, [default.spec] if default else [])
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
