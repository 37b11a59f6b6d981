"""``ApiError``: a request the web server refuses, as an HTTP status and one line.

The store, a game and the request checks raise it with plain values; the app (``trinity_env.web.app``) answers it
as JSON ``{"error": ...}`` with its status (and its headers: ``Retry-After``). Nothing here imports Starlette.
"""

from __future__ import annotations


class ApiError(Exception):
    """A refused request: ``status`` (an HTTP 4xx code, or 503) and a one-line ``message``; ``headers`` to send
    with it (``Retry-After``)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers
