"""The arena: round robin, seat swaps, ratings, reports; and `trinity arena` / `trinity play`."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from terminal_play import FirstLegal

from trinity_env.cli import main
from trinity_env.core import TrinityError
from trinity_env.evaluation.arena import round_robin
from trinity_env.evaluation.match import RunInterrupted
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


@pytest.mark.parametrize("n", [1, 3, 10, 11, 15, 99, 1000])
def test_wilson_intervals_end_exactly_at_0_and_1(n):
    assert wilson_interval(0, n)[0] == 0.0 and wilson_interval(n, n)[1] == 1.0
    assert 0.0 < wilson_interval(0, n)[1] < 1.0 and 0.0 < wilson_interval(n, n)[0] < 1.0  # the other ends


def _random_against_greedy(games: int, out: Path, *options: str) -> list[str]:
    """``trinity arena``'s arguments for ``games`` games of random against greedy on one worker, quiet, reports in
    ``out``."""
    quick = ["--games", str(games), "--workers", "1", "--quiet", "--out", str(out)]
    return ["arena", "--agents", "random", "greedy", *quick, *options]


def test_trinity_arena_writes_its_reports(tmp_path, capsys):
    out = tmp_path / "arena"
    summary = tmp_path / "summary.json"
    code = main(_random_against_greedy(6, out, "--json", str(summary)))
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


def test_a_whole_game_typed_in(monkeypatch):
    """Answer every prompt with the first legal move: the game reaches its end."""
    final = play_in_terminal("random", seat=1, seed=4, read=FirstLegal(monkeypatch), out=io.StringIO())
    assert final.is_over


def test_parse_move_reads_cards_tiles_and_deck_numbers():
    from trinity_env.core import GameState, TrinityError

    draft = GameState.new_game()
    assert parse_move("5555", draft) == 5 and parse_move("5", draft) == 5
    play = GameState.new_game(hands=[range(5, 13), range(8, 16)], first_player=0)
    assert parse_move("5555 3", play) == 16 + 15 * 5 + 3
    assert parse_move("5555@3", play) == 16 + 15 * 5 + 3
    for bad, message in [
        ("5555", "card and a tile"),
        ("5555 x", "number"),
        ("5555 15", "off the board"),
        ("A235 1", "not in player 0's hand"),
    ]:
        with pytest.raises(TrinityError, match=message):
            parse_move(bad, play)


def test_a_result_round_trips_through_json(tmp_path):
    from trinity_env.evaluation.arena import ArenaResult

    result = round_robin(["random", "greedy"], 4, seed=0, workers=1, progress=False)
    again = ArenaResult.from_json(json.loads(json.dumps(result.to_json())))
    assert again.markdown() == result.markdown()
    again.heatmap(tmp_path / "h.png")


def _interrupt_after(monkeypatch, module, chunks: int) -> None:
    """Ctrl-C (``KeyboardInterrupt``) as the chunk after the first ``chunks`` starts, in one worker."""
    real = module._play_chunk
    calls = []

    def chunk(task):
        calls.append(task)
        if len(calls) > chunks:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(module, "_play_chunk", chunk)


def test_an_interrupted_round_robin_keeps_what_was_played(tmp_path, monkeypatch):
    from trinity_env.evaluation import arena
    from trinity_env.evaluation.arena import ArenaResult

    _interrupt_after(monkeypatch, arena, 2)  # two chunks of 10 games of the first pair
    with pytest.raises(KeyboardInterrupt) as stop:
        round_robin(["random", "greedy", "lookahead"], 30, seed=1, workers=1, progress=False)
    assert isinstance(stop.value, RunInterrupted)
    result = stop.value.partial
    assert result.partial and result.requested == 30
    assert result.games[0, 1] == result.games[1, 0] == 20 and result.games[0, 2] == result.games[1, 2] == 0
    assert np.allclose(result.score + result.score.T, result.games)
    data = result.to_json()
    assert data["partial"] is True and data["games_requested"] == 30 and data["games"][0][1] == 20
    assert "no games" in result.table() and "interrupted after 20 of 90 games" in result.table()
    assert "**Partial results: interrupted after 20 of 90 games" in result.markdown()
    paths = result.write(tmp_path)
    assert json.loads(paths[2].read_text())["partial"] is True
    again = ArenaResult.from_json(json.loads(paths[2].read_text()))
    assert again.partial and again.markdown() == result.markdown()


def test_an_interrupt_before_any_game_still_gives_a_result(tmp_path, monkeypatch):
    from trinity_env.evaluation import arena

    _interrupt_after(monkeypatch, arena, 0)
    with pytest.raises(RunInterrupted) as stop:
        round_robin(["random", "greedy"], 10, workers=1, progress=False)
    result = stop.value.partial
    assert result.partial and result.games.sum() == 0
    assert all(p.is_file() for p in result.write(tmp_path))


def test_a_whole_round_robin_is_not_partial():
    result = round_robin(["random", "greedy"], 2, workers=1, progress=False)
    assert not result.partial and "partial" not in result.to_json() and "Partial" not in result.markdown()


def test_round_robin_checks_its_arguments_first():
    from trinity_env.evaluation.arena import check_arena

    for specs, games, message in [
        (["random"], 2, "at least two agents"),
        (["random", "greedy"], 0, "at least 1"),
        (["random", "greedy"], 1.5, "whole number"),
        (["random", "greedy"], True, "whole"),
        (["random", "nobody"], 2, "no agent named"),
    ]:
        with pytest.raises(ValueError, match=message):
            check_arena(specs, games)
        with pytest.raises(ValueError, match=message):
            round_robin(specs, games, workers=1, progress=False)
    check_arena(["random", "greedy"], np.int64(3))  # numpy integers are integers


@pytest.mark.parametrize("name", ["x" * 1001, "line\nbreak", ""])
def test_a_label_no_replay_can_hold_is_refused_before_any_game(tmp_path, name):
    """An agent named so that a replay cannot hold its label (too long, not printable, empty) is one line before
    the run: it once failed in a worker after its first game, with replays being written."""
    from trinity_env.agents.spec import make
    from trinity_env.evaluation.arena import check_arena

    class Named:  # a Player: any label it likes
        label, families = name, ()

        def build(self):
            return make("greedy")

    with pytest.raises(ValueError, match=r"agent 2's label must be 1 to 1000 printable characters"):
        check_arena(["random", Named()], 2)
    with pytest.raises(ValueError, match=r"agent 2's label must be"):
        round_robin(["random", Named()], 2, workers=1, progress=False, replays=tmp_path / "replays")
    assert not (tmp_path / "replays").exists() or not any((tmp_path / "replays").iterdir())


def test_ctrl_c_in_trinity_play_is_one_line_and_130(capsys, monkeypatch):
    def interrupted(prompt):
        raise KeyboardInterrupt

    monkeypatch.setattr("builtins.input", interrupted)
    assert main(["play", "--opponent", "random", "--seat", "0", "--seed", "3"]) == 130
    captured = capsys.readouterr()
    assert captured.err == "trinity play: interrupted\n" and captured.out.endswith("\n")
    with pytest.raises(TrinityError, match="seat must be"):
        play_in_terminal("random", seat=2, read=interrupted, out=io.StringIO())


def test_play_saves_the_game_as_a_replay_that_replays_it(tmp_path, monkeypatch):
    """``trinity play --save``: something to run ``trinity review`` and the replay view on."""
    from trinity_env.core import Replay

    first_legal = FirstLegal(monkeypatch)
    out = io.StringIO()
    final = play_in_terminal("random", seat=0, seed=7, read=first_legal, out=out, save=tmp_path / "game.json")
    assert final.is_over and f"replay saved to {tmp_path / 'game.json'}" in out.getvalue()
    replay = Replay.load(tmp_path / "game.json")
    assert replay.final_state() == final
    # a game left in its play phase is saved as far as it went; one left in its draft cannot be replayed
    played = []

    def quit_after_two_placements(prompt: str) -> str:
        if first_legal.state.phase.name == "PLAY" and len(played) >= 2:
            return "quit"
        if first_legal.state.phase.name == "PLAY":
            played.append(1)
        return first_legal(prompt)

    early = play_in_terminal(
        "random", seat=1, seed=7, read=quit_after_two_placements, out=io.StringIO(), save=tmp_path / "early.json"
    )
    assert Replay.load(tmp_path / "early.json").final_state() == early and not early.is_over
    out = io.StringIO()
    play_in_terminal("random", seat=1, seed=7, read=lambda prompt: "quit", out=out, save=tmp_path / "draft.json")
    assert "no replay saved" in out.getvalue() and not (tmp_path / "draft.json").exists()
    with pytest.raises(TrinityError, match="is a folder"):
        play_in_terminal("random", save=tmp_path, read=lambda prompt: "quit", out=io.StringIO())


def test_play_save_to_a_folder_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["play", "--opponent", "random", "--save", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trinity play: ") and "is a folder" in err and err.count("\n") == 1


def test_arena_replays_are_the_games_it_scored(tmp_path):
    """``trinity arena --replays DIR``: every game as a replay, named by who sat where, the same games as scored."""
    from trinity_env.core import Replay
    from trinity_env.evaluation.arena import replay_name

    plain = round_robin(["random", "greedy"], 4, seed=3, workers=1, progress=False)
    result = round_robin(["random", "greedy"], 4, seed=3, workers=1, progress=False, replays=tmp_path)
    assert np.array_equal(result.score, plain.score)  # recording changes no game
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == sorted(replay_name(k, "random", "greedy") for k in range(4))
    assert "random_vs_greedy_game00000.json" in files and "greedy_vs_random_game00001.json" in files
    points = 0.0
    for k in range(4):
        final = Replay.load(tmp_path / replay_name(k, "random", "greedy")).final_state()
        assert final.is_over
        points += 0.5 if final.winner is None else float(final.winner == k % 2)  # random sits in seat k % 2
    assert points == result.score[0, 1]


def test_round_robin_creates_its_replays_folder_and_refuses_a_file_before_any_game(tmp_path):
    """The CLI made ``--replays``' folder; ``round_robin(replays=Path(...))`` failed in a worker instead (issue 51)."""
    from trinity_env.evaluation.arena import replay_name

    folder = tmp_path / "new" / "games"
    round_robin(["random", "greedy"], 2, workers=1, progress=False, replays=folder)
    assert sorted(p.name for p in folder.iterdir()) == sorted(replay_name(k, "random", "greedy") for k in range(2))
    (tmp_path / "file").write_text("")
    with pytest.raises(TrinityError, match=r"^replays .*file: it is a file, not a folder$"):
        round_robin(["random", "greedy"], 2, workers=1, progress=False, replays=tmp_path / "file")


def test_arena_replays_on_the_command_line(tmp_path, capsys):
    out, replays = tmp_path / "out", tmp_path / "games"
    code = main(_random_against_greedy(2, out, "--replays", str(replays)))
    assert code == 0 and len(list(replays.glob("*.json"))) == 2
    assert f"wrote 2 replays in {replays}" in capsys.readouterr().out
    (tmp_path / "file").write_text("x")
    assert main(["arena", "--agents", "random", "greedy", "--games", "2", "--replays", str(tmp_path / "file")]) == 2
