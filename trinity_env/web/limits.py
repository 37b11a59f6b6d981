"""How much the web server lets its clients make it hold: request bodies, the time they take, connections.

``BodyLimits`` is ASGI middleware that reads each request's body before the app sees it, under four
limits, and answers for the app when one is broken (JSON ``{"error": ...}``, ``Connection: close``):

- **size** (413): the route's byte cap (``body_cap(scope)``), checked on ``Content-Length`` before a byte
  of the body is read, and again while it streams in (a chunked body has no ``Content-Length``);
- **time** (408): the whole body within ``Limits.body_seconds``, and never slower than
  ``Limits.min_body_rate`` bytes a second after the first ``Limits.body_grace_seconds`` (a client
  that trickles a byte now and then is cut long before the whole-body limit);
- **bytes in flight** (503): the bodies of all requests being served together, counted at their
  ``Content-Length`` as soon as the headers arrive (or as they stream in, without one), at most
  ``Limits.bodies_in_flight``; a request past it is refused at once, before its body is read.

The connection cap and the idle keep-alive timeout are uvicorn's (``limit_concurrency``,
``timeout_keep_alive``): ``uvicorn_config`` sets them from the same ``Limits``, and adds a deadline for a
connection to send a whole request head (``Limits.header_seconds``), which uvicorn lacks. uvicorn stops reading a
connection whose app is not reading (64 KiB buffered at most), so a body this middleware has not
accepted stays in the client's socket, not in the server's memory.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio

BODY_SECONDS = 20.0
"""Seconds a whole request body may take to arrive once the headers are in (408 past it). The largest body the
app takes, a 1 MiB replay, needs about 52 KB/s to make it; a move or a new game is under 1 KB."""
BODY_GRACE_SECONDS = 2.0
"""Seconds a body may take before ``MIN_BODY_RATE`` applies (the first bytes of a body can lag the headers)."""
MIN_BODY_RATE = 16 * 1024
"""Bytes a second a body must keep up after ``BODY_GRACE_SECONDS`` (408 below it): 16 KiB/s is a slow mobile link;
a client dripping a byte at a time to hold the request open is cut within ``BODY_GRACE_SECONDS`` of its last byte."""
BODIES_IN_FLIGHT = 16 * 1024 * 1024
"""Bytes of request bodies held at once across all requests (503 past it): sixteen 1 MiB replays, so that many
slow uploads together hold at most this much, however many connections they come on."""
MAX_CONNECTIONS = 64
"""Open connections (and requests in progress) uvicorn serves at once; a request on one more is answered 503
(uvicorn's ``limit_concurrency``). A browser opens about 6; the app is for one machine's players."""
KEEP_ALIVE_SECONDS = 5
"""Seconds uvicorn keeps an idle connection open between requests (its ``timeout_keep_alive``, its default)."""
HEADER_SECONDS = 10.0
"""Seconds a connection has to send a whole request head (request line and headers), from when it opens or its
last response went out; it is closed past that. uvicorn has no such limit (any byte, however late, stops its
keep-alive timer), so connections that send nothing, or a header a byte at a time, would hold the
``MAX_CONNECTIONS`` places for ever and every other request would get 503."""


@dataclass(frozen=True)
class Limits:
    """The limits in force: the constants above by default; tests pass small ones."""

    body_seconds: float = BODY_SECONDS
    body_grace_seconds: float = BODY_GRACE_SECONDS
    min_body_rate: float = MIN_BODY_RATE
    bodies_in_flight: int = BODIES_IN_FLIGHT
    max_connections: int = MAX_CONNECTIONS
    keep_alive_seconds: int = KEEP_ALIVE_SECONDS
    header_seconds: float = HEADER_SECONDS

    def __post_init__(self) -> None:
        for name in ("body_seconds", "body_grace_seconds", "min_body_rate", "bodies_in_flight", "header_seconds"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be more than 0, got {getattr(self, name)}")
        for name in ("max_connections", "keep_alive_seconds"):
            if type(getattr(self, name)) is not int or getattr(self, name) < 1:
                raise ValueError(f"{name} must be a whole number at least 1, got {getattr(self, name)!r}")


class _Refused(Exception):
    def __init__(self, status: int, message: str, retry_after: int | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after


class BodyLimits:
    """ASGI middleware: the request body read whole, under ``limits`` and ``body_cap(scope)`` bytes, then handed
    to ``app`` (see the module's docstring). ``in_flight`` is the bytes of bodies held now (for tests)."""

    def __init__(
        self,
        app: Callable,
        body_cap: Callable[[dict[str, Any]], int],
        limits: Limits | None = None,
    ) -> None:
        self.app = app
        self.body_cap = body_cap
        self.limits = limits or Limits()
        self.in_flight = 0
        self._lock = threading.Lock()  # one event loop in a server; a test may drive the app from several threads

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        held = [0]  # bytes this request counts in flight, updated as its body streams in
        try:
            cap = self.body_cap(scope)
            held[0] = self._hold(0, _content_length(scope["headers"], cap))
            body = await self._read(receive, cap, held)
        except _Refused as refused:
            self._release(held[0])
            await _answer(send, refused)
            return
        except BaseException:
            self._release(held[0])
            raise
        try:
            if body is not None:  # None: the client went away
                await self.app(scope, _replay(body, receive), send)
        finally:
            self._release(held[0])

    @property
    def state(self) -> Any:
        """The wrapped app's ``state`` (a Starlette app's: the store, the warmup)."""
        return self.app.state

    def _hold(self, held: int, total: int) -> int:
        """Count ``total`` bytes in flight for a request holding ``held``; a 503 if that is past the budget."""
        with self._lock:
            if self.in_flight - held + total > self.limits.bodies_in_flight:
                raise _Refused(
                    503,
                    f"the server is busy receiving other requests (at most {self.limits.bodies_in_flight} bytes of "
                    "bodies at once); retry later",
                    retry_after=max(1, math.ceil(self.limits.body_seconds)),
                )
            self.in_flight += total - held
        return total

    def _release(self, held: int) -> None:
        with self._lock:
            self.in_flight -= held

    async def _read(self, receive, cap: int, held: list[int]) -> bytes | None:
        """The whole body (``None`` if the client disconnected), or ``_Refused`` with 413, 408 or 503; ``held[0]``
        follows the bytes counted in flight for it (its ``Content-Length``, or what came if that is more)."""
        limits = self.limits
        start = anyio.current_time()
        chunks: list[bytes] = []
        total = 0
        while True:
            deadline = start + min(limits.body_seconds, limits.body_grace_seconds + total / limits.min_body_rate)
            message = None
            with anyio.move_on_after(deadline - anyio.current_time()):
                message = await receive()
            if message is None:
                whole = anyio.current_time() - start >= limits.body_seconds
                why = (
                    f"took over {limits.body_seconds:g} s"
                    if whole
                    else f"came slower than {limits.min_body_rate:g} B/s"
                )
                raise _Refused(408, f"the request body {why}; send it whole, at once")
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            total += len(chunk)
            if total > cap:
                raise _Refused(413, f"the body is over {cap} bytes")
            if total > held[0]:
                held[0] = self._hold(held[0], total)
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


def _content_length(headers: list[tuple[bytes, bytes]], cap: int) -> int:
    """The declared body size (0 without ``Content-Length``); a 400 if malformed, a 413 if over ``cap``."""
    values = [value for key, value in headers if key == b"content-length"]
    if not values:
        return 0
    if len(values) > 1:
        raise _Refused(400, "the request has more than one Content-Length")
    text = values[0].decode("latin-1")
    if not (text.isascii() and text.isdigit()):
        raise _Refused(400, f"bad Content-Length {text[:20]!r}")
    if len(text) > 12 or int(text) > cap:  # int() of 5000 digits raises
        raise _Refused(413, f"the body is over {cap} bytes")
    return int(text)


def _replay(body: bytes, receive) -> Callable:
    """A ``receive`` that gives the app ``body`` whole, then whatever the server says next (a disconnect)."""
    sent = False

    async def receive_again() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return receive_again


async def _answer(send, refused: _Refused) -> None:
    headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
    if refused.retry_after is not None:
        headers.append((b"retry-after", str(refused.retry_after).encode()))
    await send({"type": "http.response.start", "status": refused.status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps({"error": refused.message}).encode()})


def uvicorn_config(app: Callable, limits: Limits | None = None, **options: Any):
    """A ``uvicorn.Config`` for ``app`` with the connection cap, keep-alive timeout and request-head deadline of
    ``limits`` (uvicorn's h11 protocol, with ``HEADER_SECONDS`` added: ``head_timed_protocol``)."""
    import uvicorn

    limits = limits or Limits()
    return uvicorn.Config(
        app,
        http=head_timed_protocol(limits.header_seconds),
        limit_concurrency=limits.max_connections,
        timeout_keep_alive=limits.keep_alive_seconds,
        **options,
    )


def head_timed_protocol(header_seconds: float) -> type:
    """uvicorn's h11 protocol, closing a connection that has not sent a whole request head ``header_seconds``
    after it opened or after its last response (see ``HEADER_SECONDS``)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeadTimedH11Protocol(H11Protocol):
        _head_timer = None
        _waiting_after = None  # the request cycle current when the timer started: a new one means a head came

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._head_timer is not None and self.cycle is not self._waiting_after:
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete):
                self._arm()  # (a pipelined request already started a new cycle otherwise)

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._waiting_after = self.cycle
            self._head_timer = self.loop.call_later(header_seconds, self._head_too_slow)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_too_slow(self) -> None:
            self._head_timer = None
            if self.cycle is self._waiting_after and not self.transport.is_closing():
                self.transport.close()

    return HeadTimedH11Protocol
