"""``trinity serve`` in a subprocess for the web tests: started on a free loopback port, stopped with Ctrl-C.

It needs no Starlette TestClient, so the browser tests can use it as well as the API's."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_serve(seconds: float = 60) -> tuple[subprocess.Popen, str]:
    """``trinity serve`` on a free port, once it answers ``/api/agents``: the process and its base URL.

    A server that exits or does not answer within ``seconds`` is killed and the test fails with its stderr."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "trinity_env.cli", "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(f"{base}/api/agents", timeout=5):
                return process, base
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"trinity serve did not start: {process.communicate()[1]}")
            time.sleep(0.3)


def stop_serve(process: subprocess.Popen) -> tuple[str, str]:
    """Ctrl-C, then what the server wrote (stdout, stderr); one that does not stop within 30 s is killed."""
    process.send_signal(2)
    try:
        return process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.communicate()
