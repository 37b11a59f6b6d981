"""``EngineWarmup``: the engine compiled in the background while the server already answers.

On a fresh install numba compiles each kernel family the first time it runs (the first computer move
waited about 13 s, the first solver review over a minute); ``trinity serve`` runs
``trinity_env.prepare``'s families in a daemon thread at start (those ``families_to_warm`` names) and
``GET /api/engine`` says how far it is, so the page can say "preparing the engine (first run)" instead of stalling.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

from trinity_env.prepare import FAMILIES, families_for, warm

WAITING, PREPARING, READY, FAILED = "waiting", "preparing", "ready", "failed"


def families_to_warm(specs: Iterable[str], first: Sequence[str] = ()) -> list[str]:
    """The kernel families a server of agents ``specs`` runs on, those of ``first`` (the default opponent)
    first, and the exact solver (the replay review) last: it takes the longest to compile."""
    order = families_for(list(first)) + families_for(list(specs)) + ["exact solver"]
    return list(dict.fromkeys(order))


class EngineWarmup:
    """Runs kernel families once, in order, in a daemon thread; ``view()`` says where it stands.

    ``run`` runs one family (default: ``prepare.warm``, which also writes a line on ``out`` when a family
    takes more than a second: a cold cache). A family that fails is marked ``failed`` with its error and
    the rest still run: the agent that needs it will say the same when asked to move. An empty list is
    ready at once (an app made without a warm-up, as in tests).
    """

    def __init__(
        self,
        families: Sequence[str],
        *,
        run: Callable[[str], object] | None = None,
        out: TextIO | None = None,
    ):
        unknown = [name for name in families if name not in FAMILIES]
        if unknown:
            raise ValueError(f"unknown kernel family {unknown[0]!r}; the families are: {', '.join(FAMILIES)}")
        self.families = list(families)
        self._run = run or (lambda name: warm([name], out=out))
        self._states = {name: WAITING for name in self.families}
        self._seconds: dict[str, float] = {}
        self._errors: dict[str, str] = {}
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self.started: float | None = None
        if not self.families:
            self._done.set()

    def start(self) -> EngineWarmup:
        """Start the background run (once; later calls do nothing); returns ``self``."""
        with self._lock:
            if self._thread is not None or self._done.is_set():
                return self
            self.started = time.time()
            self._thread = threading.Thread(target=self._work, name="trinity-engine-warmup", daemon=True)
            self._thread.start()
        return self

    def _work(self) -> None:
        try:
            for name in self.families:
                with self._lock:
                    self._states[name] = PREPARING
                begun = time.perf_counter()
                try:
                    self._run(name)
                    state, error = READY, None
                except Exception as err:  # any failure is reported, and the other families still run
                    state, error = FAILED, f"{type(err).__name__}: {' '.join(str(err).split())[:200]}"
                with self._lock:
                    self._states[name] = state
                    self._seconds[name] = round(time.perf_counter() - begun, 3)
                    if error is not None:
                        self._errors[name] = error
        finally:
            self._done.set()

    @property
    def ready(self) -> bool:
        """Whether every family has run (or failed): nothing is compiling any more."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until ready (or ``timeout`` seconds); whether it is ready."""
        return self._done.wait(timeout)

    def view(self) -> dict[str, Any]:
        """Where the warm-up stands, for ``GET /api/engine``: ``ready``, the family ``preparing`` now, and each
        family's state and seconds."""
        with self._lock:
            families = [
                {"name": name, "state": self._states[name], "seconds": self._seconds.get(name)}
                | ({"error": self._errors[name]} if name in self._errors else {})
                for name in self.families
            ]
        preparing = next((f["name"] for f in families if f["state"] == PREPARING), None)
        return {
            "ready": self.ready,
            "started": self._thread is not None,
            "preparing": preparing,
            "done": sum(1 for f in families if f["state"] in (READY, FAILED)),
            "families": families,
        }
