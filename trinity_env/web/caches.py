"""The bounded maps behind ``GameStore``: ``LRU`` (the games whose agents stay built) and ``OwnedLRU``
(games and replays by owner), plus ``StoreFull``, what ``OwnedLRU.add`` raises when it has no room.

``OwnedLRU`` never pushes out an *active* item of another owner: past its global cap it reclaims the
least recently used item only if nobody has used it for ``idle_seconds``, and otherwise refuses the
new one (``StoreFull``; the app answers 503, retry later). Within one owner's own cap its least
recently used item goes, active or not: a client can only ever push out its own games.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any


class StoreFull(Exception):
    """No room for a new item: the global cap is reached and every item was used within ``idle_seconds``.
    ``retry_after``: whole seconds until the least recently used one turns idle (and so may be reclaimed)."""

    def __init__(self, cap: int, idle_seconds: float, retry_after: int):
        super().__init__(f"all {cap} places are in use (each used in the last {idle_seconds:g} s)")
        self.cap = cap
        self.idle_seconds = idle_seconds
        self.retry_after = retry_after


class LRU:
    """Items by key, at most ``cap``: adding one past it forgets the least recently used."""

    def __init__(self, cap: int):
        if cap < 1:
            raise ValueError(f"the cap must be at least 1, got {cap}")
        self.cap = cap
        self._items: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, key: str, item: Any) -> list[Any]:
        """Keep ``item`` as the most recent; the items this pushed out, oldest first."""
        evicted = []
        with self._lock:
            self._items[key] = item
            self._items.move_to_end(key)
            while len(self._items) > self.cap:
                evicted.append(self._items.popitem(last=False)[1])
        return evicted

    def get(self, key: str) -> Any | None:
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self._items.move_to_end(key)
            return item

    def __len__(self) -> int:
        return len(self._items)


class OwnedLRU:
    """Items by (owner, key): at most ``per_owner`` for each owner and ``cap`` in all.

    - Past ``per_owner`` the owner's own least recently used item goes (its own, never another's).
    - At ``cap`` the least recently used item of all is reclaimed if it has not been added or read for
      ``idle_seconds``; if it has, every item is in use and ``add`` raises ``StoreFull`` instead of
      pushing one out. So no client, however many fresh tokens it makes, can push out a game another
      client is playing: it can only fill the free places and then be refused.
    - A key held by another owner reads as missing.

    ``clock``: seconds, monotonic (``time.monotonic``; tests pass a fake one).
    """

    def __init__(
        self, cap: int, per_owner: int, idle_seconds: float, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if cap < 1 or per_owner < 1:
            raise ValueError(f"the caps must be at least 1, got {cap} and {per_owner}")
        if not idle_seconds >= 0:
            raise ValueError(f"idle_seconds must be at least 0, got {idle_seconds}")
        self.cap = cap
        self.per_owner = min(per_owner, cap)
        self.idle_seconds = idle_seconds
        self._clock = clock
        self._owners: dict[str, OrderedDict[str, Any]] = {}
        self._used: OrderedDict[tuple[str, str], float] = OrderedDict()  # every item, least recently used first
        self._lock = threading.Lock()

    def add(self, owner: str, key: str, item: Any) -> list[Any]:
        """Keep ``item`` as ``owner``'s most recent; the items this pushed out (at most one). ``StoreFull``
        if there is no room (nothing changes then)."""
        with self._lock:
            now = self._clock()
            items = self._owners.get(owner)
            evicted = []
            if items is None or key not in items:
                if items is not None and len(items) >= self.per_owner:
                    evicted.append(self._drop(owner, next(iter(items))))
                elif len(self._used) >= self.cap:
                    (old_owner, old_key), used = next(iter(self._used.items()))
                    if now - used < self.idle_seconds:
                        wait = math.ceil(used + self.idle_seconds - now)
                        raise StoreFull(self.cap, self.idle_seconds, max(1, wait))
                    evicted.append(self._drop(old_owner, old_key))
            items = self._owners.setdefault(owner, OrderedDict())
            items[key] = item
            items.move_to_end(key)
            self._used[(owner, key)] = now
            self._used.move_to_end((owner, key))
        return evicted

    def _drop(self, owner: str, key: str) -> Any:
        items = self._owners[owner]
        item = items.pop(key)
        del self._used[(owner, key)]
        if not items:
            del self._owners[owner]
        return item

    def get(self, owner: str, key: str) -> Any | None:
        """``owner``'s item ``key`` (now its most recent, used now), or ``None``."""
        with self._lock:
            items = self._owners.get(owner)
            item = None if items is None else items.get(key)
            if item is not None:
                items.move_to_end(key)
                self._used[(owner, key)] = self._clock()
                self._used.move_to_end((owner, key))
            return item

    def items(self, owner: str) -> list[Any]:
        """``owner``'s items, the most recently used first; reading them changes no recency."""
        with self._lock:
            return list(reversed(self._owners.get(owner, {}).values()))

    def __len__(self) -> int:
        return len(self._used)
