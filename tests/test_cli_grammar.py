"""One command-line grammar (issues 40 and 53): ``--agents`` names agents and ``--agent`` the one a command studies,
``--out`` is always a folder and ``--json`` always a file, ``--seed``, ``--json``, ``--quiet``, ``--workers`` and
``--max-nodes`` are declared once (``trinity_env.cli.options``) and every command takes them from there, a command
that builds or scores says so with a verb, old spellings are refused in one line naming the new one, every error starts
with ``trinity <command>:`` (the trainers' too), a bad name is answered with the valid ones, and ``trinity --version``
prints the package's version."""

from __future__ import annotations

import argparse
import importlib.metadata
import re
import subprocess
import sys

import pytest
from cli_parsers import commands, parsers

from trinity_env.arguments import folder_path, output_path, positive_int, process_count
from trinity_env.cli import main, options
from trinity_env.cli.common import Renamed

_commands, _parsers = commands, parsers


def _options(name: str) -> dict[str, argparse.Action]:
    """A command's options (its verbs' too) by each spelling, old spellings (``Renamed``) left out."""
    actions = [
        action
        for parser_name, parser in _parsers().items()
        if parser_name.split()[0] == name
        for action in parser._actions
        if not isinstance(action, Renamed)
    ]
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
        "--max-nodes",
        "9",
        "--records",
        "{tmp}/r.jsonl",
        "--ray",
        "auto",
        "--workers",
        "2",
    ],
    "play": ["--opponent", "nobody"],
    "train": ["nope"],
    "exploit": ["--agent", "nobody", "--steps", "1"],
    "review": ["{tmp}/missing.json"],
    "puzzles": ["score", "{tmp}/missing.jsonl", "--agents", "random"],
    "accuracy": ["score", "--agents", "nobody"],
    "dataset": ["build", "{tmp}/d", "--shards", "1", "--agent", "nobody"],
    "benchmark": ["--agent", "nobody", "--out", "{tmp}/card"],
    "serve": ["--port", "0"],
    "prepare": ["--workers", "0"],
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
        (["solve-openings", "--seeds", "0", "--max-nodes", "9", "--out", "r.jsonl"], "--out is now --records FILE"),
        (["solve-openings", "--seeds", "0", "--max-nodes", "9", "--out=r.jsonl"], "--out is now --records FILE"),
        (
            ["solve-openings", "--seeds", "0", "--max-nodes", "9", "--records", "r.jsonl", "--summary", "s.json"],
            "--summary is now --json FILE",
        ),
        (["solve-openings", "--seeds", "0", "--budget-nodes", "9", "--records", "r.jsonl"], "now --max-nodes N"),
        (["solve-openings", "--seeds", "0", "--classify-nodes", "9"], "--classify-nodes is now --max-classify-nodes N"),
        (["solve-openings", "--seeds", "0", "--threads", "2"], "--threads is now --workers N"),
        (["prepare", "--jobs", "2"], "--jobs is now --workers N"),
        (["train", "az-quick", "--ray", "--actors", "2"], "--actors is now --workers N"),
        (["exploit", "greedy", "--steps", "1"], "named with --agent: trinity exploit --agent greedy"),
        (["benchmark", "greedy", "--quiet"], "named with --agent: trinity benchmark --agent greedy"),
        (["puzzles", "--out", "p.jsonl"], "--out is now the verb build: trinity puzzles build FILE"),
        (
            ["puzzles", "--build", "p.jsonl", "--count", "3"],
            "--build is now the verb build: trinity puzzles build FILE",
        ),
        (["puzzles", "--score", "--agents", "greedy"], "--score is now the verb score: trinity puzzles score [FILE]"),
        (["accuracy", "--agents", "greedy", "mcts:400"], "now after the verb score: trinity accuracy score --agents"),
        (["accuracy", "--build", "set.jsonl"], "--build is now the verb build: trinity accuracy build FILE"),
    ],
)
def test_an_old_spelling_is_refused_in_one_line_naming_the_new_one(argv, new, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert new in _one_line(capsys, argv[0])
    assert list(tmp_path.iterdir()) == [], "nothing is created"


def test_old_spellings_are_hidden_from_help():
    for name, parser in _parsers().items():
        text = parser.format_help()
        for action in parser._actions:
            if isinstance(action, Renamed):
                for spelling in action.option_strings:
                    assert not re.search(rf"(?<![\w-]){spelling}(?![\w-])", text), (name, spelling)
    assert any(isinstance(a, Renamed) for a in _commands()["solve-openings"]._actions)


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


# ---------------------------------------------------------------------- the options declared once

SHARED = {
    "--seed": (options.SEED_HELP, "N", {options.seed}),
    "--json": (options.JSON_HELP, "FILE", {output_path}),
    "--quiet": (options.QUIET_HELP, None, {None}),
    "--workers": (options.WORKERS_HELP, "N", {process_count}),
    "--max-nodes": (options.MAX_NODES_HELP, "N", None),  # a whole number from 1 (some commands cap it)
    "--agent": (options.AGENT_HELP, "SPEC", {None}),
}
"""Each shared option: the help it starts with, its metavar and its type."""

CLUSTER_WORKERS = {"train"}
"""Where ``--workers`` counts a Ray cluster's actors (any count; a local cluster's is checked by the command)."""

RETIRED = {
    "--threads": ("solve",),  # solve's are threads sharing one table; processes are --workers
    "--jobs": (),
    "--actors": (),
    "--budget-nodes": (),
    "--classify-nodes": (),
    "--build": (),
    "--score": (),
}
"""Spellings no command declares, but for the commands named (each refused with the new spelling: ``Renamed``)."""


def test_every_command_takes_the_shared_options_from_one_place():
    seen = set()
    for name, parser in _parsers().items():
        for action in parser._actions:
            if isinstance(action, Renamed):
                continue
            for spelling in set(action.option_strings) & set(SHARED):
                help_text, metavar, types = SHARED[spelling]
                where = f"trinity {name} {spelling}"
                assert action.help.startswith(help_text), f"{where}: its help is {action.help!r}"
                assert action.metavar == metavar, f"{where}: metavar {action.metavar!r}"
                if spelling == "--workers" and name in CLUSTER_WORKERS:
                    types = {positive_int}
                if types is not None:
                    assert action.type in types, f"{where}: type {action.type}"
                else:
                    assert getattr(action.type, "__name__", "") == "whole number", f"{where}: type {action.type}"
                seen.add(spelling)
    assert seen == set(SHARED), "each shared option is used somewhere"


def test_no_command_declares_a_retired_spelling():
    declared = [
        f"trinity {name} {spelling}"
        for name, parser in _parsers().items()
        for action in parser._actions
        if not isinstance(action, Renamed)
        for spelling in action.option_strings
        if spelling in RETIRED and name not in RETIRED[spelling]
    ]
    assert not declared, declared


def test_one_agent_is_named_with_the_agent_option():
    """The agent a command studies is ``--agent SPEC`` (``play``'s ``--opponent`` is the person's opponent); no
    positional names one."""
    positional = [
        f"trinity {name} {action.dest}"
        for name, parser in _parsers().items()
        for action in parser._actions
        if not action.option_strings and action.dest in ("agent", "policy", "opponent")
    ]
    assert positional == [], positional
    assert {"benchmark", "exploit", "review", "puzzles build", "accuracy build", "dataset build"} <= {
        name for name, parser in _parsers().items() if any("--agent" in a.option_strings for a in parser._actions)
    }


def test_build_and_score_are_verbs():
    assert {"puzzles build", "puzzles score", "accuracy build", "accuracy score", "dataset build"} <= set(_parsers())
    for name in ("puzzles", "accuracy"):
        assert not {"--build", "--score"} & set(_options(name)), name
