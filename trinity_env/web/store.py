"""``GameStore``: the games and uploaded replays the web server holds, by owner and id, under caps.

Games and replays are kept by owner (the browser's client token) and random hex id, each owner's in an LRU with a
cap, and all of them under a global cap (``caches.OwnedLRU``): past it only a game nobody has used for
``DEFAULT_IDLE_SECONDS`` may be reclaimed, and otherwise a new one is refused (503), so no client can push out a
game another is playing. Nothing here imports Starlette: the app (``trinity_env.web.app``) checks requests and
hands plain values to ``GameStore``, which raises ``ApiError`` (an HTTP status and one line) for anything it
refuses.
"""

from __future__ import annotations

import math
import random
import re
import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any

from trinity_env.core import Replay, TrinityError
from trinity_env.core.limits import MAX_SERVER_GAMES
from trinity_env.web.caches import LRU, OwnedLRU, StoreFull
from trinity_env.web.catalogue import AgentChoice, catalog
from trinity_env.web.errors import ApiError
from trinity_env.web.games import SEED_LIMIT, Game
from trinity_env.web.replays import Reviewer, UploadedReplay, plain_names

ID_PATTERN = re.compile(r"[0-9a-f]{32}")
"""Game and replay ids: 16 random bytes in hex (``secrets.token_hex(16)``); anything else is refused unread."""
DEFAULT_MAX_GAMES = 200
"""Games kept at once, all owners together (a memory bound): past it a new game takes the place of one idle
for ``DEFAULT_IDLE_SECONDS``, or is refused with 503 (retry later) if every game is in use."""
DEFAULT_GAMES_PER_CLIENT = 20
"""Games one owner (a browser) keeps; its own least recently used one is forgotten past this."""
DEFAULT_MAX_REPLAYS = 50
"""Uploaded replays kept at once, all owners together (reclaimed or refused like games)."""
DEFAULT_REPLAYS_PER_CLIENT = 10
"""Uploaded replays one owner keeps."""
DEFAULT_IDLE_SECONDS = 30 * 60
"""Seconds after its last use (made, viewed, moved in) that a game or replay counts as idle, and so may give its
place to another client's new one when the store is full: 30 minutes, far longer than a player thinks over a move,
short enough that a full store frees up within the half hour. A game used more recently is never pushed out by
another client."""
DEFAULT_MAX_LIVE_AGENTS = 16
"""Games whose agents are kept built (LRU): a search agent holds its tree (tens of MB for ``az-standard``);
a game whose agents were dropped rebuilds them at its next agent move."""


class GameStore:
    """Games and uploaded replays by owner and id, with caps so memory stays bounded.

    ``owner`` is whoever the app says made the request (a client token from a cookie): a game
    or replay is found only by its owner, so ids never need to be secret to be safe, and the
    caps work per owner (``games_per_client``, ``replays_per_client``: past it the owner's own least
    recently used one goes) under global ones (``max_games``, ``max_replays``): past those a new game or
    replay takes the place of one nobody has used for ``idle_seconds``, or is refused with a 503 (see
    ``caches.OwnedLRU``); another client's game in use is never pushed out. The agents of at most
    ``max_live_agents`` games stay built (an LRU too). ``clock``: monotonic seconds (tests pass a fake).
    """

    def __init__(
        self,
        agents: dict[str, AgentChoice] | None = None,
        *,
        max_games: int = DEFAULT_MAX_GAMES,
        games_per_client: int = DEFAULT_GAMES_PER_CLIENT,
        max_replays: int = DEFAULT_MAX_REPLAYS,
        replays_per_client: int = DEFAULT_REPLAYS_PER_CLIENT,
        max_live_agents: int = DEFAULT_MAX_LIVE_AGENTS,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        new_id: Callable[[], str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        if isinstance(max_games, bool) or not isinstance(max_games, int) or not 1 <= max_games <= MAX_SERVER_GAMES:
            raise TrinityError(
                f"max_games must be a whole number from 1 to {MAX_SERVER_GAMES:,}, got {max_games!r:.40}"
            )
        self.agents = catalog() if agents is None else agents
        self.games = OwnedLRU(max_games, games_per_client, idle_seconds, clock=clock)
        self.replays = OwnedLRU(max_replays, replays_per_client, idle_seconds, clock=clock)
        self.live = LRU(max_live_agents)
        self._new_id = new_id or (lambda: secrets.token_hex(16))
        self._reviewer = Reviewer()

    def agent(self, name: str) -> AgentChoice:
        choice = self.agents.get(name)
        if choice is None:
            raise ApiError(422, f"no agent named {name!r} on this server; GET /api/agents lists them")
        return choice

    def new_game(
        self,
        seats: Sequence[AgentChoice | None],
        *,
        draft: str,
        open_hands: bool,
        first_player: int | str,
        seed: int | None,
        owner: str,
    ) -> Game:
        """A new game of ``owner``'s (its least recently used game goes past its cap); a 503 if the store is full
        of games in use."""
        seed = secrets.randbelow(SEED_LIMIT) if seed is None else seed
        first = random.Random(seed ^ 0x5EED).randint(0, 1) if first_player == "random" else int(first_player)
        game = Game(
            self._new_id(),
            seats,
            draft=draft,
            open_hands=open_hands,
            first_player=first,
            seed=seed,
            on_build=self._built,
        )
        for old in _added(self.games, owner, game.id, game, "games"):
            old.drop_agents()
        return game

    def _built(self, game: Game) -> None:
        for old in self.live.add(game.id, game):
            if old is not game:
                old.drop_agents()

    def game(self, game_id: str, owner: str) -> Game:
        """``owner``'s game ``game_id``; a 404 if there is none, the same for another owner's game or a
        malformed id, and the message never repeats the id (it is the client's text, of any length)."""
        game = self.games.get(owner, game_id) if ID_PATTERN.fullmatch(game_id) else None
        if game is None:
            kept = self.games.per_owner
            raise ApiError(404, f"no game with that id (unknown, forgotten or another browser's; each keeps {kept})")
        return game

    def games_of(self, owner: str) -> list[Game]:
        """``owner``'s games, the most recently used first (the page's list of recent games)."""
        return self.games.items(owner)

    def review_game(self, game: Game, owner: str) -> tuple[UploadedReplay, bool]:
        """``game`` as an uploaded replay of ``owner``'s, for the replay page and its review; and whether it is
        new. The same one again while the store keeps it. A 409 while the game hides cards (not finished)."""
        if game.review_id is not None:
            kept = self.replays.get(owner, game.review_id)
            if kept is not None:
                return kept, False
        upload = self.add_replay(game.replay().to_dict(), owner)
        game.review_id = upload.id
        return upload, True

    def add_replay(self, document: Any, owner: str) -> UploadedReplay:
        """Load and check a replay document; ``ApiError`` 422 says what is wrong with it."""
        try:
            replay = Replay.from_dict(document)
            states = replay.states()
        except TrinityError as err:
            raise ApiError(422, f"not a valid replay: {err}") from None
        except RecursionError:
            raise ApiError(422, "not a valid replay: nested too deeply") from None
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as err:
            raise ApiError(422, f"not a valid replay: {type(err).__name__}: {err}") from None
        upload = UploadedReplay(self._new_id(), replay, states, plain_names(replay.agents, self.agents))
        _added(self.replays, owner, upload.id, upload, "replays")
        return upload

    def replay(self, replay_id: str, owner: str) -> UploadedReplay:
        """``owner``'s uploaded replay ``replay_id``; a 404 that does not repeat the id otherwise (as ``game``)."""
        upload = self.replays.get(owner, replay_id) if ID_PATTERN.fullmatch(replay_id) else None
        if upload is None:
            kept = self.replays.per_owner
            raise ApiError(404, f"no replay with that id (unknown, forgotten or another browser's; each keeps {kept})")
        return upload

    def review(self, upload: UploadedReplay, ply: int) -> dict[str, Any]:
        """The solver's review of position ``ply`` (call it off the event loop: up to a few seconds)."""
        if not 0 <= ply < len(upload.states):
            raise ApiError(422, f"ply must be 0-{len(upload.states) - 1}, got {ply}")
        return self._reviewer.review(upload, ply)


def _added(store: OwnedLRU, owner: str, key: str, item: Any, what: str) -> list[Any]:
    """``store.add``, its ``StoreFull`` as a 503 that says why and when to retry (``Retry-After``)."""
    try:
        return store.add(owner, key, item)
    except StoreFull as full:
        minutes = math.ceil(full.idle_seconds / 60)
        message = (
            f"the server is full: it keeps {full.cap} {what}, all in use in the last {minutes} minutes; "
            f"retry later (in about {full.retry_after} s)"
        )
        raise ApiError(503, message, headers={"retry-after": str(full.retry_after)}) from None
