"""The arena: round robin, seat swaps, ratings, reports; and `trinity arena` / `trinity play`."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest

from trinity_env.cli import main
from trinity_env.evaluation.arena import round_robin
from trinity_env.evaluation.ratings import fit_elo, wilson_interval
from trinity_env.play import parse_move, play_in_terminal


def test_round_robin_results_are_consistent_and_reproducible(tmp_path):
    result = round_robin(["random", "greedy", "lookahead"], 12, seed=3, workers=1, progress=False)
    assert (result.games == result.games.T).all() and (np.diag(result.games) == 0).all()
    assert (result.games[np.triu_indices(3, 1)] == 12).all()
    assert np.allclose(result.score + result.score.T, result.games)
    again = round_robin(["random", "greedy", "lookahead"], 12, seed=3, workers=2, progress=False)
    assert (again.score == result.score).all(), "results must not depend on the worker count"
    paths = result.write(tmp_path)
    assert [p.name for p in paths] == ["arena.csv", "arena.md", "arena.json", "arena_heatmap.png"]
    data = json.loads(paths[2].read_text())
    assert data["agents"] == ["random", "greedy", "lookahead"]
    assert data["games"][0][1] == 12 and data["win_rate"][0][0] is None
    assert paths[3].read_bytes()[:4] == b"\x89PNG"
    assert "Elo" in result.table()


def test_elo_and_intervals():
    score = np.array([[0.0, 90.0], [10.0, 0.0]])
    games = np.array([[0.0, 100.0], [100.0, 0.0]])
    ratings = fit_elo(score, games)
    expected = 400 * math.log10(90.5 / 10.5)  # with the one-virtual-draw prior
    assert ratings[0] - ratings[1] == pytest.approx(expected, rel=1e-3)
    low, high = wilson_interval(90, 100)
    assert 0.82 < low < 0.84 and 0.94 < high < 0.96


def test_trinity_arena_writes_its_reports(tmp_path, capsys):
    out = tmp_path / "arena"
    summary = tmp_path / "summary.json"
    code = main(["arena", "--agents", "random", "greedy", "--games", "6", "--workers", "1", "--quiet",
                 "--out", str(out), "--json", str(summary)])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "greedy" in printed and "Elo" in printed
    data = json.loads(summary.read_text())
    assert set(data) >= {"agents", "win_rate", "games"}
    assert main(["arena", "--agents", "random", "nobody", "--games", "2", "--quiet", "--out", str(out)]) == 2
    assert "no agent named 'nobody'" in capsys.readouterr().err


def test_a_person_can_play_and_bad_input_is_answered():
    lines = iter(["hello", "0", "moves", "99", "quit"])
    out = io.StringIO()
    play_in_terminal("greedy", seat=0, seed=1, read=lambda prompt: next(lines), out=out)
    text = out.getvalue()
    assert "not a legal move: bad card 'hello'" in text
    assert "you may pick:" in text
    assert "deck numbers are 0-15" in text


def test_a_whole_game_typed_in():
    """Answer every prompt with the first legal move: the game reaches its end."""
    from trinity_env.core import GameState

    holder: dict[str, GameState] = {}

    def first_legal(prompt: str) -> str:
        state = holder["state"]
        if state.phase == "draft":
            return str(state.legal_actions()[0])
        card, tile = state.legal_moves()[0]
        return f"{card} {tile}"

    import trinity_env.play as play_module

    original = play_module._show

    def spy(state, me, open_hands, out):
        holder["state"] = state
        original(state, me, open_hands, out)

    play_module._show = spy
    try:
        final = play_in_terminal("random", seat=1, seed=4, read=first_legal, out=io.StringIO())
    finally:
        play_module._show = original
    assert final.is_over


def test_parse_move_reads_cards_tiles_and_deck_numbers():
    from trinity_env.core import GameState, TrinityError

    draft = GameState.new_game()
    assert parse_move("5555", draft) == 5 and parse_move("5", draft) == 5
    play = GameState.new_game(hands=[range(5, 13), range(8, 16)], first_player=0)
    assert parse_move("5555 3", play) == 16 + 15 * 5 + 3
    assert parse_move("5555@3", play) == 16 + 15 * 5 + 3
    for bad, message in [("5555", "card and a tile"), ("5555 x", "number"), ("5555 15", "off the board"),
                         ("A235 1", "not in player 0's hand")]:  # fmt: skip
        with pytest.raises(TrinityError, match=message):
            parse_move(bad, play)


def test_a_result_round_trips_through_json(tmp_path):
    from trinity_env.evaluation.arena import ArenaResult

    result = round_robin(["random", "greedy"], 4, seed=0, workers=1, progress=False)
    again = ArenaResult.from_json(json.loads(json.dumps(result.to_json())))
    assert again.markdown() == result.markdown()
    again.heatmap(tmp_path / "h.png")
