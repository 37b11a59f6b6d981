"""Solved openings on a Ray cluster: each deal a Ray task (``trinity solve-openings --ray``).

``ray_cluster(address)`` connects to a cluster (or starts one in this process) and gives a ``RayCluster``, which
``trinity_env.evaluation.openings.solve_openings`` takes as its ``cluster``: the deals run as tasks, at most two per
CPU outstanding, a task whose worker died is run again (``RAY_RETRIES``), and leaving early (Ctrl-C) cancels the
outstanding ones. Ray is optional (the ``rllib`` extra) and imported only by ``ray_cluster``.
"""

from __future__ import annotations

import logging
import re
import socket
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from trinity_env.core import ArgumentError
from trinity_env.evaluation.openings import Deal, solve_deal
from trinity_env.evaluation.openings_file import OpeningsError, whole

RAY_RETRIES = 3
"""How often Ray runs a deal again whose worker died (a killed process, a lost node) before it gives up."""
WAIT_STEP = 0.5
"""Seconds the Ray path waits for a result before it looks again (Ctrl-C is honoured between looks)."""
CONNECT_TIMEOUT = 5.0
"""Seconds a cluster address gets to accept a connection before ``ray_cluster`` calls it unreachable."""

_ADDRESS_FORMS = "local, auto, HOST:PORT or ray://HOST:PORT"


def check_ray_address(address: str) -> tuple[str, int] | None:
    """The host and port to reach for ``address`` (``None`` for ``local`` and ``auto``); ``OpeningsError``
    when it is none of the forms Ray takes."""
    if address in ("local", "auto"):
        return None
    rest = address.removeprefix("ray://")
    host, colon, port = rest.rpartition(":")
    host = host.strip("[]")
    if (
        not colon
        or not host
        or not port.isascii()
        or not port.isdigit()
        or not 1 <= int(port) <= 65535
        or any(ch.isspace() or ch in "/?#@" for ch in host)
    ):
        raise OpeningsError(f"--ray {address!r}: not a cluster address (expected {_ADDRESS_FORMS})")
    return host, int(port)


class RayCluster:
    """A connection to a Ray cluster on which each deal is a task (``ray_cluster`` makes one)."""

    def __init__(self, ray: Any, address: str):
        self.ray = ray
        self.address = address
        self._solve = ray.remote(num_cpus=1, max_retries=RAY_RETRIES)(solve_deal)

    def cpus(self) -> int:
        """The cluster's CPUs (at least one)."""
        return max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    @contextmanager
    def results(
        self, tasks: Iterable[tuple[int, int, int, Deal, int]], failed: list[tuple[int, str]]
    ) -> Iterator[Iterator[dict]]:
        """Each task's record as it finishes, with at most two tasks per CPU outstanding. A task that
        fails for good (its retries spent) is added to ``failed`` instead. Leaving the block early (Ctrl-C)
        cancels every outstanding task; the finished ones were handed out already."""
        ray = self.ray
        pending: dict[Any, int] = {}

        def run() -> Iterator[dict]:
            window = 2 * self.cpus()
            queue = iter(tasks)
            while True:
                while len(pending) < window and (task := next(queue, None)) is not None:
                    pending[self._solve.remote(*task)] = task[0]
                if not pending:
                    return
                done, _ = ray.wait(list(pending), num_returns=1, timeout=WAIT_STEP)
                for ref in done:
                    seed = pending.pop(ref)
                    try:
                        record = ray.get(ref)
                    except ray.exceptions.RayError as err:
                        failed.append((seed, _why(err)))
                        continue
                    yield record

        try:
            yield run()
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)


def _why(err: BaseException) -> str:
    """A failed task's error in one line: the task's own exception where Ray wraps one, without colours."""
    cause = getattr(err, "cause", None)
    shown = cause if isinstance(cause, BaseException) else err
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(shown)).strip()
    return f"{type(shown).__name__}: {text.splitlines()[0]}" if text else type(shown).__name__


@contextmanager
def ray_cluster(address: str, cpus: int | None = None) -> Iterator[RayCluster]:
    """Connect to the Ray cluster at ``address`` (``HOST:PORT``, ``ray://HOST:PORT`` or ``auto``), or
    start one in this process (``local``, with ``cpus`` CPUs: the deals solved at once; default all).

    Checked before any work: a bad or unreachable address, or Ray not installed, is an
    ``OpeningsError`` in one line. If this process is connected already (``ray.init`` was called), that
    connection is used and left open; otherwise the connection is closed (a local cluster stopped) on leaving.
    """
    if not isinstance(address, str):
        raise ArgumentError(f"the Ray address must be a string, got {address!r}")
    target = check_ray_address(address)
    if cpus is not None and not whole(cpus, 1):
        raise ArgumentError(f"cpus must be a positive int, got {cpus!r}")
    if cpus is not None and address != "local":
        raise ArgumentError("a cluster's own CPUs decide how many deals run at once: give cpus only for a local one")
    try:
        import ray
    except ModuleNotFoundError:
        raise OpeningsError("--ray needs Ray, the rllib extra: pip install 'trinity-towers[rllib]'") from None
    owned = not ray.is_initialized()
    if owned:
        if target is not None:
            try:
                socket.create_connection(target, timeout=CONNECT_TIMEOUT).close()
            except OSError as err:
                raise OpeningsError(f"--ray {address}: cannot reach the cluster ({err.strerror or err})") from None
        try:
            if address == "local":
                ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
            else:
                ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        except (ConnectionError, RuntimeError, ValueError, TimeoutError) as err:
            message = " ".join(str(err).split()) or type(err).__name__
            raise OpeningsError(f"--ray {address}: cannot connect ({message})") from None
    try:
        yield RayCluster(ray, address)
    finally:
        if owned:
            ray.shutdown()
