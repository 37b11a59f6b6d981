"""Ctrl-C and SIGTERM, for the length of a block: who handles them, and holding them back.

A long run stops on either (a shell's background job inherits SIGINT ignored, and SIGTERM would otherwise kill it
without a word); a short step that must finish whole once begun (a file's write, a finished shard and its manifest
entry) holds them until its end. Both install handlers and put the ones before them back, here alone.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_ARRIVED: list[int] = []
"""The stop signals a ``stop_raised`` block has received; emptied when the block ends."""


@contextmanager
def stop_raised(handler: Callable[[int, FrameType | None], object]) -> Iterator[bool]:
    """``stops_handled_by(handler)``, each signal also noted for ``check_stopped``: a ``KeyboardInterrupt`` that
    ``handler`` raises inside a weakref callback or a ``__del__`` (run by the garbage collector at any moment) is
    printed and dropped by Python, and the run would go on as if never stopped."""

    def noted(signum: int, frame: FrameType | None) -> object:
        _ARRIVED.append(signum)
        return handler(signum, frame)

    try:
        with stops_handled_by(noted) as installed:
            yield installed
    finally:
        _ARRIVED.clear()


def check_stopped() -> None:
    """Raise ``KeyboardInterrupt`` where a stop arrived inside a ``stop_raised`` block: long loops call it between
    their steps (a game, a chunk), so a stop whose first ``KeyboardInterrupt`` was lost still stops the run there."""
    if _ARRIVED:
        raise KeyboardInterrupt


@contextmanager
def stops_handled_by(handler: Callable[[int, FrameType | None], object]) -> Iterator[bool]:
    """Inside the block Ctrl-C and SIGTERM call ``handler``; after it the handlers before it are back. Yields whether
    it installed ``handler``: not outside the main thread (where no handler runs), nor where a handler before it was
    set outside Python (``signal.getsignal`` gives ``None``: it could not be put back), and the block runs as is."""
    if threading.current_thread() is not threading.main_thread():
        yield False
        return
    before = [signal.getsignal(signum) for signum in STOP_SIGNALS]
    if None in before:
        yield False
        return
    for signum in STOP_SIGNALS:
        signal.signal(signum, handler)
    try:
        yield True
    finally:
        for signum, previous in zip(STOP_SIGNALS, before, strict=True):
            signal.signal(signum, previous)


@contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait for the end of the block, then act as they would have (the handlers before it run):
    for a short step that must finish whole once begun, where being stopped inside would lose the work done or raise
    a library's error in place of the stop (a zip member left open)."""
    arrived: list[int] = []
    try:
        with stops_handled_by(lambda signum, frame: arrived.append(signum)):
            yield
    finally:
        for signum in dict.fromkeys(arrived):
            signal.raise_signal(signum)
