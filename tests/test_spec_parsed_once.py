"""A spec's text is parsed once a process, where it enters, on every path: the builds (``trinity accuracy build``,
``trinity puzzles build``, ``trinity dataset build``), the score card, the reference pool, the arena, the balance lab
and a review hand the ``AgentSpec`` down; nothing below reads the text again (``test_agent_spec.py`` counts the
arena's builds). A pool file's members are parsed once a file read, and each file is read once.

Before: ``accuracy build`` parsed its agent three times (the command's check, ``build_set``'s check, the build), the
puzzle build three (its check and two ``make``), the dataset build twice, and ``ReferencePool.players()`` parsed the
pool's texts again at every call."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from pools import small_pools

from trinity_env.agents.spec import AgentSpec
from trinity_env.cli import main
from trinity_env.evaluation import anchored

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def parses(monkeypatch) -> Counter:
    """How many times each text was parsed (``AgentSpec.parse`` given a string) from here on."""
    counted: Counter = Counter()
    real = AgentSpec.parse.__func__

    def parse(cls, text, **keywords):
        if isinstance(text, str):
            counted[text.strip()] += 1
        return real(cls, text, **keywords)

    monkeypatch.setattr(AgentSpec, "parse", classmethod(parse))
    return counted


@pytest.mark.parametrize(
    "argv",
    [
        ["accuracy", "build", "{tmp}/set.jsonl", "--per-count", "1", "--empty", "3", "--max-nodes", "100000"],
        ["puzzles", "build", "{tmp}/puzzles.jsonl", "--count", "1", "--empty", "3", "--max-games", "2"],
        ["dataset", "build", "{tmp}/data", "--shards", "1", "--games-per-shard", "1", "--empty", "3-4"],
    ],
    ids=["accuracy", "puzzles", "dataset"],
)
def test_each_build_parses_its_agent_once(argv, parses, tmp_path):
    argv = [word.format(tmp=tmp_path) for word in argv]
    assert main([*argv, "--agent", "mcts:3,seed=1", "--quiet"]) == 0
    assert parses == Counter({"mcts:3,seed=1": 1})


def test_the_score_card_parses_its_policy_once_and_each_pool_file_once(parses, tmp_path, monkeypatch):
    from trinity_env import scorecard

    monkeypatch.setattr(anchored, "POOL_FILES", small_pools(tmp_path))
    parses.clear()  # writing the pools read them back
    tiny = scorecard.Protocol("tiny", rating_games=2, accuracy_per_count=1, puzzles=2, endgames=False)
    card = scorecard.benchmark("mcts:2", tiny, workers=1)
    card.write(tmp_path / "card")  # its plot draws the pools the ratings were measured against, not read again
    assert card.agent == "mcts:2" and (tmp_path / "card" / "scorecard.png").is_file()
    assert parses == Counter({"mcts:2": 1, "random": 2, "greedy": 2})  # the pool's two members, once a pool file


def test_a_reference_pool_holds_its_agents_parsed_once(parses, tmp_path):
    files = small_pools(tmp_path)
    parses.clear()  # writing the pools read them back
    pool = anchored.ReferencePool.load(files["dealt"])
    assert parses == Counter({"random": 1, "greedy": 1}) and pool.agents[1] == AgentSpec.parse("greedy")
    parses.clear()
    rating = anchored.rate_against_pool(AgentSpec.parse("greedy"), 2, workers=1, pool=pool.only(["random", "greedy"]))
    assert rating.opponents == ("random", "greedy") and parses == Counter({"greedy": 1})  # the line above's, only


def test_the_arena_parses_each_agent_once_and_each_pool_member_once(parses, tmp_path, monkeypatch):
    """``trinity arena --anchored``: the agents named on the command line, and the pool of the games' rules."""
    monkeypatch.setattr(anchored, "POOL_FILES", small_pools(tmp_path))
    parses.clear()  # writing the pools read them back
    argv = ["arena", "--agents", "random", "mcts:2", "--games", "2", "--workers", "1", "--anchored"]
    assert main([*argv, "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert parses == Counter({"random": 3, "mcts:2": 1, "greedy": 2})  # random: named, and a member of each pool file


def test_the_balance_lab_parses_each_agent_once(parses, tmp_path):
    argv = ["balance", "--games", "2", "--agents", "greedy", "mcts:2", "--a-limits", "3", "--workers", "1"]
    assert main([*argv, "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert parses == Counter({"greedy": 1, "mcts:2": 1})


def test_a_review_parses_its_agent_once(parses, tmp_path, capsys):
    replay = ROOT / "examples" / "replays" / "mcts_vs_mcts.json"
    argv = ["review", str(replay), "--agent", "mcts:2", "--max-nodes", "2000", "--json", str(tmp_path / "r.json")]
    assert main([*argv, "--quiet"]) == 0
    assert parses == Counter({"mcts:2": 1})
