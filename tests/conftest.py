"""Fixtures shared by several test files, and one setting for every test process.

Torch, numpy's BLAS and onnxruntime's OpenMP get one thread per test process (set here, before any test
module imports them, and inherited by the processes tests start): pytest-xdist already runs a worker per core,
and on busy cores a second intra-op thread only spins at each barrier. Measured under load ~10 on 2 cores:
200 Adam steps of a 300-64-64-90 network took 14.1 CPU s (134 s wall) on torch's default 2 threads and
0.28 CPU s (3.5 s wall) on one. A test that needs more threads asks for them (``torch.set_num_threads``).
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import pytest  # noqa: E402


@pytest.fixture
def client():
    """A Starlette TestClient of the web app offering three small agents (``web_client.SMALL``)."""
    from web_client import small_client

    return small_client()


@pytest.fixture(autouse=True, scope="session")
def _the_shipped_accuracy_set_read_once_a_process():
    """``accuracy.load_set`` of the shipped set reads and checks it once a test process, not once a call: every
    score card, the accuracy command and the docs' snippets read it (5,506 positions, about 10 s a read on 2 busy
    cores) to keep its first few per count. Its ``Position`` values are frozen and each caller gets a list of its
    own; it is read again if its size or mtime changes, and any other file is read as before."""
    from trinity_env.evaluation import accuracy

    read, shipped = accuracy.load_set, os.path.realpath(accuracy.DEFAULT_SET)
    kept: dict[tuple[int, int], list] = {}

    def load_set(path=accuracy.DEFAULT_SET):
        if os.path.realpath(path) != shipped:
            return read(path)
        stat = os.stat(shipped)
        key = (stat.st_size, stat.st_mtime_ns)
        if key not in kept:
            kept.clear()
            kept[key] = read(path)
        return list(kept[key])

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(accuracy, "load_set", load_set)
        yield
