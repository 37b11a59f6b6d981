"""Exact value targets in worker processes beside self-play: the AlphaZero trainer's labellers.

``Labeller(workers)`` starts ``workers`` processes, each holding a ``Solver`` (its transposition
table lives between batches). ``submit(positions)`` hands them a fast-engine ``Batch`` of
open-hand play positions and returns at once; ``collect()`` waits for the batch and returns
``Solver().value`` of each position, in order (int8: +1, 0 or -1 for the player to move). The
values are exact, so they do not depend on the number of workers, on how the batch is split
between them or on what their tables held: only on the positions.

- **Processes.** Each worker is a fresh interpreter (``python -c``, started by ``subprocess``:
  an exec, as multiprocessing's ``spawn`` does, so no copy of the trainer's torch or numba
  threads), talking to the trainer over a socket pair with ``multiprocessing.connection``. A
  batch is sent as the ``Batch``'s int8 arrays (about 270 bytes a position) and split between
  the workers by game (``groups``), the costliest games first, each game's positions in play
  order so the later ones find the earlier ones' lines in the table. (Not multiprocessing's
  ``spawn`` itself: it imports the trainer's main module, torch and all, into every worker, and
  its workers share the terminal's process group, so a Ctrl-C during their start-up would kill
  them; ignoring SIGINT in the trainer around the start instead can lose a Ctrl-C meant for it.)
- **Signals and deaths.** Each worker runs in a session of its own, so a Ctrl-C at the
  terminal (sent to the foreground process group) reaches the trainer only: its graceful stop
  handles it, then closes the workers. A worker ignores SIGINT sent to it directly too (once
  started). Each watches its parent: when the trainer dies (even by SIGKILL, where nothing of
  it runs) the worker exits within about ``WATCH_SECONDS``, mid-solve too. ``close()`` (also on
  leaving a ``with``) ends them at once.
- **Faults.** An exception inside a worker is raised in the trainer by ``collect()`` as one
  ``LabellingError`` carrying the worker's traceback. A worker that dies is started again and
  given its part of the batch again (the values cannot change); one that dies more than
  ``max_restarts`` times on the same batch raises ``LabellingError``.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
import traceback
from contextlib import suppress
from multiprocessing import Pipe, connection
from pathlib import Path
from typing import Any

import numpy as np

from trinity_env.fast.layout import Batch
from trinity_env.search.solver import TABLE_BITS, Solver
from trinity_env.spec.config import make_config

WATCH_SECONDS = 0.5
"""How often a worker checks that the trainer still runs (it exits once it does not)."""
_ROOT = str(Path(__file__).resolve().parent.parent)
"""Where the trainers' package is imported from: the worker imports this very module."""
_START = f"import sys; sys.path.insert(0, sys.argv[1]); from {__package__}.labelling import _main; _main()"
"""``training`` in a checkout, ``trinity_training`` in the installed wheel."""


class LabellingError(RuntimeError):
    """A labelling worker failed (its traceback in the message) or kept dying on the same positions."""


# ------------------------------------------------------------------------------ the worker


def _watch(parent: int) -> None:
    """Exit the worker once its parent is gone (re-parented: the trainer died, perhaps by SIGKILL)."""
    while True:
        time.sleep(WATCH_SECONDS)
        if os.getppid() != parent:
            os._exit(0)


def _warm_up(solver: Solver) -> None:
    """Solve a small position once, so that the solver's compiled code is loaded before the first batch comes."""
    try:
        rng, config = random.Random(0), make_config(open_hands=True)
        state = config.new_game(rng)
        while state.is_over or state.phase != "play" or state.owners.count(-1) > 4:
            state = config.new_game(rng) if state.is_over else state.apply(rng.choice(state.legal_actions()))
        solver.value(state)
    except Exception:  # only a head start: a real fault shows on the first batch, with its traceback
        pass


def _main() -> None:
    """A worker process's entry (``_START``): ``python -c ... ROOT LINK PARENT TABLE_BITS``."""
    link, parent, table_bits = (int(argument) for argument in sys.argv[2:5])
    _serve(connection.Connection(link), parent, table_bits)


def _serve(link: Any, parent: int, table_bits: int) -> None:
    """A worker's loop: receive ``(job, arrays)``, answer ``(job, values, seconds, error)``; ``None`` ends it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch, args=(parent,), daemon=True, name="watch-parent").start()
    if os.getppid() != parent:  # the trainer died while this worker started
        return
    solver = Solver(table_bits)
    _warm_up(solver)
    while True:
        try:
            message = link.recv()
        except (EOFError, OSError):  # the trainer closed its end or died
            return
        if message is None:
            return
        job, arrays = message
        started = time.perf_counter()
        try:
            batch = Batch(*arrays)
            values = np.array([solver.value_of_row(batch, b) for b in range(batch.size)], np.int8)
            reply = (job, values, time.perf_counter() - started, None)
        except Exception:  # every fault goes back to the trainer, which raises it
            reply = (job, None, time.perf_counter() - started, traceback.format_exc())
        link.send(reply)


# ------------------------------------------------------------------------------ the trainer's side


def split(positions: Batch, groups: np.ndarray | None, parts: int) -> list[np.ndarray]:
    """The positions' indices in ``parts`` shares of about equal cost, whole groups (games) each, the costliest
    groups first; in each share, a group's positions from the most empty tiles down (play order)."""
    n = positions.size
    groups = np.arange(n) if groups is None else np.asarray(groups)
    empty = (positions.owner == -1).sum(axis=1)
    cost = 7.0**empty  # a tile more costs the solver about 7 times as much
    names, inverse = np.unique(groups, return_inverse=True)
    totals = np.bincount(inverse, weights=cost, minlength=names.size)
    loads = np.zeros(parts)
    owner = np.zeros(names.size, np.int64)
    for group in sorted(range(names.size), key=lambda k: (-totals[k], k)):
        owner[group] = int(np.argmin(loads))
        loads[owner[group]] += totals[group]
    shares = []
    for part in range(parts):
        members = np.flatnonzero(owner[inverse] == part)
        shares.append(members[np.lexsort((members, -empty[members], inverse[members]))])
    return shares


class Labeller:
    """``workers`` solver processes (see the module's docstring); one batch at a time: ``submit``, then ``collect``."""

    def __init__(self, workers: int, *, table_bits: int = TABLE_BITS, max_restarts: int = 3):
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"a labeller needs workers >= 1, got {workers!r}")
        self.workers, self.table_bits, self.max_restarts = workers, table_bits, max_restarts
        self.restarts = 0
        """Workers started again after they died (over the labeller's life)."""
        self.seconds = 0.0
        """The workers' solving seconds for the last collected batch (summed over the workers)."""
        self._processes: list[subprocess.Popen | None] = [None] * workers
        self._links: list[Any] = [None] * workers
        self._parts: list[tuple[np.ndarray, tuple[np.ndarray, ...]] | None] = [None] * workers
        self._job = 0
        self._size = 0
        self._closed = False
        try:
            for w in range(workers):
                self._start(w)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Labeller:
        return self

    def __exit__(self, *error: object) -> None:
        self.close()

    def pids(self) -> list[int]:
        """The workers' process ids (for tests and diagnostics)."""
        return [process.pid for process in self._processes if process is not None]

    @property
    def busy(self) -> bool:
        """Whether a batch was submitted and not yet collected."""
        return any(part is not None for part in self._parts)

    def submit(self, positions: Batch, groups: np.ndarray | None = None) -> None:
        """Hand the workers ``positions`` (open-hand play positions, not over) to value; returns at once.
        ``groups``: each position's game (positions of a game go to one worker, in order), or ``None``."""
        if self._closed:
            raise LabellingError("the labeller is closed")
        if self.busy:
            raise LabellingError("a batch is already being labelled: collect() it first")
        self._job += 1
        self._size = positions.size
        self.seconds = 0.0
        for w, indices in enumerate(split(positions, groups, self.workers)):
            if indices.size:
                self._parts[w] = (indices, tuple(np.ascontiguousarray(a[indices]) for a in positions))
                self._send(w)

    def collect(self) -> np.ndarray:
        """The submitted positions' exact values, in order (waits for the workers; an empty array if none)."""
        if self._closed:
            raise LabellingError("the labeller is closed")
        values = np.zeros(self._size, np.int8)
        deaths = [0] * self.workers
        while self.busy:
            waiting = [w for w in range(self.workers) if self._parts[w] is not None]
            connection.wait([self._links[w] for w in waiting], timeout=WATCH_SECONDS)
            for w in waiting:
                try:
                    reply = self._links[w].recv() if self._links[w].poll() else None
                except (EOFError, OSError):  # its end is closed: it died, or is as good as dead
                    reply = None
                    self._processes[w].kill()
                    self._processes[w].wait()
                if reply is not None:
                    job, answer, seconds, error = reply
                    if job != self._job:
                        continue  # an answer to a batch given up on: never the case one batch at a time
                    if error is not None:
                        self._fail(f"labelling worker {w} (pid {self._processes[w].pid}) failed:\n{error}")
                    values[self._parts[w][0]] = answer
                    self.seconds += seconds
                    self._parts[w] = None
                elif self._processes[w].poll() is not None:
                    deaths[w] += 1
                    if deaths[w] > self.max_restarts:
                        self._fail(
                            f"labelling worker {w} died {deaths[w]} times on the same positions "
                            f"(last exit status {self._processes[w].returncode})"
                        )
                    self._restart(w)
        return values

    def close(self) -> None:
        """End the workers now (a batch in progress is dropped); the labeller cannot be used after."""
        self._closed = True
        for process in self._processes:
            if process is not None and process.poll() is None:
                process.terminate()
        for w, process in enumerate(self._processes):
            if process is None:
                continue
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            self._links[w].close()
            self._processes[w] = None
            self._parts[w] = None

    # -------------------------------------------------------------------------- one worker

    def _start(self, w: int) -> None:
        ours, theirs = Pipe()
        try:
            command = [
                sys.executable,
                "-c",
                _START,
                _ROOT,
                str(theirs.fileno()),
                str(os.getpid()),
                str(self.table_bits),
            ]
            # a session of its own: the terminal's Ctrl-C (to the foreground process group) reaches the trainer only
            process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, pass_fds=(theirs.fileno(),), start_new_session=True
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._processes[w], self._links[w] = process, ours

    def _send(self, w: int) -> None:
        indices, arrays = self._parts[w]
        with suppress(OSError):  # it died before reading: collect() starts it again and sends the part again
            self._links[w].send((self._job, arrays))

    def _restart(self, w: int) -> None:
        self._links[w].close()
        self.restarts += 1
        self._start(w)
        self._send(w)

    def _fail(self, message: str) -> None:
        self.close()
        raise LabellingError(message)


__all__ = ["Labeller", "LabellingError", "split"]
