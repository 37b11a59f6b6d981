"""Worker processes that start from anywhere: a notebook, an interactive session, ``python -``, a script with or
without ``if __name__ == "__main__":``, with policies defined there, lambdas included.

multiprocessing's ``spawn`` fails in each of these the same way: every worker first runs the parent's main script
again (as ``__mp_main__``), and then looks up by name what it is sent. An unguarded script runs its whole body in
each worker, which tries to start a pool of its own and dies (the "bootstrapping phase" ``RuntimeError``); a function
defined in a notebook or ``python -`` has no name a worker can import. ``multiprocessing.Pool`` replaces each dead
worker, for ever, and the caller waits for results that never come. So here:

- ``spawn_context()``: spawned workers that never run the parent's main module;
- ``pack``/``unpack``: what travels to them is pickled with cloudpickle, which sends the functions and classes of
  ``__main__`` (and lambdas) by value, and anything importable by name;
- ``sendable``: whether something travels at all (a closure over a lock does not); the callers then play in this
  process, saying so in one line, once;
- ``run_unordered``: a ``concurrent.futures.ProcessPoolExecutor`` of such workers, so a worker that dies breaks the
  pool: ``WorkerDied`` reaches the caller at once, and no worker is ever replaced; a parent that dies (``kill -9``)
  takes its workers with it within a second or two.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing import context as mp_context
from multiprocessing import spawn
from typing import Any, TypeVar

from trinity_env.core.stops import check_stopped

T = TypeVar("T")
R = TypeVar("R")

_MAIN_KEYS = ("init_main_from_name", "init_main_from_path")
_without_main = threading.local()
_patch_lock = threading.Lock()
_said: set[str] = set()


class WorkerDied(BrokenProcessPool):
    """A worker process ended while the pool was in use (killed, out of memory, or a policy that exited it): the
    run stops at once with this error; nothing is retried."""


def _preparation_data(original: Callable[[str], dict]) -> Callable[[str], dict]:
    def without_main(name: str) -> dict:
        data = original(name)
        if getattr(_without_main, "active", False):
            for key in _MAIN_KEYS:
                data.pop(key, None)
        return data

    return without_main


class _Process(mp_context.SpawnProcess):
    """A spawned process whose preparation leaves the parent's main module out: it never runs again in a worker."""

    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        with _patch_lock:
            original = spawn.get_preparation_data
            spawn.get_preparation_data = _preparation_data(original)
            _without_main.active = True  # only this thread's spawn leaves main out
            try:
                return mp_context.SpawnProcess._Popen(process_obj)
            finally:
                _without_main.active = False
                spawn.get_preparation_data = original


class _Context(mp_context.SpawnContext):
    Process = _Process


_CONTEXT = _Context()


def spawn_context() -> multiprocessing.context.BaseContext:
    """A ``spawn`` context whose workers start as fresh interpreters that never import the parent's main module."""
    return _CONTEXT


def pack(value: object) -> bytes:
    """``value`` as bytes for a worker: cloudpickle, so ``__main__``'s functions and classes and lambdas go by value."""
    import cloudpickle

    return cloudpickle.dumps(value)


def unpack(data: bytes) -> Any:
    """What ``pack`` made, in the worker (plain ``pickle.loads``: cloudpickle's output needs nothing more)."""
    return pickle.loads(data)


def sendable(values: Iterable[tuple[str, object]], caller: str) -> bool:
    """Whether every ``(label, value)`` can travel to a worker; if one cannot, one line on standard error (once a
    process for that label and caller) says the run plays in this process instead."""
    for label, value in values:
        try:
            pack(value)
        except Exception as err:  # pickling raises many kinds (PicklingError, TypeError, AttributeError)
            line = (
                f"{caller}: {label} cannot be sent to worker processes ({type(err).__name__}): playing in this process"
            )
            if line not in _said:
                _said.add(line)
                print(line, file=sys.stderr, flush=True)
            return False
    return True


def _call(data: bytes) -> Any:
    function, task = unpack(data)
    return function(task)


PARENT_POLL_SECONDS = 1.0
"""How often a worker looks whether its parent is still there (``_end_with_parent``)."""


def _end_with_parent(parent: int) -> None:
    """A worker whose parent is gone (killed outright, crashed: nothing stopped the pool) ends itself within
    ``PARENT_POLL_SECONDS``: its task queue never reports the end (every worker holds the queue's write end too), so
    it would wait, or finish its task, and then wait for ever."""
    while True:
        time.sleep(PARENT_POLL_SECONDS)
        if os.getppid() != parent:
            os._exit(1)


def _start_worker(parent: int, initializer: Callable[..., None] | None, initargs: tuple) -> None:
    """Worker initializer: ends with its parent (``_end_with_parent``); Ctrl-C is the parent's to handle (it stops
    the pool); then the caller's initializer."""
    threading.Thread(target=_end_with_parent, args=(parent,), name="end-with-parent", daemon=True).start()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer(*initargs)


class Unordered(Iterator[R]):
    """The results of a pool's tasks in the order they finish; ``next(timeout)`` raises ``multiprocessing.TimeoutError``
    when none came in time. At most ``window`` tasks are queued at once, so a huge lazy ``tasks`` is never listed."""

    def __init__(self, pool: concurrent.futures.Executor, function: Callable[[T], R], tasks: Iterable[T], window: int):
        self._pool, self._function, self._tasks, self._window = pool, function, iter(tasks), window
        self._running: set[concurrent.futures.Future] = set()
        self._fill()

    def _fill(self) -> None:
        while len(self._running) < self._window:
            task = next(self._tasks, _END)
            if task is _END:
                return
            self._running.add(self._pool.submit(_call, pack((self._function, task))))

    def __next__(self) -> R:
        return self.next()

    def next(self, timeout: float | None = None) -> R:
        if not self._running:
            raise StopIteration
        check_stopped()  # a stop whose KeyboardInterrupt the garbage collector swallowed stops here
        done, _ = concurrent.futures.wait(self._running, timeout, concurrent.futures.FIRST_COMPLETED)
        if not done:
            raise multiprocessing.TimeoutError
        future = done.pop()
        self._running.discard(future)
        try:
            result = future.result()
        except BrokenProcessPool as err:
            raise WorkerDied(
                "a worker process died (killed, out of memory, or its policy ended the process): the run is stopped"
            ) from err
        self._fill()
        return result


_END = object()


def _stop(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Ends every worker now, dropping the queued tasks (Ctrl-C, an error)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)
    for process in processes:
        process.join()


@contextmanager
def run_unordered(
    function: Callable[[T], R],
    tasks: Iterable[T],
    workers: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple = (),
) -> Iterator[Unordered[R]]:
    """``function`` over ``tasks`` in ``workers`` spawned processes (``spawn_context``), results as they finish
    (``Unordered``); each worker runs ``initializer(*initargs)`` first (what can reach a worker only as it starts:
    shared memory; these travel by plain pickle). ``function`` and each task travel by ``pack``.

    Leaving the block normally waits for the workers to exit; leaving it with an exception (Ctrl-C, ``WorkerDied``)
    ends them at once, so queued tasks are dropped rather than waited for."""
    arguments = {"mp_context": _CONTEXT, "initializer": _start_worker, "initargs": (os.getpid(), initializer, initargs)}
    pool = concurrent.futures.ProcessPoolExecutor(workers, **arguments)
    try:
        if threading.current_thread() is threading.main_thread():
            # Spawned children inherit an ignored SIGINT, so a Ctrl-C that reaches the whole process group while
            # they are still importing does not print their tracebacks. They start as the first tasks are queued.
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                results = Unordered(pool, function, tasks, 2 * workers)
            finally:
                signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)
        else:
            results = Unordered(pool, function, tasks, 2 * workers)
        yield results
    except BaseException:
        _stop(pool)
        raise
    pool.shutdown(wait=True)
