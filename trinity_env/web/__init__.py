"""Play and watch Trinity Towers in the browser: ``trinity serve``.

A small Starlette app (``create_app``) serves plain HTML, CSS and JavaScript from
``trinity_env/web/static`` (no build step, nothing fetched from the internet) and a JSON API
over the rules core: games against the agents of a fixed list (``catalog``), games between
two agents to watch, and replays to step through with the exact solver's review. The server
holds every game, so a page reload loses nothing; see docs/web.md.

Starlette and uvicorn come with the ``web`` extra (``pip install trinity-towers[web]``);
what the server holds needs neither: the agents on offer (``catalogue``), what a browser may see (``views``), a game
(``games``), uploaded replays and their review (``replays``), the store of both (``store``, over ``caches``) and the
engine's warm-up (``warmup``).
"""

from __future__ import annotations

from trinity_env.web.catalogue import LADDER, AgentChoice, catalog
from trinity_env.web.store import GameStore

__all__ = ["LADDER", "AgentChoice", "GameStore", "catalog", "create_app", "serve"]


def create_app(*args, **kwargs):
    """The Starlette app (see ``trinity_env.web.app.create_app``)."""
    from trinity_env.web.app import create_app as _create_app

    return _create_app(*args, **kwargs)


def serve(*args, **kwargs) -> None:
    """Run the app with uvicorn until Ctrl-C (see ``trinity_env.web.app.serve``)."""
    from trinity_env.web.app import serve as _serve

    _serve(*args, **kwargs)
