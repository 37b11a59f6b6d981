"""Issue 41's leftovers on how commands take a policy: every command whose argument is a policy lists the same
kinds in its help (``cli.common.POLICY_KINDS``), and the build modes, which take no ``--allow-code``, refuse a
``py:`` agent without pointing at that flag."""

from __future__ import annotations

import argparse

import pytest

from trinity_env.agents.registry import AgentSpecError
from trinity_env.cli import build_parser, main

KINDS = ("mcts:400", "./model.pt", "onnx:PATH", "state_dict:PATH", "py:package.module:factory", "--allow-code")
"""What every policy argument's help names: a spec, a path, ONNX, a state_dict, outside code and its flag."""


def _help(command: str, dest: str) -> str:
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return next(a.help for a in commands.choices[command]._actions if a.dest == dest)


@pytest.mark.parametrize(
    "command, dest",
    [("arena", "agents"), ("benchmark", "agent"), ("exploit", "agent"), ("review", "agent"), ("serve", "agents")],
)
def test_every_policy_argument_lists_every_policy_kind(command, dest):
    text = _help(command, dest)
    assert all(kind in text for kind in KINDS), text


BUILDS = [
    (["accuracy", "build", "{tmp}/set.jsonl", "--agent", "py:policy_module:make"], "trinity accuracy build"),
    (["puzzles", "build", "{tmp}/puzzles.jsonl", "--agent", "py:policy_module:make"], "trinity puzzles build"),
    (["dataset", "build", "{tmp}/data", "--shards", "1", "--agent", "py:policy_module:make"], "trinity dataset build"),
]


@pytest.mark.parametrize("argv, build", BUILDS, ids=["accuracy", "puzzles", "dataset"])
def test_a_build_refuses_outside_code_without_pointing_at_a_flag_it_does_not_take(argv, build, tmp_path, capsys):
    assert main([word.format(tmp=tmp_path) for word in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"({build}) takes no outside code ('py:policy_module:make')" in err
    assert "--allow-code" not in err and "onnx:PATH" in err
    assert not any(tmp_path.iterdir())  # refused before anything was written


def test_the_build_functions_refuse_outside_code_in_python_too():
    from trinity_env.evaluation import accuracy, puzzles, solved_build

    calls = [
        lambda: accuracy.check_build(10, (4, 6), "py:m:f", 1000, 0),
        lambda: puzzles.PuzzleBuild(10, (4, 6), "py:m:f"),
        lambda: solved_build.check_build("py:m:f", 0, (4, 6), 10),
    ]
    for call in calls:
        with pytest.raises(AgentSpecError, match="takes no outside code") as caught:
            call()
        assert "--allow-code" not in str(caught.value)


def test_a_py_module_in_the_working_directory_is_found_as_python_m_finds_it(tmp_path):
    """``trinity`` (a console script) has its own folder on the path, not the working directory: ``py:mymodule:make``
    failed with "No module named 'mymodule'" beside mymodule.py (issue 51). Two workers build it too."""
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "mymodule.py").write_text(
        "import numpy as np\n\n\ndef make():\n"
        "    return lambda observation: int(np.flatnonzero(observation['action_mask'])[0])\n"
    )
    trinity = Path(sys.executable).with_name("trinity")
    argv = [str(trinity), "arena", "--agents", "py:mymodule:make", "greedy", "--games", "4", "--workers", "2"]
    done = subprocess.run(
        [*argv, "--out", "out", "--allow-code", "--quiet"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "py:mymodule:make" in (tmp_path / "out" / "arena.md").read_text()


def test_a_py_module_found_nowhere_says_where_it_was_looked_for():
    from trinity_env.agents.spec import AgentSpec

    with pytest.raises(AgentSpecError, match=r"No module named 'no_such_module_here' \(looked in the working dir"):
        AgentSpec.parse("py:no_such_module_here:make", allow_code=True).build()
