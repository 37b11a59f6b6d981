"""Counts and sizes have upper bounds (``trinity_env.core.limits``), checked before a process is spawned, a table
allocated or a run folder claimed: each case the red team found (issue 39) is one line and exit status 2."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from trinity_env.cli import main
from trinity_env.core import ArgumentError, limits
from trinity_env.core.limits import MEMORY_VARIABLE, check_memory, check_workers, max_processes

ROOT = Path(__file__).resolve().parents[1]
TOO_MANY = str(max_processes() + 1)


def _one_line(capsys, command: str) -> str:
    err = capsys.readouterr().err
    assert err.startswith(f"trinity {command}: ") and err.count("\n") == 1, err
    return err


def test_the_bounds_follow_the_machine(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    assert max_processes() == limits.PROCESSES_PER_CPU * 3
    assert check_workers("workers", None, tasks=1) == 1, "a pool never has more workers than tasks"
    assert check_workers("workers", 5, tasks=100) == 5
    with pytest.raises(ArgumentError, match=r"workers: 13 is more than this machine can use \(at most 12"):
        check_workers("workers", 13, tasks=100, error=ArgumentError)


def test_the_memory_budget_and_its_override(monkeypatch):
    monkeypatch.delenv(MEMORY_VARIABLE, raising=False)
    budget, where = limits.memory_budget()
    assert budget == int(limits.physical_memory() * limits.MEMORY_SHARE) and MEMORY_VARIABLE in where
    monkeypatch.setenv(MEMORY_VARIABLE, "2G")
    assert limits.memory_budget()[0] == 2 * 2**30
    check_memory({"a": 2**30, "b": 2**30})
    with pytest.raises(
        ArgumentError,
        match=r"b needs about 1.5 GiB \(all together 2.5 GiB\), over the memory budget "
        r"of 2 GiB \(set by TRINITY_MEMORY_BUDGET\)",
    ):
        check_memory({"a": 2**30, "b": 3 * 2**29}, ArgumentError)
    for bad in ("0", "lots", "-1G", "1e9"):
        monkeypatch.setenv(MEMORY_VARIABLE, bad)
        with pytest.raises(ArgumentError, match="TRINITY_MEMORY_BUDGET must be a number of bytes"):
            limits.memory_budget(ArgumentError)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["solve", "-", "--threads", "20000"], "argument --threads: 20,000 is more than this machine can use"),
        (["arena", "--agents", "random", "greedy", "--games", "2", "--workers", TOO_MANY], "argument --workers"),
        (["arena", "--agents", "random", "greedy", "--workers", "100000"], "argument --workers: 100,000 is more"),
        (["balance", "--agents", "greedy", "--workers", TOO_MANY], "argument --workers"),
        (
            ["solve-openings", "--seeds", "0-9", "--max-nodes", "9", "--records", "x", "--workers", TOO_MANY],
            "argument --workers",
        ),
        (["prepare", "--workers", TOO_MANY], "argument --workers"),
        (["train", "az-quick", "--ray", "--workers", TOO_MANY], "--workers: "),  # a local cluster: processes here
    ],
)
def test_counts_past_the_machine_are_one_line_before_anything_starts(argv, words, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("trinity_env.evaluation.match.run_unordered", _no_pool)
    assert main(argv) == 2
    assert words in _one_line(capsys, argv[0])
    assert list(tmp_path.iterdir()) == [], "nothing written"


COUNT_WORDS = ("threads", "workers", "jobs", "actors", "runners")
"""How the name of a count of threads or processes ends, in an option, a spec keyword or a config field."""
ELSEWHERE = {
    "train --workers": "Ray actors run on the cluster's CPUs; a local cluster's are bounded above (--workers)",
    "RLlibConfig.num_env_runners": "may run on a joined cluster (--address), whose CPUs this table does not know; "
    "not yet bounded on a local cluster either",
}
"""Counts this machine's table cannot bound (where they run is a cluster), each with its reason."""


def test_every_thread_and_process_count_is_bounded_by_the_limits_table(monkeypatch, tmp_path):
    """Every option, agent spec keyword and config field that counts threads or processes is bounded by the one
    table (4 a CPU): ``onnx:FILE,threads=64`` was accepted on 2 CPUs and one arena ran 598 threads."""
    import argparse
    import dataclasses

    from trinity_env.agents.spec import AgentSpec
    from trinity_env.agents.spec_arguments import PARAMETERS
    from trinity_env.arguments import process_count
    from trinity_env.cli import build_parser

    monkeypatch.setattr("os.cpu_count", lambda: 2)
    seen = []
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for command, parser in commands.choices.items():
        for action in parser._actions:
            key = f"{command} {action.option_strings[-1] if action.option_strings else action.dest}"
            if action.dest.endswith(COUNT_WORDS) and key not in ELSEWHERE:
                assert action.type is process_count, f"{key} is not a process_count"
                seen.append(key)
    (tmp_path / "model.onnx").write_bytes(b"checked when built, after its spec")
    for name, (_, arguments) in PARAMETERS.items():
        for parameter in arguments:
            if parameter.endswith(COUNT_WORDS):
                with pytest.raises(ValueError, match="9 is more than this machine can use"):
                    AgentSpec.parse(f"{name}:{tmp_path / 'model.onnx'},{parameter}=9")
                seen.append(f"{name}:{parameter}=")
    pytest.importorskip("torch")
    from training.az_config import AZConfig
    from training.config import TrainConfig
    from training.rllib_selfplay import RLlibConfig

    for config in (AZConfig, TrainConfig, RLlibConfig):
        for field in dataclasses.fields(config):
            key = f"{config.__name__}.{field.name}"
            if field.name.endswith(COUNT_WORDS) and key not in ELSEWHERE:
                with pytest.raises(ValueError, match="9 is more than this machine can use"):
                    config.from_dict({field.name: 9})
                seen.append(key)
    assert {"solve --threads", "arena --workers", "onnx:threads=", "AZConfig.torch_threads"} <= set(seen), seen


def _no_pool(*args, **kwargs):
    raise AssertionError("a pool was started")


def test_a_pool_is_clamped_to_its_tasks():
    from trinity_env.evaluation.arena import arena_workers
    from trinity_env.evaluation.balance import balance_workers

    assert arena_workers(2, 2, None) == 1, "one pair, one chunk of games: one worker (was: every core)"
    assert arena_workers(2, 2, max_processes()) == 1
    assert arena_workers(3, 25, 1) == 1
    assert balance_workers(2, 10, max_processes()) == 2
    with pytest.raises(ArgumentError, match=r"workers: .* is more than this machine can use"):
        arena_workers(2, 2, max_processes() + 1)
    with pytest.raises(ArgumentError, match="workers must be a whole number"):
        balance_workers(2, 2, 1.5)


def test_the_solver_refuses_threads_and_tables_past_the_machine(monkeypatch):
    from trinity_env.search.solver import Solver

    with pytest.raises(ArgumentError, match="threads: 20,000 is more than this machine can use"):
        Solver(threads=20_000)
    monkeypatch.setenv(MEMORY_VARIABLE, "1G")
    with pytest.raises(ArgumentError, match=r"table_bits=27 \(the table\) needs about 2 GiB, over the memory budget"):
        Solver(table_bits=27)


def test_solve_openings_tables_are_within_the_budget(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv(MEMORY_VARIABLE, "1G")
    out = tmp_path / "o.jsonl"
    argv = ["solve-openings", "--seeds", "0-99", "--max-nodes", "9", "--records", str(out), "--table-bits", "26"]
    assert main([*argv, "--workers", "2"]) == 2
    err = _one_line(capsys, "solve-openings")
    assert "--workers 2 with --table-bits 26 (2 solver tables" in err and "over the memory budget of 1 GiB" in err
    assert not out.exists()


# ---------------------------------------------------------------------- training configs, before the run folder


@pytest.mark.parametrize(
    ("trainer", "config", "field", "words"),
    [
        ("alphazero", "az-quick", "label_workers: 300", "field 'label_workers': 300 is more than this machine"),
        ("alphazero", "az-quick", "replay_size: 10000000000", "field 'replay_size' (10,000,000,000 positions of"),
        ("alphazero", "az-quick", "games_per_iteration: 1000000000", "field 'games_per_iteration'"),
        ("alphazero", "az-quick", "simulations: 100000000", "field 'games_per_iteration' (256 search trees"),
        ("alphazero", "az-quick", "torch_threads: 100000", "field 'torch_threads': 100,000 is more"),
        ("ppo", "quick", "num_games: 1000000000", "field 'num_games' (1,000,000,000 games x 32 rollout_steps"),
        ("ppo", "quick", "torch_threads: 100000", "field 'torch_threads': 100,000 is more"),
    ],
)
def test_training_configs_past_the_machine_are_refused_before_the_run_folder(
    trainer, config, field, words, tmp_path, monkeypatch, capsys
):
    """Through ``trinity train`` (in this process; the command's exit status through a fresh interpreter is
    test_cli_grammar's and test_cli_newcomer's): one line, exit 2, and no run folder (the run used to claim it, then
    die "out of memory" or start 300 solver processes)."""
    pytest.importorskip("torch")
    from training import run_folder

    path = tmp_path / f"{config}-big.yaml"
    path.write_text(_with(config, field))
    assert f"trainer: {trainer}" in path.read_text()  # the shipped config names its trainer
    run = tmp_path / "run"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(MEMORY_VARIABLE, "")
    monkeypatch.setattr(run_folder, "_take", lambda *args: pytest.fail("the run folder was claimed: a run started"))
    try:
        status = main(["train", str(path), "--run", str(run)])
    except SystemExit as stop:  # the trainer's own command line ends with its status
        status = stop.code
    lines = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(lines) == 1, lines
    assert words in lines[0] and ("memory budget" in lines[0] or "more than this machine" in lines[0]), lines[0]
    assert not run.exists(), "the run folder is not claimed"


def _with(config: str, field: str) -> str:
    """The shipped config's YAML with ``field`` (``name: value``) set."""
    lines = (ROOT / "trinity_env" / "configs" / "train" / f"{config}.yaml").read_text().splitlines()
    name = field.split(":")[0] + ":"
    kept = [line for line in lines if not line.startswith(name)]
    return "\n".join([*kept, field]) + "\n"


def test_the_estimates_come_from_the_real_arrays():
    pytest.importorskip("torch")
    from training.az_config import AZConfig
    from training.config import TrainConfig
    from training.replay_buffer import ReplayBuffer
    from trinity_env.agents.ppo import Rollout
    from trinity_env.spec.observation import OBSERVATION_SIZE

    config = AZConfig.load("az-quick")
    parts = config.memory()
    buffer = ReplayBuffer(1000)
    real = sum(a.nbytes for a in (buffer.observations, buffer.masks, buffer.policies, buffer.values))
    replay = next(v for k, v in parts.items() if k.startswith("field 'replay_size'"))
    assert replay == 2 * config.replay_size * real // 1000
    assert Rollout.game_step_bytes(OBSERVATION_SIZE) > 256 + 339, "the observation and the legal mask at least"
    TrainConfig.load("standard")  # the shipped configs fit
    AZConfig.load("az-standard")
