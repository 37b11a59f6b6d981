"""Solved openings on Ray (``solve_openings(cluster=...)``, ``trinity solve-openings --ray``): the records are the local
ones, a killed task is retried and a failed one reported, Ctrl-C cancels the outstanding tasks, and a bad address
is one line. Marked ``ray``: they need the rllib extra, and ``make test-rllib`` runs them on a local cluster of two
CPUs.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from openings_common import BIG, BITS, CLI_SCRIPT, LATE, records_in, run_cli, without_time

from trinity_env.core import GameState
from trinity_env.evaluation.match import RunInterrupted
from trinity_env.evaluation.openings import solve_deal, solve_openings
from trinity_env.integrations.ray_cluster import ray_cluster

# ---------------------------------------------------------------------- Ray (the rllib extra)


@pytest.fixture(scope="module")
def ray_local():
    """A local Ray cluster of two CPUs for the module's Ray tests; this module's deal sources travel by value."""
    ray = pytest.importorskip("ray", reason="the rllib extra (Ray) is not installed")
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


class _KilledOnce:
    """A deal source whose worker process is killed (SIGKILL) the first time it deals ``seed``."""

    def __init__(self, folder: Path, seed: int):
        self.folder, self.seed, self.name = str(folder), seed, LATE.name

    def __call__(self, seed: int) -> GameState:
        marker = Path(self.folder) / f"killed-{seed}"
        if seed == self.seed and not marker.exists():
            marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return LATE(seed)


class _Broken:
    """A deal source that fails for one seed (a bug in a task: Ray does not retry it)."""

    name = LATE.name

    def __call__(self, seed: int) -> GameState:
        if seed == 2:
            raise RuntimeError("no deal for seed 2")
        return LATE(seed)


class _Slow:
    """Deals quickly up to ``fast`` seeds, then takes ``seconds`` per deal."""

    def __init__(self, fast: int, seconds: float):
        self.fast, self.seconds, self.name = fast, seconds, LATE.name

    def __call__(self, seed: int) -> GameState:
        if seed >= self.fast:
            time.sleep(self.seconds)
        return LATE(seed)


@pytest.mark.ray
def test_on_ray_the_records_are_the_local_ones_and_a_rerun_skips_them(ray_local, tmp_path):
    local = solve_openings(range(8), BIG, tmp_path / "local.jsonl", table_bits=BITS, deal=LATE, progress=False)
    out = tmp_path / "ray.jsonl"
    with ray_cluster("local") as cluster:
        run = solve_openings(range(5), BIG, out, table_bits=BITS, deal=LATE, cluster=cluster, progress=False)
        assert sorted(run.new) == [0, 1, 2, 3, 4] and not run.failed
        more = solve_openings(range(8), BIG, out, table_bits=BITS, deal=LATE, cluster=cluster, progress=False)
    assert sorted(more.new) == [5, 6, 7] and more.skipped == 5
    records = {r["seed"]: without_time(r) for r in records_in(out)}
    assert len(records) == 8 and records == {s: without_time(r) for s, r in local.records.items()}
    assert ray_local.is_initialized()  # a connection made by the caller is left open


@pytest.mark.ray
def test_on_ray_a_killed_task_is_retried_and_a_failed_one_reported_not_recorded(ray_local, tmp_path):
    out = tmp_path / "killed.jsonl"
    with ray_cluster("local") as cluster:
        run = solve_openings(
            range(4), BIG, out, table_bits=BITS, deal=_KilledOnce(tmp_path, 1), cluster=cluster, progress=False
        )
    assert (tmp_path / "killed-1").exists()  # the worker did die, mid-task
    assert sorted(run.new) == [0, 1, 2, 3] and not run.failed
    assert without_time(run.records[1]) == without_time(solve_deal(1, BIG, BITS, LATE))
    broken = tmp_path / "broken.jsonl"
    with ray_cluster("local") as cluster:
        run = solve_openings(range(4), BIG, broken, table_bits=BITS, deal=_Broken(), cluster=cluster, progress=False)
    assert sorted(run.new) == [0, 1, 3] and [seed for seed, _ in run.failed] == [2]
    assert "no deal for seed 2" in run.failed[0][1]
    assert sorted(r["seed"] for r in records_in(broken)) == [0, 1, 3]  # a rerun will try seed 2 again


@pytest.mark.ray
def test_on_ray_ctrl_c_cancels_the_outstanding_tasks_and_keeps_the_finished(ray_local, tmp_path):
    import _thread

    out = tmp_path / "deals.jsonl"

    sent: list[float] = []

    def interrupt() -> None:  # Ctrl-C once two deals are on disk (or after 5 minutes: the test then fails)
        waited = time.monotonic()  # a machine this busy may take long to start Ray's workers: not what is tested
        while not (out.exists() and out.read_text().count("\n") >= 2) and time.monotonic() - waited < 300:
            time.sleep(0.05)
        time.sleep(0.3)
        sent.append(time.monotonic())
        _thread.interrupt_main()

    # Python's own handler even where the runner ignores SIGINT (a background job), else interrupt_main does nothing
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=interrupt, daemon=True).start()
    try:
        with ray_cluster("local") as cluster, pytest.raises(RunInterrupted) as stop:
            solve_openings(range(8), BIG, out, table_bits=BITS, deal=_Slow(2, 600), cluster=cluster, progress=False)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - sent[0] < 60  # stopped at once, the sleeping tasks not waited for
    assert sorted(stop.value.partial.new) == [0, 1] and sorted(r["seed"] for r in records_in(out)) == [0, 1]
    quick = ray_local.remote(lambda: "free")  # both CPUs are free again: the sleeping tasks were cancelled
    assert ray_local.get(quick.remote(), timeout=60) == "free"


@pytest.mark.ray
def test_on_ray_the_command_runs_on_a_local_cluster(ray_local, tmp_path):
    out = tmp_path / "deals.jsonl"
    argv = ["solve-openings", "--seeds", "0-3", "--max-nodes", "2000", "--records", str(out), "--quiet"]
    code, printed, err = run_cli([*argv, "--ray"])  # alone: a local cluster (here, the one the test started)
    assert code == 0, err
    assert "4 deals in" in printed and "0 solved, 4 unsolved within 2,000 nodes" in printed
    assert [without_time(r) for r in sorted(records_in(out), key=lambda r: r["seed"])] == [
        without_time(solve_deal(seed, 2000)) for seed in range(4)
    ]


@pytest.mark.ray
@pytest.mark.parametrize("address", ["127.0.0.1:1", "ray://127.0.0.1:1"])
def test_on_ray_a_bad_address_is_one_line_and_exit_2(tmp_path, address):
    pytest.importorskip("ray", reason="the rllib extra (Ray) is not installed")
    message = f"--ray {address}: cannot reach the cluster"
    out = tmp_path / "deals.jsonl"
    argv = ["solve-openings", "--seeds", "0-3", "--max-nodes", "100", "--records", str(out), "--ray", address]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}  # a fresh process, not connected yet
    done = subprocess.run(
        [sys.executable, "-c", CLI_SCRIPT, *argv], capture_output=True, text=True, env=env, timeout=120
    )
    err = [line for line in done.stderr.splitlines() if not re.match(r"^\d{4}-\d\d-\d\d .* WARNING ", line)]
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert len(err) == 1 and err[0].startswith(f"trinity solve-openings: {message}"), done.stderr
    assert not out.exists()
