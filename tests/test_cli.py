"""The ``trinity`` command line."""

from __future__ import annotations

import io
import json
import random

from trinity_env.cli import main
from trinity_env.core import GameState, Replay

POSITION = {
    "phase": "play",
    "to_move": 0,
    "board": [[None, {"card": "5A32", "owner": 1}, None, None, None], [None] * 5, [None] * 5],
    "hands": [["7A24"], ["3333"]],
    "max_a_cards": 3,
}


def test_show_draws_a_position(tmp_path, capsys):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(POSITION))
    assert main(["show", str(path)]) == 0
    assert capsys.readouterr().out.rstrip("\n") == str(GameState.from_dict(POSITION))


def test_show_reads_stdin_and_replays(tmp_path, capsys, monkeypatch):
    rng = random.Random(0)
    states = [GameState.new_game()]
    while not states[-1].is_over:
        states.append(states[-1].apply(rng.choice(states[-1].legal_actions())))
    monkeypatch.setattr("sys.stdin", io.StringIO(Replay.from_states(states).to_json()))
    assert main(["show", "-"]) == 0
    assert capsys.readouterr().out.rstrip("\n") == str(states[-1])


def test_bad_input_is_one_line_on_stderr_with_status_2(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(POSITION | {"phase": "draft"}))
    assert main(["show", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trinity show: unknown phase 'draft'") and err.count("\n") == 1
    assert main(["show", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    path.write_text("{")
    assert main(["show", str(path)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
