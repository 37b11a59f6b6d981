"""What the solved-openings tests share (``tests/test_openings*.py``): small solver tables, late-game deals that
solve in milliseconds, the records of a file, and the command run in this process or in a fresh one."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from trinity_env.cli import main
from trinity_env.evaluation.openings import LateGame

BITS = 16  # a small table: the positions are small
LATE = LateGame(6)
BIG = 10**9  # nodes: far more than any late position needs


def records_in(path: Path) -> list[dict]:
    """The records of a JSON-lines file, in its order."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def without_time(record: dict) -> dict:
    """A record without its ``seconds``: what is the same on every run."""
    return {k: v for k, v in record.items() if k != "seconds"}


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``trinity ARGV`` in this process: its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


CLI_SCRIPT = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from trinity_env.cli import main; sys.exit(main(sys.argv[1:]))"
)  # the default handler even where the test runner ignores SIGINT (a background job)
