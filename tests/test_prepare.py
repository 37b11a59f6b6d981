"""Compiling once, visibly: every kernel family prepares, a slow first run says so in one line, a warm one is silent."""

from __future__ import annotations

import io
import time

import pytest

from trinity_env import prepare as preparing
from trinity_env.cli import main


def test_every_family_prepares_and_the_command_says_when_it_is_ready(capsys):
    seconds = preparing.prepare(quiet=True)
    assert list(seconds) == list(preparing.FAMILIES) and all(s >= 0 for s in seconds.values())
    assert main(["prepare"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("ready: the engine is compiled")
    assert [line.split("...")[0] for line in captured.err.splitlines()] == [f"preparing {n}" for n in seconds]


def test_a_slow_first_run_says_what_it_prepares_and_a_fast_one_says_nothing(monkeypatch):
    monkeypatch.setitem(preparing.FAMILIES, "slow kernels", lambda: time.sleep(0.4))
    monkeypatch.setitem(preparing.FAMILIES, "fast kernels", lambda: None)
    out = io.StringIO()
    assert preparing.warm(["slow kernels"], out=out, after=0.05) >= 0.4
    lines = out.getvalue().splitlines()
    assert lines[0] == "preparing the slow kernels (first run only: compiling)..."
    assert lines[1].startswith("ready (") and len(lines) == 2
    quiet = io.StringIO()
    preparing.warm(["fast kernels"], out=quiet, after=0.05)
    assert quiet.getvalue() == ""


@pytest.mark.parametrize(
    ("specs", "families"),
    [
        (["random", "ppo-standard"], []),
        (["greedy", "lookahead"], ["baselines"]),
        (["mcts:400,seed=1", "greedy"], ["baselines", "MCTS"]),
        (["az-standard:sims=0"], ["tactical features", "AlphaZero search"]),
    ],
)
def test_the_families_an_agent_runs_on(specs, families):
    assert preparing.families_for(specs) == families
    assert set(families) <= set(preparing.FAMILIES)


def test_families_compile_at_once_in_worker_processes_and_a_bad_job_count_is_refused(capsys):
    seconds = preparing.prepare(["fast engine", "exact solver", "MCTS"], jobs=2)
    assert list(seconds) == ["fast engine", "exact solver", "MCTS"]
    finished = sorted(line.split(":")[0] for line in capsys.readouterr().err.splitlines())
    assert finished == ["prepared MCTS", "prepared exact solver", "prepared fast engine"]
    assert main(["prepare", "--workers", "0"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
