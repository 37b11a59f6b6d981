"""The tools that start worker processes work from wherever a researcher calls them: a notebook, ``python -``, a
script without ``if __name__ == "__main__":``, with a policy defined right there (lambdas included); a worker that
dies is an error at once.

Each case runs in a subprocess under a deadline: with ``multiprocessing.Pool`` every one of them hung for ever (the
spawned workers crashed on the notebook's function or re-ran the unguarded script, and the pool replaced them).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from pools import small_pools

from trinity_env import scorecard
from trinity_env.cli import main as trinity
from trinity_env.evaluation import anchored

DEADLINE_S = 600
"""What a case may take before it counts as hung (a tiny card takes well under a minute on two busy cores)."""
TINY = scorecard.Protocol("tiny", rating_games=2, accuracy_per_count=3, puzzles=8)
MEASURED = ("protocol", "seed", "rating", "rating_draft", "accuracy", "value_sign", "puzzles", "endgames")
"""What a card measured (its label and provenance name the policy, which the CLI names differently)."""

POLICY = """
import numpy as np

WEIGHTS = np.random.default_rng(1).normal(size=(339, 256)).astype(np.float32)


def linear(observation, mask):
    logits = observation.astype(np.float32) @ WEIGHTS
    return int(np.where(mask > 0, logits, -np.inf).argmax())
"""


def _setup(folder: Path) -> str:
    """Small pools and the tiny protocol, as a test's first lines (what ``TINY`` and ``small_pools`` set here)."""
    files = {draft: str(path) for draft, path in small_pools(folder).items()}
    return textwrap.dedent(f"""
        import json
        from pathlib import Path

        import trinity_env
        from trinity_env import scorecard
        from trinity_env.evaluation import anchored

        anchored.POOL_FILES = {{draft: Path(path) for draft, path in {files!r}.items()}}
        TINY = scorecard.Protocol("tiny", rating_games=2, accuracy_per_count=3, puzzles=8)
    """)


@pytest.fixture(scope="module")
def cli_card(tmp_path_factory) -> dict:
    """The card ``trinity benchmark`` gives the same function, named by ``py:policy_module:make``."""
    folder = tmp_path_factory.mktemp("cli")
    (folder / "policy_module.py").write_text(POLICY + "\n\ndef make():\n    return linear\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(scorecard.PROTOCOLS, "quick", TINY)
        patch.setattr(anchored, "POOL_FILES", small_pools(folder))
        patch.syspath_prepend(str(folder))
        patch.chdir(folder)
        out = folder / "card.json"
        argv = [
            "benchmark",
            "--agent",
            "py:policy_module:make",
            "--allow-code",
            "--quiet",
            "--workers",
            "1",
            "--json",
            str(out),
        ]
        assert trinity(argv) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def _run(argv: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    """``argv`` in a session of its own, under the deadline; past it, the whole session is killed (workers a hung
    run left behind hold its pipes open) and the test fails saying it hung."""
    with subprocess.Popen(
        argv,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as process:
        try:
            out, err = process.communicate(stdin, timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            pytest.fail(f"hung: {' '.join(argv[:2])} ran past {DEADLINE_S} s\n{err[-2000:]}")
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def _measured(card: dict) -> dict:
    return {key: card[key] for key in MEASURED}


def test_a_notebook_benchmarks_its_own_function_with_workers_and_gets_the_cli_s_card(cli_card, tmp_path):
    out = tmp_path / "card.json"
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(_setup(tmp_path) + POLICY),
        nbformat.v4.new_code_cell(
            f"card = trinity_env.benchmark(linear, TINY)  # the default workers: every CPU\n"
            f"Path({str(out)!r}).write_text(json.dumps(card.to_json()))"
        ),
    ]
    client = NotebookClient(
        notebook, timeout=DEADLINE_S, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    assert _measured(json.loads(out.read_text(encoding="utf-8"))) == _measured(cli_card)


def test_an_unguarded_script_benchmarks_its_own_function_with_workers_and_gets_the_cli_s_card(cli_card, tmp_path):
    out = tmp_path / "card.json"
    script = tmp_path / "unguarded.py"
    call = (
        "card = trinity_env.benchmark(linear, TINY, workers=2)\n"
        f"Path({str(out)!r}).write_text(json.dumps(card.to_json()))\n"
    )
    script.write_text(_setup(tmp_path) + POLICY + call, encoding="utf-8")
    ran = _run([sys.executable, str(script)], tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert _measured(json.loads(out.read_text(encoding="utf-8"))) == _measured(cli_card)


def _stdin(code: str, cwd: Path) -> subprocess.CompletedProcess:
    """``code`` run as ``python -`` (no file, no ``__main__`` a worker could import), under the deadline."""
    return _run([sys.executable, "-"], cwd, code)


def test_python_stdin_plays_its_function_and_lambda_in_workers_as_in_process(tmp_path):
    code = POLICY + textwrap.dedent("""
        from trinity_env.evaluation.arena import round_robin

        agents = [linear, "greedy", lambda observation, mask: int(np.flatnonzero(mask)[-1])]
        pooled = round_robin(agents, 4, seed=1, workers=2, progress=False)
        alone = round_robin(agents, 4, seed=1, workers=1, progress=False)
        print(pooled.score.tolist() == alone.score.tolist(), pooled.score.sum())
    """)
    ran = _stdin(code, tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.split() == ["True", "12.0"], ran.stdout
    assert "cannot be sent" not in ran.stderr


def test_a_worker_that_dies_is_an_error_within_seconds(tmp_path):
    code = POLICY + textwrap.dedent("""
        import os
        import time

        from trinity_env.core.workers import WorkerDied
        from trinity_env.evaluation.arena import round_robin

        PARENT = os.getpid()


        def dies(observation, mask):
            if os.getpid() != PARENT:
                os._exit(3)  # in a worker only
            return linear(observation, mask)


        started = time.perf_counter()
        try:
            round_robin([dies, "greedy"], 200, workers=2, progress=False)
        except WorkerDied as err:
            print(f"{time.perf_counter() - started:.1f}", err)
    """)
    ran = _stdin(code, tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    seconds, message = ran.stdout.split(" ", 1)
    assert float(seconds) < 60 and "a worker process died" in message, ran.stdout


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie that nobody reaped yet is over)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except OSError:
        return False
    return "\nState:\tZ" not in status


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads processes' states in /proc")
def test_workers_end_with_a_parent_killed_outright(tmp_path):
    """``kill -9`` of a run (a scheduler's, a test's) stopped nothing: its workers waited for ever on a task queue whose
    write end each of them holds. They now end within seconds of their parent."""
    code = textwrap.dedent("""
        import os
        import signal
        import time

        from trinity_env.core.workers import run_unordered


        def slow(task):
            time.sleep(120)
            return task


        with run_unordered(slow, range(4), 2) as results:
            while len(results._pool._processes or {}) < 2:
                time.sleep(0.1)
            time.sleep(2)  # both started and working
            print(*results._pool._processes, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    ran = _stdin(code, tmp_path)
    assert ran.returncode == -signal.SIGKILL, ran.stderr[-2000:]
    workers = [int(pid) for pid in ran.stdout.split()]
    assert len(workers) == 2
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_running(pid) for pid in workers):
        time.sleep(0.2)
    assert not any(_running(pid) for pid in workers), "a worker outlived its killed parent"


def test_a_policy_that_cannot_travel_plays_in_this_process_said_once(capsys):
    import threading

    import numpy as np

    from trinity_env.evaluation.arena import CHUNK, round_robin

    lock = threading.Lock()

    def first(observation, mask):
        with lock:  # a lock pickles by no means: this closure cannot reach a worker
            return int(np.flatnonzero(mask)[0])

    pooled = round_robin([first, "greedy"], 2 * CHUNK, seed=2, workers=2, progress=False)  # two tasks
    again = round_robin([first, "greedy"], 2 * CHUNK, seed=2, workers=2, progress=False)
    alone = round_robin([first, "greedy"], 2 * CHUNK, seed=2, workers=1, progress=False)
    assert pooled.score.tolist() == again.score.tolist() == alone.score.tolist()
    lines = capsys.readouterr().err.splitlines()
    said = [line for line in lines if "cannot be sent to worker processes" in line]
    assert len(said) == 1 and "playing in this process" in said[0] and "first" in said[0], lines


def test_on_the_command_line_a_worker_that_dies_is_one_line_and_status_1(tmp_path):
    (tmp_path / "dying.py").write_text(
        textwrap.dedent("""
            import multiprocessing
            import os

            import numpy as np


            def act(observation, mask):
                if multiprocessing.parent_process() is not None:
                    os._exit(3)  # in a worker only
                return int(np.flatnonzero(mask)[0])


            def make():
                return act
        """),
        encoding="utf-8",
    )
    code = "import sys; from trinity_env.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = ["arena", "--agents", "py:dying:make", "greedy", "--games", "40", "--workers", "2", "--allow-code"]
    ran = _run([sys.executable, "-c", code, *argv, "--out", "out"], tmp_path)
    assert ran.returncode == 1, ran.stderr[-2000:]
    assert ran.stderr.splitlines()[-1].startswith("trinity arena: a worker process died"), ran.stderr[-2000:]
