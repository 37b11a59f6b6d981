"""The leaderboard's cards (scripts/make_leaderboard.py) under protocol version 2: a card of an older version is
measured again rather than skipped, the tables show the rating with the draft beside the dealt one, and an older
card is refused there by name rather than shown with an empty cell."""

from __future__ import annotations

import json

import pytest

from scripts import make_leaderboard
from trinity_env.scorecard import BENCHMARK_VERSION


def card(agent: str, version: int = BENCHMARK_VERSION, elo: float = 100.0) -> dict:
    """A card's JSON as the tables read it (test figures)."""
    share = {"hits": 1, "total": 2, "share": 0.5, "low": 0.1, "high": 0.9}
    rating = {"elo": elo, "low": elo - 20, "high": elo + 20, "games": 4, "opponents": ["random", "greedy"]}
    return {
        "benchmark": version,
        "agent": agent,
        "rating": rating,
        "rating_draft": {**rating, "elo": elo - 50, "low": elo - 80, "high": elo - 10},
        "accuracy": {"10": share},
        "value_sign": None,
        "puzzles": share,
        "endgames": share,
    }


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setattr(make_leaderboard, "ROOT", tmp_path)
    return tmp_path


def put(agent: str, data: dict, protocol: str = "quick") -> None:
    folder = make_leaderboard.folder_of(protocol, agent)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scorecard.json").write_text(json.dumps(data), encoding="utf-8")


class FakeCard:
    """What a measured card needs to be for the script: its agent and rating; writing it puts a current card."""

    def __init__(self, agent):
        self.agent, self.rating = agent, {"elo": 0.0}

    def write(self, folder):
        put(self.agent, card(self.agent))


def test_only_a_card_of_the_current_version_is_skipped(root, monkeypatch):
    put("greedy", card("greedy"))
    put("random", card("random", version=BENCHMARK_VERSION - 1))
    measured = []

    def fake_benchmark(agent, protocol, workers=None, games_folder=None):
        measured.append(agent)
        assert games_folder == make_leaderboard.folder_of("quick", agent) and games_folder.is_dir()  # resumable
        return FakeCard(agent)

    monkeypatch.setattr(make_leaderboard, "benchmark", fake_benchmark)
    make_leaderboard.main(["--agents", "greedy", "random", "lookahead"])
    assert measured == ["random", "lookahead"]  # the older card measured again, the missing one made


def test_the_table_shows_both_ratings_under_a_header_of_as_many_columns(root):
    put("greedy", card("greedy", elo=500.0))
    put("random", card("random", elo=0.0))
    lines = make_leaderboard.leaderboard("quick").splitlines()
    assert "| rating, dealt hands (random = 0) | rating, with the draft (random = 0) |" in lines[0]
    assert all(line.count("|") == lines[0].count("|") for line in lines)
    assert lines[2].startswith("| `greedy` | +500 [+480, +520] | +450 [+420, +490] | 50.0% [10.0%, 90.0%] |")


def test_an_older_card_is_refused_by_name_in_the_tables(root):
    put("greedy", card("greedy"))
    put("random", card("random", version=1))
    with pytest.raises(
        ValueError, match=rf"random/scorecard.json is a benchmark 1 card, not {BENCHMARK_VERSION}: measure it again"
    ):
        make_leaderboard.leaderboard("quick")


# ---------------------------------------------------------------------- through the command line's doors (issue 50)


def _never(*args, **kwargs):
    raise AssertionError("no card is measured when a problem was found")


def test_an_unknown_agent_or_a_cut_card_is_one_line_each_before_any_folder(root, monkeypatch, capsys):
    monkeypatch.setattr(make_leaderboard, "benchmark", _never)
    put("greedy", card("greedy"))
    folder = make_leaderboard.folder_of("quick", "greedy")
    (folder / "scorecard.json").write_text(json.dumps(card("greedy"))[:40], encoding="utf-8")  # cut short
    put("random", {key: value for key, value in card("random").items() if key != "rating"})  # cut by a field
    with pytest.raises(SystemExit) as stopped:
        make_leaderboard.main(["--agents", "nosuch", "lookahead", "greedy", "random"])
    err = capsys.readouterr().err.strip().splitlines()
    assert stopped.value.code == 2
    assert len(err) == 3 and all(line.startswith("make_leaderboard: ") for line in err), err
    assert "agent 'nosuch': no agent named 'nosuch'" in err[0]
    assert "greedy/scorecard.json" in err[1] and "random/scorecard.json is not whole (KeyError" in err[2]
    assert not make_leaderboard.folder_of("quick", "nosuch").exists()
    assert not make_leaderboard.folder_of("quick", "lookahead").exists()


def test_a_named_pipe_where_a_card_should_be_is_refused_unread(root, tmp_path):
    """A pipe as an agent's card and as another card of the table: one line each, at once, never waited on (it used
    to block for ever); a subprocess, so that a block is a failed test, not a hung one."""
    import os
    import subprocess
    import sys

    for agent in ("greedy", "lookahead"):
        folder = make_leaderboard.folder_of("quick", agent)
        folder.mkdir(parents=True)
        os.mkfifo(folder / "scorecard.json")
    code = (
        "import sys; from pathlib import Path; from scripts import make_leaderboard as m; "
        "m.ROOT = Path(sys.argv[1]); m.benchmark = None; m.main(['--agents', 'greedy'])"
    )
    root_folder = make_leaderboard.ROOT
    done = subprocess.run(
        [sys.executable, "-c", code, str(root_folder)],
        cwd=make_leaderboard.__file__.rsplit("/scripts/", 1)[0],
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 2, done.stderr
    assert all("it is a named pipe, not a regular file" in line for line in lines), lines


def test_an_older_card_of_another_agent_waits_for_its_run_and_the_table_says_so_in_one_line(root, monkeypatch, capsys):
    """A card of an older version, not measured by this run, is no reason to refuse measuring another agent (each
    can be measured again in its own run); the table then refuses it in one line, exit 2, never a traceback."""
    put("random", card("random", version=BENCHMARK_VERSION - 1))
    measured = []

    monkeypatch.setattr(make_leaderboard, "benchmark", lambda agent, *a, **k: measured.append(agent) or FakeCard(agent))
    with pytest.raises(SystemExit) as stopped:
        make_leaderboard.main(["--agents", "greedy"])
    err = capsys.readouterr().err.strip().splitlines()
    assert measured == ["greedy"] and stopped.value.code == 2
    assert len(err) == 1 and "the table refuses one" in err[0] and "random/scorecard.json is a benchmark" in err[0]
