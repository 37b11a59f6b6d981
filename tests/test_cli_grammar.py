"""One command-line grammar (issue 40): ``--agents`` names agents, ``--out`` is always a folder and ``--json`` always a
file, old spellings are refused in one line naming the new one, every error starts with ``trinity <command>:`` (the
trainers' too), a bad name is answered with the valid ones, and ``trinity --version`` prints the package's version."""

from __future__ import annotations

import argparse
import importlib.metadata
import subprocess
import sys

import pytest

from trinity_env.arguments import folder_path, output_path
from trinity_env.cli import build_parser, main
from trinity_env.cli.common import Renamed


def _commands() -> dict[str, argparse.ArgumentParser]:
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(commands.choices)


def _options(name: str) -> dict[str, argparse.Action]:
    """A command's options by each spelling, old spellings (``Renamed``) left out."""
    actions = [a for a in _commands()[name]._actions if not isinstance(a, Renamed)]
    return {spelling: action for action in actions for spelling in action.option_strings}


def _one_line(capsys, command: str) -> str:
    captured = capsys.readouterr()
    err = captured.err
    assert err.startswith(f"trinity {command}: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and "usage:" not in err
    return err


# ---------------------------------------------------------------------- --version


def test_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"trinity {importlib.metadata.version('trinity-towers')}\n"


def test_python_m_runs_the_command_line():
    done = subprocess.run([sys.executable, "-m", "trinity_env.cli", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("trinity "), done.stderr


# ---------------------------------------------------------------------- every error starts with its command

BAD = {
    "show": ["{tmp}/missing.json"],
    "solve": ["{tmp}/missing.json"],
    "arena": ["--agents", "random", "nobody", "--out", "{tmp}/arena"],
    "balance": ["--agents", "nobody", "--games", "1", "--out", "{tmp}/balance"],
    "solve-openings": [
        "--seeds",
        "0",
        "--budget-nodes",
        "9",
        "--records",
        "{tmp}/r.jsonl",
        "--ray",
        "auto",
        "--threads",
        "2",
    ],
    "play": ["--opponent", "nobody"],
    "train": ["nope"],
    "exploit": ["nobody", "--steps", "1"],
    "review": ["{tmp}/missing.json"],
    "puzzles": ["--score", "{tmp}/missing.jsonl", "--agents", "random"],
    "accuracy": ["--agents", "nobody"],
    "dataset": ["build", "{tmp}/d", "--shards", "1", "--agent", "nobody"],
    "benchmark": ["nobody", "--out", "{tmp}/card"],
    "serve": ["--port", "0"],
    "prepare": ["--jobs", "0"],
}
"""For each command, arguments it refuses (after parsing where the command checks anything itself)."""


def test_the_table_of_bad_arguments_covers_every_command():
    assert set(BAD) == set(_commands())


@pytest.mark.parametrize("command", sorted(BAD))
def test_every_command_s_errors_start_with_its_name(command, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("builtins.input", lambda prompt="": pytest.fail("a move was asked for"))
    assert main([command, "--no-such-option"]) == 2
    _one_line(capsys, command)
    assert main([command, *(a.format(tmp=tmp_path) for a in BAD[command])]) == 2
    _one_line(capsys, command)


def test_a_bad_training_config_name_lists_the_shipped_ones_before_any_trainer_loads(capsys):
    """It used to be ``python -m training.fast_ppo: error: ...``, and only once torch had loaded."""
    assert main(["train", "nope"]) == 2
    err = _one_line(capsys, "train")
    assert (
        "no training config named 'nope'" in err and "az-quick, az-standard, jax-quick, quick, rllib, standard" in err
    )


def test_the_trainer_s_own_errors_start_with_trinity_train(tmp_path, capsys):
    """The trainer's command line names itself after ``trinity train`` (it said ``python -m training.fast_ppo``)."""
    pytest.importorskip("torch")
    with pytest.raises(SystemExit) as stop:
        main(["train", "quick", "--run", str(tmp_path / "none"), "--resume"])
    assert stop.value.code == 2
    err = _one_line(capsys, "train")
    assert "nothing to resume" in err
    assert not (tmp_path / "none").exists()


# ---------------------------------------------------------------------- the old spellings


@pytest.mark.parametrize(
    ("argv", "new"),
    [
        (["solve-openings", "--seeds", "0", "--budget-nodes", "9", "--out", "r.jsonl"], "--out is now --records FILE"),
        (["solve-openings", "--seeds", "0", "--budget-nodes", "9", "--out=r.jsonl"], "--out is now --records FILE"),
        (
            ["solve-openings", "--seeds", "0", "--budget-nodes", "9", "--records", "r.jsonl", "--summary", "s.json"],
            "--summary is now --json FILE",
        ),
        (["puzzles", "--out", "p.jsonl"], "--out is now --build FILE"),
        (["puzzles", "--count", "3", "--out", "p.jsonl"], "--out is now --build FILE"),
        (["accuracy", "greedy", "mcts:400"], "named with --agents: trinity accuracy --agents greedy mcts:400"),
        (["accuracy", "--set", "s.jsonl", "greedy"], "trinity accuracy --agents greedy"),
    ],
)
def test_an_old_spelling_is_refused_in_one_line_naming_the_new_one(argv, new, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert new in _one_line(capsys, argv[0])
    assert list(tmp_path.iterdir()) == [], "nothing is created"


def test_old_spellings_are_hidden_from_help():
    for name in ("solve-openings", "puzzles"):
        text = _commands()[name].format_help()
        assert "--out" not in text and "--summary" not in text, text


# ---------------------------------------------------------------------- one meaning per option


def test_out_is_a_folder_and_json_a_file_for_every_command():
    outs = {name: _options(name)["--out"] for name in _commands() if "--out" in _options(name)}
    jsons = {name: _options(name)["--json"] for name in _commands() if "--json" in _options(name)}
    assert outs and all(action.type is folder_path for action in outs.values()), outs
    assert all(action.type is output_path for action in jsons.values()), jsons
    assert {"arena", "exploit", "review", "puzzles", "accuracy", "solve-openings"} <= set(jsons)


def test_agents_are_always_named_with_the_agents_option():
    for name, parser in _commands().items():
        for action in parser._actions:
            if action.dest == "agents":
                assert action.option_strings == ["--agents"], f"trinity {name} takes agents as {action}"
    assert "--agents" in _options("accuracy")
