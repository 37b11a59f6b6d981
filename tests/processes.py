"""Child processes in tests: none outlives the test that started it."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator


@contextlib.contextmanager
def reaped(process: subprocess.Popen) -> Iterator[subprocess.Popen]:
    """``process``, killed and waited for on the way out if it still runs (a test that fails leaves none behind)."""
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
