"""What a fresh install waits for: each kernel family's cold compile, and the first solve, MCTS move and review.

    python -m benchmarks.first_run

Cold means an empty numba cache (``NUMBA_CACHE_DIR`` pointed at a new folder, as on a fresh
clone); warm is the same command run again. Every figure is a fresh process's wall time, so
imports count too. The commands are the README's, on the files in ``examples/``:
``trinity solve examples/positions/midgame.json``, one move of ``mcts:400`` on the opening
position (what ``trinity play mcts:400`` does before its first move), and
``trinity review examples/replays/mcts_vs_mcts.json``. Issue 26's target: each first command
at most 10 s on a fresh install. The Makefile's install step compiles every family (``trinity
prepare``), so after the README's set-up a first command is the warm figure; the cold one is what a
bare ``pip install`` meets. Run it on a quiet machine (the load average is printed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import load_average

ROOT = Path(__file__).resolve().parent.parent
TRINITY = [sys.executable, "-m", "trinity_env.cli"]
MCTS_MOVE = (
    "from trinity_env.agents import make; from trinity_env.core import GameState; import json; "
    "from trinity_env.spec.observation import observation_dict; "
    "s = GameState.from_dict(json.load(open('examples/positions/opening.json'))); "
    "make('mcts:400,seed=0').act(observation_dict(s, s.to_move, True), s)"
)
COMMANDS = {
    "trinity solve (midgame)": [*TRINITY, "solve", "examples/positions/midgame.json"],
    "first mcts:400 move": [sys.executable, "-c", MCTS_MOVE],
    "trinity review (a replay)": [*TRINITY, "review", "examples/replays/mcts_vs_mcts.json", "--quiet"],
}


def timed(command: list[str], cache: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        command,
        cwd=ROOT,
        env=os.environ | {"NUMBA_CACHE_DIR": cache},
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def main() -> None:
    load = load_average()
    print(f"load average {load} on {os.cpu_count()} cores")
    print("each kernel family's first run in one process, cold (an empty cache) then warm:")
    with tempfile.TemporaryDirectory() as cache:
        script = "from trinity_env.prepare import prepare; import json; print(json.dumps(prepare(quiet=True)))"
        for label in ("cold", "warm"):
            out = subprocess.run(
                [sys.executable, "-c", script],
                cwd=ROOT,
                check=True,
                capture_output=True,
                text=True,
                env=os.environ | {"NUMBA_CACHE_DIR": cache},
            )
            seconds = json.loads(out.stdout)
            print(
                f"  {label}: "
                + ", ".join(f"{name} {s:.1f} s" for name, s in seconds.items())
                + f"; all {sum(seconds.values()):.1f} s"
            )
    print("first commands, each in a fresh process (seconds):")
    print(f"  {'command':<28} {'cold':>6} {'warm':>6}")
    for name, command in COMMANDS.items():
        with tempfile.TemporaryDirectory() as cache:
            cold, warm = timed(command, cache), timed(command, cache)
        verdict = "meets" if cold <= 10 else "misses"
        print(f"  {name:<28} {cold:6.1f} {warm:6.1f}   ({verdict} the 10 s target cold)")
    print("after the README's set-up (any make target's install step runs trinity prepare) a first command is")
    print("warm; cold is a bare pip install, where each command says what it is preparing")
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
