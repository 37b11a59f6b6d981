"""What a spec means does not depend on the working directory, and a path must be a file or a folder.

Built-in names (``greedy``, ``mcts``, ``ppo-standard``, ``az-standard``...) always mean the
built-in agent: a planted ``greedy.pt`` or folder ``mcts`` used to take their place (and the
arena labelled the file "greedy"). A file or folder is named by a path (``./greedy.pt``,
``runs/quick``, ``model.pt``, ``file:greedy``). A path that is a named pipe, a device or a
socket is refused at once: ``az:FIFO`` used to block forever on the open.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from trinity_env.agents import AgentSpecError, GreedyAgent, MCTSAgent, RandomAgent, make

ROOT = Path(__file__).resolve().parent.parent


def _policy_checkpoint(path: Path) -> Path:
    pytest.importorskip("torch")
    from trinity_env.agents.networks.ppo_network import PolicyNetwork, save_checkpoint

    path.parent.mkdir(parents=True, exist_ok=True)
    save_checkpoint(path, PolicyNetwork(8, 1))
    return path


# ------------------------------------------------------------------------------ special files


def _make_in_child(spec: str, cwd: Path) -> str:
    """``make(spec)`` in a child with a deadline: a spec that blocks fails the test instead of hanging it."""
    child = textwrap.dedent(
        f"""
        from trinity_env.agents import make
        try:
            make({spec!r})
            print("MADE")
        except ValueError as err:
            print(type(err).__name__, err)
        """
    )
    environment = os.environ | {"PYTHONPATH": str(ROOT)}
    try:
        result = subprocess.run(
            [sys.executable, "-c", child], cwd=cwd, capture_output=True, text=True, timeout=60, env=environment
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"make({spec!r}) blocked for 60 s")
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip()


@pytest.fixture
def short_dir():
    """A folder with a short path (a socket's path has at most 107 bytes)."""
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="tt") as folder:
        yield Path(folder)


_E2E = pytest.mark.e2e  # a fresh interpreter each: four by default, the rest in make test-e2e


@pytest.mark.parametrize(
    "spec",
    [
        "./pipe.pt",
        pytest.param("./pipe.zip", marks=_E2E),
        pytest.param("az:pipe.pt", marks=_E2E),
        "az:pipe",
        pytest.param("./run/best", marks=_E2E),
        "./run",
        pytest.param("az:./run", marks=_E2E),
        pytest.param("file:pipe.pt", marks=_E2E),
        pytest.param("az:/dev/null", marks=_E2E),
        "/dev/null",
        pytest.param("./socket.pt", marks=_E2E),
    ],
)
def test_a_pipe_device_or_socket_is_refused_at_once(short_dir, spec):
    if spec.startswith("az:"):
        pytest.importorskip("torch")
    os.mkfifo(short_dir / "pipe.pt")
    os.mkfifo(short_dir / "pipe.zip")
    (short_dir / "run").mkdir()
    os.mkfifo(short_dir / "run" / "best.pt")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(short_dir / "socket.pt"))
        answer = _make_in_child(spec, short_dir)
    assert answer.startswith(("AgentSpecError", "CheckpointError")), answer
    assert "\n" not in answer
    assert any(word in answer for word in ("named pipe", "device", "socket")), answer


def test_a_run_folder_whose_best_is_a_pipe_plays_its_latest(short_dir, monkeypatch):
    run = short_dir / "run"
    _policy_checkpoint(run / "latest.pt")
    os.mkfifo(run / "best.pt")
    monkeypatch.chdir(short_dir)
    with pytest.warns(UserWarning, match=r"best\.pt is a named pipe.*playing .*latest\.pt"):
        assert make("./run").name == "./run"  # best.pt is no checkpoint file: the folder plays its latest


# ------------------------------------------------------------------------------ names


def test_built_in_names_cannot_be_shadowed_by_files_or_folders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("greedy.pt", "random.zip", "lookahead.pt", "mcts.pt"):
        (tmp_path / name).write_text("not a checkpoint")
    (tmp_path / "mcts").mkdir()
    _policy_checkpoint(tmp_path / "mcts" / "best.pt")
    _policy_checkpoint(tmp_path / "lookahead" / "best.pt")
    assert type(make("greedy")) is GreedyAgent
    assert type(make("random")) is RandomAgent
    assert type(make("mcts")) is MCTSAgent
    assert type(make("mcts:60")) is MCTSAgent
    assert make("lookahead").name == "lookahead" and not hasattr(make("lookahead"), "network")


def test_shipped_names_cannot_be_shadowed(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from trinity_env.agents.registry import SHIPPED_DIR

    monkeypatch.chdir(tmp_path)
    (tmp_path / "ppo-standard.pt").write_text("not a checkpoint")
    (tmp_path / "az-standard").mkdir()
    (tmp_path / "az-standard" / "best.pt").write_text("not a checkpoint")
    shipped = make("ppo-standard")
    assert shipped.name == "ppo-standard"
    assert (SHIPPED_DIR / "ppo-standard.pt").is_file()
    assert make("az-standard:sims=0").name == "az-standard:sims=0"


def test_files_and_folders_are_named_by_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _policy_checkpoint(tmp_path / "greedy.pt")
    _policy_checkpoint(tmp_path / "runs" / "quick" / "best.pt")
    _policy_checkpoint(tmp_path / "mine.pt")
    for spec in (
        "./greedy.pt",
        "./greedy",
        "greedy.pt",
        "file:greedy",
        "file:greedy.pt",
        "runs/quick",
        "runs/quick/best",
        "runs/quick/best.pt",
        "file:runs/quick",
        "mine.pt",
        "./mine",
        "file:mine",
        str(tmp_path / "mine.pt"),
        str(tmp_path / "runs" / "quick"),
    ):
        agent = make(spec)
        assert hasattr(agent, "network"), spec
        assert agent.name == spec
    with pytest.raises(AgentSpecError, match=r"no agent named 'mine'.*\./mine"):
        make("mine")  # a bare word is a name: the error says how to name the file
    with pytest.raises(AgentSpecError, match=r"file:"):
        make("file:")


def test_the_arena_labels_a_file_by_its_path_not_a_built_in_name(tmp_path, monkeypatch):
    from trinity_env.evaluation.arena import check_arena, round_robin

    monkeypatch.chdir(tmp_path)
    _policy_checkpoint(tmp_path / "greedy.pt")
    assert [who.label for who in check_arena(["greedy", "./greedy.pt"], 2)] == ["greedy", "./greedy.pt"]
    result = round_robin(["greedy", "random", "./greedy.pt"], 2, workers=1, progress=False)
    assert result.agents == ["greedy", "random", "./greedy.pt"]
