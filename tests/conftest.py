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
