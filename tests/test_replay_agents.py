"""Replays name their agents: the optional ``agents`` field (seat 0, seat 1) written by the arena, ``trinity play``
and the web app, checked strictly when read, and shown by ``trinity show`` and the web app's replay view."""

from __future__ import annotations

import io
import json

import pytest
from terminal_play import FirstLegal

from trinity_env.agents import GreedyAgent
from trinity_env.cli import main
from trinity_env.core import ArgumentError, GameState, PositionError, Replay
from trinity_env.core.replay import HUMAN, MAX_AGENT_LABEL
from trinity_env.evaluation.arena import replay_name, round_robin
from trinity_env.evaluation.match import play_game
from trinity_env.play import play_in_terminal
from trinity_env.spec.config import make_config


def _game(seed: int = 0) -> list[GameState]:
    states: list[GameState] = []
    play_game((GreedyAgent(), GreedyAgent()), make_config(draft="dealt"), seed, states.append)
    return states


def test_a_replay_keeps_its_agents_through_json_and_one_without_them_is_unchanged():
    states = _game()
    named = Replay.from_states(states, agents=["greedy", "onnx:model.onnx"])
    data = json.loads(named.to_json())
    assert data["agents"] == ["greedy", "onnx:model.onnx"]
    loaded = Replay.from_dict(data)
    assert loaded.agents == ("greedy", "onnx:model.onnx") and loaded.states() == states
    plain = Replay.from_states(states).to_dict()
    assert "agents" not in plain and Replay.from_dict(plain).agents is None
    assert Replay.from_dict(plain | {"agents": None}).agents is None


@pytest.mark.parametrize(
    "agents, words",
    [
        ("greedy", "two labels"),
        (["greedy"], "two labels"),
        (["greedy", "random", "mcts:25"], "two labels"),
        (["greedy", 3], "agents\\[1\\]"),
        (["", "random"], "agents\\[0\\]"),
        (["greedy", "a\nb"], "printable"),
        (["x" * (MAX_AGENT_LABEL + 1), "random"], f"1 to {MAX_AGENT_LABEL}"),
        ({"0": "greedy", "1": "random"}, "two labels"),
    ],
)
def test_a_bad_agents_field_is_refused_in_one_line(agents, words):
    data = Replay.from_states(_game()).to_dict() | {"agents": agents}
    with pytest.raises(PositionError, match=words) as caught:
        Replay.from_dict(data)
    assert "\n" not in str(caught.value)
    if not isinstance(agents, dict):
        with pytest.raises(ArgumentError, match=words):
            Replay.from_states(_game(), agents=agents)


def test_arena_replays_name_the_agent_in_each_seat(tmp_path):
    round_robin(["random", GreedyAgent()], 2, seed=3, workers=1, progress=False, replays=tmp_path)
    first = Replay.load(tmp_path / replay_name(0, "random", "greedy"))
    second = Replay.load(tmp_path / replay_name(1, "random", "greedy"))
    assert first.agents == ("random", "greedy") and second.agents == ("greedy", "random")


def test_a_played_game_names_the_person_and_the_opponent(tmp_path, monkeypatch):
    read = FirstLegal(monkeypatch)
    for seat, agents in ((0, (HUMAN, "greedy")), (1, ("greedy", HUMAN))):
        path = tmp_path / f"game{seat}.json"
        play_in_terminal(GreedyAgent(), seat=seat, seed=3, read=read, out=io.StringIO(), save=path)
        assert Replay.load(path).agents == agents


def test_show_prints_the_agents_of_a_replay(tmp_path, capsys):
    path = tmp_path / "game.json"
    Replay.from_states(_game(), agents=["greedy", HUMAN]).save(path)
    assert main(["show", str(path)]) in (0, None)
    assert capsys.readouterr().out.startswith("player 0 (w): greedy; player 1 (b): human\n")
    Replay.from_states(_game()).save(path)
    assert main(["show", str(path)]) in (0, None)
    assert "player 0 (w)" not in capsys.readouterr().out.splitlines()[0]
