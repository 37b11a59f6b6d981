"""Bare names mean what ships, whatever the working directory holds; a file is named by a path; a file's content
is what a resumed build checks, not its name.

A file ``./quick`` in the working directory used to replace the shipped training config ``quick``, and
``./standard`` the rules config ``standard`` and the deck ``standard`` inside every config (the shadowing
that agent names lost earlier: ``tests/test_agent_paths.py``). Now a bare word always means the shipped
file (``trinity_env.core.shipped``) and a file is named by a path: ``./quick``, ``configs/x.yaml``,
``x.yaml``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import trinity_env
from training.config import TrainConfig, TrainConfigError
from trinity_env.agents import AgentSpecError
from trinity_env.agents.loaders.checkpoint import CheckpointError
from trinity_env.core import DeckError, load_deck
from trinity_env.core.shipped import config_root
from trinity_env.spec.config import ConfigError, make_config

ROOT = Path(__file__).resolve().parent.parent
SHIPPED_DECK = config_root() / "decks" / "standard.yaml"


def _plant(folder: Path) -> None:
    """Files named like the shipped configs and deck, each valid YAML of its own kind but different."""
    (folder / "quick").write_text("total_steps: 7\n")
    (folder / "standard").write_text("draft: dealt\nopen_hands: false\n")  # a rules config, as a deck it is bad
    (folder / "hidden_hands").write_text("draft: dealt\n")


def test_bare_names_mean_the_shipped_files_whatever_the_working_directory_holds(tmp_path, monkeypatch):
    shipped_quick = TrainConfig.load(config_root() / "train" / "quick.yaml")
    shipped_rules = make_config(config_root() / "rules" / "standard.yaml")
    shipped_hidden = make_config(config_root() / "rules" / "hidden_hands.yaml")
    shipped_deck = load_deck(SHIPPED_DECK)
    monkeypatch.chdir(tmp_path)
    _plant(tmp_path)
    assert TrainConfig.load("quick") == shipped_quick  # `trinity train quick`, `--config quick`
    assert TrainConfig.load("quick").total_steps != 7
    assert make_config("standard") == shipped_rules  # `--config standard`
    assert make_config("hidden_hands") == shipped_hidden
    assert load_deck("standard") == shipped_deck
    assert make_config(deck="standard").decks == (shipped_deck, shipped_deck)  # the deck named inside a config
    assert make_config(decks=["standard", "standard"]).decks == (shipped_deck, shipped_deck)
    assert trinity_env.env(config="standard").unwrapped.config == shipped_rules


def test_a_path_names_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _plant(tmp_path)
    assert TrainConfig.load("./quick").total_steps == 7
    assert make_config("./standard").open_hands is False
    (tmp_path / "mine.yaml").write_text("draft: dealt\nopen_hands: false\n")
    assert make_config("mine.yaml").open_hands is False  # a .yaml ending is a path too
    reversed_deck = list(reversed([card.notation for card in load_deck(SHIPPED_DECK)]))
    (tmp_path / "decks").mkdir()
    (tmp_path / "decks" / "standard").write_text(f"cards: {reversed_deck}\n")
    assert [card.notation for card in load_deck("decks/standard")] == reversed_deck
    assert [card.notation for card in make_config(deck="./decks/standard").decks[0]] == reversed_deck
    with pytest.raises(ConfigError, match=r"deck: deck file standard: expected a mapping with a 'cards' list"):
        make_config(deck="./standard")  # the planted rules config read as a deck: the file, not the shipped deck


@pytest.mark.parametrize(
    ("load", "error", "listed"),
    [
        (
            lambda name: TrainConfig.load(name),
            TrainConfigError,
            "az-quick, az-standard, jax-quick, quick, rllib, standard",
        ),
        (lambda name: make_config(name), ConfigError, "hidden_hands, random_decks, standard"),
        (lambda name: make_config(deck=name), ConfigError, "configs/decks holds standard"),
        (lambda name: load_deck(name), DeckError, "configs/decks holds standard"),
    ],
)
def test_an_unknown_bare_name_lists_the_shipped_ones_and_hints_at_a_file_there(
    load, error, listed, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(error) as refused:
        load("mine")
    message = str(refused.value)
    assert "no " in message and "'mine'" in message and listed in message and "\n" not in message
    assert "./mine" not in message.split(")", 1)[1]  # no file here: no hint
    (tmp_path / "mine").write_text("draft: dealt\n")
    with pytest.raises(error) as refused:
        load("mine")
    message = str(refused.value)
    assert listed in message and "name it by a path: './mine'" in message and "\n" not in message


@pytest.mark.parametrize("config", ["a\x00b", "./a\x00b", "a\x00b.yaml"])
def test_a_nul_in_a_config_name_is_one_config_error(config):
    with pytest.raises(ConfigError, match="cannot hold a NUL character") as refused:
        trinity_env.env(config=config)
    assert "\n" not in str(refused.value)
    with pytest.raises(ConfigError, match="deck: a deck name or path cannot hold a NUL"):
        make_config(deck=config)
    with pytest.raises(TrainConfigError, match="cannot hold a NUL"):
        TrainConfig.load(config)


def test_a_config_that_is_neither_a_name_a_path_nor_a_mapping_is_one_config_error():
    with pytest.raises(ConfigError, match="config must be a rules config name, a YAML path or a mapping, got 5"):
        make_config(5)


# ------------------------------------------------------------------------------ agent files


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs /proc (Linux)")
@pytest.mark.parametrize("path", ["/proc/self/mem", "/proc/self/pagemap", "/proc/self/status"])
def test_a_proc_file_as_an_agent_is_one_error_line(path):
    from trinity_env.agents import make

    with pytest.raises(CheckpointError) as refused:
        make(path)
    message = str(refused.value)
    assert path in message and "\n" not in message


def _checkpoint(path: Path, hidden: int = 8) -> Path:
    pytest.importorskip("torch")
    from trinity_env.agents.networks.ppo_network import PolicyNetwork, save_checkpoint

    path.parent.mkdir(parents=True, exist_ok=True)
    save_checkpoint(path, PolicyNetwork(hidden, 1))
    return path


def spec_sha256(text: object) -> str | None:
    """The hash of the files the agent ``text`` reads: its ``AgentSpec``'s."""
    from trinity_env.agents.spec import AgentSpec

    return AgentSpec.parse(text).sha256()


def test_spec_sha256_follows_the_files_content(tmp_path, monkeypatch):
    from trinity_env.agents.registry import SHIPPED_DIR

    monkeypatch.chdir(tmp_path)
    assert spec_sha256("mcts:200") is None and spec_sha256("greedy") is None and spec_sha256("level:8") is None
    assert (
        spec_sha256("ppo-standard")
        == spec_sha256("ppo-standard:seed=3")
        == spec_sha256(str(SHIPPED_DIR / "ppo-standard.pt"))
    )
    _checkpoint(tmp_path / "agent.pt")
    first = spec_sha256("./agent.pt")
    assert first == spec_sha256("agent.pt") == spec_sha256("./agent") == spec_sha256("file:agent.pt")
    _checkpoint(tmp_path / "agent.pt", hidden=16)  # the file replaced: same name, another network
    assert spec_sha256("./agent.pt") not in (None, first)
    run = tmp_path / "run"
    _checkpoint(run / "best.pt")
    _checkpoint(run / "latest.pt")
    before = spec_sha256("./run")
    assert before == spec_sha256("az:run") == spec_sha256("file:run")
    _checkpoint(run / "latest.pt", hidden=16)  # played when best is damaged: it counts
    assert spec_sha256("./run") != before


@pytest.mark.parametrize(
    ("spec", "problem"),
    [("az:./missing", "no checkpoint at missing"), ("./run", "no checkpoint"), (7, "an agent spec is a string")],
)
def test_spec_sha256_refuses_in_one_line(spec, problem, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run").mkdir()
    with pytest.raises((AgentSpecError, CheckpointError), match=problem) as refused:
        spec_sha256(spec)
    assert "\n" not in str(refused.value)


@pytest.mark.skipif(not os.path.exists("/proc/self/pagemap"), reason="needs /proc (Linux)")
@pytest.mark.parametrize("spec", ["/proc/self/pagemap", "az:/proc/self/mem"])
def test_spec_sha256_reads_no_proc_file_for_ever(spec):
    """``/proc/self/pagemap`` says 0 bytes and reads on for hundreds of gigabytes: the hash reads no more than the
    size a file's stat gives (in a child with a deadline: the old hash read it to the end)."""
    child = (
        "from trinity_env.agents.spec import AgentSpec\n"
        f"try:\n    AgentSpec.parse({spec!r}).sha256()\nexcept ValueError as err:\n    print(type(err).__name__, err)\n"
    )
    try:
        result = subprocess.run(
            [sys.executable, "-c", child],
            capture_output=True,
            text=True,
            timeout=60,
            env=os.environ | {"PYTHONPATH": str(ROOT)},
            cwd=ROOT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"spec_sha256({spec!r}) read for 60 s")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("CheckpointError") and spec.removeprefix("az:") in result.stdout
    assert len(result.stdout.strip().splitlines()) == 1


# ------------------------------------------------------------------------------ the accuracy set


def test_an_accuracy_set_is_not_resumed_with_a_replaced_agent_file(tmp_path, monkeypatch, capsys):
    """``trinity accuracy build`` with ``./agent.pt``, the file replaced, then the build resumed: it used to go on
    and mix two networks' games in one set; the header's ``agent_sha256`` refuses it in one line."""
    from trinity_env.cli import main
    from trinity_env.evaluation.accuracy import build_set, load_set

    monkeypatch.chdir(tmp_path)
    _checkpoint(tmp_path / "agent.pt")
    small = {"empty": (4, 4), "agent": "./agent.pt", "max_nodes": 200_000}
    build_set("set.jsonl", per_count=1, **small)
    build_set("set.jsonl", per_count=2, **small)  # the same file: the build goes on
    kept = (tmp_path / "set.jsonl").read_text()
    assert len(load_set("set.jsonl")) >= 2
    _checkpoint(tmp_path / "agent.pt", hidden=16)  # replaced: another network
    argv = [
        "accuracy",
        "build",
        "set.jsonl",
        "--agent",
        "./agent.pt",
        "--empty",
        "4-4",
        "--per-count",
        "3",
        "--max-nodes",
        "200000",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "agent_sha256" in err and "\n" not in err
    assert (tmp_path / "set.jsonl").read_text() == kept  # nothing written
