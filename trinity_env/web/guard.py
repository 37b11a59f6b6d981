"""What every request passes before the app: the ``Host`` header, the client token, the security headers.

Each browser gets a random client token in an HttpOnly, SameSite=Strict cookie (``COOKIE``) on its first API
request; games and uploaded replays belong to the token that made them (``GameStore`` finds them only for it).
With ``allowed_hosts`` (a server on loopback) the ``Host`` header must be exactly one of those names, with the
server's port or none, which defeats DNS rebinding. See ``Guard``.
"""

from __future__ import annotations

import ipaddress
import re
import secrets
from collections.abc import Callable, Sequence

from starlette.datastructures import MutableHeaders
from starlette.requests import cookie_parser
from starlette.responses import PlainTextResponse

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


class Guard:
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
